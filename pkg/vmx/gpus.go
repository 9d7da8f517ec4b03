package vmx

import (
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// NVIDIAVendorID is the PCI vendor ID of NVIDIA GPUs (0x10de).
const NVIDIAVendorID = 0x10de

// GPUModel is what rdggen knows about one datacenter GPU: its frame-buffer
// BAR (BAR1) size, which sizes the VM's 64-bit MMIO window, and its PCI
// device IDs, which let apply find the GPU on an ESXi host when the
// inventory gives no PCI address.
type GPUModel struct {
	// Family is the normalised model family, e.g. "v100", "a100", "t4".
	Family string
	// MemoryGB is the frame-buffer memory of this variant, GB.
	MemoryGB int
	// BAR1MB is the size of BAR1 in MiB (a power of two). T4 has a 256 MiB
	// BAR1, which is why the table keeps MiB and not GB.
	BAR1MB int
	// DeviceIDs are the PCI device IDs (vendor 0x10de) of the variant's form
	// factors, keyed by form factor ("pcie", "sxm2", "sxm4", "sxm5"); from the
	// PCI ID repository (pci-ids.ucw.cz). Empty when not known: apply then
	// matches the host's device name instead.
	DeviceIDs map[string]uint16
	// Evidence says where BAR1MB comes from (docs/rules.md#64-bit-mmio-window):
	// "observed" for sizes seen in `nvidia-smi -q` BAR1 totals of that memory
	// class, "derived" for the smallest power of two ≥ the memory, "spec" for
	// a value from the vendor's product brief.
	Evidence string
}

// gpuModels is the table behind LookupGPU. BAR1 sizes per docs/rules.md#64-bit-mmio-window:
// `nvidia-smi -q` BAR1 totals seen in public output are 16384 MiB for 16 GB
// cards, 32768 MiB for the 24 GB class, 65536 MiB for the 48 GB class and
// 131072 MiB for H800 80 GB; an lshw of a V100 32 GB in a vSphere VM shows a
// 32 GiB region. T4's BAR1 is 256 MiB (NVIDIA T4 product brief; Denneman 2023:
// T4 does not need the 64-bit MMIO setting). Other rows are derived as the
// smallest power of two ≥ memory, the rule every observed size follows.
var gpuModels = []GPUModel{
	{Family: "p100", MemoryGB: 12, BAR1MB: 16 << 10, Evidence: "derived", DeviceIDs: map[string]uint16{"pcie": 0x15f7}},
	{Family: "p100", MemoryGB: 16, BAR1MB: 16 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x15f8, "sxm2": 0x15f9}},
	{Family: "p40", MemoryGB: 24, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x1b38}},
	{Family: "v100", MemoryGB: 16, BAR1MB: 16 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x1db4, "sxm2": 0x1db1}},
	{Family: "v100", MemoryGB: 32, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x1db6, "sxm2": 0x1db5}},
	{Family: "v100s", MemoryGB: 32, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x1df6}},
	{Family: "t4", MemoryGB: 16, BAR1MB: 256, Evidence: "spec", DeviceIDs: map[string]uint16{"pcie": 0x1eb8}},
	{Family: "a10", MemoryGB: 24, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x2236}},
	{Family: "a30", MemoryGB: 24, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x20b7}},
	{Family: "a40", MemoryGB: 48, BAR1MB: 64 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x2235}},
	{Family: "a100", MemoryGB: 40, BAR1MB: 64 << 10, Evidence: "derived", DeviceIDs: map[string]uint16{"pcie": 0x20f1, "sxm4": 0x20b0}},
	{Family: "a100", MemoryGB: 80, BAR1MB: 128 << 10, Evidence: "derived", DeviceIDs: map[string]uint16{"pcie": 0x20b5, "sxm4": 0x20b2}},
	{Family: "l4", MemoryGB: 24, BAR1MB: 32 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x27b8}},
	{Family: "l40", MemoryGB: 48, BAR1MB: 64 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x26b5}},
	{Family: "l40s", MemoryGB: 48, BAR1MB: 64 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x26b9}},
	{Family: "h100", MemoryGB: 80, BAR1MB: 128 << 10, Evidence: "observed", DeviceIDs: map[string]uint16{"pcie": 0x2331, "sxm5": 0x2330}},
	{Family: "h800", MemoryGB: 80, BAR1MB: 128 << 10, Evidence: "observed"},
	{Family: "h100nvl", MemoryGB: 94, BAR1MB: 128 << 10, Evidence: "derived"},
	{Family: "h200", MemoryGB: 141, BAR1MB: 256 << 10, Evidence: "derived"},
}

// ModelName is a GPU model name split the way LookupGPU reads it
// (inventory.GPUModelName: family, form factor, memory).
type ModelName = inventory.GPUModelName

// ParseModel splits a GPU model name (inventory.ParseGPUModel, whose
// forgiving rules it documents: "Tesla V100-PCIE-16GB", "v100 pcie 16gb"
// and "NVIDIA V100_PCIE_16GB" are one model).
func ParseModel(model string) ModelName { return inventory.ParseGPUModel(model) }

// LookupGPU returns the known model for a GPU's model name and memory (the
// "<N>GB" of the name wins over memoryGB when both are given), and false when
// the table has no such GPU.
func LookupGPU(model string, memoryGB int) (GPUModel, bool) {
	n := ParseModel(model)
	mem := n.MemoryGB
	if mem == 0 {
		mem = memoryGB
	}
	var only *GPUModel
	count := 0
	for i := range gpuModels {
		g := &gpuModels[i]
		if g.Family != n.Family {
			continue
		}
		if g.MemoryGB == mem {
			return *g, true
		}
		count++
		only = g
	}
	// A family with a single memory variant (T4, A10, ...) is known even when
	// the inventory states its memory differently (e.g. T4 as 15 GB usable).
	if count == 1 {
		return *only, true
	}
	return GPUModel{}, false
}

// DeviceIDsFor returns the PCI device IDs (vendor 0x10de) a GPU of the
// inventory can have: the form factor's ID when the model names one, else
// every form factor's. Nil when the model is not in the table.
func DeviceIDsFor(g inventory.GPU) []uint16 {
	m, ok := LookupGPU(g.Model, g.MemoryGB)
	if !ok || len(m.DeviceIDs) == 0 {
		return nil
	}
	ff := ParseModel(g.Model).FormFactor
	if id, ok := m.DeviceIDs[ff]; ok {
		return []uint16{id}
	}
	ids := make([]uint16, 0, len(m.DeviceIDs))
	for _, f := range []string{"pcie", "sxm2", "sxm4", "sxm5"} {
		if id, ok := m.DeviceIDs[f]; ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// MatchesDevice reports whether a host PCI device (vendorID, deviceID as
// unsigned 16-bit values, deviceName as ESXi reports it, e.g. "GV100GL [Tesla
// V100 PCIe 16GB]") can be the inventory's GPU g: the vendor is NVIDIA and the
// device ID is one of the model's (DeviceIDsFor); for models without known
// IDs, the device name contains the model's family and, when known, its
// "<N>GB". Apply uses it to pick GPUs that have no pci address.
func MatchesDevice(g inventory.GPU, vendorID, deviceID uint16, deviceName string) bool {
	if vendorID != NVIDIAVendorID {
		return false
	}
	if ids := DeviceIDsFor(g); ids != nil {
		for _, id := range ids {
			if id == deviceID {
				return true
			}
		}
		return false
	}
	n := ParseModel(g.Model)
	name := strings.ToLower(strings.Join(strings.Fields(deviceName), ""))
	if n.Family == "" || !strings.Contains(name, n.Family) {
		return false
	}
	mem := n.MemoryGB
	if mem == 0 {
		mem = g.MemoryGB
	}
	return mem == 0 || strings.Contains(name, strconv.Itoa(mem)+"gb")
}
