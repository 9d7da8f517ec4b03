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
// its docker0 address on lo. leaf1 starts with a user's own BGP: an
// eBGP neighbor and a network of its own, under the AS rdggen assigns it.
type cumulusFabric struct {
	inv  *inventory.Inventory
	f    *fabricnet.Fabric
	sims map[string]*nvuesim.Server
	ns   map[string]string // host → namespace
	opts apply.SwitchOptions
}

// userNeighbor and userNetwork are leaf1's user BGP configuration.
const userNeighbor, userNetwork = "192.0.2.9", "198.51.100.0/24"

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
	c.f = fabricnet.New(t, fabricnet.SpecOf(inv), fabricnet.Options{})
	for i, sw := range inv.Switches {
		var seed nvuesim.Tree
		if sw.Name == "leaf1" {
			seed = nvuesim.Tree{
				"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65101)}},
				"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
					"neighbor":       map[string]any{userNeighbor: map[string]any{"remote-as": int64(65500)}},
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
		// unnumbered comes up on whatever is cabled, so every leaf prefix
		// still has a next hop over each uplink and passes; but each
		// spine's loopback now arrives at leaf1 over the other spine's
		// uplink, and the routes check says so for both.
		want := []string{"leaf1 lldp swp63", "leaf1 lldp swp64", "spine1 lldp swp1", "spine2 lldp swp1", "leaf1 routes 10.10.10.1/32", "leaf1 routes 10.10.10.2/32"}
		bad := c.waitFindings(t, want)
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Subject == "swp63" && !strings.Contains(r.Fix, "miswired: leaf1 swp63 is cabled to spine2 swp1, the plan cables it to spine1 swp1: move the cable at leaf1 swp63 to spine1 swp1") {
				t.Errorf("leaf1 swp63's fix: %s", r.Fix)
			}
			if r.Machine == "leaf1" && r.Subject == "10.10.10.1/32" && (r.Found != "bgp, installed, 1 next hop: swp64" ||
				!strings.HasPrefix(r.Fix, "no path over swp63 to spine1: its BGP session (bgp check of swp63) and the link leaf1 swp63 ↔ spine1 swp1 (link and lldp checks)")) {
				t.Errorf("leaf1's route to spine1's loopback: %s", r.Line())
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
		want := []string{"spine1 bgp swp2", "spine2 bgp swp2", "leaf2 bgp swp63", "leaf2 bgp swp64",
			"leaf2 routes 10.10.10.1/32", "leaf2 routes 10.10.10.2/32"}
		for _, p := range leaf2Prefixes {
			want = append(want, "leaf1 routes "+p, "spine1 routes "+p, "spine2 routes "+p)
		}
		for _, p := range leaf1Prefixes {
			want = append(want, "leaf2 routes "+p)
		}
		bad := c.waitFindings(t, want)
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
			got = append(got, r.Machine+" "+r.Check+" "+r.Subject)
			// lldpd keeps a port's old neighbor until its TTL: wait for one.
			settled = settled && !(r.Check == "lldp" && strings.Contains(r.Found, ", "))
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
// read. Then a swapped pair of cables at leaf1, a stopped bgpd on leaf2
// and one uplink at MTU 1500 each give exactly their findings, and the
// check passes again once each is undone.
func TestSwitchesONYXFabric(t *testing.T) {
	inv, f, o := goldenFabric(t, "fabric-onyx")
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
		if count["bgp"] != 8 || count["lldp"] != 8 || count["mtu"] != 12 || count["link"] != 12 || count["pfc"] != 12 || count["ecn"] != 12 || count["pause-counters"] != 12 {
			t.Errorf("results per check %v, want bgp 8, lldp 8, and 12 of each port check", count)
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
		// of the two links drop too.
		want := []string{"leaf1 lldp Eth1/31", "leaf1 lldp Eth1/32", "spine1 lldp Eth1/1", "spine2 lldp Eth1/1",
			bgpKey("leaf1", 0), bgpKey("leaf1", 1), bgpKey("spine1", 0), bgpKey("spine2", 1)}
		bad := waitFindings(t, inv, o, want)
		for _, r := range bad {
			if r.Machine == "leaf1" && r.Check == "lldp" && r.Subject == "Eth1/31" && !strings.Contains(r.Fix, "miswired: leaf1 1/31 is cabled to spine2 1/1, the plan cables it to spine1 1/1: move the cable at leaf1 1/31 to spine1 1/1") {
				t.Errorf("leaf1 Eth1/31's fix: %s", r.Fix)
			}
		}
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/31"})
		f.Unplug(fabricnet.End{Switch: "leaf1", Port: "1/32"})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/31"}, B: fabricnet.End{Switch: "spine1", Port: "1/1"}})
		f.Plug(fabricnet.Link{A: fabricnet.End{Switch: "leaf1", Port: "1/32"}, B: fabricnet.End{Switch: "spine2", Port: "1/1"}})
		waitFindings(t, inv, o, nil)
	})
	t.Run("stopped bgpd", func(t *testing.T) {
		f.StopDaemon("leaf2", "bgpd")
		bad := waitFindings(t, inv, o, []string{bgpKey("spine1", 2), bgpKey("spine2", 3), bgpKey("leaf2", 2), bgpKey("leaf2", 3)})
		for _, r := range bad {
			if r.Machine == "leaf2" && !strings.HasPrefix(r.Found, "no session to ") {
				t.Errorf("leaf2's finding: %+v", r)
			}
			if r.Machine != "leaf2" && (r.Found == "ESTABLISHED" || !strings.Contains(r.Fix, "check leaf2's BGP (`show ip bgp summary` on leaf2)")) {
				t.Errorf("%s's finding: %+v", r.Machine, r)
			}
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
}

// The golden mixed fabric (testdata/golden/fabric-mixed: a Cumulus and an
// ONYX spine, a Cumulus and an ONYX leaf): unnumbered between the two
// Cumulus switches, numbered /31s wherever ONYX is on an end, 4-byte ASNs;
// the check reads every planned session on every switch (numbered ones by
// the peer's address) established and every uplink's LLDP neighbor as
// planned, whichever OS is at either end.
func TestSwitchesMixedFabric(t *testing.T) {
	inv, _, o := goldenFabric(t, "fabric-mixed")
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

// goldenFabric brings the golden inventory's fabric up on fabricnet (an
// nvuesim or onyxsim per switch, stand-in hosts on the leaf ports), applies
// it, and checks convergence, a second apply and that the check passes
// (every result passed); it returns the inventory (each switch's mgmt its
// simulator), the fabric and the options that check it.
func goldenFabric(t *testing.T, golden string) (*inventory.Inventory, *fabricnet.Fabric, apply.SwitchOptions) {
	src, err := os.ReadFile("../../testdata/golden/" + golden + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	f := fabricnet.New(t, fabricnet.SpecOf(inv), fabricnet.Options{})
	kh := filepath.Join(t.TempDir(), "known_hosts")
	known := []string{""}
	o := apply.SwitchOptions{Common: apply.Common{Parallel: 4}, SSH: apply.SSH{Password: "admin", KnownHosts: kh}, BackupDir: filepath.Join(t.TempDir(), "bk")}
	for i, sw := range inv.Switches {
		if sw.OS() == inventory.OSCumulus {
			s := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports})
			f.FollowNVUE(sw.Name, s)
			inv.Switches[i].Mgmt = s.Addr
			o.NVUE = apply.NVUE{Password: "cumulus", Fingerprint: s.Fingerprint()}
			continue
		}
		s := onyxsim.Start(t, onyxsim.Options{Hostname: sw.Name, Version: sw.ONYX.String(), Ports: sw.Ports})
		f.FollowONYX(sw.Name, s)
		inv.Switches[i].Mgmt = s.Addr
		known = append(known, s.KnownHostsLine())
	}
	if err := os.WriteFile(kh, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range inv.Hosts {
		ns := f.HostNS(h.Name)
		leaf := inv.LeafOf(&h)
		f.Attach(leaf.Name, leaf.PortName(h.Data.Port), ns, "data0")
		ipns(t, ns, "addr", "add", h.Data.Address.String(), "dev", "data0")
		ipns(t, ns, "route", "add", "default", "via", leaf.Fabric.Gateway.String())
		ipns(t, ns, "addr", "add", netip.PrefixFrom(h.Bridge().Addr(), 32).String(), "dev", "lo")
	}
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
			dst := h.Subnet
			waitUntil(t, 60*time.Second, leaf.Name+"'s route to "+dst.String()+" over both spines", func() (bool, string) {
				r, ok, err := f.Route(leaf.Name, dst)
				return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
			})
			r, _, _ := f.Route(leaf.Name, dst)
			t.Logf("%s: %s proto %s nexthops %v", leaf.Name, r.Dst, r.Protocol, r.NextHops)
		}
	}
	a, b := inv.HostsOnSwitch(leaves[0].Name)[0], inv.HostsOnSwitch(leaves[1].Name)[0]
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
	return inv, f, o
}
