package nccltopo

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkGenerate writes the files of 512 VMs, with 8 GPUs on 1 rail and
// on 8 rails: the cost per file grows with its devices, not more.
func BenchmarkGenerate(b *testing.B) {
	for _, rails := range []int{1, 8} {
		b.Run(fmt.Sprintf("512VMs-8GPUs-%drails", rails), func(b *testing.B) {
			vms := make([]Topology, 512)
			for i := range vms {
				vms[i] = railVM(fmt.Sprintf("vm%03d", i), 8, rails, 2-rails%2)
			}
			bytes := 0
			b.ReportAllocs()
			for b.Loop() {
				bytes = 0
				for _, t := range vms {
					out, err := Generate(t)
					if err != nil {
						b.Fatal(err)
					}
					bytes += len(out)
				}
			}
			b.ReportMetric(float64(bytes), "bytes/512VMs")
		})
	}
}

// BenchmarkValidate reads a generated 8-rail file, and files with 10,000
// and 40,000 elements NCCL ignores (time must grow linearly: a finding's
// path is not found by scanning its siblings).
func BenchmarkValidate(b *testing.B) {
	gen, err := Generate(railVM("vm", 8, 8, 2))
	if err != nil {
		b.Fatal(err)
	}
	files := map[string][]byte{"rails8": gen}
	for _, n := range []int{10000, 40000} {
		files[fmt.Sprintf("ignored%d", n)] = []byte(`<system version="1">` + strings.Repeat(`<x a="1"/>`, n) + `</system>`)
	}
	for _, name := range []string{"rails8", "ignored10000", "ignored40000"} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(files[name])))
			b.ReportAllocs()
			for b.Loop() {
				Validate(files[name])
			}
		})
	}
}
