package nvueapply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// The prefixes each switch of the golden 2 × 2 Cumulus fabric must route,
// and over which uplinks: a leaf the other leaf's subnet, container
// subnets and loopback over both spines, each spine's loopback over the
// uplink to it; a spine each leaf's prefixes over the link to that leaf,
// and not the other spine's loopback.
func TestExpectedRoutes(t *testing.T) {
	inv := loadInv(t, "fabric-cumulus", "")
	show := func(sw string) string {
		var b []string
		for _, w := range inv.FabricPlan().Routes(inv.Switch(sw)) {
			b = append(b, fmt.Sprintf("%s %s of %s via %s", w.Prefix, w.What, w.Owner.Name, describeUplinks(newUplinkIndex(*inv.Switch(sw), inv.Uplinks(sw)), w.Via)))
		}
		return strings.Join(b, "\n")
	}
	for sw, want := range map[string]string{
		"leaf1": "10.10.10.1/32 the loopback of spine1 via swp63 (spine1)\n" +
			"10.10.10.2/32 the loopback of spine2 via swp64 (spine2)\n" +
			"10.1.2.0/24 the data subnet of leaf2 via swp63 (spine1), swp64 (spine2)\n" +
			"172.16.21.0/24 h21's container subnet of leaf2 via swp63 (spine1), swp64 (spine2)\n" +
			"172.16.22.0/24 h22's container subnet of leaf2 via swp63 (spine1), swp64 (spine2)\n" +
			"10.10.10.4/32 the loopback of leaf2 via swp63 (spine1), swp64 (spine2)",
		"spine2": "10.1.1.0/24 the data subnet of leaf1 via swp1 (leaf1)\n" +
			"172.16.11.0/24 h11's container subnet of leaf1 via swp1 (leaf1)\n" +
			"172.16.12.0/24 h12's container subnet of leaf1 via swp1 (leaf1)\n" +
			"10.10.10.3/32 the loopback of leaf1 via swp1 (leaf1)\n" +
			"10.1.2.0/24 the data subnet of leaf2 via swp2 (leaf2)\n" +
			"172.16.21.0/24 h21's container subnet of leaf2 via swp2 (leaf2)\n" +
			"172.16.22.0/24 h22's container subnet of leaf2 via swp2 (leaf2)\n" +
			"10.10.10.4/32 the loopback of leaf2 via swp2 (leaf2)",
	} {
		if got := show(sw); got != want {
			t.Errorf("%s:\n got %s\nwant %s", sw, got, want)
		}
	}
}

// bgpRoute is a prefix's view in the shape nvuesim serves (the reference
// page's command tree): a BGP entry with flags and one via per next hop.
func bgpRoute(flags map[string]any, vias map[string]string) map[string]any {
	v := map[string]any{}
	for id, port := range vias {
		v[id] = map[string]any{"interface": port, "weight": int64(1), "flags": map[string]any{"active": map[string]any{}, "installed": map[string]any{}}}
	}
	e := map[string]any{"distance": int64(20), "via": v}
	if flags != nil {
		e["flags"] = flags
	}
	return map[string]any{"protocol": map[string]any{"bgp": map[string]any{"entry-index": map[string]any{"1": e}}}}
}

var installedFlags = map[string]any{"installed": map[string]any{}, "selected": map[string]any{}, "fib-selected": map[string]any{}}

// The routes check's judgement of one prefix (leaf1's route to h21's
// container subnet, expected over swp63 to spine1 and swp64 to spine2) on
// every shape of view it may meet: a pass names both next hops; one next
// hop fails naming the missing uplink, its spine and where to look; a
// missing route names the static route and host link it depends on; a
// route not installed, or installed from another protocol, fails; a view
// without flags, without readable entries, or whose next hops name no
// interface is Unknown, never a pass or a failure.
func TestJudgeRoute(t *testing.T) {
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := *inv.Switch("leaf1")
	ups := inv.Uplinks("leaf1")
	var w wantRoute
	for _, r := range inv.FabricPlan().Routes(&leaf1) {
		if r.Prefix.String() == "172.16.21.0/24" {
			w = r
		}
	}
	both := map[string]string{"fe80::1": "swp63", "fe80::2": "swp64"}
	for _, c := range []struct {
		name    string
		view    any
		present bool
		status  readiness.Status
		found   string
		fix     string
	}{
		{"both spines", bgpRoute(installedFlags, both), true, readiness.Passed, "bgp, installed, 2 next hops: swp63 (spine1), swp64 (spine2)", ""},
		{"5.16's route-entry table", map[string]any{"route-entry": map[string]any{"1": map[string]any{"protocol": "bgp", "flags": "installed, active",
			"via": map[string]any{"fe80::1": map[string]any{"resolved-via-intf": "swp63"}, "fe80::2": map[string]any{"resolved-via": map[string]any{"swp64": map[string]any{}}}}}}},
			true, readiness.Passed, "bgp, installed, 2 next hops: swp63 (spine1), swp64 (spine2)", ""},
		{"one spine", bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63"}), true, readiness.Failed, "bgp, installed, 1 next hop: swp63",
			"no path over swp64 to spine2: its BGP session (bgp check of swp64) and the link leaf1 swp64 ↔ spine2 swp1 (link and lldp checks), then whether spine2 has 172.16.21.0/24 from leaf2 (spine2's routes check of 172.16.21.0/24)"},
		{"an inactive next hop", func() any {
			v := bgpRoute(installedFlags, both)
			via := v["protocol"].(map[string]any)["bgp"].(map[string]any)["entry-index"].(map[string]any)["1"].(map[string]any)["via"].(map[string]any)
			via["fe80::1"].(map[string]any)["flags"] = map[string]any{}
			return v
		}(), true, readiness.Failed, "bgp, installed, 1 next hop: swp64", "no path over swp63 to spine1"},
		{"missing", nil, false, readiness.Failed, "not in the routing table",
			"look at leaf1's bgp checks of swp63, swp64, then the spines' routes checks of 172.16.21.0/24, then leaf2: it announces 172.16.21.0/24 with a BGP network statement, and only while 172.16.21.0/24 is in its own routing table: its static route to 172.16.21.0/24 via 10.1.2.21, installed only while h21's data link is up (leaf2's link check of swp1s0) (leaf2's config and bgp checks; `nv show vrf default router bgp address-family ipv4-unicast network` and `nv show vrf default router rib ipv4 route 172.16.21.0/24` there)"},
		{"an extra next hop among the hosts", bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63", "fe80::2": "swp64", "10.1.1.99": "vlan1"}), true, readiness.Failed,
			"bgp, installed, 3 next hops: swp63, swp64, vlan1",
			"a path over vlan1, the interface of the hosts' data VLAN (a next hop among the hosts), which the plan does not route 172.16.21.0/24 over: traffic to leaf2 is split onto it"},
		{"an extra next hop over a host's port", bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63", "fe80::2": "swp64", "fe80::7": "swp1s0"}), true, readiness.Failed,
			"bgp, installed, 3 next hops: swp1s0, swp63, swp64", "a path over swp1s0, a port that is no uplink of the plan"},
		{"a second path over an uplink", bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63", "fe80::3": "swp63", "fe80::2": "swp64"}), true, readiness.Failed,
			"bgp, installed, 3 next hops: swp63, swp63, swp64", "a second path over swp63 (spine1): a second BGP neighbor over that port announces 172.16.21.0/24"},
		{"an unnamed next hop beside both", bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63", "fe80::2": "swp64", "fe80::9": ""}), true, readiness.Unknown,
			"does not name the next hops' interfaces", ""},
		{"not installed", bgpRoute(map[string]any{"selected": map[string]any{}}, both), true, readiness.Failed, "in the routing table, not installed (bgp [selected])", "is not in leaf1's forwarding table"},
		{"a static route wins", map[string]any{"protocol": map[string]any{
			"static": map[string]any{"entry-index": map[string]any{"1": map[string]any{"flags": installedFlags, "via": map[string]any{"10.1.1.99": map[string]any{"interface": "vlan1"}}}}},
			"bgp":    map[string]any{"entry-index": map[string]any{"1": map[string]any{"flags": map[string]any{}, "via": map[string]any{}}}},
		}}, true, readiness.Failed, "installed from static, not BGP", "a static route to 172.16.21.0/24 on leaf1 wins over the fabric's BGP route"},
		{"no flags", bgpRoute(nil, both), true, readiness.Unknown, "shows no flags", ""},
		{"an unknown shape", map[string]any{"nexthops": []any{"fe80::1"}}, true, readiness.Unknown, "no route entry rdggen can read", ""},
		{"next hops without interfaces", map[string]any{"protocol": map[string]any{"bgp": map[string]any{"entry-index": map[string]any{"1": map[string]any{
			"flags": installedFlags, "via": map[string]any{"fe80::1": map[string]any{}, "fe80::2": map[string]any{}}}}}}},
			true, readiness.Unknown, "does not name the next hops' interfaces", ""},
	} {
		v := judgeRoute(newUplinkIndex(leaf1, ups), w, c.view, c.present)
		if v.status != c.status || !strings.Contains(v.found, c.found) || !strings.Contains(v.fixed, c.fix) {
			t.Errorf("%s: %+v\nwant %s, found containing %q, fix containing %q", c.name, v, c.status, c.found, c.fix)
		}
		if v.status == readiness.Failed && v.expected != "172.16.21.0/24 (h21's container subnet of leaf2) installed by BGP, 2 next hops: swp63 (spine1), swp64 (spine2)" {
			t.Errorf("%s: expected %q", c.name, v.expected)
		}
	}
}

// Check on the golden fabric's leaf1 reads the routing table through the
// NVUE API (one GET of the table, GET only): with both spines' paths
// every prefix passes; without a data plane behind the simulator (an
// empty table) every prefix fails as missing; a table not keyed by
// prefix is Unknown for every prefix.
func TestCheckRoutes(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 64})
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	routes := func() []readiness.Result {
		rs, _ := Check(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
		var out []readiness.Result
		for _, x := range rs {
			if x.Check == CheckRoutes {
				out = append(out, x)
			}
		}
		return out
	}
	rs := routes()
	if len(rs) != 6 {
		t.Fatalf("%d routes results, want 6 (leaf2's 4 prefixes, 2 spine loopbacks):\n%v", len(rs), rs)
	}
	for _, x := range rs {
		if x.Status != readiness.Failed || x.Found != "not in the routing table" {
			t.Errorf("an empty table: %s", x.Line())
		}
	}
	table := map[string]any{}
	for _, w := range inv.FabricPlan().Routes(leaf1) {
		vias := map[string]string{}
		for i, u := range w.Via {
			vias[fmt.Sprintf("fe80::%d", i+1)] = leaf1.PortName(u.Port)
		}
		table[w.Prefix.String()] = bgpRoute(installedFlags, vias)
	}
	r.sim.SetRIB(func() map[string]any { return table })
	r.sim.ResetRequests()
	for _, x := range routes() {
		if x.Status != readiness.Passed {
			t.Errorf("every path: %s", x.Line())
		}
		if x.Subject == "10.1.2.0/24" && x.Found != "bgp, installed, 2 next hops: swp63 (spine1), swp64 (spine2)" {
			t.Errorf("leaf2's subnet: %s", x.Line())
		}
		t.Log(x.Line())
	}
	if n := r.sim.Count("GET", "/vrf/default/router/rib/ipv4/route"); n != 1 || r.sim.Count("PATCH", "") != 0 || r.sim.Count("POST", "") != 0 {
		t.Errorf("%d GETs of the route table (want 1, the next hops read from it), or a change: %v", n, r.sim.Requests())
	}
	r.sim.SetRIB(func() map[string]any { return map[string]any{"routes": []any{"10.1.2.0/24"}} })
	for _, x := range routes() {
		if x.Status != readiness.Unknown || !strings.Contains(x.Found, "is not keyed by prefix") {
			t.Errorf("a table of another shape: %s", x.Line())
		}
	}
}

// Two cables swapped between leaf1 and leaf2 (leaf1 swp63 now reaches
// spine2 swp2, leaf2 swp64 spine1 swp1), as the lab's `miswire
// leaf1:swp63 leaf2:swp64` leaves them: leaf1's session on swp63 is with
// spine2, which announces its loopback over it, so that route has a next
// hop over swp63 beside the planned swp64. That finding follows from the
// session and LLDP neighbor of swp63, the uplink of the unplanned next
// hop, and so hangs under the miswire's cause; it stood alone, as if a
// fault of its own, when the route followed from its planned uplink only.
func TestCheckRoutesOverMiswiredUplink(t *testing.T) {
	r, inv, leaf1 := fabricLeaf1(t)
	// Each uplink up at its planned speed, hearing the spine port it
	// reaches.
	uplink := func(spine, port string) map[string]any {
		return map[string]any{"link": map[string]any{"oper-status": "up", "admin-status": "up", "speed": "800G", "mtu": int64(9216)},
			"lldp": map[string]any{"neighbor": map[string]any{spine: map[string]any{"chassis": map[string]any{"system-name": spine}, "port": map[string]any{"name": port}}}}}
	}
	nbs := map[string]any{"swp63": uplink("spine2", "swp2"), "swp64": uplink("spine2", "swp1")}
	r.sim.SetInterfaces(func() map[string]any { return nbs })
	r.sim.SetBGPNeighbors(func() map[string]any {
		out := map[string]any{}
		for _, port := range []string{"swp63", "swp64"} {
			out[port] = map[string]any{"state": "established", "remote-as": int64(65100), "peer-hostname": "spine2",
				"address-family": map[string]any{"ipv4-unicast": map[string]any{"rx-prefix": int64(1)}}}
		}
		return out
	})
	table := map[string]any{
		"10.10.10.2/32": bgpRoute(installedFlags, map[string]string{"fe80::1": "swp63", "fe80::2": "swp64"}),
	}
	r.sim.SetRIB(func() map[string]any { return table })
	rs, err := Check(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
	if err != nil {
		t.Fatal(err)
	}
	x := find(rs, CheckRoutes, "10.10.10.2/32")
	if x == nil || x.Status != readiness.Failed || x.Found != "bgp, installed, 2 next hops: swp63, swp64" {
		t.Fatalf("spine2's loopback: %+v", x)
	}
	after := map[string]bool{}
	for _, ref := range x.After.Refs() {
		after[ref.String()] = true
	}
	for _, want := range []string{"leaf1 bgp swp63", "leaf1 lldp swp63", "leaf1 bgp swp64", "leaf1 lldp swp64"} {
		if !after[want] {
			t.Errorf("spine2's loopback follows from %v, not %s", x.After.Refs(), want)
		}
	}
	var under string
	for _, c := range readiness.Causes(rs) {
		for _, e := range c.Explains {
			if e == x.Ref() {
				under = c.Ref.String()
			}
		}
	}
	if under != "leaf1 lldp swp63" {
		t.Errorf("leaf1 routes 10.10.10.2/32 follows from %q, want leaf1 lldp swp63 (the miswired uplink)", under)
	}
}
