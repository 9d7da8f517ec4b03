package fabricnet

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

func TestONYXFabric(t *testing.T) { cleanTest(t, onyxFabric) }

func onyxFabric(t *testing.T, slot int) {
	spec := Spec{
		Switches: []Switch{{"spine1", ONYX}, {"spine2", ONYX}, {"leaf1", ONYX}, {"leaf2", ONYX}},
		Links: []Link{
			{End{"leaf1", "1/31"}, End{"spine1", "1/1"}},
			{End{"leaf1", "1/32"}, End{"spine2", "1/1"}},
			{End{"leaf2", "1/31"}, End{"spine1", "1/2"}},
			{End{"leaf2", "1/32"}, End{"spine2", "1/2"}},
		},
	}
	f := New(t, spec, Options{Slot: slot})
	sims := map[string]*onyxsim.Server{}
	for _, sw := range spec.Switches {
		var seed []string
		var n int
		if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
			seed = onyxLeaf(n)
		} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
			seed = onyxSpine(n)
		}
		sims[sw.Name] = onyxsim.Start(t, onyxsim.Options{Hostname: sw.Name, Seed: seed})
		f.FollowONYX(sw.Name, sims[sw.Name])
	}
	names := []string{"spine1", "spine2", "leaf1", "leaf2"}
	waitFor(t, 60*time.Second, "BGP Established everywhere", func() (bool, string) { return allEstablished(f, names...) })
	lo2 := netip.MustParsePrefix("10.10.10.2/32")
	waitFor(t, 60*time.Second, "leaf1's route to leaf2's loopback with 2 next hops", func() (bool, string) {
		r, ok, err := f.Route("leaf1", lo2)
		return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
	})
	for _, sw := range names {
		s, _ := f.BGPSummary(sw)
		t.Logf("%s show bgp summary:\n%s", sw, s)
	}
	s, _ := f.BGPSummary("leaf1")
	if s.AS != 65101 || len(s.Peers) != 2 || s.Peers[0].Neighbor != "10.0.1.1" || s.Peers[0].Hostname != "spine1" || s.Peers[1].Neighbor != "10.0.2.1" {
		t.Errorf("leaf1's summary: %+v", s)
	}
	r, _, _ := f.Route("leaf1", lo2)
	// The kernel lists ECMP next hops in the order the paths were installed.
	hops := slices.Clone(r.NextHops)
	slices.SortFunc(hops, func(a, b NextHop) int { return a.Via.Compare(b.Via) })
	if fmt.Sprint(hops) != "[{10.0.1.1 1/31} {10.0.2.1 1/32}]" {
		t.Errorf("leaf1 → %s: %v, want via 10.0.1.1 on 1/31 and 10.0.2.1 on 1/32", lo2, r.NextHops)
	}
	t.Logf("leaf1: %s proto %s nexthops %v", r.Dst, r.Protocol, r.NextHops)
	waitFor(t, 30*time.Second, "LLDP neighbors as cabled", func() (bool, string) {
		got, err := f.LLDPNeighbors("spine2")
		return err == nil && fmt.Sprint(got) == "[{1/1 leaf1 1/32} {1/2 leaf2 1/32}]", fmt.Sprint(got, err)
	})
	if l, err := f.Link("leaf1", "1/31"); err != nil || l.MTU != 9216 || fmt.Sprint(l.Addresses) != "[10.0.1.0/31]" {
		t.Errorf("leaf1 1/31: %+v %v", l, err)
	}

	t.Run("lowered MTU", func(t *testing.T) {
		if err := sims["leaf1"].Configure("interface ethernet 1/31 mtu 1500 force"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 10*time.Second, "leaf1 1/31 at MTU 1500", func() (bool, string) {
			l, err := f.Link("leaf1", "1/31")
			return err == nil && l.MTU == 1500, fmt.Sprint(l, err)
		})
		if err := f.Err("leaf1"); err != nil {
			t.Error(err)
		}
	})
	t.Run("removed neighbor", func(t *testing.T) {
		if err := sims["spine1"].Configure("no router bgp 65199 vrf default neighbor 10.0.1.2 remote-as 65102"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "leaf2's session to spine1 down", func() (bool, string) {
			s, err := f.BGPSummary("leaf2")
			if err != nil || len(s.Peers) != 2 {
				return false, fmt.Sprint(s, err)
			}
			return s.Peers[0].Neighbor == "10.0.1.3" && s.Peers[0].State != "Established" && s.Peers[1].State == "Established", s.String()
		})
	})
}

func TestMixedFabric(t *testing.T) { cleanTest(t, mixedFabric) }

// mixedFabric: an ONYX leaf and a Cumulus spine, peering numbered on a /31
// (BGP unnumbered needs RFC 5549 at both ends, which ONYX does not document).
func mixedFabric(t *testing.T, slot int) {
	spec := Spec{
		Switches: []Switch{{"spine1", Cumulus}, {"leaf1", ONYX}},
		Links:    []Link{{End{"leaf1", "1/31"}, End{"spine1", "swp1"}}},
	}
	f := New(t, spec, Options{Slot: slot})
	leaf := onyxsim.Start(t, onyxsim.Options{Hostname: "leaf1", Seed: []string{
		"ip routing vrf default",
		"interface ethernet 1/31 no switchport force",
		"interface ethernet 1/31 ip address 10.0.1.0/31 primary",
		"interface ethernet 1/31 mtu 9216 force",
		"interface loopback 0 ip address 10.10.10.1/32",
		"router bgp 65101 vrf default",
		"router bgp 65101 vrf default router-id 10.10.10.1 force",
		"router bgp 65101 vrf default neighbor 10.0.1.1 remote-as 65199",
		"router bgp 65101 vrf default network 10.10.10.1 /32",
	}})
	spine := nvuesim.Start(t, nvuesim.Options{Version: "5.9.1", Hostname: "spine1", Applied: nvuesim.Tree{
		"interface": map[string]any{
			"lo":   map[string]any{"ip": map[string]any{"address": map[string]any{"10.10.10.101/32": map[string]any{}}}},
			"swp1": map[string]any{"ip": map[string]any{"address": map[string]any{"10.0.1.1/31": map[string]any{}}}},
		},
		"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65199), "router-id": "10.10.10.101"}},
		"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
			"neighbor": map[string]any{"10.0.1.0": map[string]any{"remote-as": int64(65101), "type": "numbered"}},
			"address-family": map[string]any{"ipv4-unicast": map[string]any{
				"network": map[string]any{"10.10.10.101/32": map[string]any{}},
			}},
		}}}},
	}})
	f.FollowONYX("leaf1", leaf)
	f.FollowNVUE("spine1", spine)
	waitFor(t, 60*time.Second, "BGP Established on both", func() (bool, string) { return allEstablished(f, "leaf1", "spine1") })
	waitFor(t, 30*time.Second, "spine1's route to leaf1's loopback", func() (bool, string) {
		r, ok, err := f.Route("spine1", netip.MustParsePrefix("10.10.10.1/32"))
		return err == nil && ok && fmt.Sprint(r.NextHops) == "[{10.0.1.0 swp1}]", fmt.Sprint(r, ok, err)
	})
	for _, sw := range []string{"leaf1", "spine1"} {
		s, _ := f.BGPSummary(sw)
		t.Logf("%s show bgp summary:\n%s", sw, s)
	}
	waitFor(t, 30*time.Second, "LLDP across the OS boundary", func() (bool, string) {
		a, err1 := f.LLDPNeighbors("leaf1")
		b, err2 := f.LLDPNeighbors("spine1")
		return err1 == nil && err2 == nil && fmt.Sprint(a) == "[{1/31 spine1 swp1}]" && fmt.Sprint(b) == "[{swp1 leaf1 1/31}]", fmt.Sprint(a, b, err1, err2)
	})
	if l, _ := f.Link("leaf1", "1/31"); l.MTU != 9216 {
		t.Errorf("leaf1 1/31 MTU %d, want 9216", l.MTU)
	}
}
