package onyx

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The assumed layout of `show ip bfd neighbors` (ShowBFDNeighborsCommand)
// reads into one session per row, by the columns' heads, under its VRF; a
// row with fewer fields than the heads keeps its address and state word; an
// answer without the table (an error line) fails, quoting it.
func TestParseBFDNeighbors(t *testing.T) {
	out := `leaf1 [standalone: master] # show ip bfd neighbors
 
VRF name: default
------------------------------------------------------------------------
Neighbor          Interface    State       Multiplier  Min-rx  Transmit-rate
------------------------------------------------------------------------
10.254.0.1        Eth1/31      UP          3           300     300
10.254.0.3        -            DOWN        3           1000    1000
10.254.0.5        INIT
 
VRF name: red
------------------------------------------------------------------------
Neighbor          Interface    State       Multiplier  Min-rx  Transmit-rate
------------------------------------------------------------------------
10.9.0.1          Eth1/5       ADMIN-DOWN  5           50      50
`
	got, err := ParseBFDNeighbors(out)
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr
	want := []BFDSession{
		{VRF: "default", Neighbor: a("10.254.0.1"), Interface: "Eth1/31", State: "UP", Multiplier: 3, MinRx: 300, TransmitRate: 300},
		{VRF: "default", Neighbor: a("10.254.0.3"), State: "DOWN", Multiplier: 3, MinRx: 1000, TransmitRate: 1000},
		{VRF: "default", Neighbor: a("10.254.0.5"), State: "INIT"},
		{VRF: "red", Neighbor: a("10.9.0.1"), Interface: "Eth1/5", State: "ADMIN-DOWN", Multiplier: 5, MinRx: 50, TransmitRate: 50},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(x, y netip.Addr) bool { return x == y })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got[0].Up() || got[1].Up() || !got[0].HasTimers() || got[2].HasTimers() {
		t.Errorf("Up/HasTimers: %+v", got)
	}
	// The heads alone: BFD runs, no session.
	if none, err := ParseBFDNeighbors("Neighbor  Interface  State\n----\n"); err != nil || len(none) != 0 {
		t.Errorf("no session: %v %v", none, err)
	}
	_, err = ParseBFDNeighbors("% Unrecognized command \"bfd\".\nType \"?\" for help.\n")
	if err == nil || !strings.Contains(err.Error(), `Unrecognized command \"bfd\"`) {
		t.Errorf("an error line: %v", err)
	}
}
