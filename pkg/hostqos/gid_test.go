package hostqos

import (
	"net/netip"
	"testing"
)

// A mlx5 RoCE port's table as the hosts probe prints it, in glob order (10
// before 2): link-local v1/v2, IPv4 v1/v2, an unused slot.
const gidDump = "0\tfe80:0000:0000:0000:0250:56ff:fe9a:1b2c\tIB/RoCE v1\tens224\n" +
	"1\tfe80:0000:0000:0000:0250:56ff:fe9a:1b2c\tRoCE v2\tens224\n" +
	"10\t0000:0000:0000:0000:0000:0000:0000:0000\t\t\n" +
	"2\t0000:0000:0000:0000:0000:ffff:1f1f:1f29\tIB/RoCE v1\tens224\n" +
	"3\t0000:0000:0000:0000:0000:ffff:1f1f:1f29\tRoCE v2\tens224\n" +
	"garbage line\n"

func TestParseGIDTable(t *testing.T) {
	gs := ParseGIDTable([]byte(gidDump))
	if len(gs) != 5 {
		t.Fatalf("%d entries: %v", len(gs), gs)
	}
	for i, want := range []int{0, 1, 2, 3, 10} {
		if gs[i].Index != want {
			t.Errorf("entry %d has index %d, want %d", i, gs[i].Index, want)
		}
	}
	if got := gs[3].String(); got != "index 3: RoCE v2 31.31.31.41 on ens224" {
		t.Errorf("String = %q", got)
	}
	if got := gs[0].String(); got != "index 0: IB/RoCE v1 fe80::250:56ff:fe9a:1b2c on ens224" {
		t.Errorf("String = %q", got)
	}
	if gs[4].Used() || gs[4].String() != "index 10: unused" {
		t.Errorf("zero GID: %v", gs[4])
	}
	g, ok := FindRoCEv2(gs, netip.MustParseAddr("31.31.31.41"))
	if !ok || g.Index != 3 {
		t.Errorf("FindRoCEv2 = %v %v, want index 3", g, ok)
	}
	if g, ok := FindRoCEv2(gs, netip.MustParseAddr("31.31.31.42")); ok {
		t.Errorf("FindRoCEv2 of another address = %v", g)
	}
}

func TestRoCEPathMTU(t *testing.T) {
	for eth, want := range map[int]int{1500: 1024, 9000: 4096, 4200: 4096, 4191: 2048, 2144: 2048, 1280: 1024, 300: 0} {
		if got := RoCEPathMTU(eth); got != want {
			t.Errorf("RoCEPathMTU(%d) = %d, want %d", eth, got, want)
		}
	}
}
