package inventory

import (
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/readiness"
)

func loadGolden(t *testing.T, name string) *Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/" + name + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// The plan's index answers as the inventory's own scans do: every
// switch's uplinks (numbered /31s oriented from the switch) and hosts, and
// each link seen from its far end.
func TestFabricPlanIndex(t *testing.T) {
	for _, golden := range []string{"fabric-cumulus", "fabric-onyx", "fabric-mixed", "reference"} {
		inv := loadGolden(t, golden)
		p := inv.FabricPlan()
		same := cmp.Options{cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
			cmp.Comparer(func(a, b *Switch) bool { return a == b }), cmp.Comparer(func(a, b *Host) bool { return a == b })}
		for _, sw := range inv.Switches {
			if d := cmp.Diff(inv.Uplinks(sw.Name), p.Uplinks(sw.Name), same); d != "" {
				t.Errorf("%s %s: uplinks (-scan +plan):\n%s", golden, sw.Name, d)
			}
			if d := cmp.Diff(inv.HostsOnSwitch(sw.Name), p.Hosts(sw.Name), same); d != "" {
				t.Errorf("%s %s: hosts (-scan +plan):\n%s", golden, sw.Name, d)
			}
			for _, u := range p.Uplinks(sw.Name) {
				far, ok := p.Far(u)
				if !ok || far.Peer == nil || far.Peer.Name != sw.Name || far.Port != u.PeerPort || far.PeerPort != u.Port || far.Local != u.Remote || far.Remote != u.Local {
					t.Errorf("%s %s link %d: far end %+v", golden, sw.Name, u.Link, far)
				}
			}
		}
	}
}

// The BGP neighbor of a session as each end names it: the uplink's port
// between two Cumulus switches (unnumbered), the peer's /31 address where
// ONYX is at an end.
func TestUplinkNeighbor(t *testing.T) {
	inv := loadGolden(t, "fabric-mixed")
	p := inv.FabricPlan()
	var got []string
	for _, sw := range inv.Switches {
		for _, u := range p.Uplinks(sw.Name) {
			got = append(got, fmt.Sprintf("%s→%s %s", sw.Name, u.Peer.Name, u.Neighbor(sw)))
		}
	}
	want := "spine1→leaf1 swp1, spine1→leaf2 10.254.10.4, spine2→leaf1 10.254.10.2, spine2→leaf2 10.254.10.6, " +
		"leaf1→spine1 swp31, leaf1→spine2 10.254.10.3, leaf2→spine1 10.254.10.5, leaf2→spine2 10.254.10.7"
	if g := strings.Join(got, ", "); g != want {
		t.Errorf("neighbors:\n got %s\nwant %s", g, want)
	}
}

// The speed each cabled port comes up at: on the golden Cumulus fabric
// (SN5600) the uplinks at 800 Gb/s, the hosts' lanes at their ConnectX-7's
// 400 Gb/s; on the mixed fabric a link between an SN3700 (200 Gb/s) and an
// SN2700 (100 Gb/s) at the lower, a host's port at its NIC's 100 Gb/s; an
// uncabled port 0.
func TestLinkSpeedGbps(t *testing.T) {
	for _, c := range []struct {
		golden, sw, port string
		want             int
	}{
		{"fabric-cumulus", "leaf1", "swp63", 800},
		{"fabric-cumulus", "spine2", "swp2", 800},
		{"fabric-cumulus", "leaf1", "swp1s0", 400},
		{"fabric-cumulus", "leaf1", "swp5", 0},
		{"fabric-mixed", "leaf1", "swp31", 200},
		{"fabric-mixed", "spine1", "swp2", 100},
		{"fabric-mixed", "leaf2", "1/31", 100},
	} {
		inv := loadGolden(t, c.golden)
		sw := inv.Switch(c.sw)
		port, err := parsePortForTest(sw, c.port)
		if err != nil {
			t.Fatal(err)
		}
		if got := inv.FabricPlan().LinkSpeedGbps(sw, port); got != c.want {
			t.Errorf("%s %s %s: %d Gb/s, want %d", c.golden, c.sw, c.port, got, c.want)
		}
	}
}

// parsePortForTest finds the port of switch sw named name among the
// ports the inventory cables (a link's end or a host's data port), or a
// whole port swpN / 1/N.
func parsePortForTest(sw *Switch, name string) (Port, error) {
	for n := 1; n <= 64; n++ {
		for lane := 0; lane <= MaxLanes; lane++ {
			p := Port{Module: 1, Number: n, Lane: lane}
			if sw.PortName(p) == name {
				return p, nil
			}
		}
	}
	return Port{}, fmt.Errorf("%s: no port %q", sw.Name, name)
}

// fabricWithSecondCable is the golden fabric-cumulus inventory with a
// second cable between leaf1 and spine1: leaf1 swp62 ↔ spine1 swp3.
func fabricWithSecondCable(t *testing.T) *Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src = []byte(strings.Replace(string(src), "  links:\n", "  links:\n    - {switch: leaf1, port: swp62, peer: spine1, peer_port: swp3}\n", 1))
	inv, err := Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// MiswireFrom names, for a miswired uplink, the LLDP finding it follows
// from: for a cable moved, the end it reached; for cables swapped or
// rotated at a switch, the port whose planned end it hears, so that the
// ports make a cycle (readiness.Causes names its first one); for two
// cables swapped between the same two switches (the swap shows at both),
// the switch whose name sorts first holds the cycle and the other's ends
// follow from the ends they reached.
func TestMiswireFrom(t *testing.T) {
	inv := fabricWithSecondCable(t)
	p := inv.FabricPlan()
	up := func(sw, port string) Uplink {
		for _, u := range p.Uplinks(sw) {
			if inv.Switch(sw).PortName(u.Port) == port {
				return u
			}
		}
		t.Fatalf("no uplink %s %s", sw, port)
		return Uplink{}
	}
	for _, tc := range []struct{ sw, port, far, farPort, want string }{
		// leaf1 swp63 ↔ swp64 swapped: each follows from the other.
		{"leaf1", "swp63", "spine2", "swp1", "leaf1 swp64"},
		{"leaf1", "swp64", "spine1", "swp1", "leaf1 swp63"},
		{"spine1", "swp1", "leaf1", "swp64", "leaf1 swp64"},
		{"spine2", "swp1", "leaf1", "swp63", "leaf1 swp63"},
		// One cable moved: leaf1 swp64 to spine1 swp2 (leaf2 swp63's end).
		{"leaf1", "swp64", "spine1", "swp2", "spine1 swp2"},
		// A neighbor that is no uplink's end: none.
		{"leaf1", "swp64", "spine1", "swp9", ""},
		// leaf1 swp62 ↔ swp63 swapped, both to spine1: leaf1 holds the
		// cycle; spine1's ends follow from what they hear.
		{"leaf1", "swp62", "spine1", "swp1", "leaf1 swp63"},
		{"leaf1", "swp63", "spine1", "swp3", "leaf1 swp62"},
		{"spine1", "swp3", "leaf1", "swp63", "leaf1 swp63"},
		{"spine1", "swp1", "leaf1", "swp62", "leaf1 swp62"},
		// Three cables rotated at leaf1 (swp62 to swp63's end, swp63 to
		// swp64's, swp64 to swp62's): one cycle, swp62 → swp63 → swp64
		// → swp62, where taking the first of two swapped ports in
		// fabric.links as a root made two (swp62 and swp63). swp62's
		// and swp63's rows are above; the far ends follow from the
		// leaf1 ports they hear.
		{"leaf1", "swp64", "spine1", "swp3", "leaf1 swp62"},
		{"spine1", "swp1", "leaf1", "swp62", "leaf1 swp62"},
		{"spine2", "swp1", "leaf1", "swp63", "leaf1 swp63"},
		{"spine1", "swp3", "leaf1", "swp64", "leaf1 swp64"},
	} {
		x, port, ok := p.MiswireFrom(inv.Switch(tc.sw), up(tc.sw, tc.port), inv.Switch(tc.far), tc.farPort)
		got := ""
		if ok {
			got = x.Name + " " + x.PortName(port)
		}
		if got != tc.want {
			t.Errorf("%s %s hears %s %s: follows from %q, want %q", tc.sw, tc.port, tc.far, tc.farPort, got, tc.want)
		}
	}
}

// Cables rotated among uplinks, each port's cable moved to the next one's
// planned far end, are one fault: the LLDP findings of every end touched,
// each following from what MiswireFrom names, give readiness.Causes one
// cause, whether the ports are on one switch or on two (leaf1 swp63 and
// swp64 and leaf2 swp63), and whatever order the check lists them in
// (switches in file order, spines first, as the checks run). Taking the
// first of two swapped ports in fabric.links as a root, as before, made
// two causes of the one-switch rotation and three of the other.
func TestMiswireRotationOneCause(t *testing.T) {
	inv := fabricWithSecondCable(t)
	p := inv.FabricPlan()
	type end struct{ sw, port string }
	uplink := func(e end) Uplink {
		for _, u := range p.Uplinks(e.sw) {
			if inv.Switch(e.sw).PortName(u.Port) == e.port {
				return u
			}
		}
		t.Fatalf("no uplink %v", e)
		return Uplink{}
	}
	far := func(e end) end {
		u := uplink(e)
		return end{u.Peer.Name, u.Peer.PortName(u.PeerPort)}
	}
	for _, tc := range []struct {
		rotated []end
		cause   string
	}{
		{[]end{{"leaf1", "swp62"}, {"leaf1", "swp63"}, {"leaf1", "swp64"}}, "leaf1 lldp swp62"},
		{[]end{{"leaf1", "swp63"}, {"leaf1", "swp64"}, {"leaf2", "swp63"}}, "spine1 lldp swp2"},
	} {
		// hears: each touched end and the end it hears now.
		hears := map[end]end{}
		for i, e := range tc.rotated {
			to := far(tc.rotated[(i+1)%len(tc.rotated)])
			hears[e], hears[to] = to, e
		}
		var rs []readiness.Result
		for _, sw := range inv.Switches {
			for n := 1; n <= 64; n++ {
				e := end{sw.Name, fmt.Sprintf("swp%d", n)}
				heard, ok := hears[e]
				if !ok {
					continue
				}
				r := readiness.Result{Machine: e.sw, Check: "lldp", Subject: e.port, Status: readiness.Failed}
				if x, port, ok := p.MiswireFrom(inv.Switch(e.sw), uplink(e), inv.Switch(heard.sw), heard.port); ok {
					r.After = readiness.DependsOn(readiness.Ref{Machine: x.Name, Check: "lldp", Subject: x.PortName(port)})
				}
				rs = append(rs, r)
			}
		}
		causes := readiness.Causes(rs)
		if len(causes) != 1 || causes[0].Ref.String() != tc.cause || len(causes[0].Explains) != len(rs)-1 {
			for _, r := range rs {
				t.Logf("%s after %v", r.Ref(), r.After.Refs())
			}
			t.Errorf("%v rotated: causes %+v, want one: %s, explaining the other %d", tc.rotated, causes, tc.cause, len(rs)-1)
		}
	}
}
