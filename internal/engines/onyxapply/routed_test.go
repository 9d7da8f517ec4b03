package onyxapply

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// routedInv is a 3-host inventory on one SN2700 with docker.routing set to
// routing ("" leaves the key out) and the extra docker keys.
func routedInv(t testing.TB, routing, extra string, defaults ...string) *inventory.Inventory {
	t.Helper()
	return poolInv(t, "172.16.0.0/16", routing, extra, defaults...)
}

// poolInv is routedInv with docker.pool set to pool.
func poolInv(t testing.TB, pool, routing, extra string, defaults ...string) *inventory.Inventory {
	t.Helper()
	docker := "pool: " + pool + ", prefix: 24"
	if routing != "" {
		docker += ", routing: " + routing
	}
	if extra != "" {
		docker += ", " + extra
	}
	src := `name: t
switches:
  - {name: sw, model: SN2700, onyx: 3.6.8190}
docker: {` + docker + `}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
` + strings.Join(defaults, "") + `hosts:
  - {name: h1, esxi: e1, data: {address: 10.0.0.1/24, port: 1/1}}
  - {name: h2, esxi: e2, data: {address: 10.0.0.2/24, port: 1/2}}
  - {name: h3, esxi: e3, data: {address: 10.0.0.3/24, port: 1/3}}
`
	inv, err := inventory.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// switchTo points a fresh inventory at the rig's simulator.
func (r *rig) switchTo(inv *inventory.Inventory) {
	inv.Switches[0].Mgmt = r.inv.Switches[0].Mgmt
	r.inv = inv
}

func routes(l onyxsim.L3) []string {
	var out []string
	for _, r := range l.Routes {
		out = append(out, r.Dst.String()+" via "+r.Via.String())
	}
	return out
}

// Into routed-pool mode and back, on a switch that routes nothing else:
// the first apply makes the switch the pool's gateway (routing on, the
// gateway address on interface vlan 1, ICMP redirects off, the record of
// the pool, one route per host); the second sends nothing. Back in
// per-host mode, apply removes exactly that (routing, the routes, and last
// the interface with the record) and the running-config is what it was
// before; the next apply sends nothing.
func TestRoutedPoolOnAndOff(t *testing.T) {
	seed := []string{"interface ethernet 1/20 description spare", "ip route vrf mgmt 0.0.0.0/0 192.0.2.1"}
	r := newRig(t, routedInv(t, "hosts", ""), onyxsim.Options{Seed: seed})
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	perHost := statements(sim.RunningConfig())

	r.switchTo(routedInv(t, "switch", ""))
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	t.Logf("into routed mode:\n%s", r.out)
	want := []string{
		"ip routing vrf default",
		"interface vlan 1",
		"interface vlan 1 ip address 10.0.0.254/24 primary",
		"no interface vlan 1 ip icmp redirect",
		"interface vlan 1 description rdggen-pool-172.16.0.0/16",
		"ip route vrf default 172.16.1.0/24 10.0.0.1",
		"ip route vrf default 172.16.2.0/24 10.0.0.2",
		"ip route vrf default 172.16.3.0/24 10.0.0.3",
	}
	if d := cmp.Diff(want, sim.Received()); d != "" {
		t.Errorf("commands into routed mode (-want +got):\n%s\n%s", d, r.out)
	}
	if !res[0].Saved {
		t.Error("not saved")
	}
	l3 := sim.L3State(1)
	if !l3.Routing || l3.Redirects || len(l3.Addresses) != 1 || l3.Addresses[0] != netip.MustParsePrefix("10.0.0.254/24") ||
		!slices.Equal(routes(l3), []string{"172.16.1.0/24 via 10.0.0.1", "172.16.2.0/24 via 10.0.0.2", "172.16.3.0/24 via 10.0.0.3"}) {
		t.Errorf("switch state: %+v", l3)
	}
	running := sim.RunningConfig()
	if !strings.Contains(running, "##\n## L3 configuration\n##\n   ip routing vrf default\n   interface vlan 1\n   interface vlan 1 ip address 10.0.0.254/24 primary\nno interface vlan 1 ip icmp redirect\n   interface vlan 1 description rdggen-pool-172.16.0.0/16\n   ip route vrf default 172.16.1.0/24 10.0.0.1\n") {
		t.Errorf("running-config:\n%s", running)
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Fatalf("second apply in routed mode sent %q (%v)\n%s", sim.Received(), err, r.out)
	}

	r.switchTo(routedInv(t, "", ""))
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	t.Logf("back to per-host mode:\n%s", r.out)
	want = []string{
		"no ip routing vrf default",
		"no ip route vrf default 172.16.1.0/24 10.0.0.1",
		"no ip route vrf default 172.16.2.0/24 10.0.0.2",
		"no ip route vrf default 172.16.3.0/24 10.0.0.3",
		"no interface vlan 1",
	}
	if d := cmp.Diff(want, sim.Received()); d != "" {
		t.Errorf("commands back to per-host mode (-want +got):\n%s\n%s", d, r.out)
	}
	for _, w := range []string{"# removes: interface vlan 1 ip address 10.0.0.254/24 primary", "# removes: ip route vrf default 172.16.3.0/24 10.0.0.3"} {
		if !strings.Contains(r.out.String(), w) {
			t.Errorf("plan lacks %q:\n%s", w, r.out)
		}
	}
	if d := cmp.Diff(perHost, statements(sim.RunningConfig())); d != "" {
		t.Errorf("running-config after going back differs from before (-before +after):\n%s", d)
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Fatalf("second apply in per-host mode sent %q (%v)\n%s", sim.Received(), err, r.out)
	}
}

// Going back on a switch that also routes for someone else: the interface
// keeps its description, only rdggen's settings on it are undone; routing
// stays on (a route outside the pool needs it), with a warning; the route
// outside the pool stays.
func TestRoutedPoolOffKeepsOthers(t *testing.T) {
	seed := []string{"ip route 198.51.100.0/24 10.0.0.100", "interface vlan 1", "interface vlan 1 description data"}
	r := newRig(t, routedInv(t, "switch", "gateway: 10.0.0.250"), onyxsim.Options{Seed: seed})
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if l3 := sim.L3State(1); len(l3.Routes) != 4 || l3.Addresses[0].String() != "10.0.0.250/24" {
		t.Fatalf("routed: %+v", l3)
	}
	r.switchTo(routedInv(t, "hosts", "gateway: 10.0.0.250"))
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	want := []string{
		"interface vlan 1 ip icmp redirect",
		"interface vlan 1 no ip address",
		"no ip route vrf default 172.16.1.0/24 10.0.0.1",
		"no ip route vrf default 172.16.2.0/24 10.0.0.2",
		"no ip route vrf default 172.16.3.0/24 10.0.0.3",
	}
	if d := cmp.Diff(want, sim.Received()); d != "" {
		t.Errorf("commands (-want +got):\n%s\n%s", d, r.out)
	}
	if w := res[0].Plan.Warnings; len(w) != 1 || !strings.Contains(w[0], "ip routing vrf default stays on") || !strings.Contains(w[0], "198.51.100.0/24") {
		t.Errorf("warnings: %q", w)
	}
	l3 := sim.L3State(1)
	if !l3.Routing || !l3.Redirects || len(l3.Addresses) != 0 || !slices.Equal(routes(l3), []string{"198.51.100.0/24 via 10.0.0.100"}) {
		t.Errorf("after: %+v", l3)
	}
	if !strings.Contains(sim.RunningConfig(), "   interface vlan 1 description data\n") {
		t.Errorf("the interface's description is gone:\n%s", sim.RunningConfig())
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Fatalf("second apply sent %q (%v)\n%s", sim.Received(), err, r.out)
	}
}

// In routed mode, what is in the way is replaced: another primary address
// on interface vlan 1 is removed first (ONYX cannot change a primary); a
// jumbo data network gets the interface's MTU. A route to a host's
// container subnet via an address that is no host's is not rdggen's: it
// stays, and the plan names it (an ECMP path beside rdggen's route) with
// the command that removes it. A data port in another VLAN is a warning.
func TestRoutedPoolReplaces(t *testing.T) {
	seed := []string{"interface vlan 1", "interface vlan 1 ip address 10.0.0.253/24 primary",
		"ip route 172.16.2.0/24 10.0.0.9", "vlan 10", "interface ethernet 1/3 switchport access vlan 10"}
	r := newRig(t, routedInv(t, "switch", "", "  data_mtu: 9000\n"), onyxsim.Options{Seed: seed})
	sim := r.sims[0]
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	got := sim.Received()
	if len(got) < 3 || got[0] != "interface vlan 1 no ip address" || slices.Contains(got, "no ip route vrf default 172.16.2.0/24 10.0.0.9") ||
		!slices.Contains(got, "interface vlan 1 ip address 10.0.0.254/24 primary") {
		t.Errorf("commands: %q", got)
	}
	if w := res[0].Plan.Warnings; len(w) != 2 || !strings.Contains(w[0], "ECMP") || !strings.Contains(w[0], "(if rdggen made it: no ip route vrf default 172.16.2.0/24 10.0.0.9)") ||
		!strings.Contains(w[1], "data port 1/3 (h3)") {
		t.Errorf("warnings: %q", w)
	}
	if k := res[0].Plan.Kept; len(k) != 1 || k[0].Command != "ip route vrf default 172.16.2.0/24 10.0.0.9" {
		t.Errorf("kept: %+v", k)
	}
	if !slices.Contains(got, "interface vlan 1 mtu 9000") {
		t.Errorf("no VLAN MTU for the jumbo data network: %q", got)
	}
	if l3 := sim.L3State(1); fmt.Sprint(l3.Addresses) != "[10.0.0.254/24]" || len(l3.Routes) != 4 || l3.MTU != 9000 {
		t.Errorf("after: %+v", l3)
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Fatalf("second apply sent %q (%v)", sim.Received(), err)
	}
}

// A per-host inventory leaves a switch alone whose interface vlan 1 happens
// to carry the default gateway address while it has no route of rdggen's:
// nothing proves rdggen put it there.
func TestPerHostLeavesForeignGateway(t *testing.T) {
	seed := []string{"interface vlan 1", "interface vlan 1 ip address 10.0.0.254/24 primary", "ip routing vrf default"}
	r := newRig(t, routedInv(t, "", ""), onyxsim.Options{Seed: seed})
	sim := r.sims[0]
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	for _, c := range sim.Received() {
		if strings.Contains(c, "vlan") || strings.Contains(c, "ip rout") {
			t.Errorf("sent %q", c)
		}
	}
	if w := res[0].Plan.Warnings; len(w) != 1 || !strings.Contains(w[0], "left alone") {
		t.Errorf("warnings: %q", w)
	}
}

// userRoute is a static route of the user's into docker.pool, via an
// address of the data network that no host of the inventory has: rdggen
// never made it, so apply and check leave it, in both modes.
const userRoute = "ip route vrf default 172.16.200.0/24 10.0.0.50"

// configFailures are the check's `config` results that did not pass.
func configFailures(rs []readiness.Result) []readiness.Result {
	var out []readiness.Result
	for _, r := range notPassed(rs) {
		if r.Check == CheckConfig {
			out = append(out, r)
		}
	}
	return out
}

// A user's route into the pool, on a switch that was never in routed mode
// and then in routed mode: no apply removes it, no plan or check calls it
// rdggen's, and the plan does not claim the switch has no route of
// rdggen's while it has one.
func TestUserRouteInPoolSurvives(t *testing.T) {
	r := newRig(t, routedInv(t, "hosts", ""), onyxsim.Options{Seed: []string{userRoute}})
	sim := r.sims[0]
	has := func(when string) {
		t.Helper()
		if !slices.Contains(routes(sim.L3State(1)), "172.16.200.0/24 via 10.0.0.50") {
			t.Errorf("%s: the user's route is gone: %q\n%s", when, routes(sim.L3State(1)), r.out)
		}
		for _, c := range sim.Received() {
			if strings.Contains(c, "172.16.200.0/24") {
				t.Errorf("%s: sent %q", when, c)
			}
		}
	}
	for _, mode := range []string{"hosts", "switch"} {
		r.switchTo(routedInv(t, mode, ""))
		res, err := r.run(t)
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, r.out)
		}
		has(mode + " mode, first apply")
		if strings.Contains(r.out.String(), "no route of rdggen's") {
			t.Errorf("%s: the plan says the switch has no route of rdggen's:\n%s", mode, r.out)
		}
		for _, c := range res[0].Plan.Changes {
			if strings.Contains(strings.Join(c.Removed, " "), "172.16.200.0/24") {
				t.Errorf("%s: planned %q", mode, c.Command)
			}
		}
		if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
			t.Errorf("%s: second apply sent %q (%v)\n%s", mode, sim.Received(), err, r.out)
		}
		has(mode + " mode, second apply")
		rs, err := r.check(t)
		if err != nil {
			t.Fatal(err)
		}
		if bad := configFailures(rs); len(bad) != 0 {
			t.Errorf("%s: check fails the config: %+v", mode, bad)
		}
		for _, x := range rs {
			if strings.Contains(x.Found+x.Expected, "rdggen's, no longer wanted") {
				t.Errorf("%s: check says %+v", mode, x)
			}
		}
		// Check says what the plan says: nothing in per-host mode on a
		// switch rdggen never routed on; in routed mode the route is in
		// the pool rdggen routes there, so both name it, leave it and give
		// the command that removes it.
		var named []string
		for _, x := range rs {
			if x.Subject == userRoute {
				named = append(named, x.Found)
				if x.Status != readiness.Passed {
					t.Errorf("%s: %+v", mode, x)
				}
			}
		}
		var kept []string
		for _, k := range res[0].Plan.Kept {
			kept = append(kept, k.Reason)
		}
		if !slices.Equal(named, kept) || (mode == "switch") != (len(kept) == 1) {
			t.Errorf("%s: check names %q, the plan %q", mode, named, kept)
		}
		if mode == "switch" && len(kept) == 1 && !strings.Contains(kept[0], "(if rdggen made it: no "+userRoute+")") {
			t.Errorf("%s: %q", mode, kept[0])
		}
	}
	// And back: the user's route still stays, rdggen's go.
	r.switchTo(routedInv(t, "hosts", ""))
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	has("back in hosts mode")
	if got := routes(sim.L3State(1)); !slices.Equal(got, []string{"172.16.200.0/24 via 10.0.0.50"}) {
		t.Errorf("routes back in hosts mode: %q\n%s", got, r.out)
	}
}

// docker.pool changed from 172.16.0.0/16 to 172.20.0.0/16: in routed mode
// the routes rdggen made into the old pool are removed (and check names
// them as rdggen's, no longer wanted) and the new ones added; in per-host
// mode everything rdggen made goes. The user's route stays; a second apply
// sends nothing.
func TestPoolChangeRemovesOldRoutes(t *testing.T) {
	for _, mode := range []string{"switch", "hosts"} {
		t.Run(mode, func(t *testing.T) {
			r := newRig(t, routedInv(t, "switch", ""), onyxsim.Options{Seed: []string{userRoute}})
			sim := r.sims[0]
			if _, err := r.run(t); err != nil {
				t.Fatalf("%v\n%s", err, r.out)
			}
			r.switchTo(poolInv(t, "172.20.0.0/16", mode, ""))
			rs, err := r.check(t)
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, x := range configFailures(rs) {
				if x.Expected == "absent (rdggen's, no longer wanted)" {
					removed = append(removed, x.Found)
				}
			}
			wantRemoved := []string{"ip route vrf default 172.16.1.0/24 10.0.0.1", "ip route vrf default 172.16.2.0/24 10.0.0.2", "ip route vrf default 172.16.3.0/24 10.0.0.3"}
			for _, w := range wantRemoved {
				if !slices.Contains(removed, w) {
					t.Errorf("check does not name %q as rdggen's, no longer wanted: %q", w, removed)
				}
			}
			if _, err := r.run(t); err != nil {
				t.Fatalf("%v\n%s", err, r.out)
			}
			t.Logf("after the pool change:\n%s", r.out)
			want := []string{"172.16.200.0/24 via 10.0.0.50"}
			if mode == "switch" {
				want = []string{"172.16.200.0/24 via 10.0.0.50", "172.20.1.0/24 via 10.0.0.1", "172.20.2.0/24 via 10.0.0.2", "172.20.3.0/24 via 10.0.0.3"}
			}
			l3 := sim.L3State(1)
			if got := routes(l3); !slices.Equal(got, want) {
				t.Errorf("routes (want %q):\n%q\n%s", want, got, r.out)
			}
			// Routing stays on: the user's route needs it.
			if mode == "hosts" && (!l3.Routing || len(l3.Addresses) != 0 || !strings.Contains(r.out.String(), `ip routing vrf default stays on: "ip route vrf default 172.16.200.0/24 10.0.0.50" still needs it`)) {
				t.Errorf("the gateway stays, or routing goes: %+v\n%s", l3, r.out)
			}
			for _, w := range wantRemoved {
				if !strings.Contains(r.out.String(), "no "+w) {
					t.Errorf("plan lacks %q:\n%s", "no "+w, r.out)
				}
			}
			if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
				t.Errorf("second apply sent %q (%v)\n%s", sim.Received(), err, r.out)
			}
		})
	}
}
