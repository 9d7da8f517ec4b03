package bench_test

import (
	"testing"

	"github.com/rdggen/rdggen/internal/hostapply"
	"github.com/rdggen/rdggen/internal/switchapply"
	"github.com/rdggen/rdggen/internal/vsphere"
	"github.com/rdggen/rdggen/internal/workerapply"
	"github.com/rdggen/rdggen/pkg/bench"
)

// TestEvidenceNames: the evidence names that `rdggen check` already has are
// its own constants (a rename there must show here). It is an external test:
// internal/workerapply imports this package (its login ring is Rounds).
func TestEvidenceNames(t *testing.T) {
	for got, want := range map[string]string{
		bench.EvidenceRDMADevice:    hostapply.CheckRDMADevice,
		bench.EvidencePortState:     hostapply.CheckPortState,
		bench.EvidenceGID:           hostapply.CheckGID,
		bench.EvidenceRDMAMTU:       hostapply.CheckRDMAMTU,
		bench.EvidenceGPUs:          hostapply.CheckGPUs,
		bench.EvidenceBAR1:          hostapply.CheckBAR1,
		bench.EvidenceEFI:           hostapply.CheckEFI,
		bench.EvidenceDriver:        hostapply.CheckDriver,
		bench.EvidencePeermem:       hostapply.CheckPeermem,
		bench.EvidenceRDMAVerbs:     hostapply.CheckVerbs,
		bench.EvidenceNvidiaRuntime: hostapply.CheckRuntime,
		bench.EvidenceDevices:       workerapply.CheckDevices,
		bench.EvidenceMemlock:       workerapply.CheckMemlock,
		bench.EvidenceGDRLevel:      workerapply.CheckGDRLevel,
		bench.EvidenceP2P:           vsphere.CheckP2P,
		bench.EvidenceNUMA:          vsphere.CheckNUMA,
		bench.EvidenceLink:          switchapply.CheckLink,
		bench.EvidencePFC:           switchapply.CheckPFC,
		bench.EvidenceECN:           switchapply.CheckECN,
	} {
		if got != want {
			t.Errorf("evidence %q, check names it %q", got, want)
		}
	}
}
