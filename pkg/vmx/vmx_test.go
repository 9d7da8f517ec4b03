package vmx

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

func gpus(n int, model string, mem int) []inventory.GPU {
	out := make([]inventory.GPU, n)
	for i := range out {
		out[i] = inventory.GPU{Model: model, MemoryGB: mem}
	}
	return out
}

func TestMMIOSizeGB(t *testing.T) {
	cases := []struct {
		name string
		gpus []inventory.GPU
		want int
	}{
		{"1x16", gpus(1, "V100-PCIE-16GB", 16), 32},
		{"2x16 (the guide's example)", gpus(2, "Tesla P100-PCIE-16GB", 16), 64},
		{"3x16", gpus(3, "V100-PCIE-16GB", 16), 64},
		{"4x16", gpus(4, "V100-PCIE-16GB", 16), 128},
		{"1x32", gpus(1, "V100-PCIE-32GB", 32), 64},
		{"2xA100-40", gpus(2, "A100-PCIE-40GB", 40), 256},
		{"1x80", gpus(1, "A100-SXM4-80GB", 80), 256},
		{"8x80", gpus(8, "H100-SXM5-80GB", 80), 2048},
		{"1xT4 (BAR1 256 MB)", gpus(1, "Tesla T4", 16), 1},
		{"4xT4", gpus(4, "T4", 16), 2},
		{"unknown model: memory rounded up", gpus(2, "X9000", 20), 128},
		{"bar1_gb override", []inventory.GPU{{Model: "V100-PCIE-16GB", MemoryGB: 16, BAR1GB: 64}}, 128},
		{"no GPUs", nil, 0},
	}
	for _, c := range cases {
		if got := MMIOSizeGB(c.gpus); got != c.want {
			t.Errorf("%s: MMIOSizeGB = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestLookupGPUForgiving(t *testing.T) {
	for _, name := range []string{"V100-PCIE-16GB", "Tesla V100-PCIE-16GB", "tesla v100 pcie 16gb", "NVIDIA_V100_PCIE_16GB", "V100"} {
		m, ok := LookupGPU(name, 16)
		if !ok || m.Family != "v100" || m.BAR1MB != 16<<10 {
			t.Errorf("LookupGPU(%q) = %+v, %v", name, m, ok)
		}
	}
	if m, _ := LookupGPU("A100 80GB", 40); m.MemoryGB != 80 {
		t.Errorf("the name's memory wins: %+v", m)
	}
	if _, ok := LookupGPU("V100-PCIE-24GB", 24); ok {
		t.Error("V100 24 GB does not exist")
	}
	ids := DeviceIDsFor(inventory.GPU{Model: "Tesla V100-PCIE-16GB", MemoryGB: 16})
	if len(ids) != 1 || ids[0] != 0x1db4 {
		t.Errorf("DeviceIDsFor = %x", ids)
	}
	if !MatchesDevice(inventory.GPU{Model: "V100-PCIE-16GB", MemoryGB: 16}, 0x10de, 0x1db4, "GV100GL [Tesla V100 PCIe 16GB]") {
		t.Error("V100 PCIe 16GB device does not match")
	}
	if MatchesDevice(inventory.GPU{Model: "V100-PCIE-16GB", MemoryGB: 16}, 0x10de, 0x1db6, "GV100GL [Tesla V100 PCIe 32GB]") {
		t.Error("a 32 GB V100 matches a 16 GB one")
	}
	if !MatchesDevice(inventory.GPU{Model: "RTX-9000-48GB", MemoryGB: 48}, 0x10de, 0x9999, "XX [RTX 9000 48GB]") {
		t.Error("unknown model: name match failed")
	}
	if MatchesDevice(inventory.GPU{Model: "V100-PCIE-16GB", MemoryGB: 16}, 0x15b3, 0x1db4, "") {
		t.Error("vendor not checked")
	}
}

func TestModuleParamsOneString(t *testing.T) {
	inv := inventory.Reference()
	nic, _ := HostNIC(inv, "esx-41.example")
	got := ParamString(ModuleParams(nic, inv.RoCE))
	if want := "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"; got != want {
		t.Fatalf("params = %q, want %q", got, want)
	}
	script := string(HostScript(inv, "esx-41.example"))
	if n := strings.Count(script, "\nesxcli system module parameters set"); n != 1 {
		t.Errorf("script sets module parameters %d times, want once", n)
	}
	if !strings.Contains(script, `-m nmlx5_core -p "max_vfs=$max_vfs `+strings.TrimPrefix(got, "max_vfs=8 ")+`"`) {
		t.Errorf("script lacks the one combined string:\n%s", script)
	}
	for _, s := range []string{"Above 4G decoding", "SR-IOV", "VT-d", "reboot"} {
		if !strings.Contains(script, s) {
			t.Errorf("script does not mention %q", s)
		}
	}
}

func TestMergeParams(t *testing.T) {
	want := []Param{{ParamMaxVFs, "8"}, {ParamPFCTx, "0x08"}, {ParamPFCRx, "0x08"}, {ParamTrustState, "2"}, {ParamECN, "1"}}
	cases := []struct {
		cur, merged string
		changed     bool
	}{
		{"", "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1", true},
		{"DRSS=4 max_vfs=4", "DRSS=4 max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1", true},
		{"ecn=1 DRSS=4 trust_state=2 pfcrx=8 pfctx=0x8 max_vfs=8", "ecn=1 DRSS=4 trust_state=2 pfcrx=0x08 pfctx=0x08 max_vfs=8", false},
		{"max_vfs=8 max_vfs=2 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1", "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1", true},
	}
	for _, c := range cases {
		got, changed := MergeParams(c.cur, want)
		if got != c.merged || changed != c.changed {
			t.Errorf("MergeParams(%q) = %q, %v; want %q, %v", c.cur, got, changed, c.merged, c.changed)
		}
		again, changed2 := MergeParams(got, want)
		if changed2 || again != got {
			t.Errorf("MergeParams is not stable on %q: %q, %v", got, again, changed2)
		}
	}
}

func TestVMXFile(t *testing.T) {
	inv := inventory.Reference()
	h := &inv.Hosts[0]
	h.GPUs[0].PCI = "0000:3b:00.0"
	got := string(VMXFile(inv, h))
	for _, line := range []string{
		`firmware = "efi"`,
		`pciPassthru.use64bitMMIO = "TRUE"`,
		`pciPassthru.64bitMMIOSizeGB = "64"`,
		`sched.mem.pin = "TRUE"`,
		`pciPassthru0.id = "0000:3b:00.0"`,
		`pciPassthru0.vendorId = "0x10de"`,
		`# pciPassthru1: V100-PCIE-16GB (16 GB): no pci address`,
		`physical function`,
		`"VM Network"`,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("VMX lacks %q:\n%s", line, got)
		}
	}
	files := Artifacts(inventory.Reference())
	if len(files) != 16 {
		t.Errorf("Artifacts: %d files, want 8 .vmx + 8 .sh", len(files))
	}
}
