package onyx

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// routedInv is an inventory of n hosts on one switch with docker.routing
// set (and any extra docker keys).
func routedInv(t *testing.T, n int, docker string) *inventory.Inventory {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `name: t
switches: [{name: s1, model: SN2700, onyx: 3.6.8190}]
docker: {pool: 172.16.0.0/16, prefix: 24, %s}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`, docker)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - {name: h%d, esxi: e%d, data: {address: 10.0.0.%d/24, port: 1/%d}}\n", i, i, i, i)
	}
	inv, err := inventory.Load("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestL3Statements(t *testing.T) {
	inv := routedInv(t, 3, "routing: switch")
	got := commands(L3(inv, inv.Switches[0]))
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
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("L3 (-want +got):\n%s", d)
	}
	if s := L3(routedInv(t, 3, "routing: hosts"), inv.Switches[0]); s != nil {
		t.Errorf("per-host mode: %v", s)
	}
	if s := commands(L3(routedInv(t, 1, "routing: switch, gateway: 10.0.0.77"), inv.Switches[0])); s[2] != "interface vlan 1 ip address 10.0.0.77/24 primary" {
		t.Errorf("docker.gateway: %v", s)
	}
}

// The switch config grows by two lines per host in routed mode (its route
// and its port's description); the rest of it does not depend on the
// number of hosts.
func TestL3GrowsOneLinePerHost(t *testing.T) {
	lines := func(n int) int {
		inv := routedInv(t, n, "routing: switch")
		return strings.Count(string(Config(inv, inv.Switches[0])), "\n")
	}
	if a, b, c := lines(2), lines(3), lines(30); b-a != 2 || c-b != 54 {
		t.Errorf("config lines for 2, 3, 30 hosts: %d, %d, %d", a, b, c)
	}
}

// Everything the switch prints back parses to the statements sent, in the
// spellings the CLI family accepts, so a second apply sends nothing.
func TestParseL3(t *testing.T) {
	route := Route(netip.MustParsePrefix("172.16.41.0/24"), netip.MustParseAddr("31.31.31.41"))
	addr := VLANAddress(1, netip.MustParsePrefix("31.31.31.254/24"))
	for line, want := range map[string]Statement{
		"   ip routing vrf default": IPRouting(),
		"ip routing":                IPRouting(),
		"no ip routing vrf default": negated(IPRouting()),
		"   interface vlan 1":       VLANInterface(1),
		"   interface vlan 1 ip address 31.31.31.254/24 primary":     addr,
		"interface vlan 1 ip address 31.31.31.254 /24 primary":       addr,
		"interface vlan 1 no ip address":                             negated(addr),
		"no interface vlan 1 ip icmp redirect":                       ICMPRedirect(1, false),
		"interface vlan 1 no ip icmp redirect":                       ICMPRedirect(1, false),
		"interface vlan 1 ip icmp redirect":                          ICMPRedirect(1, true),
		"   interface vlan 1 mtu 9000":                               VLANMTU(1, 9000),
		"   ip route vrf default 172.16.41.0/24 31.31.31.41":         route,
		"ip route 172.16.41.0/24 31.31.31.41":                        route,
		"ip route 172.16.41.0 /24 31.31.31.41":                       route,
		"ip route vrf default 172.16.41.0 255.255.255.0 31.31.31.41": route,
		"no ip route vrf default 172.16.41.0/24 31.31.31.41":         negated(route),
		"ip route vrf mgmt 0.0.0.0/0 10.0.0.1":                       other(Iface{}, "ip route vrf mgmt 0.0.0.0/0 10.0.0.1"),
		"ip route 172.16.41.0/24 31.31.31.41 10":                     other(Iface{}, "ip route 172.16.41.0/24 31.31.31.41 10"),
		"ip route 172.16.41.1/24 31.31.31.41":                        other(Iface{}, "ip route 172.16.41.1/24 31.31.31.41"),
		"interface vlan 1 ip address 31.31.31.253/24":                other(VLAN(1), "ip address 31.31.31.253/24"),
	} {
		got := ParseLine(line)
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q → %+v, want %+v", line, got, want)
		}
	}
	// Commands print back as ONYX does, the `no` of redirects in front.
	for s, want := range map[Statement]string{
		ICMPRedirect(1, false):           "no interface vlan 1 ip icmp redirect",
		negated(VLANInterface(1)):        "no interface vlan 1",
		negated(addr):                    "interface vlan 1 no ip address",
		negated(route):                   "no ip route vrf default 172.16.41.0/24 31.31.31.41",
		VLANInterface(1):                 "interface vlan 1",
		VLANMTU(1, 9000):                 "interface vlan 1 mtu 9000",
		ICMPRedirect(1, true):            "interface vlan 1 ip icmp redirect",
		VLANAddress(1, addr.mustAddr(t)): "interface vlan 1 ip address 31.31.31.254/24 primary",
	} {
		if got := s.Command(); got != want {
			t.Errorf("%+v: %q, want %q", s, got, want)
		}
	}
	// A generated config parses back to a switch with nothing to send.
	inv := routedInv(t, 20, "routing: switch")
	if p := Reconcile(inv, inv.Switches[0], Parse(string(Config(inv, inv.Switches[0])))); !p.Empty() || len(p.Warnings) != 0 {
		t.Errorf("plan against its own config:\n%s", p)
	}
}

func (s Statement) mustAddr(t *testing.T) netip.Prefix {
	p, ok := s.AddressOf()
	if !ok {
		t.Fatalf("%v has no address", s)
	}
	return p
}

// Routes sort by prefix, numerically.
func TestRoutesSortNumerically(t *testing.T) {
	inv := routedInv(t, 12, "routing: switch")
	var got []string
	for _, l := range Lines(L3(inv, inv.Switches[0])) {
		if l.Kind == KindRoute {
			got = append(got, strings.Fields(l.Command)[4])
		}
	}
	if got[0] != "172.16.1.0/24" || got[8] != "172.16.9.0/24" || got[9] != "172.16.10.0/24" {
		t.Errorf("route order: %v", got)
	}
}

// What Reconcile removes, and what it leaves: per-host mode on a switch
// that was the gateway (its interface vlan 1 still carries rdggen's record
// of the pool). rdggen's routes go; a route into the recorded pool via an
// address that is no host's stays and is named; the route outside the
// pool, the mgmt VRF's and the other VLAN's address stay, and so routing
// stays on, with a warning. The interface, holding nothing else, goes
// last, with the record.
func TestReconcileOwnership(t *testing.T) {
	inv := routedInv(t, 2, "routing: hosts")
	current := Parse(`
   ip routing vrf default
   interface vlan 1
   interface vlan 10
   interface vlan 1 ip address 10.0.0.254/24 primary
   interface vlan 10 ip address 192.0.2.1/24 primary
no interface vlan 1 ip icmp redirect
   interface vlan 1 description rdggen-pool-172.16.0.0/16
   ip route vrf default 172.16.1.0/24 10.0.0.1
   ip route vrf default 172.16.2.0/24 10.0.0.2
   ip route vrf default 172.16.9.0/24 10.0.0.9
   ip route vrf default 198.51.100.0/24 192.0.2.9
   ip route vrf mgmt 0.0.0.0/0 10.9.9.9
`)
	p := Reconcile(inv, inv.Switches[0], current)
	want := []string{
		"no ip route vrf default 172.16.1.0/24 10.0.0.1",
		"no ip route vrf default 172.16.2.0/24 10.0.0.2",
		"no interface vlan 1",
	}
	if d := cmp.Diff(want, removals(p)); d != "" {
		t.Errorf("removals (-want +got):\n%s\n%s", d, p)
	}
	if len(p.Kept) != 1 || p.Kept[0].Command != "ip route vrf default 172.16.9.0/24 10.0.0.9" ||
		len(p.Warnings) != 2 || !strings.Contains(p.Warnings[1], "ip routing vrf default stays on") {
		t.Errorf("kept %+v, warnings: %q", p.Kept, p.Warnings)
	}
	// Without a route of rdggen's or its record there is no evidence: the
	// gateway-like address stays, with a warning, and so does routing.
	p = Reconcile(inv, inv.Switches[0], Parse("ip routing vrf default\ninterface vlan 1\ninterface vlan 1 ip address 10.0.0.254/24 primary\n"))
	if r := removals(p); len(r) != 0 {
		t.Errorf("without evidence it removes %q", r)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "left alone") || strings.Contains(p.Warnings[0], "no route of rdggen's") {
		t.Errorf("no evidence:\n%s", p)
	}
}

// removals are the plan's `no` commands.
func removals(p Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if len(c.Removed) > 0 {
			out = append(out, c.Command)
		}
	}
	return out
}

// Which static route is rdggen's, row by row: hosts h1 (10.0.0.1,
// 172.16.1.0/24) and h2; docker.pool 172.16.0.0/16, before it 172.20.0.0/16
// when the switch holds the record "rdggen-pool-172.20.0.0/16". A route is
// removed only when it is shown to be rdggen's, left and named when it may
// be, and left without a word when nothing says it is.
func TestReconcileRouteOwnership(t *testing.T) {
	const (
		removed = "removed"
		named   = "named"
		left    = "left"
	)
	for _, c := range []struct {
		name, mode, record, route, want string
	}{
		{"a user's route into the pool, never in routed mode", "routing: hosts", "", "ip route vrf default 172.16.200.0/24 10.0.0.50", left},
		{"the same in routed mode", "routing: switch", "", "ip route vrf default 172.16.200.0/24 10.0.0.50", named},
		{"the same on a switch with the record", "routing: hosts", "rdggen-pool-172.16.0.0/16", "ip route vrf default 172.16.200.0/24 10.0.0.50", named},
		{"rdggen's route for h1, per-host mode", "routing: hosts", "", "ip route vrf default 172.16.1.0/24 10.0.0.1", removed},
		{"h1's subnet via another host", "routing: hosts", "", "ip route vrf default 172.16.1.0/24 10.0.0.2", named},
		{"h1's subnet via another host, recorded pool", "routing: hosts", "rdggen-pool-172.16.0.0/16", "ip route vrf default 172.16.1.0/24 10.0.0.2", removed},
		{"a route of an earlier pool, recorded", "routing: switch", "rdggen-pool-172.20.0.0/16", "ip route vrf default 172.20.1.0/24 10.0.0.1", removed},
		{"a route of an earlier pool, recorded, per-host mode", "routing: hosts", "rdggen-pool-172.20.0.0/16", "ip route vrf default 172.20.2.0/24 10.0.0.2", removed},
		{"a route of an earlier pool, no record", "routing: hosts", "", "ip route vrf default 172.20.1.0/24 10.0.0.1", named},
		{"a route of an earlier pool, the user's description", "routing: switch", `"data VLAN"`, "ip route vrf default 172.20.1.0/24 10.0.0.1", named},
		{"a route via a host outside the recorded pool", "routing: switch", "rdggen-pool-172.16.0.0/16", "ip route vrf default 198.51.100.0/24 10.0.0.1", left},
		{"an ECMP path beside rdggen's route", "routing: switch", "", "ip route vrf default 172.16.2.0/24 10.0.0.9", named},
		{"elsewhere via another next hop", "routing: switch", "rdggen-pool-172.16.0.0/16", "ip route vrf default 198.51.100.0/24 10.0.0.9", left},
		{"another VRF", "routing: hosts", "rdggen-pool-172.16.0.0/16", "ip route vrf mgmt 172.16.1.0/24 10.0.0.1", left},
		{"with a distance", "routing: hosts", "rdggen-pool-172.16.0.0/16", "ip route 172.16.1.0/24 10.0.0.1 10", left},
	} {
		inv := routedInv(t, 2, c.mode)
		cfg := c.route + "\n"
		if c.record != "" {
			cfg += "interface vlan 1\ninterface vlan 1 description " + c.record + "\n"
		}
		p := Reconcile(inv, inv.Switches[0], Parse(cfg))
		got := left
		neg := negated(ParseLine(c.route)[0]).Command()
		if slices.Contains(removals(p), neg) {
			got = removed
		}
		for _, k := range p.Kept {
			if k.Command == ParseLine(c.route)[0].Command() {
				if got != left {
					t.Errorf("%s: both removed and kept", c.name)
				}
				got = named
				if !strings.Contains(k.Reason, "(if rdggen made it: "+neg+")") || !slices.Contains(p.Warnings, k.Command+": "+k.Reason) {
					t.Errorf("%s: kept without the command that removes it, or not a warning: %+v", c.name, k)
				}
			}
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s\n%s", c.name, got, c.want, p)
		}
	}
}

// The record rdggen writes on the gateway's interface, and reads back in
// the forms a switch may print; a description of the user's is not one,
// and rdggen does not overwrite it.
func TestPoolRecord(t *testing.T) {
	rec := PoolRecord(1, netip.MustParsePrefix("172.16.0.0/16"))
	if rec.Command() != "interface vlan 1 description rdggen-pool-172.16.0.0/16" {
		t.Errorf("record: %q", rec.Command())
	}
	for line, want := range map[string]string{
		"   interface vlan 1 description rdggen-pool-172.16.0.0/16":    "172.16.0.0/16",
		`interface vlan 1 description "rdggen-pool-10.200.0.0/14"`:     "10.200.0.0/14",
		"interface vlan 1 description rdggen-pool-172.16.0.1/16":       "",
		"interface vlan 1 description data VLAN":                       "",
		"interface vlan 1 description rdggen-pool-":                    "",
		"interface ethernet 1/1 description rdggen-pool-172.16.0.0/16": "",
	} {
		p, ok := ParseLine(line)[0].RecordedPool()
		if got := map[bool]string{true: p.String()}[ok]; got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
	if got := ParseLine("interface vlan 1 no description"); len(got) != 1 || got[0] != negated(rec) || got[0].Command() != "interface vlan 1 no description" {
		t.Errorf("no description: %+v", got)
	}
	inv := routedInv(t, 2, "routing: switch")
	p := Reconcile(inv, inv.Switches[0], Parse("interface vlan 1\ninterface vlan 1 description data VLAN\n"))
	for _, c := range p.Commands() {
		if strings.Contains(c, "vlan 1 description") {
			t.Errorf("overwrites the user's description: %q", c)
		}
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "interface vlan 1 description data VLAN is not rdggen's") {
		t.Errorf("warnings: %q", p.Warnings)
	}
}

// `no ip address` would also take a secondary address, which is not
// rdggen's: with one on interface vlan 1, the primary is never removed,
// neither to replace it (routed mode) nor to go back (per-host mode).
func TestReconcileKeepsSecondaryAddresses(t *testing.T) {
	current := Parse(`
   ip routing vrf default
   interface vlan 1
   interface vlan 1 ip address 10.0.0.253/24 primary
   interface vlan 1 ip address 10.0.5.1/24
   ip route vrf default 172.16.1.0/24 10.0.0.1
`)
	for _, mode := range []string{"routing: switch", "routing: hosts, gateway: 10.0.0.253"} {
		inv := routedInv(t, 2, mode)
		p := Reconcile(inv, inv.Switches[0], current)
		for _, c := range p.Changes {
			if strings.Contains(c.Command, "no ip address") || c.Command == "no interface vlan 1" {
				t.Errorf("%s: sends %q", mode, c.Command)
			}
		}
		if !strings.Contains(strings.Join(p.Warnings, "\n"), `"interface vlan 1 ip address 10.0.5.1/24"`) {
			t.Errorf("%s: warnings %q", mode, p.Warnings)
		}
	}
}

// An apply that stopped after removing the gateway (its `no ip routing`
// refused) is finished by the next one: rdggen's routes are still there as
// evidence, so routing goes, then the routes.
func TestReconcileFinishesInterruptedTeardown(t *testing.T) {
	inv := routedInv(t, 2, "routing: hosts")
	p := Reconcile(inv, inv.Switches[0], Parse("ip routing vrf default\nip route vrf default 172.16.1.0/24 10.0.0.1\nip route vrf default 172.16.2.0/24 10.0.0.2\n"))
	var removes []string
	for _, c := range p.Changes {
		if len(c.Removed) > 0 {
			removes = append(removes, c.Command)
		}
	}
	want := []string{"no ip routing vrf default", "no ip route vrf default 172.16.1.0/24 10.0.0.1", "no ip route vrf default 172.16.2.0/24 10.0.0.2"}
	if d := cmp.Diff(want, removes); d != "" || len(p.Warnings) != 0 {
		t.Errorf("removals (-want +got):\n%s\nwarnings %q", d, p.Warnings)
	}
}
