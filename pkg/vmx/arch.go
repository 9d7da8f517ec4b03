package vmx

// The GPU architectures of the model table's families, for the GPUDirect
// RDMA path a guest can use (docs/rules.md#gpudirect-rdma-through-dma-buf):
// DMA-BUF needs NVIDIA's open GPU kernel modules, which drive Turing and
// later GPUs only (NVIDIA/open-gpu-kernel-modules README: "supports Turing
// and later GPUs"); older GPUs register GPU memory through nvidia-peermem.
const (
	ArchPascal = "Pascal"
	ArchVolta  = "Volta"
	ArchTuring = "Turing"
	ArchAmpere = "Ampere"
	ArchAda    = "Ada Lovelace"
	ArchHopper = "Hopper"
)

// gpuArch is each family's architecture (NVIDIA's product pages).
var gpuArch = map[string]string{
	"p100": ArchPascal, "p40": ArchPascal,
	"v100": ArchVolta, "v100s": ArchVolta,
	"t4":  ArchTuring,
	"a10": ArchAmpere, "a30": ArchAmpere, "a40": ArchAmpere, "a100": ArchAmpere,
	"l4": ArchAda, "l40": ArchAda, "l40s": ArchAda,
	"h100": ArchHopper, "h800": ArchHopper, "h100nvl": ArchHopper, "h200": ArchHopper,
}

// Architecture is the GPU architecture of a model name as ParseModel reads
// it ("Tesla V100-PCIE-16GB" → Volta), false when the family is not in the
// table.
func Architecture(model string) (string, bool) {
	a, ok := gpuArch[ParseModel(model).Family]
	return a, ok
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
