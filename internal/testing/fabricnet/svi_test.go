package fabricnet

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// sviLeafTree is a Cumulus leaf in pkg/cumulus's form for its hosts: data
// ports swp1 and swp2 in br_default's VLAN 1, the SVI vlan1 as the hosts'
// gateway 31.31.<n>.254/24, one static route per host's container subnet
// 172.16.<10n+m>.0/24 via the host (31.31.<n>.<m>), uplinks unnumbered.
func sviLeafTree(n int) nvuesim.Tree {
	t := leafTree(n)
	ifaces := t["interface"].(map[string]any)
	delete(ifaces, "swp1")
	static := map[string]any{}
	for m := 1; m <= 2; m++ {
		ifaces[fmt.Sprintf("swp%d", m)] = map[string]any{
			"type":   "swp",
			"link":   map[string]any{"mtu": int64(9216), "state": map[string]any{"up": map[string]any{}}},
			"bridge": map[string]any{"domain": map[string]any{"br_default": map[string]any{"access": int64(1)}}},
		}
		static[fmt.Sprintf("172.16.%d.0/24", 10*n+m)] = map[string]any{"address-family": "ipv4-unicast",
			"via": map[string]any{fmt.Sprintf("31.31.%d.%d", n, m): map[string]any{"type": "ipv4-address"}}}
	}
	ifaces["vlan1"] = map[string]any{"type": "svi", "vlan": int64(1),
		"ip": map[string]any{"address": map[string]any{fmt.Sprintf("31.31.%d.254/24", n): map[string]any{}}}}
	t["bridge"] = map[string]any{"domain": map[string]any{"br_default": map[string]any{"vlan": map[string]any{"1": map[string]any{}}}}}
	t["vrf"].(map[string]any)["default"].(map[string]any)["router"].(map[string]any)["static"] = static
	return t
}

func TestRenderSVI(t *testing.T) {
	r, err := RenderNVUE(sviLeafTree(1), "leaf1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Access, r.DefaultAccess, r.Interfaces["vlan1"], r.Interfaces["swp1"]); got != "map[swp1:1 swp2:1] 0 {[31.31.1.254/24] 0} {[] 9216}" {
		t.Errorf("bridge and SVI: %s", got)
	}
	if !strings.Contains(r.FRR, "ip route 172.16.11.0/24 31.31.1.1\nip route 172.16.12.0/24 31.31.1.2\n") {
		t.Errorf("static routes:\n%s", r.FRR)
	}
	o, err := RenderONYX("interface ethernet 1/31 no switchport force\ninterface ethernet 1/2 switchport access vlan 10\n"+
		"interface vlan 1 ip address 31.31.1.254/24 primary\ninterface vlan 1 mtu 9000\n", "leaf1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(o.Access, o.DefaultAccess, o.Interfaces["vlan1"]); got != "map[eth1-2:10 eth1-31:0] 1 {[31.31.1.254/24] 9000}" {
		t.Errorf("ONYX switchports: %s", got)
	}
}

// hostBehind cables a stand-in host (its own namespace) to port of leaf:
// data0 with addr/24 and a default route via gw, its container address on
// lo.
func hostBehind(f *Fabric, name, leaf, port, addr, gw, container string) string {
	ns := f.HostNS(name)
	f.Attach(leaf, port, ns, "data0")
	f.batch(ns, "addr add "+addr+"/24 dev data0", "route add default via "+gw, "addr add "+container+"/32 dev lo")
	return ns
}

// ping pings dst from ns with a 1,500-byte packet that may not be
// fragmented, from src, until it answers (up to d).
func ping(t *testing.T, f *Fabric, ns, src, dst string, d time.Duration) {
	t.Helper()
	waitFor(t, d, "ping "+src+" → "+dst, func() (bool, string) {
		out, err := f.exec(ns, "ping", "-c", "1", "-W", "1", "-M", "do", "-s", "1472", "-I", src, dst)
		return err == nil, out
	})
}

// Hosts on bridged ports behind a Cumulus leaf's SVI, as pkg/cumulus
// configures a switch's data ports, reach the other leaf's hosts and
// containers across the spines, and their own leaf's over the bridge.
func TestCumulusSVIHosts(t *testing.T) {
	t.Parallel()
	Require(t)
	f := New(t, cumulusSpec(), Options{})
	for _, sw := range f.Switches() {
		var n int
		var tree nvuesim.Tree
		if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
			tree = sviLeafTree(n)
		} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
			tree = spineTree(n)
		}
		f.FollowNVUE(sw.Name, nvuesim.Start(t, nvuesim.Options{Hostname: sw.Name, Applied: forRelease(tree, false)}))
	}
	ns := map[string]string{}
	for n := 1; n <= 2; n++ {
		for m := 1; m <= 2; m++ {
			name := fmt.Sprintf("h%d%d", n, m)
			ns[name] = hostBehind(f, name, fmt.Sprintf("leaf%d", n), fmt.Sprintf("swp%d", m),
				fmt.Sprintf("31.31.%d.%d", n, m), fmt.Sprintf("31.31.%d.254", n), fmt.Sprintf("172.16.%d.2", 10*n+m))
		}
	}
	waitFor(t, 60*time.Second, "leaf1 routes 172.16.22.0/24 over both spines", func() (bool, string) {
		r, ok, err := f.Route("leaf1", netip.MustParsePrefix("172.16.22.0/24"))
		return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
	})
	r, _, _ := f.Route("leaf1", netip.MustParsePrefix("172.16.22.0/24"))
	t.Logf("leaf1: %s proto %s nexthops %v", r.Dst, r.Protocol, r.NextHops)
	ping(t, f, ns["h11"], "172.16.11.2", "172.16.22.2", 10*time.Second) // across the spines
	ping(t, f, ns["h11"], "31.31.1.1", "31.31.1.2", 10*time.Second)     // inside leaf1's bridge
	if l, err := f.Link("leaf1", "swp1"); err != nil || len(l.Addresses) != 0 || l.MTU != 9216 {
		t.Errorf("leaf1 swp1, a bridged port: %+v %v", l, err)
	}
	// The SVI goes when the tree drops it, and the hosts lose their gateway.
	tree := sviLeafTree(1)
	delete(tree["interface"].(map[string]any), "vlan1")
	sim := nvuesim.Start(t, nvuesim.Options{Hostname: "leaf1", Applied: forRelease(tree, false)})
	f.FollowNVUE("leaf1", sim)
	if out, err := f.exec(ns["h11"], "ping", "-c", "1", "-W", "1", "31.31.1.254"); err == nil {
		t.Errorf("the SVI answers after it was removed:\n%s", out)
	}
}

// Hosts on ONYX switchports (VLAN 1 by default) behind `interface vlan 1`
// reach the other leaf's hosts across numbered /31 uplinks.
func TestONYXSVIHosts(t *testing.T) {
	t.Parallel()
	Require(t)
	spec := Spec{
		Switches: []Switch{{"spine1", ONYX}, {"spine2", ONYX}, {"leaf1", ONYX}, {"leaf2", ONYX}},
		Links: []Link{
			{End{"leaf1", "1/31"}, End{"spine1", "1/1"}},
			{End{"leaf1", "1/32"}, End{"spine2", "1/1"}},
			{End{"leaf2", "1/31"}, End{"spine1", "1/2"}},
			{End{"leaf2", "1/32"}, End{"spine2", "1/2"}},
		},
	}
	f := New(t, spec, Options{})
	for _, sw := range spec.Switches {
		var n int
		var seed []string
		if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
			seed = append(onyxLeaf(n),
				"interface ethernet 1/1 mtu 9216 force",
				"interface vlan 1",
				fmt.Sprintf("interface vlan 1 ip address 31.31.%d.254 /24 primary", n),
				fmt.Sprintf("router bgp %d vrf default network 31.31.%d.0 /24", 65100+n, n))
		} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
			seed = onyxSpine(n)
		}
		f.FollowONYX(sw.Name, onyxsim.Start(t, onyxsim.Options{Hostname: sw.Name, Seed: seed}))
	}
	h1 := hostBehind(f, "h1", "leaf1", "1/1", "31.31.1.1", "31.31.1.254", "172.16.11.2")
	hostBehind(f, "h2", "leaf2", "1/1", "31.31.2.1", "31.31.2.254", "172.16.21.2")
	waitFor(t, 60*time.Second, "leaf1 routes 31.31.2.0/24 over both spines", func() (bool, string) {
		r, ok, err := f.Route("leaf1", netip.MustParsePrefix("31.31.2.0/24"))
		return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
	})
	// The kernel's spanning tree holds a new bridge port 2 × 2 s before it
	// forwards.
	ping(t, f, h1, "31.31.1.1", "31.31.2.1", 20*time.Second)
}
