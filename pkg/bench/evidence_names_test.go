package bench_test

import (
	"testing"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/engines/onyxapply"
	"github.com/rdggen/rdggen/internal/engines/workerapply"
	"github.com/rdggen/rdggen/pkg/bench"
)

// TestEvidenceNames: the evidence names that `rdggen check` already has are
// its own constants (a rename there must show here). It is an external test:
// internal/engines/workerapply imports this package (its login ring is Rounds).
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
		bench.EvidenceP2P:           esxiapply.CheckP2P,
		bench.EvidenceNUMA:          esxiapply.CheckNUMA,
		bench.EvidenceLink:          onyxapply.CheckLink,
		bench.EvidencePFC:           onyxapply.CheckPFC,
		bench.EvidenceECN:           onyxapply.CheckECN,
	} {
		if got != want {
			t.Errorf("evidence %q, check names it %q", got, want)
		}
	}
}
