package lab

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Logf writes a line to the supervisor's log (fabricnet.TB).
func (h *hostsTB) Logf(f string, args ...any) { fmt.Fprintf(h.log, f+"\n", args...) }

// labFabric is the lab's switch data plane: behind each simulated switch,
// FRR (zebra, staticd, bfdd, bgpd) and lldpd in a network namespace of its
// own, cabled by the inventory's fabric.links (internal/testing/fabricnet),
// each running what its simulator's applied configuration says, and each
// simulator's operational views (BGP, BFD, routes, links, LLDP) read from
// them. The namespace hosts, when there are any, are cabled to their leaf
// ports, with the leaf's gateway as their default route.
type labFabric struct {
	tb  *hostsTB
	f   *fabricnet.Fabric
	inv *inventory.Inventory
	// vms are the bare namespaces standing in for the VMs' data ports
	// (without namespace hosts).
	vms []string
}

// fabricSummary is State.Fabric of a lab that runs the fabric.
const fabricSummary = "FRR (zebra, staticd, bfdd, bgpd) and lldpd behind every switch, each in its namespace, cabled by fabric.links; the hosts on their leaf ports"

// fabricUnanswered are the NotSimulated lines of a lab that runs the
// fabric: what `check --target switch` reads that the namespaces cannot
// show, answered by the simulators themselves.
var fabricUnanswered = []string{
	"the switches' PFC and ECN counters and their QoS hardware: a namespace's links carry no pause frames; check reads the simulators' counters, which stay 0",
}

// fabricNotRehearsed is the NotSimulated line of a fabric inventory whose
// fabric the lab does not run (why says why).
func fabricNotRehearsed(why string) string {
	return "the fabric (BGP, BFD, LLDP, routes and link speeds of the switches): " + why +
		"; check --target switch reports those checks FAILED or COULD NOT TELL"
}

// buildFabric runs inv's fabric behind the switches' simulators (servers,
// by switch name: each switchos.LabSwitch's Server), in
// the namespace hosts' slot when hs is not nil (their data interfaces are
// moved to their leaf ports) or in a slot of its own. It returns nil and ""
// for an inventory without a fabric (no switch has a role), nil and the
// reason when this machine cannot run one (not root, no FRR or lldpd: the
// reason is fabricnet's).
func buildFabric(inv *inventory.Inventory, dir string, log io.Writer, hs *hosts, servers map[string]any) (fb *labFabric, reason string) {
	if !inv.IsFabric() {
		return nil, ""
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Sprintf("the lab runs as uid %d, and FRR and lldpd in network namespaces need root", os.Geteuid())
	}
	tb := &hostsTB{dir: dir, log: log}
	defer tb.stopped("fabric", "fabricnet: ", func(why string) { fb, reason = nil, why })
	fabricnet.Require(tb)
	slot := 0
	if hs != nil {
		slot = hs.cluster.Slot
	}
	f := fabricnet.New(tb, fabricnet.SpecOf(inv), fabricnet.Options{Slot: slot})
	var vms []string
	for _, sw := range inv.Switches {
		if !f.Follow(sw.Name, servers[sw.Name]) {
			fmt.Fprintf(log, "fabric: %s: no data plane behind its simulator (fabricnet follows none of its OS)\n", sw.Name)
		}
	}
	if hs != nil {
		// Rail 0 (the data interface) with the default route via its
		// gateway; every other rail on its own leaf port, its routes
		// left to the hosts target.
		for _, h := range hs.cluster.Hosts {
			ih := &inv.Hosts[h.Index]
			if leaf := inv.LeafOf(ih); leaf != nil {
				f.AttachHost(h, leaf.Name, leaf.PortName(ih.Data.Port), ih.Data.Address, railGateway(inv, ih, 0, leaf))
			}
			for _, rl := range h.Rails {
				rail := ih.Rails[rl.Rail]
				if leaf := inv.Switch(rail.Switch); leaf != nil && leaf.IsLeaf() {
					f.AttachRail(h, rl, leaf.Name, leaf.PortName(rail.Port))
				}
			}
		}
	} else {
		// No namespace hosts: each VM's data ports (one per rail) are
		// cabled to a bare namespace with the rails' addresses (data0
		// for rail 0, data<r> for rail r) and rail 0's leaf as its
		// gateway, so the leaves' host ports are up and their static
		// routes to the hosts' container subnets have their next hops.
		for i := range inv.Hosts {
			ih := &inv.Hosts[i]
			ns := ""
			for r, rail := range ih.Rails {
				leaf := inv.Switch(rail.Switch)
				if leaf == nil || !leaf.IsLeaf() {
					continue
				}
				if ns == "" {
					ns = f.HostNS(fmt.Sprintf("vm%d", i+1))
					vms = append(vms, ns)
				}
				dev := fmt.Sprintf("data%d", r)
				f.Attach(leaf.Name, leaf.PortName(rail.Port), ns, dev)
				cmds := [][]string{{"addr", "add", rail.Address.String(), "dev", dev}}
				if r == 0 {
					cmds = append(cmds, []string{"route", "replace", "default", "via", railGateway(inv, ih, 0, leaf).String(), "dev", dev})
				}
				for _, args := range cmds {
					if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
						tb.Fatalf("fabric: %s: ip %s: %v: %s", ns, strings.Join(args, " "), err, out)
					}
				}
			}
		}
	}
	f.PlanSpeeds(inv)
	fmt.Fprintf(log, "fabric: FRR and lldpd behind %d switch(es), slot %d\n", len(inv.Switches), f.Slot)
	return &labFabric{tb: tb, f: f, inv: inv, vms: vms}, ""
}

// railGateway is the gateway of host h's rail r on leaf: the (leaf,
// rail) gateway of an inventory of several rails, else the leaf's.
func railGateway(inv *inventory.Inventory, h *inventory.Host, r int, leaf *inventory.Switch) netip.Addr {
	if gw := inv.RailGateway(h, r); gw.IsValid() {
		return gw
	}
	return leaf.Fabric.Gateway
}

func firstLine(s string) string {
	if first, _, more := strings.Cut(s, "\n"); more {
		return first + " (the rest in serve.log)"
	}
	return s
}

// namespaces are the switches' network namespaces, then the VMs' stand-ins.
func (fb *labFabric) namespaces() []string {
	var out []string
	for _, sw := range fb.f.Switches() {
		out = append(out, fb.f.NS(sw.Name))
	}
	return append(out, fb.vms...)
}

func (fb *labFabric) close() { fb.tb.teardown() }

// do runs a fault on the fabric: a fabricnet failure (its TB's Fatal)
// becomes an error, and the supervisor lives on.
func (fb *labFabric) do(f func() string) (msg string, err error) {
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(tbStop)
			if !ok {
				panic(r)
			}
			msg, err = "", fmt.Errorf("%s", firstLine(stop.msg))
		}
	}()
	return f(), nil
}

// end parses SWITCH:PORT, the port as the switch OS names it (swp63,
// 1/31), of a switch of the fabric.
func (fb *labFabric) end(fault, arg string) (fabricnet.End, *inventory.Switch, error) {
	name, port, err := splitEnd(fault, arg)
	if err != nil {
		return fabricnet.End{}, nil, err
	}
	sw := fb.inv.Switch(name)
	if sw == nil {
		return fabricnet.End{}, nil, endError(fault, arg)
	}
	return fabricnet.End{Switch: name, Port: port}, sw, nil
}

// farEnd is the planned far end of a fabric.links port.
func (fb *labFabric) farEnd(e fabricnet.End) (fabricnet.End, bool) {
	sw := fb.inv.Switch(e.Switch)
	for _, u := range fb.inv.Uplinks(e.Switch) {
		if sw.PortName(u.Port) == e.Port {
			return fabricnet.End{Switch: u.Peer.Name, Port: u.Peer.PortName(u.PeerPort)}, true
		}
	}
	return fabricnet.End{}, false
}

// fabricFault stages a fault of the fabric (Faults); ok is false when
// args name none.
func (s *supervisor) fabricFault(args []string) (msg string, ok bool, err error) {
	switch args[0] {
	case "miswire", "stop-bgp", "link-down", "link-speed", "repair":
	default:
		return "", false, nil
	}
	fb := s.fabric
	if fb == nil {
		why := s.fabricWhy
		if why == "" {
			why = "the inventory has no fabric (no switch has a role)"
		}
		return "", true, fmt.Errorf("%s: this lab runs no fabric: %s", args[0], why)
	}
	switch {
	case args[0] == "repair" && len(args) == 1:
		msg, err = fb.do(fb.repair)
		return msg, true, err
	case args[0] == "stop-bgp" && len(args) == 2:
		if fb.inv.Switch(args[1]) == nil {
			return "", true, fmt.Errorf("stop-bgp: no switch %q in the inventory", args[1])
		}
		msg, err = fb.do(func() string {
			fb.f.StopDaemon(args[1], "bgpd")
			return stopBGPMessage(args[1], s.dir)
		})
		return msg, true, err
	case args[0] == "link-down" && len(args) == 2:
		e, sw, err := fb.end("link-down", args[1])
		if err != nil {
			return "", true, err
		}
		ifname := fabricnet.IfName(fabricnet.OS(sw.OS()), e.Port)
		if out, err := exec.Command("ip", "-n", fb.f.NS(e.Switch), "link", "set", "dev", ifname, "down").CombinedOutput(); err != nil {
			return "", true, fmt.Errorf("link-down: %s: no cabled port %s: %s", e.Switch, e.Port, strings.TrimSpace(string(out)))
		}
		return fmt.Sprintf("%s: port %s set administratively down (`ip link set down` on the switch, outside rdggen's configuration); its far end has no carrier", e.Switch, e.Port), true, nil
	case args[0] == "link-speed" && len(args) == 3:
		e, sw, err := fb.end("link-speed", args[1])
		if err != nil {
			return "", true, err
		}
		gbps, err := parseGbps(args[2])
		if err != nil {
			return "", true, err
		}
		as, err := speedFault(fb.inv, sw, e.Port, gbps)
		if err != nil {
			return "", true, err
		}
		msg, err = fb.do(func() string {
			fb.f.SetSpeed(e, gbps)
			return fmt.Sprintf("%s: the link at %s came up at %dG (both its ends), %s", e.Switch, e.Port, gbps, as)
		})
		return msg, true, err
	case args[0] == "miswire" && len(args) == 3:
		a, _, err := fb.end("miswire", args[1])
		if err != nil {
			return "", true, err
		}
		b, _, err := fb.end("miswire", args[2])
		if err != nil {
			return "", true, err
		}
		fa, okA := fb.farEnd(a)
		fbe, okB := fb.farEnd(b)
		if !okA || !okB || a == b {
			return "", true, fmt.Errorf("miswire: %s and %s: want two different ports of fabric.links (the cables between switches)", args[1], args[2])
		}
		msg, err = fb.do(func() string {
			fb.f.Unplug(a, b)
			fb.f.Plug(fabricnet.Link{A: a, B: fbe}, fabricnet.Link{A: b, B: fa})
			return fmt.Sprintf("the cables at %s %s and %s %s are swapped: %s %s now goes to %s %s, %s %s to %s %s",
				a.Switch, a.Port, b.Switch, b.Port, a.Switch, a.Port, fbe.Switch, fbe.Port, b.Switch, b.Port, fa.Switch, fa.Port)
		})
		return msg, true, err
	}
	return "", true, errUsage
}

// speedFault judges `link-speed SWITCH:PORT GBPS` against the speed inv
// plans for the link on port (as switch sw's OS names it;
// inventory.FabricPlan.LinkSpeed: the lower of both ends'): a link comes up
// at most at the speed both its ends support, so a speed above the planned
// one is refused, naming what it follows from. as says what the fault
// stands for: a slower cable or optic, the planned speed itself, or
// another cable when the inventory plans no speed for the port.
func speedFault(inv *inventory.Inventory, sw *inventory.Switch, port string, gbps int) (as string, err error) {
	fp := inv.FabricPlan()
	var ports []inventory.Port
	for _, u := range fp.Uplinks(sw.Name) {
		ports = append(ports, u.Port)
	}
	for _, h := range fp.Hosts(sw.Name) {
		ports = append(ports, h.Data.Port)
	}
	want, basis := 0, ""
	for _, p := range ports {
		if sw.PortName(p) == port {
			want, basis = fp.LinkSpeed(sw, p)
			break
		}
	}
	switch {
	case want == 0:
		return "as with another cable or optic (the inventory plans no speed for this port)", nil
	case gbps > want:
		return "", fmt.Errorf("link-speed: %s %s: %dG is above the link's planned %d Gb/s (%s), the most both ends run at: a slower cable or optic is 1-%d", sw.Name, port, gbps, want, basis, want)
	case gbps == want:
		return fmt.Sprintf("its planned speed (%s)", basis), nil
	}
	return fmt.Sprintf("below its planned %d Gb/s, as with a slower cable or optic", want), nil
}

// stopBGPMessage is what `lab fault stop-bgp` says of switch sw in the
// lab directory dir: bgpd is stopped, and what starts it again here. The
// check's fix names a real switch's way (on Cumulus a restart of FRR from
// its shell, `sudo systemctl restart frr`, NVIDIA's Cumulus Linux user
// guide, "FRRouting"; on ONYX its BGP protocol's state), which a lab
// switch, a simulator in front of FRR, does not take; `rdggen lab fault
// repair` is the lab's way.
func stopBGPMessage(sw, dir string) string {
	return fmt.Sprintf("%s: bgpd stopped (FRR's BGP daemon, as a crash would stop it); check's fix names a real switch's way to start it, "+
		"which the lab's simulated switch does not take: here `rdggen lab fault repair --dir %s` starts it again", sw, quote.Sh(dir))
}

// repair undoes the fabric's faults and leaves alone what is as planned,
// as a person repairing a fabric does: a fabric.links cable plugged
// elsewhere (miswire) or pulled is cabled as planned again (fabricnet
// Unplug, Plug), every cabled port is up, every link at its planned speed,
// and bgpd starts again on each switch where it does not run (stop-bgp). A
// cable already as planned stays plugged and a running bgpd runs on, so the
// sessions that were not broken stay up and the others come up within
// seconds.
func (fb *labFabric) repair() string {
	spec := fabricnet.SpecOf(fb.inv)
	ifname := func(e fabricnet.End) (ns, dev string) {
		sw := fb.inv.Switch(e.Switch)
		return fb.f.NS(e.Switch), fabricnet.IfName(fabricnet.OS(sw.OS()), e.Port)
	}
	exists := func(e fabricnet.End) bool {
		ns, dev := ifname(e)
		return exec.Command("ip", "-n", ns, "link", "show", "dev", dev).Run() == nil
	}
	planned := func(l fabricnet.Link) bool {
		far, ok := fb.f.CabledTo(l.A)
		return ok && far == l.B && exists(l.A) && exists(l.B)
	}
	var replug []fabricnet.Link
	for _, l := range spec.Links {
		if !planned(l) {
			replug = append(replug, l)
		}
	}
	// Every wrong cable out first: a miswired port holds another link's end.
	var pull []fabricnet.End
	for _, l := range replug {
		for _, e := range []fabricnet.End{l.A, l.B} {
			if exists(e) {
				pull = append(pull, e)
			}
		}
	}
	fb.f.Unplug(pull...)
	fb.f.Plug(replug...)
	up := map[string][]string{} // namespace → `ip -batch` lines
	for _, l := range spec.Links {
		for _, e := range []fabricnet.End{l.A, l.B} {
			ns, dev := ifname(e)
			up[ns] = append(up[ns], "link set dev "+dev+" up")
		}
	}
	for i := range fb.inv.Hosts {
		for _, rail := range fb.inv.Hosts[i].Rails {
			if leaf := fb.inv.Switch(rail.Switch); leaf != nil && leaf.IsLeaf() {
				ns, dev := ifname(fabricnet.End{Switch: leaf.Name, Port: leaf.PortName(rail.Port)})
				up[ns] = append(up[ns], "link set dev "+dev+" up")
			}
		}
	}
	for ns, lines := range up {
		// -force: a host port that is not cabled does not stop the others.
		cmd := exec.Command("ip", "-force", "-n", ns, "-batch", "-")
		cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		_ = cmd.Run()
	}
	fb.f.PlanSpeeds(fb.inv)
	for _, sw := range fb.inv.Switches {
		if !fb.f.Running(sw.Name, "bgpd") {
			fb.f.StartDaemon(sw.Name, "bgpd")
		}
	}
	return "the fabric is cabled as fabric.links plans, every port up at its planned speed, bgpd running on every switch"
}
