package onyxapply

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
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

// On the ONYX 2 × 2 golden fabric each leaf's counters cover its host
// ports and its two uplinks, each spine's its downlinks to the leaves: the
// ports bench names in a fabric cause.
func TestCountersFabricUplinks(t *testing.T) {
	inv, err := inventory.LoadFile("../../../testdata/golden/fabric-onyx/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, inv)
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	for _, s := range r.sims {
		s.ResetLog()
	}
	r.sims[1].SetPauseCounters(1, 3, 4000, 1000) // spine2 1/1, towards leaf1
	r.sims[2].SetPauseCounters(32, 3, 0, 250)    // leaf1 1/32, towards spine2
	r.sims[2].SetECNMarked(32, 9)
	got, skipped, err := Counters(context.Background(), r.inv, r.opts)
	if err != nil || len(skipped) != 0 {
		t.Fatalf("counters: %v, skipped %v", err, skipped)
	}
	for _, s := range r.sims {
		readOnly(t, s)
	}
	want := []PortCounters{
		{"spine1 Eth1/1", 0, 0}, {"spine1 Eth1/2", 0, 0},
		{"spine2 Eth1/1", 5000, 0}, {"spine2 Eth1/2", 0, 0},
		{"leaf1 Eth1/1", 0, 0}, {"leaf1 Eth1/2", 0, 0}, {"leaf1 Eth1/31", 0, 0}, {"leaf1 Eth1/32", 250, 9},
		{"leaf2 Eth1/1", 0, 0}, {"leaf2 Eth1/2", 0, 0}, {"leaf2 Eth1/31", 0, 0}, {"leaf2 Eth1/32", 0, 0},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("counters (-want +got):\n%s", d)
	}
}
