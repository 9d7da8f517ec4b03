package vmx

import (
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

func TestArchitecture(t *testing.T) {
	for model, want := range map[string]string{"Tesla V100-PCIE-16GB": ArchVolta, "P100": ArchPascal, "NVIDIA A100-SXM4-80GB": ArchAmpere,
		"Tesla T4": ArchTuring, "NVIDIA H100 NVL": ArchHopper, "L40S": ArchAda} {
		if got, ok := Architecture(model); !ok || got != want {
			t.Errorf("Architecture(%q) = %q, %v; want %q", model, got, ok, want)
		}
	}
	if a, ok := Architecture("B200"); ok {
		t.Errorf("B200 is not in the table, got %q", a)
	}
	for _, f := range gpuModels {
		if _, ok := inventory.LookupGPUFamily(f.Family); !ok {
			t.Errorf("family %s has no architecture", f.Family)
		}
	}
	if OpenModulesSupport(ArchVolta) || OpenModulesSupport(ArchPascal) || !OpenModulesSupport(ArchTuring) || !OpenModulesSupport(ArchHopper) {
		t.Error("open kernel modules: Turing and later only")
	}
}
