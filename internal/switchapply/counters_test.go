package switchapply

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Counters reads every data port's PFC pause frames of the RoCE priority
// (rx + tx) and ECN-marked packets, read-only, named as pkg/bench names a
// host's port; what changes between two reads is what bench compares.
func TestCounters(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 0, "1/1", "1/3", "1/3", "1/5"))
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	sim.ResetLog()
	sim.SetPauseCounters(3, 3, 12, 5)
	sim.SetPauseCounters(5, 2, 99, 99) // another priority: not counted
	sim.SetECNMarked(3, 42)
	got, skipped, err := Counters(context.Background(), r.inv, r.opts)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("counters: %v, skipped %v", err, skipped)
	}
	readOnly(t, sim)
	want := []PortCounters{{"s1 Eth1/1", 0, 0}, {"s1 Eth1/3", 17, 42}, {"s1 Eth1/5", 0, 0}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counters (-want +got):\n%s", d)
	}
	r.inv.Switches[0].Mgmt = ""
	if got, skipped, err := Counters(context.Background(), r.inv, r.opts); err != nil || len(got) != 0 || len(skipped) != 1 || skipped[0] != "s1" {
		t.Errorf("a switch without mgmt: %v %v %v", got, skipped, err)
	}
}
