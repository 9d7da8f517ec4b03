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

// fabricYAML is a leaf-spine inventory of leaves × perLeaf hosts and
// spines spines on Cumulus Linux (SN4600C, 64 ports): hosts on swp1… of
// their leaf, each leaf's uplinks on swp64, swp63, … one per spine, each
// spine's downlinks on swp1… one per leaf. Leaf k owns 100.64.0.0/21's k-th
// block (a /21 per leaf), its hosts numbered on from k × perLeaf + 1 in it
// so that their derived container subnets (from 172.16.0.0/12) differ; one
// VM per ESXi host, Ubuntu 20.04, two V100s per VM.
func fabricYAML(leaves, perLeaf, spines int) []byte {
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
  os: ubuntu-20.04
  data_interface: ens224
  data_mtu: 9000
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}, {model: V100-PCIE-16GB, memory_gb: 16}]
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
	return []byte(b.String())
}

// The benchmark's fabric is valid: 36 switches, 512 hosts, 128 links, no
// warning (each leaf 16 × 100 Gb/s down, 4 × 100 Gb/s up: 4:1, which is
// reported), and each host routes the pool and the 31 other leaves.
func TestFabricSyntheticIsValid(t *testing.T) {
	inv, err := inventory.Load("fabric.yaml", fabricYAML(32, 16, 4))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 512 || len(inv.Switches) != 36 || len(inv.Fabric.Links) != 128 {
		t.Fatalf("%d hosts, %d switches, %d links", len(inv.Hosts), len(inv.Switches), len(inv.Fabric.Links))
	}
	if len(inv.Warnings) != 32 || !strings.Contains(inv.Warnings[0].Rule, "oversubscribed 4:1") {
		t.Errorf("%d warnings, first %v", len(inv.Warnings), inv.Warnings[0])
	}
	routes := 0
	for _, f := range Tree(inv) {
		if f.Path == "hosts/h1/routes.sh" {
			routes = strings.Count(string(f.Data), "route replace ")
		}
	}
	if routes != 32 {
		t.Errorf("h1 has %d routes, want 32 (the pool and 31 other leaves)", routes)
	}
}

// BenchmarkFabricGenerate writes the whole tree of a 512-host leaf-spine
// fabric (32 leaves × 16 hosts + 4 spines, 36 switch configurations) beside
// the tree of 512 hosts on one switch that routes the pool, as
// BenchmarkGenerate does: ns/op is generation and the atomic write, the
// inventory loaded once outside the loop; peak-RSS-MiB and
// gen-peak-RSS-MiB are measured in a fresh child process (measureChild).
// BenchmarkFabricLoad times decoding and validation of the same files.
func BenchmarkFabricGenerate(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"fabric=32x16+4", fabricYAML(32, 16, 4)},
		{"one-switch-routed=512", syntheticMode(512, true)},
	} {
		path := filepath.Join(b.TempDir(), "synthetic.yaml")
		if err := os.WriteFile(path, tc.src, 0o644); err != nil {
			b.Fatal(err)
		}
		inv, err := inventory.Load("synthetic.yaml", tc.src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
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
			if r.Files != files || r.Bytes != size {
				b.Fatalf("the child wrote %d files, %d bytes; the benchmark %d, %d", r.Files, r.Bytes, files, size)
			}
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

// BenchmarkFabricLoad decodes and validates the same two inventories.
func BenchmarkFabricLoad(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"fabric=32x16+4", fabricYAML(32, 16, 4)},
		{"one-switch-routed=512", syntheticMode(512, true)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := inventory.Load("synthetic.yaml", tc.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFabricTree generates every artifact of the same two inventories
// in memory, without writing them: the generators' own cost, apart from
// the disk that BenchmarkFabricGenerate includes.
func BenchmarkFabricTree(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  []byte
	}{
		{"fabric=32x16+4", fabricYAML(32, 16, 4)},
		{"one-switch-routed=512", syntheticMode(512, true)},
	} {
		inv, err := inventory.Load("synthetic.yaml", tc.src)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
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
