package fabricnet

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// leafTree is a Cumulus leaf's NVUE tree: unnumbered uplinks swp31/swp32,
// a host port swp1 carrying the leaf's data subnet 31.31.<n>.1/24, the
// host's container subnet 172.16.<n>.0/24 routed to the host (31.31.<n>.11)
// and redistributed.
func leafTree(n int) nvuesim.Tree {
	return nvuesim.Tree{
		"interface": map[string]any{
			"lo":    map[string]any{"ip": map[string]any{"address": map[string]any{fmt.Sprintf("10.10.10.%d/32", n): map[string]any{}}}},
			"swp1":  map[string]any{"ip": map[string]any{"address": map[string]any{fmt.Sprintf("31.31.%d.1/24", n): map[string]any{}}}},
			"swp31": map[string]any{"link": map[string]any{"mtu": int64(9216)}},
			"swp32": map[string]any{"link": map[string]any{"mtu": int64(9216)}},
		},
		"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65100 + n), "router-id": fmt.Sprintf("10.10.10.%d", n)}},
		"vrf": map[string]any{"default": map[string]any{"router": map[string]any{
			"bgp": map[string]any{
				"neighbor": map[string]any{
					"swp31": map[string]any{"remote-as": "external", "type": "unnumbered"},
					"swp32": map[string]any{"remote-as": "external", "type": "unnumbered"},
				},
				"address-family": map[string]any{"ipv4-unicast": map[string]any{
					"network":      map[string]any{fmt.Sprintf("10.10.10.%d/32", n): map[string]any{}},
					"redistribute": map[string]any{"connected": map[string]any{"enable": "on"}, "static": map[string]any{"enable": "on"}},
				}},
			},
			"static": map[string]any{fmt.Sprintf("172.16.%d.0/24", n): map[string]any{"via": map[string]any{fmt.Sprintf("31.31.%d.11", n): map[string]any{}}}},
		}}},
	}
}

// spineTree is a Cumulus spine's NVUE tree (AS 65199, the 5.15 ipv4 form
// for its loopback), unnumbered to both leaves.
func spineTree(n int) nvuesim.Tree {
	return nvuesim.Tree{
		"interface": map[string]any{
			"lo": map[string]any{"ipv4": map[string]any{"address": map[string]any{fmt.Sprintf("10.10.10.%d/32", 100+n): map[string]any{}}}},
		},
		"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65199), "router-id": fmt.Sprintf("10.10.10.%d", 100+n)}},
		"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
			"neighbor": map[string]any{
				"swp1": map[string]any{"remote-as": "external", "type": "unnumbered"},
				"swp2": map[string]any{"remote-as": "external", "type": "unnumbered"},
			},
			"address-family": map[string]any{"ipv4-unicast": map[string]any{
				"network": map[string]any{fmt.Sprintf("10.10.10.%d/32", 100+n): map[string]any{}},
			}},
		}}}},
	}
}

// forRelease writes t's interface addresses under the name the release
// uses: ipv4 from Cumulus Linux 5.15, ip before ("New and Changed NVUE
// Commands", 5.15), as nvuesim expects of a release.
func forRelease(t nvuesim.Tree, v515 bool) nvuesim.Tree {
	from, to := "ipv4", "ip"
	if v515 {
		from, to = "ip", "ipv4"
	}
	ifaces, _ := t["interface"].(map[string]any)
	for _, v := range ifaces {
		if m, ok := v.(map[string]any); ok && m[from] != nil {
			m[to] = m[from]
			delete(m, from)
		}
	}
	return t
}

func TestRenderNVUE(t *testing.T) {
	r, err := RenderNVUE(leafTree(1), "leaf1")
	if err != nil {
		t.Fatal(err)
	}
	want := `frr version 8.4
frr defaults datacenter
hostname leaf1
service integrated-vtysh-config
!
ip route 172.16.1.0/24 31.31.1.11
!
router bgp 65101
 bgp router-id 10.10.10.1
 neighbor swp31 interface remote-as external
 neighbor swp32 interface remote-as external
 !
 address-family ipv4 unicast
  network 10.10.10.1/32
  redistribute connected
  redistribute static
 exit-address-family
exit
!
`
	if r.FRR != want {
		t.Errorf("FRR:\n%s\nwant:\n%s", r.FRR, want)
	}
	if got := fmt.Sprint(r.Interfaces["swp1"].Addresses, r.Interfaces["swp31"].MTU, r.Interfaces["lo"].Addresses); got != "[31.31.1.1/24] 9216 [10.10.10.1/32]" {
		t.Errorf("interfaces: %s", got)
	}
	s, err := RenderNVUE(spineTree(1), "spine1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Interfaces["lo"].Addresses); got != "[10.10.10.101/32]" {
		t.Errorf("5.15 ipv4 form: lo %s", got)
	}
	// 5.15's state form of redistribute and aspath-ignore.
	t515 := leafTree(2)
	vb := t515["vrf"].(map[string]any)["default"].(map[string]any)["router"].(map[string]any)["bgp"].(map[string]any)
	vb["address-family"].(map[string]any)["ipv4-unicast"].(map[string]any)["redistribute"] = map[string]any{"connected": map[string]any{"state": "enabled"}}
	vb["path-selection"] = map[string]any{"multipath": map[string]any{"aspath-ignore": "on"}}
	r515, err := RenderNVUE(t515, "leaf2")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" bgp bestpath as-path multipath-relax\n", "  redistribute connected\n"} {
		if !strings.Contains(r515.FRR, want) {
			t.Errorf("5.15 forms: FRR lacks %q:\n%s", want, r515.FRR)
		}
	}
	if strings.Contains(r515.FRR, "redistribute static") {
		t.Errorf("redistribute static without it in the tree:\n%s", r515.FRR)
	}
	bad := leafTree(1)
	bad["router"].(map[string]any)["bgp"].(map[string]any)["autonomous-system"] = "x"
	if _, err := RenderNVUE(bad, "leaf1"); err == nil || !strings.Contains(err.Error(), "router.bgp.autonomous-system") {
		t.Errorf("a bad ASN: %v", err)
	}
}

// NVUE's enable keys: a neighbor, the BGP instance or the address family
// turned off (enable off, or 5.15's state disabled) is not rendered, as
// NVUE writes none of it to frr.conf; a neighbor's bfd enable on runs a
// BFD session with its timers (FRR's 3 × 300 ms where unset).
func TestRenderNVUEEnable(t *testing.T) {
	bgpOf := func(tr nvuesim.Tree) map[string]any {
		return tr["vrf"].(map[string]any)["default"].(map[string]any)["router"].(map[string]any)["bgp"].(map[string]any)
	}
	render := func(tr nvuesim.Tree) string {
		t.Helper()
		r, err := RenderNVUE(tr, "leaf1")
		if err != nil {
			t.Fatal(err)
		}
		return r.FRR
	}

	tr := leafTree(1)
	nb := bgpOf(tr)["neighbor"].(map[string]any)
	nb["swp31"].(map[string]any)["bfd"] = map[string]any{"enable": "on", "detect-multiplier": int64(4), "min-rx-interval": int64(200), "min-tx-interval": int64(250)}
	nb["swp32"].(map[string]any)["bfd"] = map[string]any{"enable": "on"}
	frr := render(tr)
	for _, want := range []string{" neighbor swp31 bfd 4 200 250\n", " neighbor swp32 bfd 3 300 300\n"} {
		if !strings.Contains(frr, want) {
			t.Errorf("bfd: FRR lacks %q:\n%s", want, frr)
		}
	}
	nb["swp32"].(map[string]any)["bfd"] = map[string]any{"enable": "off", "detect-multiplier": int64(3)}
	if frr := render(tr); strings.Contains(frr, "swp32 bfd") {
		t.Errorf("bfd enable off rendered:\n%s", frr)
	}
	nb["swp31"].(map[string]any)["bfd"] = map[string]any{"enable": "on", "min-rx-interval": "fast"}
	if _, err := RenderNVUE(tr, "leaf1"); err == nil || !strings.Contains(err.Error(), "neighbor.swp31.bfd.min-rx-interval") {
		t.Errorf("a bad interval: %v", err)
	}

	for _, off := range []map[string]any{{"enable": "off"}, {"state": "disabled"}} {
		tr := leafTree(1)
		nb := bgpOf(tr)["neighbor"].(map[string]any)
		for k, v := range off {
			nb["swp32"].(map[string]any)[k] = v
		}
		if frr := render(tr); strings.Contains(frr, "swp32") || !strings.Contains(frr, "neighbor swp31 interface") {
			t.Errorf("neighbor swp32 %v: rendered:\n%s", off, frr)
		}

		tr = leafTree(1)
		for k, v := range off {
			bgpOf(tr)["address-family"].(map[string]any)["ipv4-unicast"].(map[string]any)[k] = v
		}
		if frr := render(tr); strings.Contains(frr, "network ") || strings.Contains(frr, "redistribute") || !strings.Contains(frr, "neighbor swp31") {
			t.Errorf("ipv4-unicast %v: networks or redistribution rendered:\n%s", off, frr)
		}

		for _, where := range []string{"router", "vrf"} {
			tr = leafTree(1)
			b := bgpOf(tr)
			if where == "router" {
				b = tr["router"].(map[string]any)["bgp"].(map[string]any)
			}
			for k, v := range off {
				b[k] = v
			}
			if frr := render(tr); strings.Contains(frr, "router bgp") || !strings.Contains(frr, "ip route 172.16.1.0/24") {
				t.Errorf("%s bgp %v: BGP rendered (or the static route lost):\n%s", where, off, frr)
			}
		}
	}
	// Said on: rendered as before.
	tr = leafTree(1)
	tr["router"].(map[string]any)["bgp"].(map[string]any)["enable"] = "on"
	bgpOf(tr)["neighbor"].(map[string]any)["swp31"].(map[string]any)["enable"] = "on"
	want, _ := RenderNVUE(leafTree(1), "leaf1")
	if frr := render(tr); frr != want.FRR {
		t.Errorf("enable on: FRR differs:\n%s\nwant:\n%s", frr, want.FRR)
	}
}

// onyxLeaf is an ONYX leaf's configuration: routed /31 uplinks 1/31 (to
// spine1) and 1/32 (to spine2), numbered eBGP, loopback advertised.
func onyxLeaf(n int) []string {
	return []string{
		"ip routing vrf default",
		"interface ethernet 1/31 no switchport force",
		"interface ethernet 1/32 no switchport force",
		fmt.Sprintf("interface ethernet 1/31 ip address 10.0.1.%d/31 primary", 2*(n-1)),
		fmt.Sprintf("interface ethernet 1/32 ip address 10.0.2.%d/31 primary", 2*(n-1)),
		"interface ethernet 1/31-1/32 mtu 9216 force",
		fmt.Sprintf("interface loopback 0 ip address 10.10.10.%d/32", n),
		fmt.Sprintf("router bgp %d vrf default", 65100+n),
		fmt.Sprintf("router bgp %d vrf default router-id 10.10.10.%d force", 65100+n, n),
		fmt.Sprintf("router bgp %d vrf default maximum-paths 32", 65100+n),
		fmt.Sprintf("router bgp %d vrf default bestpath as-path multipath-relax force", 65100+n),
		fmt.Sprintf("router bgp %d vrf default neighbor 10.0.1.%d remote-as 65199", 65100+n, 2*(n-1)+1),
		fmt.Sprintf("router bgp %d vrf default neighbor 10.0.2.%d remote-as 65199", 65100+n, 2*(n-1)+1),
		fmt.Sprintf("router bgp %d vrf default network 10.10.10.%d /32", 65100+n, n),
	}
}

// onyxSpine is an ONYX spine's configuration: 1/1 to leaf1, 1/2 to leaf2.
func onyxSpine(n int) []string {
	c := []string{
		"ip routing vrf default",
		"interface ethernet 1/1-1/2 no switchport force",
		fmt.Sprintf("interface ethernet 1/1 ip address 10.0.%d.1/31 primary", n),
		fmt.Sprintf("interface ethernet 1/2 ip address 10.0.%d.3/31 primary", n),
		"interface ethernet 1/1-1/2 mtu 9216 force",
		fmt.Sprintf("interface loopback 0 ip address 10.10.10.%d/32", 100+n),
		"router bgp 65199 vrf default",
		fmt.Sprintf("router bgp 65199 vrf default router-id 10.10.10.%d force", 100+n),
		"router bgp 65199 vrf default maximum-paths 32",
		fmt.Sprintf("router bgp 65199 vrf default neighbor 10.0.%d.0 remote-as 65101", n),
		fmt.Sprintf("router bgp 65199 vrf default neighbor 10.0.%d.2 remote-as 65102", n),
	}
	return c
}

func TestRenderONYX(t *testing.T) {
	s, err := onyxsim.New(onyxsim.Options{Hostname: "leaf1", Seed: onyxLeaf(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	running := s.RunningConfig()
	r, err := RenderONYX(running, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := `frr version 8.4
frr defaults datacenter
hostname leaf1
service integrated-vtysh-config
!
router bgp 65101
 bgp router-id 10.10.10.1
 bgp bestpath as-path multipath-relax
 neighbor 10.0.1.1 remote-as 65199
 neighbor 10.0.2.1 remote-as 65199
 !
 address-family ipv4 unicast
  network 10.10.10.1/32
  maximum-paths 32
 exit-address-family
exit
!
`
	if r.FRR != want {
		t.Errorf("FRR:\n%s\nwant:\n%s\nrunning-config:\n%s", r.FRR, want, running)
	}
	got := fmt.Sprint(r.Forwarding, r.Interfaces["eth1-31"], r.Interfaces["eth1-32"], r.Interfaces["lo"])
	if got != "true {[10.0.1.0/31] 9216} {[10.0.2.0/31] 9216} {[10.10.10.1/32] 0}" {
		t.Errorf("interfaces: %s\n%s", got, running)
	}

	// fall-over bfd on one session, with ip bfd's timers (the others
	// FRR's 3 × 300 ms).
	seed := append(onyxLeaf(1),
		"router bgp 65101 vrf default neighbor 10.0.1.1 fall-over bfd",
		"ip bfd vrf default interval min-rx 200 force",
		"ip bfd vrf default interval multiplier 4 force")
	b, err := onyxsim.New(onyxsim.Options{Hostname: "leaf1", Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	running = b.RunningConfig()
	r, err = RenderONYX(running, "x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.FRR, " neighbor 10.0.1.1 remote-as 65199\n neighbor 10.0.1.1 bfd 4 200 300\n neighbor 10.0.2.1 remote-as 65199\n !") {
		t.Errorf("fall-over bfd:\n%s\nrunning-config:\n%s", r.FRR, running)
	}
}

func TestIfName(t *testing.T) {
	for _, c := range []struct {
		os         OS
		port, want string
	}{{Cumulus, "swp31", "swp31"}, {Cumulus, "swp1s0", "swp1s0"}, {ONYX, "1/31", "eth1-31"}, {ONYX, "1/1/2", "eth1-1-2"}} {
		if got := IfName(c.os, c.port); got != c.want {
			t.Errorf("IfName(%s, %s) = %s, want %s", c.os, c.port, got, c.want)
		}
		if back := PortName(c.os, c.want); back != c.port {
			t.Errorf("PortName(%s, %s) = %s, want %s", c.os, c.want, back, c.port)
		}
	}
}

// goneDevice is a device ip lists by its index: see machineState.
var goneDevice = regexp.MustCompile(`\bdev if\d+\b`)

// machineState is what the test may not leave behind: namespaces, links
// and routes of the machine's own namespace, iptables rules, and the
// daemons this package runs.
func machineState(t *testing.T, slot int) string {
	t.Helper()
	ours := regexp.MustCompile(fmt.Sprintf(`rdg%df`, slot))
	var b strings.Builder
	for _, args := range [][]string{
		{"ip", "netns", "list"},
		{"ip", "-o", "link", "show"},
		{"ip", "route", "show", "table", "all"},
		{"iptables", "-S"},
		{"iptables", "-t", "nat", "-S"},
	} {
		out, _ := exec.Command(args[0], args[1:]...).Output()
		var keep []string
		for _, l := range strings.Split(string(out), "\n") {
			// Other tests (netnstest clusters and fabrics in their own
			// slots, in this package or another run in parallel) come and
			// go: their rdg… names are left out, this slot's (rdg<slot>f…)
			// kept.
			if strings.Contains(l, "rdg") && !ours.MatchString(l) {
				continue
			}
			// "dev if<index>": ip names a device so when it is gone by
			// the time its name is looked up (ip route's
			// ll_index_to_name), one another test made and moved or
			// deleted while the list was being made.
			if goneDevice.MatchString(l) {
				continue
			}
			keep = append(keep, l)
		}
		b.WriteString(strings.Join(args, " ") + ":\n" + strings.Join(keep, "\n") + "\n")
	}
	out, _ := exec.Command("ps", "-eo", "pid,args").Output()
	dir := fmt.Sprintf("/tmp/rdggen-fabricnet/%d/", slot)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, dir) {
			b.WriteString("process: " + l + "\n")
		}
	}
	return b.String()
}

// cleanTest runs a fabric test (a top-level one, in parallel with the
// others) in a subtest on a slot of its own, taken here so that the slot's
// leftovers are not removed before they are compared: the machine's state
// (this slot's names, and everything in the machine's own namespace) must
// be as before.
func cleanTest(t *testing.T, fabric func(t *testing.T, slot int)) {
	t.Parallel() // every fabric test has a slot of its own
	Require(t)
	slot := netnstest.TakeSlot(t)
	before := machineState(t, slot)
	t.Run("fabric", func(t *testing.T) { fabric(t, slot) })
	if after := machineState(t, slot); after != before {
		t.Errorf("the machine's own namespace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	} else {
		t.Logf("cleanup: namespaces, links, routes, iptables rules and daemons as before (%d bytes of state compared)", len(before))
	}
}

func cumulusSpec() Spec {
	return Spec{
		Switches: []Switch{{"spine1", Cumulus}, {"spine2", Cumulus}, {"leaf1", Cumulus}, {"leaf2", Cumulus}},
		Links: []Link{
			{End{"leaf1", "swp31"}, End{"spine1", "swp1"}},
			{End{"leaf1", "swp32"}, End{"spine2", "swp1"}},
			{End{"leaf2", "swp31"}, End{"spine1", "swp2"}},
			{End{"leaf2", "swp32"}, End{"spine2", "swp2"}},
		},
	}
}

// waitFor polls cond every 250 ms for up to d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
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

func allEstablished(f *Fabric, names ...string) (bool, string) {
	var b strings.Builder
	ok := true
	for _, sw := range names {
		s, err := f.BGPSummary(sw)
		if err != nil {
			return false, err.Error()
		}
		fmt.Fprintf(&b, "%s:\n%s", sw, s)
		ok = ok && s.Established()
	}
	return ok, b.String()
}

func TestCumulusFabric(t *testing.T) { cleanTest(t, cumulusFabric) }

func cumulusFabric(t *testing.T, slot int) {
	f := New(t, cumulusSpec(), Options{Slot: slot})
	sims := map[string]*nvuesim.Server{}
	for _, sw := range f.Switches() {
		var tree nvuesim.Tree
		if n, ok := strings.CutPrefix(sw.Name, "leaf"); ok {
			tree = leafTree(int(n[0] - '0'))
		} else {
			tree = spineTree(int(strings.TrimPrefix(sw.Name, "spine")[0] - '0'))
		}
		sims[sw.Name] = nvuesim.Start(t, nvuesim.Options{Version: "5.15.0", Hostname: sw.Name, Applied: forRelease(tree, true)})
		f.FollowNVUE(sw.Name, sims[sw.Name])
	}
	// The hosts: a stand-in namespace behind swp1 of each leaf with the
	// container address on its loopback.
	for n := 1; n <= 2; n++ {
		ns := f.HostNS(fmt.Sprintf("host%d", n))
		f.Attach(fmt.Sprintf("leaf%d", n), "swp1", ns, "data0")
		f.batch(ns, fmt.Sprintf("addr add 31.31.%d.11/24 dev data0", n), fmt.Sprintf("route add default via 31.31.%d.1", n),
			fmt.Sprintf("addr add 172.16.%d.2/32 dev lo", n))
	}
	names := []string{"spine1", "spine2", "leaf1", "leaf2"}
	if st := machineState(t, f.Slot); !strings.Contains(st, fmt.Sprintf("rdg%dfleaf1", f.Slot)) || !strings.Contains(st, "/tmp/rdggen-fabricnet/") {
		t.Errorf("machineState does not see the running fabric (its namespaces and daemons):\n%s", st)
	}
	waitFor(t, 60*time.Second, "BGP Established everywhere", func() (bool, string) { return allEstablished(f, names...) })
	// Each leaf's route to the other's container subnet, over both
	// spines: a leaf has it once both spines' updates have come, which may
	// be after the other leaf has its own.
	for _, c := range []struct{ leaf, dst string }{{"leaf1", "172.16.2.0/24"}, {"leaf2", "172.16.1.0/24"}} {
		waitFor(t, 60*time.Second, c.leaf+"'s route to "+c.dst+" with 2 next hops", func() (bool, string) {
			r, ok, err := f.Route(c.leaf, netip.MustParsePrefix(c.dst))
			return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
		})
	}
	for _, sw := range names {
		s, _ := f.BGPSummary(sw)
		t.Logf("%s show bgp summary:\n%s", sw, s)
		if len(s.Peers) != 2 {
			t.Errorf("%s: %d peers, want 2", sw, len(s.Peers))
		}
	}
	s1, _ := f.BGPSummary("spine1")
	if s1.AS != 65199 || s1.RouterID != "10.10.10.101" || s1.Peers[0].Neighbor != "swp1" || s1.Peers[0].Hostname != "leaf1" || s1.Peers[0].RemoteAS != 65101 {
		t.Errorf("spine1's summary: %+v", s1)
	}
	for _, c := range []struct {
		leaf string
		dst  string
	}{{"leaf1", "172.16.2.0/24"}, {"leaf2", "172.16.1.0/24"}} {
		r, ok, err := f.Route(c.leaf, netip.MustParsePrefix(c.dst))
		if err != nil || !ok {
			t.Fatalf("%s: no route to %s: %v", c.leaf, c.dst, err)
		}
		var devs []string
		for _, h := range r.NextHops {
			devs = append(devs, h.Dev)
			if !h.Via.Is6() || !h.Via.IsLinkLocalUnicast() {
				t.Errorf("%s %s: next hop %s is not an IPv6 link-local address (RFC 5549)", c.leaf, c.dst, h.Via)
			}
		}
		sort.Strings(devs)
		if r.Protocol != "bgp" || strings.Join(devs, ",") != "swp31,swp32" {
			t.Errorf("%s %s: %+v, want bgp via swp31 and swp32", c.leaf, c.dst, r)
		}
		t.Logf("%s: %s proto %s nexthops %v", c.leaf, r.Dst, r.Protocol, r.NextHops)
	}
	// Traffic between the two hosts' container addresses crosses a spine.
	ping(t, f, fmt.Sprintf("rdg%dfhost1", f.Slot), "172.16.1.2", "172.16.2.2", 10*time.Second)

	want := map[string][]LLDPNeighbor{
		"leaf1":  {{"swp31", "spine1", "swp1"}, {"swp32", "spine2", "swp1"}},
		"leaf2":  {{"swp31", "spine1", "swp2"}, {"swp32", "spine2", "swp2"}},
		"spine1": {{"swp1", "leaf1", "swp31"}, {"swp2", "leaf2", "swp31"}},
		"spine2": {{"swp1", "leaf1", "swp32"}, {"swp2", "leaf2", "swp32"}},
	}
	waitFor(t, 30*time.Second, "LLDP neighbors as cabled", func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, sw := range names {
			got, err := f.LLDPNeighbors(sw)
			if err != nil {
				return false, err.Error()
			}
			// Hosts run no lldpd: only the fabric ports have neighbors.
			fmt.Fprintf(&b, "%s: %v\n", sw, got)
			ok = ok && fmt.Sprint(got) == fmt.Sprint(want[sw])
		}
		return ok, b.String()
	})
	var table strings.Builder
	for _, sw := range names {
		got, _ := f.LLDPNeighbors(sw)
		for _, n := range got {
			fmt.Fprintf(&table, "%-7s %-6s -> %-7s %s\n", sw, n.Port, n.SysName, n.PortID)
		}
	}
	t.Logf("LLDP neighbors:\n%s", table.String())

	// The simulator's operational view of the BGP neighbors is FRR's.
	op := nvueGet(t, sims["leaf1"], "/vrf/default/router/bgp/neighbor")
	if got := fmt.Sprintf("%v %v %v %v", at(op, "swp31", "state"), at(op, "swp31", "remote-as"), at(op, "swp31", "type"), at(op, "swp32", "peer-hostname")); got != "established 65199 unnumbered spine2" {
		t.Errorf("nvuesim's BGP neighbor view: %s\n%v", got, op)
	}
	// Its RIB view is zebra's: leaf1's route to leaf2's container subnet,
	// BGP, installed, one next hop over each spine.
	rib := nvueGet(t, sims["leaf1"], "/vrf/default/router/rib/ipv4/route/172.16.2.0%2F24")
	entry := at(rib, "protocol", "bgp", "entry-index", "1")
	vias, _ := at(entry, "via").(map[string]any)
	var ports []string
	for id, v := range vias {
		if at(v, "flags", "installed") == nil || !strings.HasPrefix(id, "fe80:") {
			t.Errorf("leaf1 172.16.2.0/24 via %s: %v, want an installed IPv6 link-local next hop", id, v)
		}
		ports = append(ports, fmt.Sprint(at(v, "interface")))
	}
	sort.Strings(ports)
	if at(entry, "flags", "installed") == nil || at(entry, "flags", "selected") == nil || strings.Join(ports, ",") != "swp31,swp32" {
		t.Errorf("nvuesim's RIB view of leaf1 172.16.2.0/24: %v", rib)
	}
	t.Logf("nvuesim's RIB view of leaf1 172.16.2.0/24: %v", rib)
	if all := nvueGet(t, sims["leaf1"], "/vrf/default/router/rib/ipv4/route"); at(all, "10.10.10.2/32", "protocol", "bgp") == nil {
		t.Errorf("leaf1's route table has no BGP route to leaf2's loopback: %v", all)
	}

	t.Run("swapped cable", func(t *testing.T) {
		f.Unplug(End{"leaf1", "swp31"}, End{"leaf1", "swp32"})
		f.Plug(Link{End{"leaf1", "swp31"}, End{"spine2", "swp1"}}, Link{End{"leaf1", "swp32"}, End{"spine1", "swp1"}})
		waitFor(t, 30*time.Second, "LLDP shows the swapped neighbors", func() (bool, string) {
			got, err := f.LLDPNeighbors("leaf1")
			return err == nil && fmt.Sprint(got) == "[{swp31 spine2 swp1} {swp32 spine1 swp1}]", fmt.Sprint(got, err)
		})
		got, _ := f.LLDPNeighbors("leaf1")
		t.Logf("leaf1 after the swap: %v (planned: swp31 → spine1 swp1, swp32 → spine2 swp1)", got)
		f.Unplug(End{"leaf1", "swp31"}, End{"leaf1", "swp32"})
		f.Plug(Link{End{"leaf1", "swp31"}, End{"spine1", "swp1"}}, Link{End{"leaf1", "swp32"}, End{"spine2", "swp1"}})
		waitFor(t, 60*time.Second, "BGP Established again", func() (bool, string) { return allEstablished(f, names...) })
	})

	t.Run("stopped bgpd", func(t *testing.T) {
		f.StopDaemon("leaf2", "bgpd")
		if _, err := f.BGPSummary("leaf2"); err == nil {
			t.Errorf("leaf2's summary read with bgpd stopped")
		}
		waitFor(t, 30*time.Second, "spine1's session to leaf2 down", func() (bool, string) {
			s, err := f.BGPSummary("spine1")
			if err != nil {
				return false, err.Error()
			}
			for _, p := range s.Peers {
				if p.Neighbor == "swp2" {
					return p.State != "Established", s.String()
				}
			}
			return false, s.String()
		})
		s, _ := f.BGPSummary("spine1")
		t.Logf("spine1 with leaf2's bgpd stopped:\n%s", s)
		op := nvueGet(t, sims["spine1"], "/vrf/default/router/bgp/neighbor")
		if st := at(op, "swp2", "state"); st == "established" || st == nil {
			t.Errorf("nvuesim's view of spine1 swp2: state %v, want a state other than established", st)
		}
		f.StartDaemon("leaf2", "bgpd")
		waitFor(t, 60*time.Second, "BGP Established again", func() (bool, string) { return allEstablished(f, names...) })
	})

	t.Run("admin down", func(t *testing.T) {
		// A port set down by hand: administratively down in NVUE's view,
		// its far end administratively up without a carrier.
		if out, err := exec.Command("ip", "-n", f.NS("leaf2"), "link", "set", "dev", "swp31", "down").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		waitFor(t, 10*time.Second, "spine1 swp2 without carrier", func() (bool, string) {
			l, err := f.Link("spine1", "swp2")
			return err == nil && !l.Up, fmt.Sprint(l, err)
		})
		for _, c := range []struct{ sw, port, admin, oper string }{{"leaf2", "swp31", "down", "down"}, {"spine1", "swp2", "up", "down"}} {
			if l := at(nvueGet(t, sims[c.sw], "/interface/"+c.port), "link"); at(l, "admin-status") != c.admin || at(l, "oper-status") != c.oper {
				t.Errorf("%s %s: link %v, want admin-status %s, oper-status %s", c.sw, c.port, l, c.admin, c.oper)
			}
		}
		if out, err := exec.Command("ip", "-n", f.NS("leaf2"), "link", "set", "dev", "swp31", "up").CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		waitFor(t, 60*time.Second, "BGP Established again", func() (bool, string) { return allEstablished(f, names...) })
	})

	t.Run("lowered MTU", func(t *testing.T) {
		nvueApply(t, sims["leaf2"], "/interface/swp32/link", map[string]any{"mtu": 1500})
		waitFor(t, 10*time.Second, "leaf2 swp32 at MTU 1500", func() (bool, string) {
			l, err := f.Link("leaf2", "swp32")
			return err == nil && l.MTU == 1500, fmt.Sprint(l, err)
		})
		l31, _ := f.Link("leaf2", "swp31")
		peer, _ := f.Link("spine2", "swp2")
		if l31.MTU != 9216 || peer.MTU != 9216 {
			t.Errorf("MTUs: leaf2 swp31 %d, spine2 swp2 %d; want 9216 (unchanged)", l31.MTU, peer.MTU)
		}
		t.Logf("leaf2 swp32 MTU %d after an NVUE apply; its peer spine2 swp2 %d", 1500, peer.MTU)
	})
}

// nvueGet reads s's operational state at path (GET without rev).
func nvueGet(t *testing.T, s *nvuesim.Server, path string) map[string]any {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", s.URL+"/nvue_v1"+path, nil)
	req.SetBasicAuth("cumulus", "cumulus")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %v", path, resp.Status, err)
	}
	return out
}

// nvueApply changes one path of s's configuration through its REST API
// (revision, PATCH, apply), as a client would.
func nvueApply(t *testing.T, s *nvuesim.Server, path string, body any) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	do := func(method, p string, v any) map[string]any {
		var rd io.Reader
		if v != nil {
			b, _ := json.Marshal(v)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, s.URL+"/nvue_v1"+p, rd)
		req.SetBasicAuth("cumulus", "cumulus")
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %s %s", method, p, resp.Status, b)
		}
		_ = json.Unmarshal(b, &out)
		return out
	}
	var id string
	for k := range do("POST", "/revision", map[string]any{}) {
		id = k
	}
	rev := url.QueryEscape(id)
	do("PATCH", path+"?rev="+rev, body)
	do("PATCH", "/revision/"+url.PathEscape(id), map[string]any{"state": "apply", "auto-prompt": map[string]any{"ays": "ays_yes"}})
}
