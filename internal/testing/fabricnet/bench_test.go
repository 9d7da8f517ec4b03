package fabricnet

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// BenchmarkConverge2x2Cumulus measures a 2 × 2 Cumulus fabric (BGP
// unnumbered) from its daemons' start (the NVUE trees rendered and FRR
// started) until every session is Established and leaf1 routes leaf2's
// container subnet over both spines. The namespaces are laid out with the
// timer stopped.
func BenchmarkConverge2x2Cumulus(b *testing.B) {
	Require(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f := New(b, cumulusSpec(), Options{})
		sims := map[string]*nvuesim.Server{}
		for _, sw := range f.Switches() {
			var n int
			var tree nvuesim.Tree
			if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
				tree = leafTree(n)
			} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
				tree = spineTree(n)
			}
			sims[sw.Name] = nvuesim.New(nvuesim.Options{Hostname: sw.Name, Applied: forRelease(tree, false)})
		}
		for n := 1; n <= 2; n++ {
			ns := f.HostNS(fmt.Sprintf("host%d", n))
			f.Attach(fmt.Sprintf("leaf%d", n), "swp1", ns, "data0")
			f.batch(ns, fmt.Sprintf("addr add 31.31.%d.11/24 dev data0", n))
		}
		b.StartTimer()
		for _, sw := range f.Switches() {
			f.FollowNVUE(sw.Name, sims[sw.Name])
		}
		converge(b, f, []string{"spine1", "spine2", "leaf1", "leaf2"}, "leaf1", netip.MustParsePrefix("172.16.2.0/24"))
		b.StopTimer()
		for _, s := range sims {
			s.Close()
		}
		f.Close()
	}
}

// BenchmarkConverge2x2ONYX is the same for a 2 × 2 ONYX fabric (numbered
// /31s), until leaf1 routes leaf2's loopback over both spines.
func BenchmarkConverge2x2ONYX(b *testing.B) {
	Require(b)
	spec := Spec{
		Switches: []Switch{{"spine1", ONYX}, {"spine2", ONYX}, {"leaf1", ONYX}, {"leaf2", ONYX}},
		Links: []Link{
			{End{"leaf1", "1/31"}, End{"spine1", "1/1"}},
			{End{"leaf1", "1/32"}, End{"spine2", "1/1"}},
			{End{"leaf2", "1/31"}, End{"spine1", "1/2"}},
			{End{"leaf2", "1/32"}, End{"spine2", "1/2"}},
		},
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f := New(b, spec, Options{})
		sims := map[string]*onyxsim.Server{}
		for _, sw := range spec.Switches {
			var n int
			var seed []string
			if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
				seed = onyxLeaf(n)
			} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
				seed = onyxSpine(n)
			}
			s, err := onyxsim.New(onyxsim.Options{Hostname: sw.Name, Seed: seed})
			if err != nil {
				b.Fatal(err)
			}
			sims[sw.Name] = s
		}
		b.StartTimer()
		for _, sw := range spec.Switches {
			f.FollowONYX(sw.Name, sims[sw.Name])
		}
		converge(b, f, []string{"spine1", "spine2", "leaf1", "leaf2"}, "leaf1", netip.MustParsePrefix("10.10.10.2/32"))
		b.StopTimer()
		for _, s := range sims {
			s.Close()
		}
		f.Close()
	}
}

// converge polls every 50 ms until every session of names is Established
// and leaf routes dst with 2 next hops.
func converge(b *testing.B, f *Fabric, names []string, leaf string, dst netip.Prefix) {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ok, detail := allEstablished(f, names...)
		if ok {
			r, found, err := f.Route(leaf, dst)
			if err == nil && found && len(r.NextHops) == 2 {
				return
			}
			detail = fmt.Sprint(r, found, err)
		}
		if time.Now().After(deadline) {
			b.Fatalf("not converged after 60 s:\n%s", detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
