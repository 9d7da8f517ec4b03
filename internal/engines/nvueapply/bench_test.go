package nvueapply

import (
	"fmt"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// BenchmarkReconcile plans the reference cluster's switch against an
// applied configuration of 64 configured ports and 2000 user routes (the
// user's part is walked only where the intent or the ownership rule looks).
func BenchmarkReconcile(b *testing.B) {
	inv := loadInv(b, "cumulus-routed", "127.0.0.1")
	sw := inv.Switches[0]
	intent := cumulus.Intent(inv, sw)
	withRec, _ := cumulus.WithRecord(intent, Tree{}) // as rdggen left it: with its record
	applied := cumulus.CloneTree(withRec).(map[string]any)
	ifaces := applied["interface"].(map[string]any)
	for i := 9; i <= 64; i++ {
		ifaces[fmt.Sprintf("swp%d", i)] = Tree{"link": Tree{"description": "uplink", "mtu": int64(9216)}}
	}
	static := applied["vrf"].(map[string]any)["default"].(map[string]any)["router"].(map[string]any)["static"].(map[string]any)
	for i := range 2000 {
		static[fmt.Sprintf("10.%d.%d.0/24", i/256, i%256)] = Tree{"via": Tree{"31.31.31.200": Tree{"type": "ipv4-address"}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if p := cumulus.Reconcile(inv, sw, intent, applied); !p.Empty() {
			b.Fatal(p.Changes[0])
		}
	}
}

// BenchmarkNoOpRun is a second apply of the reference cluster's Cumulus
// switch over TLS against the simulator: the reads and the plan, no PATCH.
func BenchmarkNoOpRun(b *testing.B) {
	r := newRig(b, nvuesim.Options{})
	inv := loadInv(b, "cumulus", r.sim.Addr)
	if _, err := r.run(b, inv); err != nil {
		b.Fatal(err)
	}
	r.sim.ResetRequests()
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.run(b, inv)
		if err != nil || !res.Plan.Empty() {
			b.Fatal(err, res.Plan.Changes)
		}
	}
	if n := configPatches(r.sim); n != 0 {
		b.Fatalf("%d PATCH", n)
	}
}
