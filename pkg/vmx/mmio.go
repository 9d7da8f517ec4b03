package vmx

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// BAR1 is one GPU's frame-buffer BAR size and where the value came from.
type BAR1 struct {
	// MB is the BAR1 size in MiB (a power of two).
	MB int
	// Source is "bar1_gb" (the inventory's override), "known" (the model
	// table, LookupGPU) or "memory" (memory rounded up to a power of two).
	Source string
}

// GPUBAR1 returns the BAR1 size of g (docs/rules.md#esxi-and-vmx): the inventory's bar1_gb if
// set, else the known size for its model (LookupGPU), else its memory rounded
// up to a power of two (every observed BAR1 is the smallest power of two ≥
// the memory; docs/rules.md#64-bit-mmio-window).
func GPUBAR1(g inventory.GPU) BAR1 {
	if g.BAR1GB > 0 {
		return BAR1{MB: g.BAR1GB << 10, Source: "bar1_gb"}
	}
	if m, ok := LookupGPU(g.Model, g.MemoryGB); ok {
		return BAR1{MB: m.BAR1MB, Source: "known"}
	}
	return BAR1{MB: nextPow2(g.MemoryGB) << 10, Source: "memory"}
}

// MMIOSizeGB is pciPassthru.64bitMMIOSizeGB for a VM with these GPUs, in GB:
// the smallest power of two N (1, 2, 4, … GB) strictly greater than
// Σ BAR1_i (GPUBAR1). "Strictly" because each GPU also has small register
// BARs (BAR0 16 MiB, BAR3 32 MiB) and BARs are naturally aligned, so the window
// must hold just over Σ BAR1 (docs/rules.md#64-bit-mmio-window). It equals the
// deployment guide's rule for 16 and 32 GB cards (1×16 → 32, 2×16 → 64,
// 3×16 → 64, 4×16 → 128, 1×32 → 64) and gives twice the naive
// "Σ memory → next power of two" where BAR1 is larger than the memory
// (2×A100-40GB → 256, 1×80 GB → 256, 8×80 GB → 2048). No GPUs gives 0.
func MMIOSizeGB(gpus []inventory.GPU) int {
	if len(gpus) == 0 {
		return 0
	}
	sumMB := 0
	for _, g := range gpus {
		sumMB += GPUBAR1(g).MB
	}
	n := 1
	for n<<10 <= sumMB {
		n <<= 1
	}
	return n
}

// mmioExplain is the comment line above pciPassthru.64bitMMIOSizeGB in a .vmx:
// the GPUs, their BAR1 sizes and the sum, so a reviewer can check N.
func mmioExplain(gpus []inventory.GPU) string {
	type group struct {
		model string
		bar   BAR1
		n     int
	}
	var groups []*group
	sumMB := 0
	for _, g := range gpus {
		b := GPUBAR1(g)
		sumMB += b.MB
		if len(groups) > 0 {
			last := groups[len(groups)-1]
			if last.model == g.Model && last.bar == b {
				last.n++
				continue
			}
		}
		groups = append(groups, &group{model: g.Model, bar: b, n: 1})
	}
	s := ""
	for i, gr := range groups {
		if i > 0 {
			s += " + "
		}
		s += fmt.Sprintf("%d × %s (BAR1 %s, %s)", gr.n, gr.model, sizeString(gr.bar.MB), sourceText(gr.bar.Source))
	}
	return fmt.Sprintf("%s = %s → smallest power of two above: %d GB", s, sizeString(sumMB), MMIOSizeGB(gpus))
}

func sourceText(src string) string {
	switch src {
	case "bar1_gb":
		return "bar1_gb in the inventory"
	case "known":
		return "known for the model"
	default:
		return "memory rounded up to a power of two"
	}
}

// sizeString prints MiB as "16 GB" or "256 MB".
func sizeString(mb int) string {
	if mb%1024 == 0 {
		return fmt.Sprintf("%d GB", mb>>10)
	}
	return fmt.Sprintf("%d MB", mb)
}

// nextPow2 is the smallest power of two ≥ x (1 for x ≤ 1).
func nextPow2(x int) int {
	p := 1
	for p < x {
		p <<= 1
	}
	return p
}
