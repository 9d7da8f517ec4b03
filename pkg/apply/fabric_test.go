package apply_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// cumulusFabric is the golden 2 × 2 Cumulus fabric (testdata/golden/
// fabric-cumulus) on fabricnet: each switch an nvuesim whose applied
// configuration FRR and the kernel follow, each host a stand-in namespace
// on its leaf port with its data address, its leaf as default gateway and
// its docker0 address on lo, every cable at the speed the inventory plans.
// leaf1 starts with a user's own BGP: an eBGP neighbor among its hosts and
// a network of its own, under the AS rdggen assigns it. A switch "rogue"
// outside the inventory (no cable, no configuration) is there for a test
// to make that neighbor real.
type cumulusFabric struct {
	inv  *inventory.Inventory
	f    *fabricnet.Fabric
	sims map[string]*nvuesim.Server
	ns   map[string]string // host → namespace
	opts apply.SwitchOptions
}

// userNeighbor and userNetwork are leaf1's user BGP configuration: a
// router in leaf1's data subnet (absent until a test cables "rogue" there).
const userNeighbor, userNetwork = "10.1.1.99", "198.51.100.0/24"

func newCumulusFabric(t *testing.T) *cumulusFabric {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	c := &cumulusFabric{inv: inv, sims: map[string]*nvuesim.Server{}, ns: map[string]string{}}
	spec := fabricnet.SpecOf(inv)
	spec.Switches = append(spec.Switches, fabricnet.Switch{Name: "rogue", OS: fabricnet.Cumulus})
	c.f = fabricnet.New(t, spec, fabricnet.Options{})
	for i, sw := range inv.Switches {
		var seed nvuesim.Tree
		if sw.Name == "leaf1" {
			seed = nvuesim.Tree{
				"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65101)}},
				"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
					"neighbor":       map[string]any{userNeighbor: map[string]any{"remote-as": "external"}},
					"address-family": map[string]any{"ipv4-unicast": map[string]any{"network": map[string]any{userNetwork: map[string]any{}}}},
				}}}},
			}
		}
		s := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports, Applied: seed})
		c.sims[sw.Name] = s
		c.f.FollowNVUE(sw.Name, s)
		inv.Switches[i].Mgmt = s.Addr
	}
	for _, h := range inv.Hosts {
		ns := c.f.HostNS(h.Name)
		c.ns[h.Name] = ns
		leaf := inv.LeafOf(&h)
		c.f.Attach(leaf.Name, leaf.PortName(h.Data.Port), ns, "data0")
		ipns(t, ns, "addr", "add", h.Data.Address.String(), "dev", "data0")
		ipns(t, ns, "route", "add", "default", "via", leaf.Fabric.Gateway.String())
		ipns(t, ns, "addr", "add", netip.PrefixFrom(h.Bridge().Addr(), 32).String(), "dev", "lo")
	}
	c.f.PlanSpeeds(inv)
	// Every simulator serves httptest's one certificate: one pin for all.
	c.opts = apply.SwitchOptions{
		Common:    apply.Common{Parallel: 4},
		NVUE:      apply.NVUE{Password: "cumulus", Fingerprint: c.sims["spine1"].Fingerprint()},
		BackupDir: filepath.Join(t.TempDir(), "bk"),
	}
	return c
}

func ipns(t *testing.T, ns string, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s %s: %v: %s", ns, strings.Join(args, " "), err, out)
	}
}

// plannedPeers are each switch's planned BGP sessions: the uplinks' ports
// (unnumbered).
func (c *cumulusFabric) plannedPeers(sw string) []string {
	var out []string
	s := c.inv.Switch(sw)
	for _, u := range c.inv.Uplinks(sw) {
		out = append(out, s.PortName(u.Port))
	}
	sort.Strings(out)
	return out
}

// established reports whether every planned session is Established.
func (c *cumulusFabric) established() (bool, string) {
	var b strings.Builder
	ok := true
	for _, sw := range c.inv.Switches {
		s, err := c.f.BGPSummary(sw.Name)
		if err != nil {
			return false, err.Error()
		}
		fmt.Fprintf(&b, "%s:\n%s", sw.Name, s)
		state := map[string]string{}
		for _, p := range s.Peers {
			state[p.Neighbor] = p.State
		}
		for _, p := range c.plannedPeers(sw.Name) {
			ok = ok && state[p] == "Established"
		}
	}
	return ok, b.String()
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, detail := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s:\n%s", what, d, detail)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Every switch of a 2 × 2 Cumulus fabric in one plan and one question,
// applied in parallel; FRR then brings every planned session up and each
// leaf routes the other leaf's container subnets over both spines; the
// user's own BGP neighbor and network on leaf1 survive; a second apply
// changes nothing.
func TestSwitchesCumulusFabric(t *testing.T) {
	c := newCumulusFabric(t)
	ctx := context.Background()
	asked := 0
	var out bytes.Buffer
	o := c.opts
	o.Out = &out
	o.Confirm = func(_ context.Context, planned []applyplan.Machine) bool {
		asked++
		var names []string
		for _, m := range planned {
			names = append(names, m.Name)
		}
		if got := strings.Join(names, ","); got != "spine1,spine2,leaf1,leaf2" {
			t.Errorf("the question's switches: %s", got)
		}
		return true
	}
	res, err := apply.Switches(ctx, c.inv, o)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	if asked != 1 {
		t.Errorf("asked %d times, want once for the whole fabric", asked)
	}
	for _, m := range res.Machines {
		if m.Status != applyplan.Changed {
			t.Errorf("%s: %s %s", m.Name, m.Status, m.Error)
		}
	}
	if !strings.Contains(res.Summary, "switch: 4 changed, 0 up to date, 0 failed; 4 NVUE revision(s) applied") {
		t.Errorf("summary: %s", res.Summary)
	}
	for _, sw := range c.inv.Switches {
		c.f.Sync(sw.Name)
	}

	// The user's BGP configuration on leaf1 is still there, beside rdggen's.
	applied := c.sims["leaf1"].Applied()
	bgp := dig(applied, "vrf", "default", "router", "bgp")
	if dig(bgp, "neighbor", userNeighbor, "remote-as") == nil || dig(bgp, "address-family", "ipv4-unicast", "network", userNetwork) == nil {
		t.Errorf("the user's neighbor %s or network %s is gone from leaf1:\n%v", userNeighbor, userNetwork, bgp)
	}
	if dig(bgp, "neighbor", "swp63", "type") != "unnumbered" || dig(bgp, "address-family", "ipv4-unicast", "network", "172.16.11.0/24") == nil {
		t.Errorf("rdggen's neighbor or network is missing on leaf1:\n%v", bgp)
	}

	waitUntil(t, 90*time.Second, "every planned BGP session Established", c.established)
	for _, sw := range c.inv.Switches {
		s, _ := c.f.BGPSummary(sw.Name)
		t.Logf("%s show bgp summary:\n%s", sw.Name, s)
	}
	for leaf, dsts := range map[string][]string{"leaf1": {"172.16.21.0/24", "172.16.22.0/24", "10.1.2.0/24"}, "leaf2": {"172.16.11.0/24", "172.16.12.0/24", "10.1.1.0/24"}} {
		for _, d := range dsts {
			dst := netip.MustParsePrefix(d)
			waitUntil(t, 60*time.Second, leaf+"'s route to "+d+" over both spines", func() (bool, string) {
				r, ok, err := c.f.Route(leaf, dst)
				return err == nil && ok && len(r.NextHops) == 2 && r.Protocol == "bgp", fmt.Sprint(r, ok, err)
			})
			r, _, _ := c.f.Route(leaf, dst)
			var devs []string
			for _, h := range r.NextHops {
				devs = append(devs, h.Dev)
			}
			sort.Strings(devs)
			if strings.Join(devs, ",") != "swp63,swp64" {
				t.Errorf("%s %s: next hops %v, want via swp63 and swp64", leaf, d, r.NextHops)
			}
			t.Logf("%s: %s proto %s nexthops %v", leaf, r.Dst, r.Protocol, r.NextHops)
		}
	}
	// Container address to container address across a spine.
	h11, h21 := c.inv.Hosts[0], c.inv.Hosts[2]
	waitUntil(t, 20*time.Second, "h11's containers reach h21's", func() (bool, string) {
		out, err := exec.Command("ip", "netns", "exec", c.ns["h11"], "ping", "-c", "1", "-W", "1", "-I", h11.Bridge().Addr().String(), h21.Bridge().Addr().String()).CombinedOutput()
		return err == nil, string(out)
	})

	// A second apply finds nothing to do.
	o.Confirm = nil
	res, err = apply.Switches(ctx, c.inv, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Machines {
		if m.Status != applyplan.UpToDate {
			t.Errorf("second apply: %s %s %+v", m.Name, m.Status, m.Changes)
		}
	}

	t.Run("check passes", func(t *testing.T) {
		var bad []readiness.Result
		waitUntil(t, 60*time.Second, "check passes (LLDP neighbors learnt)", func() (bool, string) {
			bad = c.failures(t)
			return len(bad) == 0, lines(bad)
		})
		rs, _ := apply.CheckSwitches(ctx, c.inv, c.opts)
		var fabric []string
		for _, r := range rs {
			if r.Check == "bgp" || r.Check == "lldp" || (r.Check == "mtu" && !strings.HasPrefix(r.Subject, "swp1s")) {
				fabric = append(fabric, r.Line())
			}
		}
		if len(fabric) != 4*2*3 {
			t.Errorf("%d fabric results (bgp, lldp, mtu), want 24 (4 switches × 2 uplinks × 3)", len(fabric))
		}
		t.Logf("check, the fabric's results:\n%s", strings.Join(fabric, "\n"))
		// The routing tables: each leaf holds the other leaf's subnet,
		// container subnets and loopback over both spines and each spine's
		// loopback over the uplink to it; each spine holds each leaf's four
		// prefixes over its link to that leaf.
		routes := map[string][]string{}
		for _, r := range rs {
			if r.Check == "routes" {
				routes[r.Machine] = append(routes[r.Machine], r.Subject+": "+r.Found)
			}
		}
		ecmp := "bgp, installed, 2 next hops: swp63 (spine1), swp64 (spine2)"
		want := map[string][]string{
			"leaf1": {"10.10.10.1/32: bgp, installed, 1 next hop: swp63 (spine1)", "10.10.10.2/32: bgp, installed, 1 next hop: swp64 (spine2)",
				"10.1.2.0/24: " + ecmp, "172.16.21.0/24: " + ecmp, "172.16.22.0/24: " + ecmp, "10.10.10.4/32: " + ecmp},
			"leaf2": {"10.10.10.1/32: bgp, installed, 1 next hop: swp63 (spine1)", "10.10.10.2/32: bgp, installed, 1 next hop: swp64 (spine2)",
				"10.1.1.0/24: " + ecmp, "172.16.11.0/24: " + ecmp, "172.16.12.0/24: " + ecmp, "10.10.10.3/32: " + ecmp},
		}
		for _, spine := range []string{"spine1", "spine2"} {
			for _, p := range []string{"10.1.1.0/24", "172.16.11.0/24", "172.16.12.0/24", "10.10.10.3/32"} {
				want[spine] = append(want[spine], p+": bgp, installed, 1 next hop: swp1 (leaf1)")
			}
			for _, p := range []string{"10.1.2.0/24", "172.16.21.0/24", "172.16.22.0/24", "10.10.10.4/32"} {
				want[spine] = append(want[spine], p+": bgp, installed, 1 next hop: swp2 (leaf2)")
			}
		}
		for sw, w := range want {
			if got := strings.Join(routes[sw], "\n"); got != strings.Join(w, "\n") {
				t.Errorf("%s's routes results:\n got %s\nwant %s", sw, got, strings.Join(w, "\n"))
			}
		}
		var lines []string
		for _, r := range rs {
			if r.Check == "routes" && r.Machine == "leaf1" {
				lines = append(lines, r.Line())
			}
		}
		t.Logf("check, leaf1's routing table:\n%s", strings.Join(lines, "\n"))
	})
	t.Run("swapped cable", func(t *testing.T) {
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp63"})
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp64"})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp63"}, B: fabricnet.End{Switch: "spine2", Port: "swp1"}})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp64"}, B: fabricnet.End{Switch: "spine1", Port: "swp1"}})
		// Both ends of both cables see the wrong LLDP neighbor. BGP
		// unnumbered comes up on whatever is cabled: leaf1's sessions are
		// with the other spine than planned, which the bgp check names
		// (each spine's is still with leaf1); every leaf prefix still has a
		// next hop over each uplink and passes; but each spine's loopback
		// now arrives at leaf1 over the other spine's uplink, and the routes
		// check says so for both. The swap is one cause, leaf1's first
		// swapped port: the other's LLDP finding and the far ends' follow
		// from it, and leaf1's sessions and routes over the two cables.
		want := []string{"leaf1 lldp swp63", "leaf1 lldp swp64", "spine1 lldp swp1", "spine2 lldp swp1", "leaf1 routes 10.10.10.1/32", "leaf1 routes 10.10.10.2/32",
			"leaf1 bgp swp63", "leaf1 bgp swp64"}
		bad := c.waitFindings(t, want)
		if got := causeLines(t, c.inv, c.opts); got != "leaf1 lldp swp63 (7 follow from it); "+
			"then: spine1 lldp swp1; spine2 lldp swp1; leaf1 lldp swp64; leaf1 bgp swp63; leaf1 bgp swp64; leaf1 routes 10.10.10.1/32; leaf1 routes 10.10.10.2/32" {
			t.Errorf("causes: %s", got)
		}
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Check == "lldp" && r.Subject == "swp63" && !strings.Contains(r.Fix, "miswired: leaf1 swp63 is cabled to spine2 swp1, the plan cables it to spine1 swp1: move the cable at leaf1 swp63 to spine1 swp1") {
				t.Errorf("leaf1 swp63's fix: %s", r.Fix)
			}
			if r.Machine == "leaf1" && r.Subject == "10.10.10.1/32" && (r.Found != "bgp, installed, 1 next hop: swp64" ||
				!strings.HasPrefix(r.Fix, "no path over swp63 to spine1: its BGP session (bgp check of swp63) and the link leaf1 swp63 ↔ spine1 swp1 (link and lldp checks)")) {
				t.Errorf("leaf1's route to spine1's loopback: %s", r.Line())
			}
			if r.Machine == "leaf1" && r.Check == "bgp" && r.Subject == "swp63" && (!strings.HasPrefix(r.Found, "established with spine2 (AS 65100), ") ||
				!strings.HasPrefix(r.Fix, "wrong peer: leaf1 swp63 peers with spine2 (AS 65100), the plan with spine1 swp1 (fabric.links[0])")) {
				t.Errorf("leaf1's session on swp63: %s", r.Line())
			}
		}
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp63"})
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp64"})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp63"}, B: fabricnet.End{Switch: "spine1", Port: "swp1"}})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp64"}, B: fabricnet.End{Switch: "spine2", Port: "swp1"}})
		c.waitFindings(t, nil)
	})
	t.Run("stopped bgpd", func(t *testing.T) {
		c.f.StopDaemon("leaf2", "bgpd")
		// The four sessions to leaf2 are down. With them every route
		// leaf2 announced is gone (its subnet, its hosts' container subnets,
		// its loopback) from both spines and, through them, from leaf1;
		// and leaf2's zebra drops the BGP routes of the bgpd that left:
		// leaf1's four prefixes and both spines' loopbacks.
		leaf1Prefixes := []string{"10.1.1.0/24", "172.16.11.0/24", "172.16.12.0/24", "10.10.10.3/32"}
		leaf2Prefixes := []string{"10.1.2.0/24", "172.16.21.0/24", "172.16.22.0/24", "10.10.10.4/32"}
		// BFD goes with bgpd, its client: leaf2's bfdd drops the
		// sessions bgpd registered, and the spines' go down.
		want := []string{"spine1 bgp swp2", "spine2 bgp swp2", "leaf2 bgp swp63", "leaf2 bgp swp64",
			"spine1 bfd swp2", "spine2 bfd swp2", "leaf2 bfd swp63", "leaf2 bfd swp64",
			"leaf2 routes 10.10.10.1/32", "leaf2 routes 10.10.10.2/32"}
		for _, p := range leaf2Prefixes {
			want = append(want, "leaf1 routes "+p, "spine1 routes "+p, "spine2 routes "+p)
		}
		for _, p := range leaf1Prefixes {
			want = append(want, "leaf2 routes "+p)
		}
		bad := c.waitFindings(t, want)
		// One fault, one cause: leaf2's BGP daemon, its first session's
		// finding; the 25 others, the BFD sessions too, follow from it.
		// The final line of `rdggen check` (at most 20 names; docs/check.md
		// shows it).
		rs, _ := apply.CheckSwitches(context.Background(), c.inv, c.opts)
		if got := readiness.NotReady(rs, readiness.Causes(rs), 20); got != "leaf2 bgp swp63 (25 follow from it); then: spine1 bgp swp2; spine1 bfd swp2; spine1 routes 10.1.2.0/24; spine1 routes 172.16.21.0/24; "+
			"spine1 routes 172.16.22.0/24; spine1 routes 10.10.10.4/32; spine2 bgp swp2; spine2 bfd swp2; spine2 routes 10.1.2.0/24; spine2 routes 172.16.21.0/24; spine2 routes 172.16.22.0/24; "+
			"spine2 routes 10.10.10.4/32; leaf1 routes 10.1.2.0/24; leaf1 routes 172.16.21.0/24; leaf1 routes 172.16.22.0/24; leaf1 routes 10.10.10.4/32; leaf2 bgp swp64; "+
			"leaf2 bfd swp63; leaf2 bfd swp64 and 6 more" {
			t.Errorf("causes: %s", got)
		}
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Subject == "172.16.21.0/24" && (r.Found != "not in the routing table" ||
				!strings.Contains(r.Fix, "its static route to 172.16.21.0/24 via 10.1.2.21, installed only while h21's data link is up (leaf2's link check of swp1s0)")) {
				t.Errorf("leaf1's finding for leaf2's container subnet: %s", r.Line())
			}
		}
		c.f.StartDaemon("leaf2", "bgpd")
		c.waitFindings(t, nil)
	})
	t.Run("lowered MTU", func(t *testing.T) {
		ipns(t, c.f.NS("leaf2"), "link", "set", "swp64", "mtu", "1500")
		bad := c.waitFindings(t, []string{"leaf2 mtu swp64"})
		if r := bad[0]; r.Found != "1500" || r.Expected != "9216" || !strings.HasPrefix(r.Fix, "nv set interface swp64 link mtu 9216 && nv config apply; every hop of the fabric carries MTU 9216, spine2 swp2 too") {
			t.Errorf("the MTU finding: %+v", r)
		}
		ipns(t, c.f.NS("leaf2"), "link", "set", "swp64", "mtu", "9216")
		c.waitFindings(t, nil)
	})
	t.Run("slow link", func(t *testing.T) {
		// h11's lane comes up at 100G where the plan has 400G (the lane of
		// an SN5600, h11's ConnectX-7); an uplink at 400G where both ends
		// run 800G, at both its ends.
		c.f.SetSpeed(fabricnet.End{Switch: "leaf1", Port: "swp1s0"}, 100)
		c.f.SetSpeed(fabricnet.End{Switch: "leaf2", Port: "swp64"}, 400)
		bad := c.waitFindings(t, []string{"leaf1 link swp1s0", "leaf2 link swp64", "spine2 link swp2"})
		for _, r := range bad {
			if r.Subject == "swp1s0" && (r.Found != "up, 100G" || r.Expected != "up at 400 Gb/s (leaf1 swp1s0 400 Gb/s, h11's NIC 400 Gb/s)") {
				t.Errorf("h11's lane: %s", r.Line())
			}
		}
		// One cable, two ends: the first is the cause.
		if got := causeLines(t, c.inv, c.opts); got != "spine2 link swp2 (1 follows from it); leaf1 link swp1s0; then: leaf2 link swp64" {
			t.Errorf("causes: %s", got)
		}
		c.f.PlanSpeeds(c.inv)
		c.waitFindings(t, nil)
	})
	t.Run("wrong peer", func(t *testing.T) {
		// leaf1 swp63 and leaf2 swp63, each planned to spine1, cabled to
		// each other: BGP unnumbered comes up between the leaves, with the
		// other leaf's AS where the plan has spine1's.
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp63"})
		c.f.Unplug(fabricnet.End{Switch: "leaf2", Port: "swp63"})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp63"}, B: fabricnet.End{Switch: "leaf2", Port: "swp63"}})
		r := waitFinding(t, c.inv, c.opts, "leaf1 bgp swp63", func(r readiness.Result) bool { return strings.HasPrefix(r.Found, "established") })
		if r.Status != readiness.Failed || !strings.HasPrefix(r.Found, "established with leaf2 (AS 65102), ") || r.Expected != "established with spine1 (AS 65100)" ||
			!strings.HasPrefix(r.Fix, "wrong peer: leaf1 swp63 peers with leaf2 (AS 65102), the plan with spine1 swp1 (fabric.links[0])") {
			t.Errorf("leaf1's session on swp63: %s", r.Line())
		}
		t.Log(r.Line())
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp63"})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp63"}, B: fabricnet.End{Switch: "spine1", Port: "swp1"}})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf2", Port: "swp63"}, B: fabricnet.End{Switch: "spine1", Port: "swp2"}})
		c.waitFindings(t, nil)
	})
	t.Run("extra next hop", func(t *testing.T) {
		// A BGP router among leaf1's hosts (cabled in h12's place, leaf1's
		// user neighbor 10.1.1.99) announces spine1's loopback in the
		// spines' AS, a path like spine1's: leaf1 splits the traffic to it
		// over the hosts' VLAN too, one next hop more than the plan has.
		rogue := nvuesim.Start(t, nvuesim.Options{Hostname: "rogue", Applied: nvuesim.Tree{
			"interface": map[string]any{"swp1": map[string]any{"ip": map[string]any{"address": map[string]any{userNeighbor + "/24": map[string]any{}}}}},
			"router":    map[string]any{"bgp": map[string]any{"autonomous-system": int64(65100), "router-id": "10.99.99.99"}},
			"vrf": map[string]any{"default": map[string]any{"router": map[string]any{
				"bgp": map[string]any{
					"neighbor":       map[string]any{"10.1.1.254": map[string]any{"remote-as": int64(65101), "type": "numbered"}},
					"address-family": map[string]any{"ipv4-unicast": map[string]any{"network": map[string]any{"10.10.10.1/32": map[string]any{}}}},
				},
				"static": map[string]any{"10.10.10.1/32": map[string]any{"via": map[string]any{"blackhole": map[string]any{}}}},
			}}},
		}})
		c.f.FollowNVUE("rogue", rogue)
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp1s1"})
		c.f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "swp1s1"}, B: fabricnet.End{Switch: "rogue", Port: "swp1"}})
		bad := c.waitFindings(t, []string{"leaf1 routes 10.10.10.1/32"})
		if r := bad[0]; r.Found != "bgp, installed, 2 next hops: swp63, vlan1" || r.Expected != "10.10.10.1/32 (the loopback of spine1) installed by BGP, 1 next hop: swp63 (spine1)" ||
			!strings.HasPrefix(r.Fix, "a path over vlan1, the interface of the hosts' data VLAN (a next hop among the hosts), which the plan does not route 10.10.10.1/32 over") {
			t.Errorf("leaf1's route to spine1's loopback: %s", r.Line())
		}
		c.f.Unplug(fabricnet.End{Switch: "leaf1", Port: "swp1s1"})
		h12 := c.inv.Hosts[1]
		c.f.Attach("leaf1", "swp1s1", c.ns[h12.Name], "data0")
		ipns(t, c.ns[h12.Name], "addr", "add", h12.Data.Address.String(), "dev", "data0")
		ipns(t, c.ns[h12.Name], "route", "add", "default", "via", c.inv.Switch("leaf1").Fabric.Gateway.String())
		c.waitFindings(t, nil)
	})
}

// waitFinding waits until the switch check has a result key ("machine
// check subject") for which ok holds, and returns it.
func waitFinding(t *testing.T, inv *inventory.Inventory, o apply.SwitchOptions, key string, ok func(readiness.Result) bool) readiness.Result {
	t.Helper()
	var found readiness.Result
	waitUntil(t, 90*time.Second, key, func() (bool, string) {
		rs, err := apply.CheckSwitches(context.Background(), inv, o)
		if err != nil {
			return false, err.Error()
		}
		for _, r := range rs {
			if r.Ref().String() == key {
				found = r
				return ok(r), r.Line()
			}
		}
		return false, "no result " + key
	})
	return found
}

// causeLines is the switch check's findings as the final line of `rdggen
// check` names them: causes first (readiness.Causes, NotReady).
func causeLines(t *testing.T, inv *inventory.Inventory, o apply.SwitchOptions) string {
	t.Helper()
	rs, err := apply.CheckSwitches(context.Background(), inv, o)
	if err != nil {
		t.Fatal(err)
	}
	return readiness.NotReady(rs, readiness.Causes(rs), 0)
}

// failures are the check's results other than passed.
func (c *cumulusFabric) failures(t *testing.T) []readiness.Result {
	t.Helper()
	return checkFailures(t, c.inv, c.opts)
}

// checkFailures are the switch check's results other than passed.
func checkFailures(t *testing.T, inv *inventory.Inventory, o apply.SwitchOptions) []readiness.Result {
	t.Helper()
	rs, err := apply.CheckSwitches(context.Background(), inv, o)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	var bad []readiness.Result
	for _, r := range rs {
		if r.Status != readiness.Passed {
			bad = append(bad, r)
		}
	}
	return bad
}

// waitFindings waits until the check's findings are exactly want
// ("machine check subject", sorted) and returns them; nil waits for a
// check that passes.
func (c *cumulusFabric) waitFindings(t *testing.T, want []string) []readiness.Result {
	t.Helper()
	return waitFindings(t, c.inv, c.opts, want)
}

// waitFindings waits until the switch check's findings are exactly want
// ("machine check subject", sorted) and returns them; nil waits for a
// check that passes.
func waitFindings(t *testing.T, inv *inventory.Inventory, o apply.SwitchOptions, want []string) []readiness.Result {
	t.Helper()
	var bad []readiness.Result
	want = slices.Sorted(slices.Values(want))
	waitUntil(t, 90*time.Second, fmt.Sprintf("findings %q", want), func() (bool, string) {
		bad = checkFailures(t, inv, o)
		var got []string
		settled := true
		for _, r := range bad {
			key := r.Machine + " " + r.Check + " " + r.Subject
			got = append(got, key)
			// lldpd keeps a port's old neighbor until its TTL: wait for one
			// (unless two neighbors are the finding waited for).
			settled = settled && !(r.Check == "lldp" && strings.Contains(r.Found, ", ") && !slices.Contains(want, key))
		}
		sort.Strings(got)
		return settled && strings.Join(got, "\n") == strings.Join(want, "\n"), lines(bad)
	})
	if len(bad) > 0 {
		t.Logf("check:\n%s", lines(bad))
	}
	return bad
}

func lines(rs []readiness.Result) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Line() + "\n")
	}
	return b.String()
}

// dig walks a decoded JSON tree.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// The golden 2 × 2 ONYX fabric (testdata/golden/fabric-onyx) on fabricnet:
// every switch an onyxsim that apply configures over SSH, FRR and lldpd
// following its running-config and answering its `show ip bgp summary`,
// `show lldp interfaces ethernet remote` and ports' links; numbered eBGP on
// the /31s comes up on every planned session, each leaf routes the other's
// subnets over both spines, a second apply sends nothing, and the
// read-only check passes with every session, LLDP neighbor and uplink
// read. Then a swapped pair of cables at leaf1 (one cause), a stopped bgpd on leaf2
// and one uplink at MTU 1500 each give exactly their findings, and the
// check passes again once each is undone.
func TestSwitchesONYXFabric(t *testing.T) {
	inv, f, o, _ := goldenFabric(t, "fabric-onyx")
	ctx := context.Background()
	// bgpKey is switch sw's BGP subject on link i: the peer's address.
	bgpKey := func(sw string, link int) string {
		for _, u := range inv.Uplinks(sw) {
			if u.Link == link {
				return sw + " bgp " + u.Remote.Addr().String()
			}
		}
		t.Fatalf("%s has no fabric.links[%d]", sw, link)
		return ""
	}
	// bfdKey is the bfd check's subject of the same session.
	bfdKey := func(sw string, link int) string { return strings.Replace(bgpKey(sw, link), " bgp ", " bfd ", 1) }
	t.Run("check passes", func(t *testing.T) {
		rs, err := apply.CheckSwitches(ctx, inv, o)
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		var fabric []string
		for _, r := range rs {
			if r.Status != readiness.Passed {
				t.Errorf("not passed: %s", r.Line())
			}
			count[r.Check]++
			if r.Check == "bgp" || r.Check == "lldp" || (r.Check == "mtu" && (strings.HasPrefix(r.Machine, "spine") || r.Subject == "Eth1/31" || r.Subject == "Eth1/32")) {
				fabric = append(fabric, r.Line())
			}
		}
		// 4 switches × 2 uplinks; link … ecn on 2 uplinks per switch and
		// 2 host ports per leaf.
		if count["bgp"] != 8 || count["bfd"] != 8 || count["lldp"] != 8 || count["mtu"] != 12 || count["link"] != 12 || count["pfc"] != 12 || count["ecn"] != 12 || count["pause-counters"] != 12 {
			t.Errorf("results per check %v, want bgp 8, bfd 8, lldp 8, and 12 of each port check", count)
		}
		if len(fabric) != 24 {
			t.Errorf("%d fabric results (bgp, lldp, uplink mtu), want 24", len(fabric))
		}
		for _, want := range []string{"leaf1: lldp Eth1/31: passed (spine1 1/1)", "spine2: lldp Eth1/2: passed (leaf2 1/32)", "leaf2: mtu Eth1/32: passed (9216 bytes)"} {
			if !slices.Contains(fabric, want) {
				t.Errorf("no result %q", want)
			}
		}
		for _, l := range fabric {
			if strings.Contains(l, ": bgp ") && !strings.Contains(l, ": passed (established with ") {
				t.Errorf("bgp: %s", l)
			}
		}
		t.Logf("check, the fabric's results:\n%s", strings.Join(fabric, "\n"))
	})
	t.Run("swapped cable", func(t *testing.T) {
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/31"})
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/32"})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/31"}, B: fabricnet.End{Switch: "spine2", Port: "1/1"}})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/32"}, B: fabricnet.End{Switch: "spine1", Port: "1/1"}})
		// Numbered: each /31 now faces a stranger, so the four sessions
		// of the two links drop too; with them leaf1's prefixes are gone
		// from the spines, and leaf2's sessions carry only the spines'
		// loopbacks, fewer than the plan routes over them.
		want := []string{"leaf1 lldp Eth1/31", "leaf1 lldp Eth1/32", "spine1 lldp Eth1/1", "spine2 lldp Eth1/1",
			bgpKey("leaf1", 0), bgpKey("leaf1", 1), bgpKey("spine1", 0), bgpKey("spine2", 1), bgpKey("leaf2", 2), bgpKey("leaf2", 3),
			bfdKey("leaf1", 0), bfdKey("leaf1", 1), bfdKey("spine1", 0), bfdKey("spine2", 1)}
		bad := waitFindings(t, inv, o, want)
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Check == "lldp" && r.Subject == "Eth1/31" && !strings.Contains(r.Fix, "miswired: leaf1 1/31 is cabled to spine2 1/1, the plan cables it to spine1 1/1: move the cable at leaf1 1/31 to spine1 1/1") {
				t.Errorf("leaf1 Eth1/31's fix: %s", r.Fix)
			}
		}
		// One fault, one cause: leaf1's first swapped port; the other LLDP
		// findings and every session, BGP and BFD, follow from it.
		if got := readiness.NotReady(bad, readiness.Causes(bad), 0); got != "leaf1 lldp Eth1/31 (13 follow from it); then: spine1 lldp Eth1/1; spine1 bgp 10.254.0.0; spine1 bfd 10.254.0.0; spine2 lldp Eth1/1; "+
			"spine2 bgp 10.254.0.2; spine2 bfd 10.254.0.2; leaf1 lldp Eth1/32; leaf1 bgp 10.254.0.1; leaf1 bgp 10.254.0.3; leaf1 bfd 10.254.0.1; leaf1 bfd 10.254.0.3; leaf2 bgp 10.254.0.5; leaf2 bgp 10.254.0.7" {
			t.Errorf("causes: %s", got)
		}
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/31"})
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/32"})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/31"}, B: fabricnet.End{Switch: "spine1", Port: "1/1"}})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/32"}, B: fabricnet.End{Switch: "spine2", Port: "1/1"}})
		waitFindings(t, inv, o, nil)
	})
	t.Run("stopped bgpd", func(t *testing.T) {
		f.StopDaemon("leaf2", "bgpd")
		// leaf2's sessions, the spines' to it, and leaf1's, which no
		// longer carry leaf2's prefixes; the BFD sessions of leaf2 (gone
		// with the bgpd that registered them) and the spines' to leaf2
		// (down): one cause, leaf2's BGP.
		bad := waitFindings(t, inv, o, []string{bgpKey("spine1", 2), bgpKey("spine2", 3), bgpKey("leaf2", 2), bgpKey("leaf2", 3), bgpKey("leaf1", 0), bgpKey("leaf1", 1),
			bfdKey("spine1", 2), bfdKey("spine2", 3), bfdKey("leaf2", 2), bfdKey("leaf2", 3)})
		for _, r := range bad {
			if r.Check == "bfd" {
				if (r.Machine == "leaf2" && !strings.HasPrefix(r.Found, "no BFD session to ")) || (strings.HasPrefix(r.Machine, "spine") && !strings.HasPrefix(r.Found, "DOWN")) {
					t.Errorf("%s's BFD finding: %s", r.Machine, r.Line())
				}
				continue
			}
			if r.Machine == "leaf2" && !strings.HasPrefix(r.Found, "no session to ") {
				t.Errorf("leaf2's finding: %+v", r)
			}
			if strings.HasPrefix(r.Machine, "spine") && (r.Found == "ESTABLISHED" || !strings.Contains(r.Fix, "check leaf2's BGP (`show ip bgp summary` on leaf2)")) {
				t.Errorf("%s's finding: %+v", r.Machine, r)
			}
			if r.Machine == "leaf1" && (!strings.Contains(r.Found, ", 1 prefixes received") || !strings.Contains(r.Expected, "at least 5 prefixes received")) {
				t.Errorf("leaf1's finding: %s", r.Line())
			}
		}
		if got := causeLines(t, inv, o); got != "leaf2 bgp 10.254.0.5 (9 follow from it); then: spine1 bgp 10.254.0.4; spine1 bfd 10.254.0.4; spine2 bgp 10.254.0.6; spine2 bfd 10.254.0.6; "+
			"leaf1 bgp 10.254.0.1; leaf1 bgp 10.254.0.3; leaf2 bgp 10.254.0.7; leaf2 bfd 10.254.0.5; leaf2 bfd 10.254.0.7" {
			t.Errorf("causes: %s", got)
		}
		f.StartDaemon("leaf2", "bgpd")
		waitFindings(t, inv, o, nil)
	})
	t.Run("lowered MTU", func(t *testing.T) {
		ns := f.NS("leaf2")
		ipns(t, ns, "link", "set", fabricnet.IfName(fabricnet.ONYX, "1/32"), "mtu", "1500")
		bad := waitFindings(t, inv, o, []string{"leaf2 mtu Eth1/32"})
		if r := bad[0]; r.Found != "1500 bytes" || r.Expected != "at least 9216 bytes (the fabric's MTU on every hop)" ||
			!strings.HasPrefix(r.Fix, "interface ethernet 1/32 mtu 9216 force; every hop of the fabric carries MTU 9216, spine2 1/2 too") {
			t.Errorf("the MTU finding: %+v", r)
		}
		ipns(t, ns, "link", "set", fabricnet.IfName(fabricnet.ONYX, "1/32"), "mtu", "9216")
		waitFindings(t, inv, o, nil)
	})
	t.Run("two LLDP neighbors", func(t *testing.T) {
		// leaf1 1/31 and spine1 1/1 joined through a bridge that spine2's
		// spare port 1/3 is on too: the session still runs over it, but
		// each planned end hears two neighbors, a miswire.
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/31"})
		f.Hub(fabricnet.End{Switch: "leaf1", Port: "1/31"}, fabricnet.End{Switch: "spine1", Port: "1/1"}, fabricnet.End{Switch: "spine2", Port: "1/3"})
		// The findings' keys match already while an end hears no neighbor
		// or one (lldpd between the unplugged neighbor's TTL and the hub's
		// first frames): wait until each end hears two.
		var bad []readiness.Result
		waitUntil(t, 90*time.Second, "two neighbors at leaf1 Eth1/31 and spine1 Eth1/1", func() (bool, string) {
			bad = waitFindings(t, inv, o, []string{"leaf1 lldp Eth1/31", "spine1 lldp Eth1/1"})
			for _, r := range bad {
				if !strings.HasPrefix(r.Found, "2 neighbors: ") {
					return false, lines(bad)
				}
			}
			return true, ""
		})
		for _, r := range bad {
			if r.Machine == "leaf1" && (r.Found != "2 neighbors: spine1 1/1, spine2 1/3" || r.Expected != "one: spine1 1/1 (fabric.links[0])") {
				t.Errorf("leaf1's neighbors: %s", r.Line())
			}
		}
		for _, e := range []fabricnet.End{{Switch: "leaf1", Port: "1/31"}, {Switch: "spine1", Port: "1/1"}, {Switch: "spine2", Port: "1/3"}} {
			f.Unplug(e)
		}
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/31"}, B: fabricnet.End{Switch: "spine1", Port: "1/1"}})
		waitFindings(t, inv, o, nil)
	})
	t.Run("no prefixes", func(t *testing.T) {
		// leaf2 announces nothing to spine1 (an outbound filter put in by
		// hand): the session stays established with 0 prefixes received
		// where the plan has leaf2's four, and leaf1's session to spine1
		// lacks them too, following from it.
		f.Configure("leaf2", "route-map DENYALL deny 10", "router bgp 65102", "address-family ipv4 unicast", "neighbor 10.254.0.5 route-map DENYALL out")
		bad := waitFindings(t, inv, o, []string{bgpKey("spine1", 2), bgpKey("leaf1", 0)})
		for _, r := range bad {
			if r.Machine == "spine1" && (!strings.HasPrefix(r.Found, "established with leaf2 (AS 65102), 0 prefixes received") ||
				r.Expected != "established with leaf2 (AS 65102), at least 4 prefixes received: 10.1.2.0/24, 172.16.21.0/24, 172.16.22.0/24, 10.10.10.4/32") {
				t.Errorf("spine1's session to leaf2: %s", r.Line())
			}
		}
		if got := causeLines(t, inv, o); got != "spine1 bgp 10.254.0.4 (1 follows from it); then: leaf1 bgp 10.254.0.1" {
			t.Errorf("causes: %s", got)
		}
		f.Configure("leaf2", "router bgp 65102", "address-family ipv4 unicast", "no neighbor 10.254.0.5 route-map DENYALL out")
		waitFindings(t, inv, o, nil)
	})
	t.Run("foreign AS", func(t *testing.T) {
		// The inventory plans ASes 64600 (spines) and 64601… (leaves)
		// where the switches run BGP as 65100 and 65101…: apply would send
		// no BGP line (another instance runs), and the check fails every
		// switch's configuration and every session rather than pass them.
		other := withASNs(t, inv, "fabric-onyx", 64601, 64600)
		bad := checkFailures(t, other, o)
		var got []string
		for _, r := range bad {
			got = append(got, r.Ref().String())
		}
		sort.Strings(got)
		want := []string{"leaf1 bgp 10.254.0.1", "leaf1 bgp 10.254.0.3", "leaf1 config router bgp", "leaf2 bgp 10.254.0.5", "leaf2 bgp 10.254.0.7", "leaf2 config router bgp",
			"spine1 bgp 10.254.0.0", "spine1 bgp 10.254.0.4", "spine1 config router bgp", "spine2 bgp 10.254.0.2", "spine2 bgp 10.254.0.6", "spine2 config router bgp"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("findings:\n%s", lines(bad))
		}
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Check == "config" && (r.Found != "router bgp 65101 vrf default: BGP runs as AS 65101, so none of rdggen's 10 BGP statements are sent" ||
				r.Fix != "if that BGP instance is yours, set switches[].asn: 65101 for leaf1 in the inventory and apply again; else in config mode: no router bgp 65101 vrf default, then rdggen apply --target switch") {
				t.Errorf("leaf1's configuration: %s", r.Line())
			}
		}
	})
}

// withASNs is the golden inventory with fabric.leaf_asn and spine_asn set,
// each switch's mgmt as in inv.
func withASNs(t *testing.T, inv *inventory.Inventory, golden string, leafASN, spineASN int) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/" + golden + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "\nfabric:\n", fmt.Sprintf("\nfabric:\n  leaf_asn: %d\n  spine_asn: %d\n", leafASN, spineASN), 1)
	out, err := inventory.Load("inventory.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	for i := range out.Switches {
		out.Switches[i].Mgmt = inv.Switch(out.Switches[i].Name).Mgmt
	}
	return out
}

// The golden mixed fabric (testdata/golden/fabric-mixed: a Cumulus and an
// ONYX spine, a Cumulus and an ONYX leaf): unnumbered between the two
// Cumulus switches, numbered /31s wherever ONYX is on an end, ASNs of its own;
// the check reads every planned session on every switch (numbered ones by
// the peer's address) established and every uplink's LLDP neighbor as
// planned, whichever OS is at either end.
func TestSwitchesMixedFabric(t *testing.T) {
	inv, _, o, _ := goldenFabric(t, "fabric-mixed")
	rs, err := apply.CheckSwitches(context.Background(), inv, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, r := range rs {
		if r.Check != "bgp" && r.Check != "lldp" {
			continue
		}
		if r.Status != readiness.Passed {
			t.Errorf("not passed: %s", r.Line())
		}
		got[r.Machine+" "+r.Check]++
	}
	for _, sw := range inv.Switches {
		if got[sw.Name+" bgp"] != 2 || got[sw.Name+" lldp"] != 2 {
			t.Errorf("%s: %d bgp and %d lldp results, want 2 of each (one per uplink)", sw.Name, got[sw.Name+" bgp"], got[sw.Name+" lldp"])
		}
	}
}

// A leaf carrying two rails on ONYX (testdata/golden/rails-shared: two
// leaves, one spine, four links each): apply takes each leaf's rail VLAN,
// access ports, two gateways, the rails' port descriptions and BFD; every
// session comes up, each leaf routes the other's rail 1 subnet over its
// four uplinks, rail 1 of a host on one leaf reaches rail 1 of a host on
// the other, a second apply sends nothing and the check passes (in
// goldenFabric). The leaves hold each rail port's description.
func TestSwitchesRailsFabric(t *testing.T) {
	inv, f, _, sims := goldenFabric(t, "rails-shared")
	for _, c := range []struct{ leaf, dst string }{{"leaf-a", "10.2.1.0/24"}, {"leaf-b", "10.1.1.0/24"}} {
		waitUntil(t, 60*time.Second, c.leaf+"'s route to "+c.dst, func() (bool, string) {
			r, ok, err := f.Route(c.leaf, netip.MustParsePrefix(c.dst))
			return err == nil && ok && len(r.NextHops) == 4, fmt.Sprint(r, ok, err)
		})
	}
	a1, b1 := &inv.Hosts[0], &inv.Hosts[2]
	nsA := fmt.Sprintf("rdg%df%s", f.Slot, a1.Name)
	nsB := fmt.Sprintf("rdg%df%s", f.Slot, b1.Name)
	ipns(t, nsA, "route", "add", "10.2.1.0/24", "via", inv.RailGateway(a1, 1).String(), "dev", "data1")
	ipns(t, nsB, "route", "add", "10.1.1.0/24", "via", inv.RailGateway(b1, 1).String(), "dev", "data1")
	waitUntil(t, 20*time.Second, "a1's rail 1 reaches b1's", func() (bool, string) {
		out, err := exec.Command("ip", "netns", "exec", nsA, "ping", "-c", "1", "-W", "1", "-I", a1.Rails[1].Address.Addr().String(), b1.Rails[1].Address.Addr().String()).CombinedOutput()
		return err == nil, string(out)
	})
	for _, sw := range []string{"leaf-a", "leaf-b"} {
		cfg := sims.onyx[sw].RunningConfig()
		for _, hr := range inv.RailsOnSwitch(sw) {
			want := fmt.Sprintf("interface ethernet %s description %s@%s/%s:rail%d", inv.Switch(sw).PortName(hr.Rail.Port), hr.Host.VM, hr.Host.ESXi, hr.Rail.PF, hr.Rail.Index)
			if !strings.Contains(cfg, want) {
				t.Errorf("%s lacks %q:\n%s", sw, want, cfg)
			}
		}
	}
}

// railsCumulus is a rail-optimized Cumulus Linux 5.9 fabric: rail r of
// two VMs on leaf r, one spine, each rail 1 on a lane of a split port.
const railsCumulus = `name: rc
switches:
  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}
  - {name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}
  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf0, port: swp64, peer: spine, peer_port: swp1}
    - {switch: leaf1, port: swp64, peer: spine, peer_port: swp2}
docker: {version: "24.0"}
horovod: {launcher: torchrun, image: nvcr.io/nvidia/pytorch:24.01-py3}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus:
    - {model: H100-PCIE-80GB, memory_gb: 80}
    - {model: H100-PCIE-80GB, memory_gb: 80}
  nic: {model: ConnectX-7, pf: vmnic4, vfs: 4, speed_gbps: 400}
hosts:
  - name: a
    esxi: esx-a
    data:
      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}
      - {address: 10.0.1.11/24, switch: leaf1, port: swp1s0, pf: vmnic5}
  - name: b
    esxi: esx-b
    data:
      - {address: 10.0.0.12/24, switch: leaf0, port: swp2}
      - {address: 10.0.1.12/24, switch: leaf1, port: swp1s1, pf: vmnic5}
`

// A rail-optimized Cumulus fabric (railsCumulus): apply takes leaf1's
// breakout of the port rail 1's lanes are on, the rails' VLANs, SVIs and
// descriptions and BFD on every session; every session comes up, the
// check passes (its bfd check too: Cumulus Linux 5.9), a second apply
// sends nothing (in fabricOf), and the applied configuration holds the
// breakout and each rail port's description.
func TestSwitchesRailsCumulusFabric(t *testing.T) {
	inv, _, o, sims := fabricOf(t, []byte(railsCumulus))
	rs, err := apply.CheckSwitches(context.Background(), inv, o)
	if err != nil {
		t.Fatal(err)
	}
	bfd := 0
	for _, r := range rs {
		if r.Check == "bfd" && r.Status == readiness.Passed {
			bfd++
		}
	}
	if bfd != 4 {
		t.Errorf("%d bfd results passed, want 4 (one per session end):\n%s", bfd, lines(rs))
	}
	ifaces := dig(sims.nvue["leaf1"].Applied(), "interface")
	if got := dig(ifaces, "swp1", "link", "breakout"); fmt.Sprint(got) != "map[2x:map[lanes-per-port:4]]" {
		t.Errorf("leaf1 swp1 breakout: %v", got)
	}
	for port, want := range map[string]string{"swp1s0": "a@esx-a/vmnic5:rail1", "swp1s1": "b@esx-b/vmnic5:rail1"} {
		if got := dig(ifaces, port, "description"); got != want {
			t.Errorf("leaf1 %s description %v, want %s", port, got, want)
		}
	}
	if got := dig(sims.nvue["leaf0"].Applied(), "interface", "swp2", "description"); got != "b@esx-b/vmnic4:rail0" {
		t.Errorf("leaf0 swp2 description %v", got)
	}
}

// goldenFabric brings the golden inventory's fabric up on fabricnet (an
// nvuesim or onyxsim per switch, stand-in hosts on the leaf ports), applies
// it, and checks convergence, a second apply and that the check passes
// (every result passed); it returns the inventory (each switch's mgmt its
// simulator), the fabric, the options that check it and the switches'
// simulators.
func goldenFabric(t *testing.T, golden string) (*inventory.Inventory, *fabricnet.Fabric, apply.SwitchOptions, fabricSims) {
	src, err := os.ReadFile("../../testdata/golden/" + golden + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return fabricOf(t, src)
}

// fabricOf is goldenFabric for the inventory src.
func fabricOf(t *testing.T, src []byte) (*inventory.Inventory, *fabricnet.Fabric, apply.SwitchOptions, fabricSims) {
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	f := fabricnet.New(t, fabricnet.SpecOf(inv), fabricnet.Options{})
	kh := filepath.Join(t.TempDir(), "known_hosts")
	known := []string{""}
	sims := fabricSims{onyx: map[string]*onyxsim.Server{}, nvue: map[string]*nvuesim.Server{}}
	o := apply.SwitchOptions{Common: apply.Common{Parallel: 4}, SSH: apply.SSH{Password: "admin", KnownHosts: kh}, BackupDir: filepath.Join(t.TempDir(), "bk")}
	for i, sw := range inv.Switches {
		if sw.OS() == inventory.OSCumulus {
			s := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports, Model: sw.Model})
			f.FollowNVUE(sw.Name, s)
			sims.nvue[sw.Name] = s
			inv.Switches[i].Mgmt = s.Addr
			o.NVUE = apply.NVUE{Password: "cumulus", Fingerprint: s.Fingerprint()}
			continue
		}
		s := onyxsim.Start(t, onyxsim.Options{Hostname: sw.Name, Version: sw.ONYX.String(), Ports: sw.Ports})
		f.FollowONYX(sw.Name, s)
		sims.onyx[sw.Name] = s
		inv.Switches[i].Mgmt = s.Addr
		known = append(known, s.KnownHostsLine())
	}
	if err := os.WriteFile(kh, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each host rail on its leaf port as data<r> with its address; rail 0
	// carries the default route (the containers' traffic).
	for _, h := range inv.Hosts {
		ns := f.HostNS(h.Name)
		for _, r := range h.Rails {
			leaf, dev := inv.Switch(r.Switch), fmt.Sprintf("data%d", r.Index)
			f.Attach(leaf.Name, leaf.PortName(r.Port), ns, dev)
			ipns(t, ns, "addr", "add", r.Address.String(), "dev", dev)
			if r.Index == 0 {
				ipns(t, ns, "route", "add", "default", "via", inv.RailGateway(&h, 0).String())
			}
		}
		ipns(t, ns, "addr", "add", netip.PrefixFrom(h.Bridge().Addr(), 32).String(), "dev", "lo")
	}
	f.PlanSpeeds(inv)
	ctx := context.Background()
	var out bytes.Buffer
	o.Out = &out
	res, err := apply.Switches(ctx, inv, o)
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	for _, m := range res.Machines {
		if m.Status != applyplan.Changed {
			t.Errorf("%s: %s %s", m.Name, m.Status, m.Error)
		}
	}
	t.Log(res.Summary)
	for _, sw := range inv.Switches {
		f.Sync(sw.Name)
	}
	waitUntil(t, 90*time.Second, "every planned BGP session Established", func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, sw := range inv.Switches {
			s, err := f.BGPSummary(sw.Name)
			if err != nil {
				return false, err.Error()
			}
			fmt.Fprintf(&b, "%s:\n%s", sw.Name, s)
			state := map[string]string{}
			for _, p := range s.Peers {
				state[p.Neighbor] = p.State
			}
			for _, u := range inv.Uplinks(sw.Name) {
				key := sw.PortName(u.Port)
				if u.Numbered {
					key = u.Remote.Addr().String()
				} else if !(sw.OS() == inventory.OSCumulus) {
					key = fabricnet.IfName(fabricnet.ONYX, key)
				}
				ok = ok && state[key] == "Established"
			}
		}
		return ok, b.String()
	})
	for _, sw := range inv.Switches {
		s, _ := f.BGPSummary(sw.Name)
		t.Logf("%s show bgp summary:\n%s", sw.Name, s)
	}
	leaves := inv.Leaves()
	for i, leaf := range leaves {
		other := leaves[1-i]
		for _, h := range inv.HostsOnSwitch(other.Name) {
			dst, n := h.Subnet, len(inv.Uplinks(leaf.Name))
			waitUntil(t, 60*time.Second, fmt.Sprintf("%s's route to %s over its %d uplinks", leaf.Name, dst, n), func() (bool, string) {
				r, ok, err := f.Route(leaf.Name, dst)
				return err == nil && ok && len(r.NextHops) == n, fmt.Sprint(r, ok, err)
			})
			r, _, _ := f.Route(leaf.Name, dst)
			t.Logf("%s: %s proto %s nexthops %v", leaf.Name, r.Dst, r.Protocol, r.NextHops)
		}
	}
	// The first host and the last, on another leaf where one has hosts
	// (rail 0 of a rail-optimized fabric's hosts is all on one leaf).
	a, b := &inv.Hosts[0], &inv.Hosts[len(inv.Hosts)-1]
	for i := range inv.Hosts {
		if inv.Hosts[i].Data.Switch != a.Data.Switch {
			b = &inv.Hosts[i]
			break
		}
	}
	nsA := fmt.Sprintf("rdg%df%s", f.Slot, a.Name)
	waitUntil(t, 20*time.Second, a.Name+"'s containers reach "+b.Name+"'s", func() (bool, string) {
		out, err := exec.Command("ip", "netns", "exec", nsA, "ping", "-c", "1", "-W", "1", "-I", a.Bridge().Addr().String(), b.Bridge().Addr().String()).CombinedOutput()
		return err == nil, string(out)
	})
	res, err = apply.Switches(ctx, inv, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Machines {
		if m.Status != applyplan.UpToDate {
			t.Errorf("second apply: %s %s %+v", m.Name, m.Status, m.Changes)
		}
	}
	var rs []readiness.Result
	waitUntil(t, 60*time.Second, "check passes (LLDP neighbors learnt)", func() (bool, string) {
		rs, err = apply.CheckSwitches(ctx, inv, o)
		if err != nil {
			return false, err.Error()
		}
		var bad []readiness.Result
		for _, r := range rs {
			if r.Status != readiness.Passed {
				bad = append(bad, r)
			}
		}
		return len(bad) == 0 && len(rs) > 0, lines(bad)
	})
	var fabric []string
	for _, r := range rs {
		if r.Check == "bgp" || r.Check == "lldp" {
			fabric = append(fabric, r.Line())
		}
	}
	t.Logf("check, BGP and LLDP:\n%s", strings.Join(fabric, "\n"))
	return inv, f, o, sims
}

// fabricSims are a fabric's switch simulators by switch name.
type fabricSims struct {
	onyx map[string]*onyxsim.Server
	nvue map[string]*nvuesim.Server
}
