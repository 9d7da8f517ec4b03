package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// railsYAML is a rail-optimized fabric of hosts VMs with rails rails each
// on Cumulus Linux (SN5600): the hosts in groups of 64, group g's rail r on
// leaf (g, r), on the 400G lanes swp1s0 … swp32s1; each leaf has one 800G
// uplink to each of 4 spines (swp61–swp64), each spine one downlink per
// leaf. Rail r of group g owns 10.r.(8g).0/21, host j of the group at
// offset 64g + j + 1 in it, so that the container subnets derived from
// rail 0 differ. One VM per ESXi host, 8 H100s, a ConnectX-7 port per rail
// (vmnic4 …).
func railsYAML(hosts, rails int) []byte {
	const perLeaf, spines = 64, 4
	groups := (hosts + perLeaf - 1) / perLeaf
	var b strings.Builder
	b.WriteString("name: rails\nswitches:\n")
	for s := range spines {
		fmt.Fprintf(&b, "  - {name: spine%d, model: SN5600, cumulus: 5.9.1, role: spine}\n", s+1)
	}
	leaf := func(g, r int) string { return fmt.Sprintf("leaf%d-%d", g, r) }
	for g := range groups {
		for r := range rails {
			fmt.Fprintf(&b, "  - {name: %s, model: SN5600, cumulus: 5.9.1, role: leaf}\n", leaf(g, r))
		}
	}
	b.WriteString("fabric:\n  links:\n")
	n := 0
	for g := range groups {
		for r := range rails {
			n++
			for s := range spines {
				fmt.Fprintf(&b, "    - {switch: %s, port: swp%d, peer: spine%d, peer_port: swp%d}\n", leaf(g, r), 61+s, s+1, n)
			}
		}
	}
	b.WriteString(`docker: {version: "24.0", pool: 172.16.0.0/12, prefix: 24}
horovod: {launcher: torchrun, image: nvcr.io/nvidia/pytorch:24.01-py3}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  data_mtu: 9000
  gpus:
`)
	for range 8 {
		b.WriteString("    - {model: H100-PCIE-80GB, memory_gb: 80, bar1_gb: 128}\n")
	}
	b.WriteString("  nic: {model: ConnectX-7, pf: vmnic4, vfs: 4, speed_gbps: 400}\nhosts:\n")
	for i := range hosts {
		g, j := i/perLeaf, i%perLeaf
		off := perLeaf*g + j + 1
		fmt.Fprintf(&b, "  - name: h%d\n    esxi: esx%d\n    data:\n", i+1, i+1)
		for r := range rails {
			pf := ""
			if r > 0 {
				pf = fmt.Sprintf(", pf: vmnic%d", 4+r)
			}
			fmt.Fprintf(&b, "      - {address: 10.%d.%d.%d/21, switch: %s, port: swp%ds%d%s}\n",
				r, 8*g+off>>8, off&255, leaf(g, r), 1+j/2, j%2, pf)
		}
	}
	return []byte(b.String())
}

// The benchmark's inventories are valid: 512 hosts with 8 rails on 64
// leaves, with 1 rail on 8, each leaf's only warning its oversubscription
// (64 × 400 Gb/s down, 4 × 800 up).
func TestRailsSyntheticIsValid(t *testing.T) {
	for _, rails := range []int{1, 8} {
		inv, err := inventory.Load("rails.yaml", railsYAML(512, rails))
		if err != nil {
			t.Fatal(err)
		}
		if len(inv.Hosts) != 512 || inv.RailCount() != rails || len(inv.Leaves()) != 8*rails {
			t.Fatalf("%d hosts, %d rails, %d leaves", len(inv.Hosts), inv.RailCount(), len(inv.Leaves()))
		}
		for _, w := range inv.Warnings {
			if !strings.Contains(w.Rule, "oversubscribed 8:1") {
				t.Errorf("warning %v", w)
			}
		}
		if len(inv.Warnings) != min(8*rails, inventory.MaxFindings) {
			t.Errorf("%d warnings", len(inv.Warnings))
		}
	}
}

// BenchmarkRailsGenerate writes the whole tree of 512 hosts with 8 rails
// beside 512 hosts with 1 rail (railsYAML), as BenchmarkGenerate does:
// ns/op is generation and the atomic write with the inventory loaded once
// outside the loop; peak-RSS-MiB and gen-peak-RSS-MiB are measured in a
// fresh child process (measureChild). Growth is linear in hosts × rails
// when the 8-rail tree costs at most about 8 times the 1-rail tree's
// per-rail share (the switch files grow with the rails; the hosts' and
// workers' files do not).
func BenchmarkRailsGenerate(b *testing.B) {
	for _, rails := range []int{1, 8} {
		src := railsYAML(512, rails)
		path := filepath.Join(b.TempDir(), "rails.yaml")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			b.Fatal(err)
		}
		inv, err := inventory.Load("rails.yaml", src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("hosts=512/rails=%d", rails), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "out")
			var files int
			var size int64
			for b.Loop() {
				var err error
				files, size, err = benchGenerate(context.Background(), dir, inv)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := os.RemoveAll(dir); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.StopTimer()
			r := measureChild(b, path)
			b.ReportMetric(float64(size)/1e6, "MB-written")
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(r.peakKiB())/1024, "peak-RSS-MiB")
			if r.GenPeakKiB >= 0 {
				b.ReportMetric(float64(r.GenPeakKiB)/1024, "gen-peak-RSS-MiB")
			}
		})
		inv = nil
		runtime.GC()
	}
}

// BenchmarkRailsLoad times decoding and validating the same inventories.
func BenchmarkRailsLoad(b *testing.B) {
	for _, rails := range []int{1, 8} {
		src := railsYAML(512, rails)
		b.Run(fmt.Sprintf("hosts=512/rails=%d", rails), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inventory.Load("rails.yaml", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
