package nvueapply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// fabricInventory is a Cumulus leaf-spine fabric of spines × leaves
// SN4600C switches (64 ports) with perLeaf hosts on each leaf: each
// leaf's uplinks on swp64, swp63, … one per spine, each spine's downlinks
// on swp1… one per leaf, the hosts on swp1… of their leaf. Leaf l owns the
// l-th /21 of 100.64.0.0/10, its hosts numbered on from l × perLeaf + 1 in
// it, so that their derived container subnets differ.
func fabricInventory(tb testing.TB, spines, leaves, perLeaf int) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name: fabric\nswitches:\n")
	for s := range spines {
		fmt.Fprintf(&b, "  - {name: spine%d, model: SN4600C, cumulus: 5.9.1, role: spine}\n", s+1)
	}
	for l := range leaves {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, cumulus: 5.9.1, role: leaf}\n", l+1)
	}
	b.WriteString("fabric:\n  links:\n")
	for l := range leaves {
		for s := range spines {
			fmt.Fprintf(&b, "    - {switch: leaf%d, port: swp%d, peer: spine%d, peer_port: swp%d}\n", l+1, 64-s, s+1, l+1)
		}
	}
	b.WriteString(`docker: {pool: 172.16.0.0/12, prefix: 24}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  data_mtu: 9000
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`)
	n := 0
	for l := range leaves {
		for j := range perLeaf {
			n++
			a := uint32(100)<<24 | 64<<16 + uint32(l)<<11 + uint32(l*perLeaf+j+1)
			fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: %d.%d.%d.%d/21, switch: leaf%d, port: swp%d}}\n",
				n, n, a>>24, a>>16&255, a>>8&255, a&255, l+1, j+1)
		}
	}
	inv, err := inventory.Load("fabric.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// convergedRIB is the routing table switch sw shows on a fabric that runs
// as planned: every expected prefix installed by BGP, one next hop over
// each planned uplink.
func convergedRIB(inv *inventory.Inventory, sw inventory.Switch) map[string]any {
	table := map[string]any{}
	for _, w := range inv.FabricPlan().Routes(&sw) {
		vias := map[string]string{}
		for i, u := range w.Via {
			vias[fmt.Sprintf("fe80::%x", i+1)] = sw.PortName(u.Port)
		}
		table[w.Prefix.String()] = bgpRoute(installedFlags, vias)
	}
	return table
}

// BenchmarkRoutesCheck is the routes check of every switch of a Cumulus
// fabric of 8 or 16 spines × 64 leaves × 4 hosts (72 or 80 switches), each
// against its converged routing table served by one NVUE simulator over
// TLS (the table's GET included): ns/op, B/op and allocs/op are one check
// of the whole fabric's routing tables. Every prefix must pass.
func BenchmarkRoutesCheck(b *testing.B) {
	for _, spines := range []int{8, 16} {
		b.Run(fmt.Sprintf("spines=%d,leaves=64", spines), func(b *testing.B) {
			inv := fabricInventory(b, spines, 64, 4)
			r := newRig(b, nvuesim.Options{Ports: 1})
			tables := make([]map[string]any, len(inv.Switches))
			for i, sw := range inv.Switches {
				tables[i] = convergedRIB(inv, sw)
			}
			o := r.o
			o.defaults()
			c, err := connect(inventory.Switch{Name: "bench", Mgmt: r.sim.Addr}, o)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			prefixes := 0
			b.ReportAllocs()
			for b.Loop() {
				prefixes = 0
				fp := inv.FabricPlan() // as Check makes it, once for all switches
				for i, sw := range inv.Switches {
					table := tables[i]
					r.sim.SetRIB(func() map[string]any { return table })
					k := &checker{ctx: ctx, inv: inv, fp: fp, sw: sw, c: c}
					k.routes()
					for _, x := range k.rs {
						if x.Status != readiness.Passed {
							b.Fatal(x.Line())
						}
					}
					prefixes += len(k.rs)
				}
			}
			b.ReportMetric(float64(prefixes), "prefixes")
		})
	}
}

// BenchmarkRoutesJudge is the routes check's own work on every switch of
// the same fabrics, without the requests and the simulator: the plan
// (FabricPlan, Routes) and each prefix's converged view read and judged
// (every prefix passes, so no result needs what it follows from,
// routeDeps). BenchmarkRoutesCheck adds the GET of each table over TLS and
// the simulator serving it.
func BenchmarkRoutesJudge(b *testing.B) {
	for _, spines := range []int{8, 16} {
		b.Run(fmt.Sprintf("spines=%d,leaves=64", spines), func(b *testing.B) {
			inv := fabricInventory(b, spines, 64, 4)
			tables := make([]map[string]any, len(inv.Switches))
			for i, sw := range inv.Switches {
				tables[i] = convergedRIB(inv, sw)
			}
			prefixes := 0
			b.ReportAllocs()
			for b.Loop() {
				prefixes = 0
				fp := inv.FabricPlan()
				for i := range inv.Switches {
					sw := &inv.Switches[i]
					ix := newUplinkIndex(*sw, fp.Uplinks(sw.Name))
					deps := newRouteDeps(fp, sw)
					for _, w := range fp.Routes(sw) {
						m, _ := tables[i][w.Prefix.String()].(map[string]any)
						r := judgeEntries(ix, w, ribEntries(m), true).result(sw.Name, w.Prefix.String())
						if r.Status != readiness.Passed {
							r.After = deps.of(w) // as the check: for findings only
							b.Fatal(r.Line())
						}
						prefixes++
					}
				}
			}
			b.ReportMetric(float64(prefixes), "prefixes")
		})
	}
}
