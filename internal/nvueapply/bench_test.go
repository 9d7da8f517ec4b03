package nvueapply

import (
	"fmt"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
)

// BenchmarkReconcile plans the reference cluster's switch against an
// applied configuration of 64 configured ports and 2000 user routes (the
// user's part is walked only where the intent or the ownership rule looks).
func BenchmarkReconcile(b *testing.B) {
	inv := loadInv(b, "cumulus-routed", "127.0.0.1")
	sw := inv.Switches[0]
	intent := cumulus.Intent(inv, sw)
	applied := clone(intent).(map[string]any)
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
		if p := Reconcile(inv, sw, intent, applied); !p.Empty() {
			b.Fatal(p.Changes[0])
		}
	}
}
