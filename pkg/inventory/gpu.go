package inventory

// What rdggen knows of a GPU model's generation: its family as a model name
// says it, its architecture and compute capability, and from those the CUDA
// releases that can drive it (docs/rules.md#gpu-generations-and-cuda). The
// BAR1 sizes and PCI IDs of the same families are in pkg/vmx, which reads
// model names with ParseGPUModel.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// GPU architectures of the known families (NVIDIA's product pages).
const (
	ArchPascal = "Pascal"
	ArchVolta  = "Volta"
	ArchTuring = "Turing"
	ArchAmpere = "Ampere"
	ArchAda    = "Ada Lovelace"
	ArchHopper = "Hopper"
)

// ComputeCapability is a GPU's CUDA compute capability, Major.Minor (8.0
// for A100), the "sm_80" that nvcc compiles for.
type ComputeCapability struct{ Major, Minor int }

// String is the capability as NVIDIA writes it: "8.0".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// SM is the capability as nvcc's -arch names it: "sm_80".
func (c ComputeCapability) SM() string { return fmt.Sprintf("sm_%d%d", c.Major, c.Minor) }

// less orders capabilities.
func (c ComputeCapability) less(d ComputeCapability) bool {
	return c.Major < d.Major || c.Major == d.Major && c.Minor < d.Minor
}

// GPUFamily is a known GPU family's architecture and compute capability.
type GPUFamily struct {
	Arch string
	CC   ComputeCapability
}

// gpuFamilies are the families of pkg/vmx's model table, keyed as
// ParseGPUModel names them. Compute capabilities from NVIDIA's "CUDA GPUs"
// table (developer.nvidia.com/cuda-gpus) and the CUDA C++ Programming
// Guide's "Compute Capabilities": P100 6.0, P40 6.1, V100 7.0, T4 7.5,
// A100 and A30 8.0, A10 and A40 8.6, L4, L40 and L40S 8.9, H100, H800,
// H100 NVL and H200 9.0.
var gpuFamilies = map[string]GPUFamily{
	"p100": {ArchPascal, ComputeCapability{6, 0}}, "p40": {ArchPascal, ComputeCapability{6, 1}},
	"v100": {ArchVolta, ComputeCapability{7, 0}}, "v100s": {ArchVolta, ComputeCapability{7, 0}},
	"t4":   {ArchTuring, ComputeCapability{7, 5}},
	"a100": {ArchAmpere, ComputeCapability{8, 0}}, "a30": {ArchAmpere, ComputeCapability{8, 0}},
	"a10": {ArchAmpere, ComputeCapability{8, 6}}, "a40": {ArchAmpere, ComputeCapability{8, 6}},
	"l4": {ArchAda, ComputeCapability{8, 9}}, "l40": {ArchAda, ComputeCapability{8, 9}}, "l40s": {ArchAda, ComputeCapability{8, 9}},
	"h100": {ArchHopper, ComputeCapability{9, 0}}, "h800": {ArchHopper, ComputeCapability{9, 0}},
	"h100nvl": {ArchHopper, ComputeCapability{9, 0}}, "h200": {ArchHopper, ComputeCapability{9, 0}},
}

// LookupGPUFamily is the family of a GPU model name as ParseGPUModel reads
// it ("Tesla V100-PCIE-16GB" → Volta, 7.0), false for a family rdggen does
// not know.
func LookupGPUFamily(model string) (GPUFamily, bool) {
	f, ok := gpuFamilies[ParseGPUModel(model).Family]
	return f, ok
}

// firstCUDA is the first CUDA toolkit whose compiler targets each compute
// capability, from NVIDIA's CUDA Toolkit release notes: 8.0 added Pascal
// (sm_60, sm_61), 9.0 Volta (sm_70), 10.0 Turing (sm_75), 11.0 the A100
// (sm_80), 11.1 the GA10x GPUs (sm_86), 11.8 Ada (sm_89) and Hopper (sm_90).
var firstCUDA = map[ComputeCapability]Version{
	{6, 0}: MustVersion("8.0"), {6, 1}: MustVersion("8.0"),
	{7, 0}: MustVersion("9.0"), {7, 5}: MustVersion("10.0"),
	{8, 0}: MustVersion("11.0"), {8, 6}: MustVersion("11.1"),
	{8, 9}: MustVersion("11.8"), {9, 0}: MustVersion("11.8"),
}

// FirstCUDA is the first CUDA toolkit that compiles for c itself (sm_89:
// 11.8), false for a capability not in the table.
func (c ComputeCapability) FirstCUDA() (Version, bool) {
	v, ok := firstCUDA[c]
	return v, ok
}

// MinCUDA is the oldest CUDA toolkit whose native code (cubin) runs on a
// GPU of capability c: NVIDIA's compatibility guides (Ampere, Ada, Hopper;
// docs.nvidia.com/cuda/ada-compatibility-guide) say a cubin built for one
// capability runs on every GPU of the same major version and an equal or
// higher minor version (8.0 code on 8.6 and 8.9), never across a major
// version (8.x code not on 9.0). So MinCUDA is the oldest FirstCUDA of a
// capability of c's major version no higher than c: 11.0 for 8.6 and 8.9,
// 9.0 for 7.5, 11.8 for 9.0. An older toolkit reaches c only by the
// driver compiling PTX just in time, where the program carries PTX at all.
// False for a capability not in the table.
func (c ComputeCapability) MinCUDA() (Version, bool) {
	var best Version
	for cc, v := range firstCUDA {
		if cc.Major == c.Major && !c.less(cc) && (best.IsZero() || v.Before(best)) {
			best = v
		}
	}
	return best, !best.IsZero()
}

// ModernGPUCC is the compute capability from which rdggen holds a GPU to
// Docker's --gpus (docker.version 19.03 or later): 8.0, the A100 and every
// datacenter GPU after it (docs/rules.md#docker-for-ampere-and-later).
var ModernGPUCC = ComputeCapability{8, 0}

// imageCUDA is the CUDA toolkit each known Horovod image is built on, from
// the Dockerfile of the Horovod release that pushed it (github.com/horovod/
// horovod): the reference image, 0.16.0 with TensorFlow 1.12, FROM
// nvidia/cuda:9.0-devel-ubuntu16.04 (commit d95a9fd2, the one that named
// images horovod/horovod:<version>-tf…-torch…-mxnet…-py…); from 0.22.1 on
// the CI pushed horovod/horovod:<version> built from docker/horovod/
// Dockerfile with its default CUDA_DOCKER_VERSION, 11.2.2 for 0.22.1–0.25.0
// (whose PyTorch wheel carries CUDA 11.1, which crosses no row of
// firstCUDA) and 11.3.1 for 0.26.0–0.28.1, the last release. An image not
// here is not judged.
var imageCUDA = map[string]Version{
	DefaultImage:             MustVersion("9.0"),
	"horovod/horovod:0.22.1": MustVersion("11.2"),
	"horovod/horovod:0.23.0": MustVersion("11.2"),
	"horovod/horovod:0.24.0": MustVersion("11.2"),
	"horovod/horovod:0.24.1": MustVersion("11.2"),
	"horovod/horovod:0.24.2": MustVersion("11.2"),
	"horovod/horovod:0.24.3": MustVersion("11.2"),
	"horovod/horovod:0.25.0": MustVersion("11.2"),
	"horovod/horovod:0.26.0": MustVersion("11.3"),
	"horovod/horovod:0.26.1": MustVersion("11.3"),
	"horovod/horovod:0.27.0": MustVersion("11.3"),
	"horovod/horovod:0.28.0": MustVersion("11.3"),
	"horovod/horovod:0.28.1": MustVersion("11.3"),
}

// NewestHorovodImage is the last Horovod release's image, what a warning
// proposes where its CUDA suffices.
const NewestHorovodImage = "horovod/horovod:0.28.1"

// ImageCUDA is the CUDA toolkit a known Horovod image is built on
// (imageCUDA; "docker.io/" before the name is the same image), false for an
// image rdggen does not know.
func ImageCUDA(image string) (Version, bool) {
	v, ok := imageCUDA[strings.TrimPrefix(image, "docker.io/")]
	return v, ok
}

// GPUModelName is a GPU model name split the way ParseGPUModel reads it.
type GPUModelName struct {
	// Family is the lower-case first token after an optional "NVIDIA" and
	// "Tesla" prefix, e.g. "v100" for "Tesla V100-PCIE-16GB"; "h100 nvl"
	// becomes "h100nvl".
	Family string
	// FormFactor is "pcie", "sxm2", … when the name says so, else "".
	FormFactor string
	// MemoryGB is the "<N>GB" token of the name, 0 when absent.
	MemoryGB int
}

var (
	reMemToken  = regexp.MustCompile(`^(\d+)gb$`)
	reSeparator = regexp.MustCompile(`[\s_/]+`)
	formFactors = map[string]bool{"pcie": true, "sxm": true, "sxm2": true, "sxm3": true, "sxm4": true, "sxm5": true}
)

// ParseGPUModel splits a GPU model name. Matching is forgiving and
// documented: case is ignored; a leading "NVIDIA" and/or "Tesla" is
// dropped; tokens are separated by '-', '_', '/' or spaces; a token "<N>GB"
// gives the memory; a token pcie/sxm* gives the form factor; "NVL" joins
// the family ("H100 NVL"). So "Tesla V100-PCIE-16GB", "v100 pcie 16gb" and
// "NVIDIA V100_PCIE_16GB" are one model.
//
// Results are cached (up to maxParsedModels names): an inventory names a
// few models for thousands of GPUs, and the plan of each VM parses its
// GPUs' names again.
func ParseGPUModel(model string) GPUModelName {
	if m, ok := parsedModels.Load(model); ok {
		return m.(GPUModelName)
	}
	m := parseGPUModel(model)
	if parsedCount.Load() < maxParsedModels {
		if _, loaded := parsedModels.LoadOrStore(model, m); !loaded {
			parsedCount.Add(1)
		}
	}
	return m
}

// maxParsedModels bounds ParseGPUModel's cache.
const maxParsedModels = 256

var (
	parsedModels sync.Map // model name → GPUModelName
	parsedCount  atomic.Int32
)

func parseGPUModel(model string) GPUModelName {
	s := strings.ToLower(strings.TrimSpace(model))
	s = reSeparator.ReplaceAllString(s, "-")
	toks := strings.FieldsFunc(s, func(r rune) bool { return r == '-' })
	for len(toks) > 0 && (toks[0] == "nvidia" || toks[0] == "tesla") {
		toks = toks[1:]
	}
	var m GPUModelName
	for i, t := range toks {
		switch {
		case i == 0:
			m.Family = t
		case t == "nvl":
			m.Family += "nvl"
		case formFactors[t]:
			m.FormFactor = t
		case reMemToken.MatchString(t):
			m.MemoryGB, _ = strconv.Atoi(reMemToken.FindStringSubmatch(t)[1])
		}
	}
	return m
}
