package onyx

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkPlan64Ports is the pure planning step of apply: parse a 64-port
// switch's running-config with 2,000 lines of unrelated configuration plus a
// partial RoCE config, and diff it against the desired statements.
func BenchmarkPlan64Ports(b *testing.B) {
	inv := loadInv(&testing.T{}, "", "  - {name: s1, model: SN4600C, onyx: 3.6.8190}\n")
	sw := inv.Switches[0]
	var lines []string
	for p := 1; p <= 64; p++ {
		lines = append(lines,
			fmt.Sprintf("   interface ethernet 1/%d description rack-%02d-server-%02d", p, p/8, p%8),
			fmt.Sprintf("   interface ethernet 1/%d mtu %d force", p, 9000+p%2*216),
			fmt.Sprintf("   interface ethernet 1/%d traffic-class 0 congestion-control red minimum-absolute %d maximum-absolute 2000", p, 100+p%2))
	}
	lines = append(lines, "   vlan 2-1001")
	for v := 2; v <= 1001; v++ {
		lines = append(lines, fmt.Sprintf("   vlan %d name tenant-%d", v, v))
	}
	for i := 0; len(lines) < 2000; i++ {
		lines = append(lines, fmt.Sprintf("   ip route 10.%d.%d.0/24 192.0.2.254", i/256, i%256))
	}
	// Half of the RoCE config is there already.
	lines = append(lines,
		"   traffic pool roce type lossless",
		"   traffic pool roce memory percent 50.00",
		"   interface ethernet 1/1-1/32 qos trust L3",
		"   interface ethernet 1/33-1/64 qos trust L2")
	text := "##\n## Running database \"initial\"\n##\n" + strings.Join(lines, "\n") + "\n"
	desired := Desired(inv, sw)
	var plan Plan
	b.ReportAllocs()
	for b.Loop() {
		plan = Diff(desired, Parse(text))
	}
	b.ReportMetric(float64(len(plan.Changes)), "cmds/op")
}
