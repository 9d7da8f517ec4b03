package nccltopo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// railVM is the topology of a VM with gpus GPUs and rails rail NICs over
// sockets NUMA nodes of 32 vCPUs each: GPUs shared out over the rails in
// order (8 GPUs on 4 rails: GPUs 0–1 with rail 0, …), rails over the
// sockets in order. Bus IDs follow vSphere's guest layout: each
// passthrough device behind its own root port, GPUs from bus 0x13, VFs
// after them. GPUs are H100 PCIe, NICs ConnectX-7 VFs (Gen5 ×16 both).
func railVM(name string, gpus, rails, sockets int) Topology {
	h100, _ := GPULink("h100")
	cx7, _ := NICLink("ConnectX-7")
	t := Topology{Name: name}
	for s := range sockets {
		cpus := make([]int, 32)
		for i := range cpus {
			cpus[i] = s*32 + i
		}
		set, err := NewCPUSet(cpus...)
		if err != nil {
			panic(err)
		}
		t.CPUs = append(t.CPUs, CPU{NUMA: s, CPUs: set, Arch: ArchX86, Vendor: VendorIntel, Family: 6, Model: 143})
	}
	perRail := gpus / rails
	for r := range rails {
		var g Group
		for i := r * perRail; i < (r+1)*perRail; i++ {
			g.GPUs = append(g.GPUs, Device{BusID: fmt.Sprintf("0000:%02x:00.0", 0x13+i), Class: Class3D, Link: h100, Label: fmt.Sprintf("GPU %d", i)})
		}
		g.NICs = append(g.NICs, Device{BusID: fmt.Sprintf("0000:%02x:00.0", 0x13+gpus+r), Class: ClassEthernet, Link: cx7, Label: fmt.Sprintf("rail %d mlx5_%d", r, r)})
		s := r * sockets / rails
		t.CPUs[s].Groups = append(t.CPUs[s].Groups, g)
	}
	return t
}

// fixture reads testdata/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// summary is "error bridge-bottleneck 3:132" per finding, for comparisons.
func summary(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s %d:%d", f.Severity, f.Rule, f.Line, f.Col))
	}
	return out
}

// kinds is "error bridge-bottleneck" per finding, sorted, without positions.
func kinds(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Severity.String()+" "+string(f.Rule))
	}
	slices.Sort(out)
	return out
}

// lines formats findings one per line, as a report shows them.
func lines(file string, fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.Format(file))
		b.WriteByte('\n')
	}
	return b.String()
}
