package hostapply

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// rdmaPort is the port of the VF's RDMA device: a ConnectX VF has one.
const rdmaPort = horovod.RDMAPort

// Check names of the hosts target, in the order they are reported.
const (
	CheckRDMADevice = "rdma-device" // horovod.hca exists
	CheckPortState  = "port-state"  // its port is ACTIVE, link layer Ethernet
	CheckGID        = "gid"         // the data address has a RoCE v2 GID (its index is read at launch)
	CheckRDMAMTU    = "rdma-mtu"    // the port's active MTU (ibv_devinfo, when installed)
	CheckMTU        = "mtu"         // the data interface's MTU
	CheckRoCEQoS    = "roce-qos"    // the RoCE ToS/traffic class the host script sets
	CheckDocker0    = "docker0"     // docker0 carries bip
	CheckDocker     = "docker"      // daemon.json as merged by apply
	CheckForwarding = "forwarding"  // net.ipv4.ip_forward
	CheckRoutes     = "routes"      // a route to every other host's container subnet (or the pool via the switch)
	CheckFirewall   = "firewall"    // RDGGEN-CONTAINERS, first in DOCKER-USER
	CheckNAT        = "nat"         // RDGGEN-POSTROUTING, first in nat POSTROUTING
	CheckFiles      = "files"       // the scripts and units apply installs
	// CheckConfig replaces the checks from CheckMTU on when apply could not
	// plan the host (a daemon.json that is not JSON, the data address
	// missing): failed with apply's message, or Unknown.
	CheckConfig = "config"
)

// rdmaProbe appends the read of the RDMA device's port: the device list,
// the port's state and link layer, its GID table as "INDEX\tGID\tTYPE\tNDEV"
// lines (drivers/infiniband/core/sysfs.c: ports/<p>/gids/<i>,
// gid_attrs/types/<i>, gid_attrs/ndevs/<i>; an unused slot reads as the
// zero GID and its attributes fail to read), and ibv_devinfo's port view
// when it is installed. Paths are under $R (the root prefix).
func rdmaProbe(w *remote.Script, hca string) {
	w.Set("hca", hca)
	w.Set("port", strconv.Itoa(rdmaPort))
	w.Text(script("rdma.sh"))
}

// rdmaState is what rdmaProbe read.
type rdmaState struct {
	Devices []string       // the RDMA devices present
	State   *remote.Result // ports/1/state, nil when the port is absent
	// Layer is ports/1/link_layer ("Ethernet", "InfiniBand"); "" when it
	// could not be read, LayerErr then says why.
	Layer    string
	LayerErr string
	GIDs     []hostqos.GID
	// ActiveMTU is ibv_devinfo's active_mtu in bytes; 0 when not read.
	ActiveMTU int
}

var reActiveMTU = regexp.MustCompile(`active_mtu:\s*(\d+)`)

func parseRDMA(rs []remote.Result) rdmaState {
	var s rdmaState
	for i := range rs {
		r := &rs[i]
		switch r.Name {
		case "ibdevs":
			if r.RC() == 0 {
				s.Devices = strings.Fields(string(r.Data))
			}
		case "ibstate":
			s.State = r
		case "iblayer":
			switch text := strings.TrimSpace(string(r.Data)); {
			case r.RC() != 0:
				s.LayerErr = remote.FirstLine(text)
			case text == "":
				s.LayerErr = "link_layer is empty"
			default:
				s.Layer = text
			}
		case "gids":
			s.GIDs = hostqos.ParseGIDTable(r.Data)
		case "ibvinfo":
			if m := reActiveMTU.FindSubmatch(r.Data); m != nil && r.RC() == 0 {
				s.ActiveMTU, _ = strconv.Atoi(string(m[1]))
			}
		}
	}
	return s
}

// Check is `rdggen check --target hosts`: per VM, over one SSH round trip
// that changes nothing, apply's probe (the plan's differences become
// failures, by what they concern) plus the RDMA device of horovod.hca (its
// port state, the RoCE v2 GID of the data address, the port's active MTU)
// and the guest's readiness for GPUDirect RDMA (guest.go: EFI, the GPUs and
// their BAR1, the NVIDIA driver, nvidia-peermem, the verbs device, Docker's
// NVIDIA runtime). DryRun, Gate, DockerValidate and DockerRestart are ignored.
// The error names the hosts that could not be read; their checks are
// Unknown.
func Check(ctx context.Context, inv *inventory.Inventory, o Options) ([]readiness.Result, error) {
	return driver.CheckEach(inv.Hosts, o.Parallel, o.Track, fmt.Sprintf("checking %d VM(s) over SSH", len(inv.Hosts)),
		func(h *inventory.Host) []readiness.Result { return checkHost(ctx, inv, &o, h) })
}

func checkHost(ctx context.Context, inv *inventory.Inventory, o *Options, h *inventory.Host) []readiness.Result {
	const target = readiness.TargetHosts
	unsure := func(err error) []readiness.Result { return driver.Unread(target, h.Name, err) }
	conn, err := o.Dial(ctx, h)
	if err != nil {
		return unsure(remote.DialError(err))
	}
	defer conn.Close()
	d := desiredFor(inv, h)
	root := o.rootFor(h)
	w := remote.NewScript(root)
	roceVar(w, d.RoCEScript)
	probe(w, d)
	rdmaProbe(w, inv.Horovod.HCA)
	guestProbe(w, inv)
	if d.Rails != nil && d.Rails.Guest != nil {
		pingProbe(w)
	}
	stdout, _, err := conn.Run(ctx, w.End())
	if err != nil {
		return unsure(err)
	}
	rs, err := remote.ParseResults(stdout, w.Nonce())
	if err != nil {
		return unsure(err)
	}
	st, err := parseState(rs, root, d.paths())
	if err != nil {
		return unsure(err)
	}
	out := checkRDMA(inv, h, parseRDMA(rs))
	out = append(out, checkGuest(inv, h, parseGuest(rs), parsePeermem(st.Peermem.Out), st.Files[dockernet.DaemonPath])...)
	out = append(out, checkConfig(inv, h, d, st, o.planFor())...)
	if d.Rails != nil {
		var vnuma []int
		if o.VNUMA != nil {
			vnuma = o.VNUMA(h)
		}
		out = append(out, checkRails(inv, h, d, st, vnuma)...)
	}
	return out
}

// fixHosts is the fix of a difference of check k that apply --target hosts
// repairs; routes.sh, the generated script, also repairs forwarding, the
// MTU, the firewall, address translation and the routes (not daemon.json,
// the RoCE settings or the installed files).
func fixHosts(h *inventory.Host, k string) string {
	switch k {
	case CheckForwarding, CheckMTU, CheckFirewall, CheckNAT, CheckRoutes:
		return "rdggen apply --target hosts (or run hosts/" + h.Name + "/routes.sh on " + h.Name + ")"
	}
	return "rdggen apply --target hosts"
}

// checkRDMA judges the RDMA device of horovod.hca from what rdmaProbe read.
func checkRDMA(inv *inventory.Inventory, h *inventory.Host, s rdmaState) []readiness.Result {
	const target = readiness.TargetHosts
	hca := inv.Horovod.HCA
	dev := fmt.Sprintf("%s port %d", hca, rdmaPort)
	if !slices.Contains(s.Devices, hca) {
		found := "no RDMA device"
		if len(s.Devices) > 0 {
			found = "RDMA devices " + strings.Join(s.Devices, ", ") + ", not " + hca
		}
		needs := "needs " + hca + ", which is absent"
		return []readiness.Result{
			readiness.Result{Target: target, Machine: h.Name, Check: CheckRDMADevice, Subject: hca, Status: readiness.Failed, Found: found, Expected: hca + " (horovod.hca, NCCL_IB_HCA)", Fix: "set horovod.hca to the VF's device (ls /sys/class/infiniband on " + h.Name + "), or load mlx5_ib and check that the VF is passed through (rdggen check --target esxi)"},

			readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Unknown, Found: needs},
			readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Unknown, Found: needs},
		}
	}
	out := []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckRDMADevice, Subject: hca, Status: readiness.Passed, Found: "/sys/class/infiniband/" + hca}}

	// Port state: "4: ACTIVE" (drivers/infiniband/core/sysfs.c, state_show).
	switch {
	case s.State == nil:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Failed, Found: "no port " + strconv.Itoa(rdmaPort), Expected: "4: ACTIVE", Fix: "check the VF and its driver on " + h.Name})
	case s.State.RC() != 0:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Unknown, Found: "cannot read its state: " + remote.FirstLine(string(s.State.Data))})
	default:
		state := strings.TrimSpace(string(s.State.Data))
		_, name, _ := strings.Cut(state, ": ")
		switch {
		case name != "ACTIVE":
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Failed, Found: state, Expected: "4: ACTIVE", Fix: "bring the data link up (ip link set " + h.DataInterface + " up) and check its switch port (rdggen check --target switch)"})
		case s.Layer == "":
			// An ACTIVE port of unknown link layer may be InfiniBand: no
			// RoCE. Not a pass.
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Unknown, Found: state + ", link layer not read (" + orText(s.LayerErr, "not probed") + ")", Expected: "link layer Ethernet (RoCE)", Fix: "read it on " + h.Name + ": cat /sys/class/infiniband/" + hca + "/ports/" + strconv.Itoa(rdmaPort) + "/link_layer (or ibv_devinfo -d " + hca + "); it must say Ethernet"})
		case s.Layer != "Ethernet":
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Failed, Found: state + ", link layer " + s.Layer, Expected: "link layer Ethernet (RoCE)", Fix: "set the ConnectX port type to Ethernet (mlxconfig LINK_TYPE_P1=2) on the ESXi host"})
		default:
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckPortState, Subject: dev, Status: readiness.Passed, Found: state + ", link layer " + s.Layer})
		}
	}

	// GID: the RoCE v2 entry of the data address; its index is the one the
	// launch reads (rdggen run, run.sh).
	addr := h.Data.Address.Addr()
	expected := fmt.Sprintf("a RoCE v2 GID of %s (rdggen run and run.sh read its index at launch for %s)", addr, horovod.GIDIndexVar)
	g, ok := hostqos.FindRoCEv2(s.GIDs, addr)
	switch {
	case s.State == nil:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Unknown, Found: "no port to read the GID table of"})
	case !ok:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Failed, Found: "no RoCE v2 GID of " + addr.String() + " (" + gidSummary(s.GIDs) + ")", Expected: expected, Fix: "give " + h.DataInterface + " the address " + h.Data.Address.String() + " (the GID table follows the interface's addresses), and enable RoCE v2 on " + hca})
	case g.NetDev == "":
		// The GID's network device (gid_attrs/ndevs) could not be read: the
		// address may sit on another interface than data_interface, whose
		// traffic then leaves by another port. Not a pass.
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Unknown, Found: g.String() + ": its network device could not be read (gid_attrs/ndevs/" + strconv.Itoa(g.Index) + ")", Expected: expected + " on " + h.DataInterface, Fix: "read it on " + h.Name + ": cat /sys/class/infiniband/" + hca + "/ports/" + strconv.Itoa(rdmaPort) + "/gid_attrs/ndevs/" + strconv.Itoa(g.Index) + " (or show_gids); it must say " + h.DataInterface})
	case g.NetDev != h.DataInterface:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Failed, Found: g.String(), Expected: expected + " on " + h.DataInterface, Fix: "set hosts[].data_interface to " + g.NetDev + " or move the address to " + h.DataInterface})
	default:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckGID, Subject: dev, Status: readiness.Passed, Found: g.String()})
	}

	// Active MTU, when ibv_devinfo is there to say it.
	if s.ActiveMTU > 0 {
		if wantMTU := hostqos.RoCEPathMTU(h.DataMTU); s.ActiveMTU != wantMTU {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckRDMAMTU, Subject: dev, Status: readiness.Failed, Found: fmt.Sprintf("active_mtu %d", s.ActiveMTU), Expected: fmt.Sprintf("active_mtu %d (the largest RoCE MTU that fits data_mtu %d)", wantMTU, h.DataMTU), Fix: "set the MTU of " + h.DataInterface + " to " + strconv.Itoa(h.DataMTU) + " (rdggen apply --target hosts) and of the switch port and the ESXi vSwitch (rdggen apply)"})
		} else {
			out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckRDMAMTU, Subject: dev, Status: readiness.Passed, Found: fmt.Sprintf("active_mtu %d", s.ActiveMTU)})
		}
	}
	return out
}

// orText is s, or alt when s is empty.
func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// gidSummary lists a GID table's used entries for a finding ("index 0: RoCE
// v1 fe80::… on enp1f0, …"), or says it is empty.
func gidSummary(table []hostqos.GID) string {
	var used []string
	for _, g := range table {
		if g.Used() {
			used = append(used, g.String())
		}
	}
	if len(used) == 0 {
		return "the GID table has no entry"
	}
	return "GID table: " + strings.Join(used, ", ")
}

// configCheck says which check a change of apply's plan belongs to.
func configCheck(c applyplan.Change) string {
	switch {
	case c.Item == dockernet.DaemonPath || c.Item == "restart docker":
		return CheckDocker
	case strings.HasPrefix(c.Item, "sysctl "):
		return CheckForwarding
	case strings.HasPrefix(c.Item, "link ") && strings.HasSuffix(c.Item, " mtu"):
		return CheckMTU
	case strings.HasPrefix(c.Item, "iptables nat "):
		return CheckNAT
	case strings.HasPrefix(c.Item, "iptables "):
		return CheckFirewall
	case strings.HasPrefix(c.Item, "route "):
		return CheckRoutes
	case strings.HasPrefix(c.Item, "roce "):
		return CheckRoCEQoS
	}
	return CheckFiles
}

// checkConfig turns apply's plan for the host into results: each change is a
// failure of the check it concerns; a check without changes passes, saying
// what was found.
func checkConfig(inv *inventory.Inventory, h *inventory.Host, d *desired, st *hostState, po planOpts) []readiness.Result {
	const target = readiness.TargetHosts
	p, err := makePlan(inv, d, st, po)
	if err != nil {
		var he *hostError
		if errors.As(err, &he) {
			return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckConfig, Subject: "", Status: readiness.Failed, Found: he.msg, Expected: "a host apply can configure", Fix: "fix what the message says, then rdggen apply --target hosts"}}
		}
		return []readiness.Result{readiness.Result{Target: target, Machine: h.Name, Check: CheckConfig, Subject: "", Status: readiness.Unknown, Found: err.Error()}}
	}
	failed := map[string][]applyplan.Change{}
	for _, c := range p.changes() {
		if c.Item == peermemItem {
			continue // the peermem check says it, with why
		}
		if isRailItem(c.Item) {
			continue // the rails' checks say it, per rail (checkRails)
		}
		k := configCheck(c)
		failed[k] = append(failed[k], c)
	}
	mtu, _ := parseLink(st.Link.Out)
	bridge := parseAddrs(st.Docker0.Out)
	passed := map[string]string{
		CheckMTU:        fmt.Sprintf("%s mtu %d", h.DataInterface, mtu),
		CheckRoCEQoS:    roceFound(st),
		CheckDocker:     dockernet.DaemonPath + " has rdggen's keys",
		CheckForwarding: dockernet.ForwardingKey + " = " + strings.TrimSpace(st.Forwarding.Out),
		CheckRoutes:     routesFound(inv, d, h),
		CheckFirewall:   dockernet.FirewallChain + " first in " + dockernet.DockerUserChain,
		CheckNAT:        dockernet.NATChain + " first in nat POSTROUTING",
		CheckFiles:      fmt.Sprintf("%d file(s) and link(s) as generated", p.managed),
	}
	var out []readiness.Result
	for _, k := range []string{CheckMTU, CheckRoCEQoS} {
		out = append(out, configResults(h, k, failed[k], passed[k])...)
	}
	// docker0 carries bip: Docker applied daemon.json.
	switch {
	case st.Docker0.RC != 0:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDocker0, Subject: "", Status: readiness.Failed, Found: "no docker0 (" + remote.FirstLine(st.Docker0.Out) + ")", Expected: h.Bridge().String(), Fix: "install and start Docker, then rdggen apply --target hosts"})
	case !slices.Contains(bridge, h.Bridge()):
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDocker0, Subject: "", Status: readiness.Failed, Found: fmt.Sprint(bridge), Expected: h.Bridge().String() + " (bip)", Fix: "restart Docker after rdggen apply --target hosts has set bip in " + dockernet.DaemonPath})
	default:
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: CheckDocker0, Subject: "", Status: readiness.Passed, Found: h.Bridge().String()})
	}
	for _, k := range []string{CheckDocker, CheckForwarding, CheckRoutes, CheckFirewall, CheckNAT, CheckFiles} {
		out = append(out, configResults(h, k, failed[k], passed[k])...)
	}
	return out
}

// configResults is check k's result: passed with found, or one failure per change.
func configResults(h *inventory.Host, k string, changes []applyplan.Change, found string) []readiness.Result {
	if len(changes) == 0 {
		return []readiness.Result{readiness.Result{Target: readiness.TargetHosts, Machine: h.Name, Check: k, Subject: "", Status: readiness.Passed, Found: found}}
	}
	out := make([]readiness.Result, 0, len(changes))
	for _, c := range changes {
		was, want := c.From, c.To
		switch {
		case c.Op == applyplan.Add && was == "":
			was = "absent"
		case c.Op == applyplan.Remove:
			was, want = "present", "absent (not in the inventory)"
		case was == "":
			was = "differs"
		}
		if want == "" {
			want = strings.TrimSpace(strings.TrimLeft(c.Text, "+~-"))
		}
		out = append(out, readiness.Result{Target: readiness.TargetHosts, Machine: h.Name, Check: k, Subject: c.Item, Status: readiness.Failed, Found: was, Expected: want, Fix: fixHosts(h, k)})
	}
	return out
}

// roceFound summarises the RoCE script's report: what is set, what does not
// apply here.
func roceFound(st *hostState) string {
	var parts []string
	for _, r := range roceResults(st.RoCE.Out) {
		switch r.State {
		case hostqos.StateOK:
			parts = append(parts, r.Name+" "+r.Detail)
		case hostqos.StateNA:
			parts = append(parts, r.Name+" n/a")
		}
	}
	return strings.Join(parts, ", ")
}

// routesFound describes the routes a passing routes check found.
func routesFound(inv *inventory.Inventory, d *desired, h *inventory.Host) string {
	if inv.Docker.SwitchRouted() && len(d.Routes) >= 1 {
		// The pool route first (dockernet.Routes); in a leaf-spine fabric
		// each other leaf's data subnet follows, via the same gateway:
		// 1 + (leaves − 1) routes.
		r := d.Routes[0]
		found := fmt.Sprintf("the container pool %s via %s (%s) on %s", r.Dst, r.Via, r.Host, h.DataInterface)
		if len(d.Routes) > 1 {
			var others []string
			for _, o := range d.Routes[1:] {
				others = append(others, o.Dst.String())
			}
			found += fmt.Sprintf(", and the other leaves' data subnets %s via %s", strings.Join(others, ", "), d.Routes[1].Via)
		}
		return found
	}
	return fmt.Sprintf("%d route(s) to the other hosts' container subnets via %s", len(d.Routes), h.DataInterface)
}

// NotReadySummary names the hosts of GIDIndexes' bad results in one
// clause, those that could not be read apart from those read without a
// usable RoCE v2 GID: "no usable RoCE v2 GID on vm-03; not read over SSH:
// vm-01, vm-02".
func NotReadySummary(bad []readiness.Result) string {
	var noGID, unread []string
	for _, r := range bad {
		list := &noGID
		if r.Check == driver.CheckConnect {
			list = &unread
		}
		if !slices.Contains(*list, r.Machine) {
			*list = append(*list, r.Machine)
		}
	}
	var parts []string
	if len(noGID) > 0 {
		parts = append(parts, "no usable RoCE v2 GID on "+strings.Join(noGID, ", "))
	}
	if len(unread) > 0 {
		parts = append(parts, "not read over SSH: "+strings.Join(unread, ", "))
	}
	return strings.Join(parts, "; ")
}

// GIDIndexes reads every host's RDMA device and GID table as Check does
// (one SSH round trip per VM, o.Parallel at a time, paths under o.Root) and
// returns, in inventory order, the index of the RoCE v2 GID of each host's
// data address: the NCCL_IB_GID_INDEX a job must use there. A host whose
// device, port or GID check does not pass has index -1, and those failed
// (or unknown) results come back in bad, with its connection's failure when
// it could not be read. `rdggen run` launches only when bad is empty.
func GIDIndexes(ctx context.Context, inv *inventory.Inventory, o Options) (gids []int, bad []readiness.Result) {
	gids = make([]int, len(inv.Hosts))
	rs, _ := driver.CheckEach(inv.Hosts, o.Parallel, o.Track, fmt.Sprintf("reading the GID tables of %d VM(s) over SSH", len(inv.Hosts)),
		func(h *inventory.Host) []readiness.Result {
			gids[h.Index] = -1
			conn, err := o.Dial(ctx, h)
			if err != nil {
				return driver.Unread(readiness.TargetHosts, h.Name, remote.DialError(err))
			}
			defer conn.Close()
			w := remote.NewScript(o.rootFor(h))
			rdmaProbe(w, inv.Horovod.HCA)
			stdout, _, err := conn.Run(ctx, w.End())
			if err == nil {
				var rs []remote.Result
				if rs, err = remote.ParseResults(stdout, w.Nonce()); err == nil {
					s := parseRDMA(rs)
					out := checkRDMA(inv, h, s)
					if g, ok := hostqos.FindRoCEv2(s.GIDs, h.Data.Address.Addr()); ok && !slices.ContainsFunc(out, func(r readiness.Result) bool {
						return r.Status != readiness.Passed && r.Check != CheckRDMAMTU
					}) {
						gids[h.Index] = g.Index
					}
					return out
				}
			}
			return driver.Unread(readiness.TargetHosts, h.Name, err)
		})
	for _, r := range rs {
		if r.Status != readiness.Passed && r.Check != CheckRDMAMTU {
			bad = append(bad, r)
		}
	}
	return gids, bad
}
