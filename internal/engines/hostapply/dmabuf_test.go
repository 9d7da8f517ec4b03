package hostapply

import (
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

func TestKernelVersion(t *testing.T) {
	for rel, want := range map[string][2]int{"6.8.0-45-generic": {6, 8}, "5.12-rc1": {5, 12}, "4.15.0-213-generic": {4, 15}, "5.4.0": {5, 4}} {
		if maj, mnr, ok := kernelVersion(rel); !ok || maj != want[0] || mnr != want[1] {
			t.Errorf("kernelVersion(%q) = %d, %d, %v; want %v", rel, maj, mnr, ok, want)
		}
	}
	for _, bad := range []string{"", "6", "x.y"} {
		if _, _, ok := kernelVersion(bad); ok {
			t.Errorf("kernelVersion(%q) parsed", bad)
		}
	}
}

// The peer-memory probe's output as the DMA-BUF judgement reads it: the
// models the driver reports win over the inventory's; a pre-Turing GPU is
// the only reason given, whatever else is missing.
func TestDMABUFPath(t *testing.T) {
	h := &inventory.Host{GPUs: []inventory.GPU{{Model: "V100-PCIE-16GB"}}}
	pm := parsePeermem("module\ndriver 560.35.03\nopen\nkernel 6.8.0-45-generic\nmodel NVIDIA H100 80GB HBM3\nmodel NVIDIA H100 80GB HBM3\n")
	if db := dmabufPath(h, pm); !db.ok || db.found != "NVIDIA open GPU kernel module 560.35.03, Linux 6.8.0-45-generic, NVIDIA H100 80GB HBM3 (Hopper)" {
		t.Errorf("H100: %+v", db)
	}
	if db := dmabufPath(h, parsePeermem("driver 535.183.06\nkernel 4.15.0\n")); db.ok || db.why != "V100-PCIE-16GB is Volta (the open GPU kernel modules drive Turing and later)" {
		t.Errorf("V100: %+v", db)
	}
	if db := dmabufPath(h, parsePeermem("driver 560.35.03\nopen\nkernel 6.1.0\nmodel NVIDIA B200\x1b[2J\n")); !db.ok ||
		db.found != `NVIDIA open GPU kernel module 560.35.03, Linux 6.1.0, NVIDIA B200\x1b[2J (not in rdggen's table; the open module drives only Turing and later)` {
		t.Errorf("a model not in the table (with an escape): %+v", db)
	}
}
