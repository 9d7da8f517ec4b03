package railnet

import (
	"fmt"
	"net/netip"
	"testing"
)

// cluster is n hosts with the given rails each, rail-optimized in groups
// of 32 hosts (rail r of group k on its own leaf: subnet 10.r.k.0/24,
// gateway .1, host .11…), each rail's peers every other (leaf, rail)
// subnet (shared by the hosts of one (leaf, rail)), or with aggregate the
// one prefix 10.0.0.0/8.
func cluster(n, rails int, aggregate bool) []VM {
	groups := (n + 31) / 32
	peers := map[[2]int][]netip.Prefix{}
	for r := range rails {
		for k := range groups {
			var ps []netip.Prefix
			if aggregate {
				ps = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
			} else {
				for r2 := range rails {
					for k2 := range groups {
						if r2 != r || k2 != k {
							ps = append(ps, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(r2), byte(k2), 0}), 24))
						}
					}
				}
			}
			peers[[2]int{r, k}] = ps
		}
	}
	vms := make([]VM, n)
	for h := range vms {
		k := h / 32
		vm := VM{Name: fmt.Sprintf("gpu-%d", h)}
		for r := range rails {
			vm.Rails = append(vm.Rails, Rail{Interface: fmt.Sprintf("rail%d", r), MAC: fmt.Sprintf("00:50:56:aa:%02x:%02x", h%256, r),
				Address: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(r), byte(k), byte(11 + h%32)}), 24),
				Gateway: netip.AddrFrom4([4]byte{10, byte(r), byte(k), 1}), MTU: 9000, Peers: peers[[2]int{r, k}]})
		}
		vms[h] = vm
	}
	return vms
}

// BenchmarkGuests makes every host's rail artifacts (New, Netplan, Sysctl,
// Script) for a cluster of 512 hosts with 1 and 8 rails, and 256 hosts with
// 8, each rail's peers listed one by one (every other (leaf, rail) subnet:
// per host, rails × subnets routes, so the tree grows with hosts × rails ×
// leaves) and as one aggregate (per host, a constant number per rail: the
// tree grows with hosts × rails). The bytes reported are the artifacts'.
func BenchmarkGuests(b *testing.B) {
	for _, tc := range []struct {
		hosts, rails int
		aggregate    bool
	}{{512, 1, false}, {256, 8, false}, {512, 8, false}, {512, 1, true}, {256, 8, true}, {512, 8, true}} {
		peers := "listed"
		if tc.aggregate {
			peers = "aggregate"
		}
		vms := cluster(tc.hosts, tc.rails, tc.aggregate)
		b.Run(fmt.Sprintf("hosts=%d/rails=%d/peers=%s", tc.hosts, tc.rails, peers), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = 0
				for _, vm := range vms {
					g, err := New(vm)
					if err != nil {
						b.Fatal(err)
					}
					size += len(g.Netplan()) + len(g.Sysctl()) + len(g.Script())
				}
			}
			b.ReportMetric(float64(size)/(1<<20), "MiB-out")
		})
	}
}
