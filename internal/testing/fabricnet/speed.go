package fabricnet

import (
	"fmt"
	"strconv"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The speed each cabled port came up at. A veth has no speed of its own to
// negotiate (the kernel reports a fixed one), so the fabric keeps the
// speed each cable came up at, as a real link's two ends would agree on
// it: PlanSpeeds gives every cable of an inventory the speed the inventory
// plans for it (a correctly cabled fabric), SetSpeed changes one (a slower
// cable or optic, `rdggen lab`'s link-speed fault). The simulators' views
// show it (NVUEInterfaces: link.speed "400G"; ONYXOperational: "Actual
// speed" "400 Gbps"); a port without one shows the simulator's own.

// SetSpeed makes the link at end e run at gbps Gb/s (0: no speed known),
// at both its ends when it is cabled to another switch's port. A port
// keeps its speed when its cable is pulled (Unplug), so that a port cabled
// again (Plug, Attach) runs as before.
func (f *Fabric) SetSpeed(e End, gbps int) {
	f.t.Helper()
	f.setSpeed(e, gbps)
	f.mu.Lock()
	far, ok := f.cables[e]
	f.mu.Unlock()
	if ok {
		f.setSpeed(far, gbps)
	}
}

func (f *Fabric) setSpeed(e End, gbps int) {
	n := f.node(e.Switch)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.speed == nil {
		n.speed = map[string]int{}
	}
	n.speed[IfName(n.sw.OS, e.Port)] = gbps
}

// PlanSpeeds sets every port of the fabric's switches that inv cables (its
// fabric.links and its hosts' data ports) to the speed inv plans for its
// link (inventory.FabricPlan.LinkSpeedGbps): what `rdggen check` expects of
// a correctly cabled fabric. Switches of inv that the fabric does not run
// are left out.
func (f *Fabric) PlanSpeeds(inv *inventory.Inventory) {
	f.t.Helper()
	fp := inv.FabricPlan()
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		if f.switches[sw.Name] == nil {
			continue
		}
		for _, u := range fp.Uplinks(sw.Name) {
			f.setSpeed(End{sw.Name, sw.PortName(u.Port)}, fp.LinkSpeedGbps(sw, u.Port))
		}
		for _, h := range fp.Hosts(sw.Name) {
			f.setSpeed(End{sw.Name, sw.PortName(h.Data.Port)}, fp.LinkSpeedGbps(sw, h.Data.Port))
		}
	}
}

// speedOf is the speed of n's port ifname in Gb/s, 0 when none is set.
func (n *node) speedOf(ifname string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.speed[ifname]
}

// Hub joins the ends (switch ports, each free: Unplug them first) on one
// shared segment, as an unmanaged switch or a bridge between them would: a
// Linux bridge in a namespace of its own (rdg<slot>fhub<N>) that forwards
// LLDP frames (group_fwd_mask bit 14, 01:80:c2:00:00:0e), so that each end
// hears every other's LLDP neighbor, the miswire of two neighbors on one
// port. The switches are programmed again; the namespace goes with the
// fabric.
func (f *Fabric) Hub(ends ...End) {
	f.t.Helper()
	f.mu.Lock()
	f.hubs++
	ns := fmt.Sprintf("rdg%dfhub%d", f.Slot, f.hubs)
	f.mu.Unlock()
	f.must("ip", "netns", "add", ns)
	f.mu.Lock()
	f.hosts = append(f.hosts, ns)
	f.mu.Unlock()
	f.batch(ns, "link set lo up", "link add hub type bridge", "link set hub up")
	if out, err := f.exec(ns, "sh", "-c", "echo 16384 > /sys/class/net/hub/bridge/group_fwd_mask"); err != nil {
		f.t.Fatalf("fabricnet: hub %s: group_fwd_mask: %v: %s", ns, err, out)
	}
	var nodes []*node
	for i, e := range ends {
		n := f.node(e.Switch)
		name := IfName(n.sw.OS, e.Port)
		peer := "p" + strconv.Itoa(i)
		f.batch(n.ns, "link add "+name+" type veth peer name "+peer+" netns "+ns, "link set "+name+" up")
		f.batch(ns, "link set "+peer+" master hub", "link set "+peer+" up")
		n.mu.Lock()
		n.ports[name] = true
		n.mu.Unlock()
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		f.reprogram(n)
	}
}
