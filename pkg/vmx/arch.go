package vmx

import "github.com/rdggen/rdggen/pkg/inventory"

// The GPU architectures of the model table's families, for the GPUDirect
// RDMA path a guest can use (docs/rules.md#gpudirect-rdma-through-dma-buf):
// DMA-BUF needs NVIDIA's open GPU kernel modules, which drive Turing and
// later GPUs only (NVIDIA/open-gpu-kernel-modules README: "supports Turing
// and later GPUs"); older GPUs register GPU memory through nvidia-peermem.
// The family table itself (architecture and compute capability) is
// inventory's (inventory.LookupGPUFamily), which validation also reads.
const (
	ArchPascal = inventory.ArchPascal
	ArchVolta  = inventory.ArchVolta
	ArchTuring = inventory.ArchTuring
	ArchAmpere = inventory.ArchAmpere
	ArchAda    = inventory.ArchAda
	ArchHopper = inventory.ArchHopper
)

// Architecture is the GPU architecture of a model name as ParseModel reads
// it ("Tesla V100-PCIE-16GB" → Volta), false when the family is not in the
// table.
func Architecture(model string) (string, bool) {
	f, ok := inventory.LookupGPUFamily(model)
	return f.Arch, ok
}

// OpenModulesSupport reports whether NVIDIA's open GPU kernel modules drive
// GPUs of architecture arch (Turing and later), and so whether DMA-BUF can
// carry GPUDirect RDMA for them.
func OpenModulesSupport(arch string) bool {
	switch arch {
	case ArchTuring, ArchAmpere, ArchAda, ArchHopper:
		return true
	}
	return false
}
