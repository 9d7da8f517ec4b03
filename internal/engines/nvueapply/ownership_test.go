package nvueapply

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// loadInvEdit is loadInv with each (old, new) pair of edits replaced in
// the inventory's text.
func loadInvEdit(t testing.TB, golden, addr string, edits ...string) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "golden", golden, "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("%s has no %q", golden, edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	inv, err := inventory.Load(golden+".yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	inv.Switches[0].Mgmt = addr
	return inv
}

// userSVIs is a switch owner's configuration that shares the data
// network's gateway address (31.31.31.254, docker.gateway's default) and
// the pool's address space with rdggen: SVI addresses on vlan10 and, in
// another VRF, vlan300, their VLANs in the bridge, and static routes, one
// into docker.pool via a host's data address with a prefix rdggen never
// writes on this inventory.
func userSVIs() Tree {
	return Tree{
		"bridge": Tree{"domain": Tree{"br_default": Tree{"vlan": Tree{"10": Tree{}, "300": Tree{}}}}},
		"interface": Tree{
			"vlan10":  Tree{"type": "svi", "vlan": int64(10), "ip": Tree{"address": Tree{"31.31.31.254/24": Tree{}}}},
			"vlan300": Tree{"type": "svi", "vlan": int64(300), "ip": Tree{"address": Tree{"31.31.31.254/24": Tree{}}, "vrf": "BLUE"}},
			"swp20":   Tree{"type": "swp", "link": Tree{"description": "uplink"}},
		},
		"vrf": Tree{
			"default": Tree{"router": Tree{"static": Tree{
				"172.16.200.0/24": Tree{"address-family": "ipv4-unicast", "via": Tree{"31.31.31.41": Tree{"type": "ipv4-address"}}},
				"10.99.0.0/16":    Tree{"address-family": "ipv4-unicast", "via": Tree{"31.31.31.100": Tree{"type": "ipv4-address"}}},
			}}},
			"BLUE": Tree{"router": Tree{"static": Tree{
				"172.16.41.0/24": Tree{"address-family": "ipv4-unicast", "via": Tree{"31.31.31.41": Tree{"type": "ipv4-address"}}},
			}}},
		},
	}
}

// missingLeaves are the leaves of want that got does not hold with the
// same value.
func missingLeaves(want, got Tree) []string {
	var out []string
	paths, values := cumulus.Leaves(want)
	for i, p := range paths {
		have, ok := cumulus.Lookup(got, p)
		if !ok || !(isEmptyObject(values[i]) && isEmptyObject(have) || cumulus.JSONEqual(values[i], have)) {
			out = append(out, fmt.Sprintf("%s = %v (now %v)", cumulus.PathString(p), cumulus.LeafText(values[i], true), cumulus.LeafText(have, ok)))
		}
	}
	return out
}

// TestUserLeavesSurvive: a switch whose owner has SVI addresses equal to
// the inventory's gateway, VLANs and static routes keeps every one of
// them through `apply --yes` in both routing modes and a change between
// them; rdggen removes only what its record names.
func TestUserLeavesSurvive(t *testing.T) {
	for _, variant := range []struct {
		name string
		seed func() Tree
	}{
		{"vlan10-vlan300-routes", userSVIs},
		{"vlan1-gateway", func() Tree {
			u := userSVIs()
			u["interface"].(Tree)["vlan1"] = Tree{"type": "svi", "vlan": int64(1), "ip": Tree{"address": Tree{"31.31.31.254/24": Tree{}}}}
			return u
		}},
	} {
		t.Run(variant.name, func(t *testing.T) {
			seed := variant.seed()
			r := newRig(t, nvuesim.Options{Applied: seed})
			perHost := loadInv(t, "cumulus", r.sim.Addr)
			if _, err := r.run(t, perHost); err != nil {
				t.Fatalf("%v\n%s", err, r.out)
			}
			t.Logf("apply --yes, routing: hosts:\n%s", r.out)
			userLeaves, _ := cumulus.Leaves(seed)
			if lost := missingLeaves(seed, r.sim.Applied()); len(lost) > 0 {
				t.Errorf("routing hosts: user leaves lost:\n  %s\n%s", strings.Join(lost, "\n  "), r.out)
			} else {
				t.Logf("routing hosts: all %d user leaves still on the switch", len(userLeaves))
			}
			if strings.Contains(r.out.String(), "(unset)\n") && strings.Contains(r.out.String(), "→ (unset)") {
				t.Errorf("the plan removes something:\n%s", r.out)
			}
			if variant.name != "vlan10-vlan300-routes" {
				return
			}
			// Routed, then back: rdggen's routes and gateway come and go,
			// the user's stay.
			r.out.Reset()
			routed := loadInv(t, "cumulus-routed", r.sim.Addr)
			routed.Switches[0].Cumulus = perHost.Switches[0].Cumulus
			if _, err := r.run(t, routed); err != nil {
				t.Fatalf("routed: %v\n%s", err, r.out)
			}
			t.Logf("apply --yes, routing: switch:\n%s", r.out)
			for _, want := range []string{
				"interface.vlan10.ip.address[31.31.31.254/24]: the gateway address 31.31.31.254 that rdggen puts on vlan1 (docker.gateway) is also on vlan10, and rdggen did not write it there: left as it is (to remove it: nv unset interface vlan10 ip address 31.31.31.254/24)",
				"interface.vlan1.description: (unset) → rdggen:gw=31.31.31.254/24;rt=172.16.41.0/24@31.31.31.41*8",
			} {
				if !strings.Contains(r.out.String(), want) {
					t.Errorf("routed plan lacks %q:\n%s", want, r.out)
				}
			}
			if lost := missingLeaves(seed, r.sim.Applied()); len(lost) > 0 {
				t.Errorf("routing switch: user leaves lost:\n  %s", strings.Join(lost, "\n  "))
			} else {
				t.Logf("routing switch: all %d user leaves still on the switch", len(userLeaves))
			}
			r.out.Reset()
			if _, err := r.run(t, perHost); err != nil {
				t.Fatalf("back to hosts: %v\n%s", err, r.out)
			}
			t.Logf("apply --yes, back to routing: hosts:\n%s", r.out)
			applied := r.sim.Applied()
			if lost := missingLeaves(seed, applied); len(lost) > 0 {
				t.Errorf("back to hosts: user leaves lost:\n  %s\n%s", strings.Join(lost, "\n  "), r.out)
			} else {
				t.Logf("back to routing hosts: all %d user leaves still on the switch", len(userLeaves))
			}
			routes, _ := cumulus.Lookup(applied, staticPath)
			if got := sortedKeys(routes.(map[string]any)); !slices.Equal(got, []string{"10.99.0.0/16", "172.16.200.0/24"}) {
				t.Errorf("default VRF routes after going back to hosts: %v", got)
			}
			for _, gone := range [][]string{{"interface", "vlan1", "ip", "address", "31.31.31.254/24"}, recordPath} {
				if _, ok := cumulus.Lookup(applied, gone); ok {
					t.Errorf("%s still there", cumulus.PathString(gone))
				}
			}
		})
	}
}

// TestPoolChangeRemovesRecordedRoutes: a change of docker.pool under
// routing: switch removes the old pool's routes that rdggen recorded (and
// only those), writes the new ones and the new record.
func TestPoolChangeRemovesRecordedRoutes(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: userSVIs()})
	routed := loadInv(t, "cumulus-routed", r.sim.Addr)
	if _, err := r.run(t, routed); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	moved := loadInvEdit(t, "cumulus-routed", r.sim.Addr, "pool: 172.16.0.0/16", "pool: 10.200.0.0/16")
	r.out.Reset()
	res, err := r.run(t, moved)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	t.Logf("after the pool change:\n%s", r.out)
	applied := r.sim.Applied()
	routes, _ := cumulus.Lookup(applied, staticPath)
	got := sortedKeys(routes.(map[string]any))
	var want []string
	for n := 41; n <= 48; n++ {
		want = append(want, fmt.Sprintf("10.200.%d.0/24", n))
	}
	want = append(want, "10.99.0.0/16", "172.16.200.0/24")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("routes after the pool change:\n got %v\nwant %v", got, want)
	}
	if d := leaf(applied, recordPath...); d != "rdggen:gw=31.31.31.254/24;rt=10.200.41.0/24@31.31.31.41*8" {
		t.Errorf("record %v", d)
	}
	removed := 0
	for _, c := range res.Plan.Changes {
		if c.Op == "remove" {
			removed++
		}
	}
	if removed != 8 || !strings.Contains(r.out.String(), "vrf.default.router.static[172.16.41.0/24]: {address-family=ipv4-unicast, via[31.31.31.41].type=ipv4-address} → (unset)") {
		t.Errorf("%d removals, want 8 (the old pool's recorded routes):\n%s", removed, r.out)
	}
}

// TestRecordRoundTrip: the record's text reads back as the routes written,
// and a record longer than a description holds keeps what fits.
func TestRecordRoundTrip(t *testing.T) {
	inv := loadInv(t, "cumulus-routed", "")
	rec := cumulus.RecordOf(cumulus.Intent(inv, inv.Switches[0]))
	text := rec.String()
	back, ok := cumulus.ParseRecord(text)
	if !ok || len(back.Routes) != 8 || back.Gateway != rec.Gateway || rec.Dropped != 0 {
		t.Fatalf("%q → %+v %v", text, back, ok)
	}
	for i := range back.Routes {
		if back.Routes[i] != rec.Routes[i] {
			t.Errorf("route %d: %v, want %v", i, back.Routes[i], rec.Routes[i])
		}
	}
	// Scattered routes: no runs, more than 255 bytes.
	var scattered cumulus.Record
	for i := range 40 {
		scattered.Routes = append(scattered.Routes, cumulus.RecordedRoute{
			Prefix: netipPrefix(fmt.Sprintf("172.16.%d.0/24", 3*i)), Via: netipAddr(fmt.Sprintf("31.31.31.%d", 100+2*i))})
	}
	text = scattered.String()
	back, ok = cumulus.ParseRecord(text)
	if !ok || len(text) > cumulus.RecordMax || scattered.Dropped == 0 || len(back.Routes)+scattered.Dropped != 40 {
		t.Errorf("scattered: %d bytes, %d kept, %d dropped, ok %v", len(text), len(back.Routes), scattered.Dropped, ok)
	}
	if _, ok := cumulus.ParseRecord("uplink to core"); ok {
		t.Error("a user's description read as a record")
	}
}

func netipPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func netipAddr(s string) netip.Addr     { return netip.MustParseAddr(s) }

// TestUserDescriptionNotOverwritten: a description of the user's on vlan1
// stays; rdggen then records nothing, says so, and removes nothing later.
func TestUserDescriptionNotOverwritten(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: Tree{"interface": Tree{"vlan1": Tree{"description": "core SVI, ask netops"}}}})
	routed := loadInv(t, "cumulus-routed", r.sim.Addr)
	res, err := r.run(t, routed)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if d := leaf(r.sim.Applied(), recordPath...); d != "core SVI, ask netops" {
		t.Errorf("description now %v", d)
	}
	if !strings.Contains(strings.Join(res.Plan.Warnings, "\n"), `interface vlan1 carries the description "core SVI, ask netops", which is not rdggen's record`) {
		t.Errorf("warnings: %q", res.Plan.Warnings)
	}
	r.out.Reset()
	res, err = r.run(t, loadInv(t, "cumulus", r.sim.Addr))
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	for _, c := range res.Plan.Changes {
		if c.Op == "remove" {
			t.Errorf("removed without a record: %s", c)
		}
	}
	if n := len(res.Plan.Kept); n != 8 { // the 8 routes, named
		t.Errorf("%d kept and named, want 8:\n%s", n, r.out)
	}
}

// Where pkg/cumulus keeps rdggen's record and the static routes.
var (
	recordPath = []string{"interface", cumulus.SVI, "description"}
	staticPath = []string{"vrf", "default", "router", "static"}
)

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
