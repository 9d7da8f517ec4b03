package dockernet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// bigInventory is a cluster of n hosts on one /16 data network behind
// SN2700 switches (32 ports each), container subnets /24 from a /12 pool,
// Ubuntu 16.04 (the ifupdown hook).
func bigInventory(tb testing.TB, n int) *inventory.Inventory {
	tb.Helper()
	return bigInventoryOS(tb, n, "ubuntu-16.04")
}

// bigInventoryOS is bigInventory with the hosts' os.
func bigInventoryOS(tb testing.TB, n int, os string) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name: big\ndocker: {pool: 172.16.0.0/12, prefix: 24}\nswitches:\n")
	for s := 0; s < (n+31)/32; s++ {
		fmt.Fprintf(&b, "  - {name: sw%d, model: SN2700, onyx: 3.6.8190}\n", s)
	}
	b.WriteString("defaults:\n  os: " + os + "\n  data_interface: enp1f0\n  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]\n  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\nhosts:\n")
	for i := 0; i < n; i++ {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 10.99.%d.%d/16, switch: sw%d, port: 1/%d}}\n",
			i, i, off>>8, off&255, i/32, i%32+1)
	}
	inv, err := inventory.Load("big.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

func BenchmarkArtifacts(b *testing.B) {
	for _, n := range []int{8, 256, 1024} {
		inv := bigInventory(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = 0
				for _, f := range Artifacts(inv) {
					size += len(f.Data)
				}
			}
			b.ReportMetric(float64(size)/1e6, "MB-output")
		})
	}
}

// BenchmarkNetplan makes every host's netplan file (routing: hosts, n−1
// routes each) as the output tree does, and one host's file as apply does
// (RoutesPersist, the cluster's tables made for it).
func BenchmarkNetplan(b *testing.B) {
	for _, n := range []int{256, 1024, 4095} {
		inv := bigInventoryOS(b, n, "ubuntu-20.04")
		b.Run(fmt.Sprintf("tree/hosts=%d", n), func(b *testing.B) {
			if n > 1024 {
				b.Skip("the one-host case covers 4,096")
			}
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = 0
				t := newTables(inv)
				for i := range inv.Hosts {
					size += len(t.routesPersist(inv, &inv.Hosts[i]))
				}
			}
			b.ReportMetric(float64(size)/1e6, "MB-output")
		})
		b.Run(fmt.Sprintf("one/hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = RoutesPersist(inv, &inv.Hosts[n/2])
			}
		})
	}
}

func TestBigInventoryRoutes(t *testing.T) {
	inv := bigInventory(t, 300)
	h := &inv.Hosts[5]
	rs := Routes(inv, h)
	if len(rs) != 299 {
		t.Fatalf("%d routes", len(rs))
	}
	if subnets := FirewallSources(inv, h); len(subnets) > 20 {
		t.Errorf("firewall sources not aggregated: %d subnets", len(subnets))
	}
}
