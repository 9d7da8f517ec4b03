package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// synthetic returns a valid inventory of n hosts (n ≤ 2046): 64-port switches,
// one data network 100.64.0.0/21, container subnets 10.x.y.0/24 from 10.0.0.0/8.
func synthetic(tb testing.TB, n int) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name: synth\nswitches:\n")
	switches := (n + 63) / 64
	for s := range switches {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, onyx: 3.6.8190}\n", s+1)
	}
	b.WriteString(`docker: {pool: 10.0.0.0/8, prefix: 24}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}, {model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`)
	for i := range n {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/21, switch: leaf%d, port: 1/%d}}\n",
			i+1, i+1, off>>8, off&255, i/64+1, i%64+1)
	}
	inv, err := inventory.Load("synthetic.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

func TestSyntheticIsValid(t *testing.T) {
	inv := synthetic(t, 1024)
	if len(inv.Hosts) != 1024 || len(inv.Switches) != 16 {
		t.Fatalf("%d hosts, %d switches", len(inv.Hosts), len(inv.Switches))
	}
	if got := inv.Hosts[1023].Subnet.String(); got != "10.4.0.0/24" {
		t.Errorf("subnet of host 1024: %s", got)
	}
}

// BenchmarkTree generates every artifact for 8, 256 and 1024 hosts (1024
// hosts ≈ 1 M routes across the route scripts and persistent route files).
// Loading and validation are outside the timed loop; see BenchmarkLoad.
func BenchmarkTree(b *testing.B) {
	for _, n := range []int{8, 256, 1024} {
		inv := synthetic(b, n)
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				size = 0
				for _, f := range Tree(inv) {
					size += len(f.Data)
				}
			}
			b.ReportMetric(float64(size)/1e6, "MB-out")
		})
	}
}

// BenchmarkLoad decodes and validates the synthetic inventories.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{8, 256, 1024} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				synthetic(b, n)
			}
		})
	}
}
