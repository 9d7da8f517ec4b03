package hostapply

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/railguest"
	"github.com/rdggen/rdggen/pkg/railnet"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// railsFix is the fix of a difference rails_apply repairs: apply, or the
// generated live script by hand.
func railsFix(h *inventory.Host) string {
	return "rdggen apply --target hosts (or run hosts/" + h.Name + "/" + railnet.ScriptName + " on " + h.Name + ")"
}

// checkRails is the rails' checks of a VM with several rails, from what
// railsProbe and ping_rails read: per rail CheckRailLink, CheckRailRouting
// and CheckRailGateway, then CheckRailSysctl, CheckTopology and (where
// vnuma gives vSphere's nodes of the VM's pciPassthru devices, in order)
// CheckGPUOrder, once for the VM. Every failure carries its fix.
func checkRails(inv *inventory.Inventory, h *inventory.Host, d *desired, st *hostState, vnuma []int) []readiness.Result {
	const target = readiness.TargetHosts
	rd := d.Rails
	s := st.Rails
	res := func(check, subject string, status readiness.Status, found, expected, fix string) readiness.Result {
		return readiness.Result{Target: target, Machine: h.Name, Check: check, Subject: subject, Status: status, Found: found, Expected: expected, Fix: fix}
	}
	if rd.Err != nil {
		return []readiness.Result{res(CheckRailLink, "", readiness.Failed, rd.Err.Error(), "rails rdggen can set up", "fix the inventory (rdggen validate)")}
	}
	if s == nil || len(s.Seen) < 4 {
		return []readiness.Result{res(CheckRailLink, "", readiness.Unknown, "the rails' state was not read", "", "")}
	}
	gaps := railGaps(rd.VM, s, st.Routes.Out, h.DataMTU)
	var out []readiness.Result
	for r, rail := range rd.VM.Rails {
		subject := fmt.Sprintf("rail %d %s", r, rail.Interface)
		var link, routing []railGap
		for _, g := range gaps {
			switch {
			case g.Rail != r:
			case g.Check == CheckRailLink:
				link = append(link, g)
			case g.Check == CheckRailRouting:
				routing = append(routing, g)
			}
		}
		// The link: up, carrier, address, MTU.
		expLink := fmt.Sprintf("%s up with a carrier, address %s, mtu %d", rail.Interface, rail.Address, h.DataMTU)
		if len(link) == 0 {
			l := s.Links[rail.Interface]
			out = append(out, res(CheckRailLink, subject, readiness.Passed, fmt.Sprintf("%s up, carrier, %s, mtu %d", rail.Interface, rail.Address, l.MTU), "", ""))
		}
		for _, g := range link {
			fix := railsFix(h)
			switch g.Kind {
			case "interface":
				fix = "give the rail's VF the name " + rail.Interface + " (" + railIfaceKey(h, r) + "), or set that field to its name in the guest; check that the VF is passed through (rdggen check --target esxi)"
				if other := carrier(s, rail.Address); other != "" {
					fix = fmt.Sprintf("%s carries the rail's address: set hosts[%d].data[%d].interface: %s", quote.Line(other), h.Index, r, quote.Line(other))
				}
			case "carrier":
				fix = "check the rail's VF, its PF's cable and its port on " + h.Rails[r].Switch + " (rdggen check --target switch, --target esxi)"
			}
			out = append(out, res(CheckRailLink, subject, readiness.Failed, g.Found, expLink, fix))
		}
		// Routing: the rule, the rail's table, the main table's routes.
		if len(routing) == 0 {
			out = append(out, res(CheckRailRouting, subject, readiness.Passed,
				fmt.Sprintf("rule %s; table %d: %s on the link and %d peer subnet(s) via %s; main: the peers via %s metric %d",
					ruleText(r, rail), railnet.Table(r), rail.Subnet(), len(rail.Peers), rail.Gateway, rail.Gateway, railnet.Metric(r)), "", ""))
		}
		for _, g := range routing {
			out = append(out, res(CheckRailRouting, subject, readiness.Failed, g.Found, g.To, railsFix(h)))
		}
		// The gateway, from the rail's own interface.
		exp := fmt.Sprintf("%s answers ping -I %s (from %s)", rail.Gateway, rail.Interface, rail.Address.Addr())
		p, ok := s.Ping[r]
		switch {
		case !ok:
			out = append(out, res(CheckRailGateway, subject, readiness.Unknown, "not pinged", exp, ""))
		case p.RC() == 0:
			out = append(out, res(CheckRailGateway, subject, readiness.Passed, pingSummary(p.Data, rail.Gateway.String()+" answers from "+rail.Interface), "", ""))
		default:
			fix := fmt.Sprintf("check %s's link (rail-link) and the gateway %s on %s (rail %d's VLAN %d; rdggen check --target switch)",
				rail.Interface, rail.Gateway, h.Rails[r].Switch, r, inventory.RailVLAN(r))
			out = append(out, res(CheckRailGateway, subject, readiness.Failed, pingSummary(p.Data, "no answer"), exp, fix))
		}
	}
	// The sysctls, once for the VM.
	var sys []string
	for _, g := range gaps {
		if g.Check == CheckRailSysctl {
			out = append(out, res(CheckRailSysctl, strings.TrimPrefix(g.Item, "rails sysctl "), readiness.Failed, g.Found, g.To, railsFix(h)))
			sys = append(sys, g.Item)
		}
	}
	if len(sys) == 0 {
		var kv []string
		for _, x := range railnet.Sysctls() {
			kv = append(kv, x.Key+" = "+x.Value)
		}
		out = append(out, res(CheckRailSysctl, "", readiness.Passed, strings.Join(kv, ", "), "", ""))
	}
	out = append(out, checkTopology(inv, h, rd, s)...)
	return append(out, checkGPUOrder(h, s, vnuma)...)
}

// pingSummary is ping's last non-empty line (its statistics), or alt.
func pingSummary(out []byte, alt string) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.Contains(l, "packets transmitted") || strings.HasPrefix(l, "ping:") {
			return alt + " (" + remote.OneLine(l) + ")"
		}
	}
	return alt
}

// checkTopology is CheckTopology: NCCL's file is present, NCCL reads it as
// written (nccltopo.Validate), every bus ID it names is a device of this
// guest of the class the file says (nccltopo.CheckGuest against the
// guest's /sys/bus/pci/devices), and it is railguest.TopologyFile of this
// guest's facts. A VM that needs no file (railguest.ErrNotNeeded: no GPU)
// gets no result, as gpu-order gets none without vSphere's nodes; a VM
// whose file rdggen cannot make (railsDesired.TopoErr otherwise: a GPU or
// NIC model whose PCIe link rdggen does not know) gets Unknown, with
// topoFix: the probe reads nothing to compare.
func checkTopology(inv *inventory.Inventory, h *inventory.Host, rd *railsDesired, s *railState) []readiness.Result {
	const target = readiness.TargetHosts
	res := func(status readiness.Status, found, expected, fix string) []readiness.Result {
		return []readiness.Result{{Target: target, Machine: h.Name, Check: CheckTopology, Subject: nccltopo.DefaultPath, Status: status, Found: found, Expected: expected, Fix: fix}}
	}
	if rd.TopoErr != nil {
		if errors.Is(rd.TopoErr, railguest.ErrNotNeeded) {
			return nil // no GPU: nothing for NCCL to pair, no file to check
		}
		return res(readiness.Unknown, "not read: rdggen cannot make this guest's file ("+rd.TopoErr.Error()+")",
			"the file of this guest's devices", topoFix(h, rd.TopoErr))
	}
	applyFix := "rdggen apply --target hosts (it runs " + railguest.ScriptPath + ", as every boot does)"
	if s.File == nil || s.Facts == nil {
		return res(readiness.Unknown, "not read", "", "")
	}
	if s.File.RC() != 0 {
		return res(readiness.Failed, "absent ("+remote.FirstLine(string(s.File.Data))+")", "the file of this guest's devices", applyFix)
	}
	file := s.File.Data
	facts, ferr := railguest.ParseFacts(s.Facts.Data)
	var errs []string
	for _, f := range nccltopo.Validate(file) {
		if f.Severity == nccltopo.Error {
			errs = append(errs, f.Format(nccltopo.DefaultPath))
		}
	}
	if ferr == nil {
		guest := map[string]string{}
		for _, dev := range facts.Devices {
			guest[dev.BusID] = dev.Class
		}
		gf, err := nccltopo.CheckGuest(file, guest)
		if err != nil {
			errs = append(errs, err.Error())
		}
		for _, f := range gf {
			if f.Severity == nccltopo.Error {
				errs = append(errs, f.Format(nccltopo.DefaultPath))
			}
		}
	}
	if len(errs) > 0 {
		return res(readiness.Failed, strings.Join(errs, "; "), "a file NCCL reads as written, naming only this guest's devices", applyFix)
	}
	if ferr != nil {
		return res(readiness.Unknown, "valid; the guest's devices were not read: "+ferr.Error(), "", "")
	}
	want, err := railguest.TopologyFile(inv, h, nil, facts)
	switch {
	case err != nil:
		return res(readiness.Failed, "valid, but no file can be made for this guest: "+err.Error(), "the file of this guest's devices", "fix what the message says, then "+applyFix)
	case !bytes.Equal(want, file):
		return res(readiness.Failed, "valid, but not the file of this guest's devices (the devices changed since it was written?)", "railguest's file of this guest's devices", applyFix)
	}
	return res(readiness.Passed, fmt.Sprintf("valid, %d GPU(s) and %d rail(s) of this guest", len(h.GPUs), len(h.Rails)), "", "")
}

// topoFix is the fix of a VM whose topology file rdggen cannot make (err:
// railsDesired.TopoErr): for a *railguest.ModelError, the inventory field
// whose model rdggen does not know and the models it knows (nccltopo's
// GPUFamilies, NICModels); else what the message says.
func topoFix(h *inventory.Host, err error) string {
	var me *railguest.ModelError
	if !errors.As(err, &me) {
		return "fix what the message says (rdggen validate), then rdggen apply --target hosts"
	}
	const hand = "; a model rdggen does not know gets no file from rdggen, and NCCL pairs the GPUs with the rails' NICs by index"
	if me.GPU < 0 {
		return fmt.Sprintf("set hosts[%d].nic.model (or defaults.nic.model), now %q, to the NIC's model as rdggen names it: one of %s%s",
			h.Index, me.Model, strings.Join(nccltopo.NICModels(), ", "), hand)
	}
	return fmt.Sprintf("set hosts[%d].gpus[%d].model (or defaults.gpus[%d].model), now %q, to a model of a family rdggen knows the PCIe link of: %s%s",
		h.Index, me.GPU, me.GPU, me.Model, strings.Join(nccltopo.GPUFamilies(), ", "), hand)
}

// checkGPUOrder is CheckGPUOrder, where vnuma gives the virtual NUMA node
// vSphere gave each of the VM's passthrough GPUs, in pciPassthru order (the
// esxi target's facts; Options.VNUMA): GPU g of the guest's bus order must
// be on node vnuma[g], or the topology file pairs rails with the wrong
// GPUs. Nothing without vnuma.
func checkGPUOrder(h *inventory.Host, s *railState, vnuma []int) []readiness.Result {
	if vnuma == nil || s.Facts == nil {
		return nil
	}
	const target = readiness.TargetHosts
	facts, err := railguest.ParseFacts(s.Facts.Data)
	if err != nil {
		return []readiness.Result{{Target: target, Machine: h.Name, Check: CheckGPUOrder, Status: readiness.Unknown, Found: err.Error()}}
	}
	gpus := facts.GPUs()
	var out []readiness.Result
	for g, node := range vnuma {
		subject := "GPU " + strconv.Itoa(g)
		switch {
		case g >= len(gpus):
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGPUOrder, Subject: subject, Status: readiness.Failed,
				Found: fmt.Sprintf("the guest shows %d GPU(s)", len(gpus)), Expected: fmt.Sprintf("GPU %d on NUMA node %d", g, node), Fix: "check that the VM's GPUs are passed through (rdggen check --target esxi)"})
		case gpus[g].NUMA != node:
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGPUOrder, Subject: subject, Status: readiness.Failed,
				Found: fmt.Sprintf("%s on NUMA node %d", gpus[g].BusID, gpus[g].NUMA), Expected: fmt.Sprintf("NUMA node %d (vSphere's pciPassthru%d)", node, g),
				Fix: "the guest does not number the GPUs in pciPassthru order: the topology file pairs rails with other GPUs; report it, and set gpus[].rail by the guest's order"})
		default:
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGPUOrder, Subject: subject, Status: readiness.Passed,
				Found: fmt.Sprintf("%s on NUMA node %d", gpus[g].BusID, node)})
		}
	}
	return out
}

// railChecks are the rails' check names, in report order.
var railChecks = []string{CheckRailLink, CheckRailRouting, CheckRailGateway, CheckRailSysctl, CheckTopology, CheckGPUOrder}
