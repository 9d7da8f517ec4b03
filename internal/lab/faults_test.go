package lab

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// link-speed stands for a cable or optic that brings the link up slower
// than planned: on the golden fabric's 800G uplink leaf1 swp63 (spine1 swp1
// is 800G too) 1000G is refused, naming the planned speed; on the 400G host
// lane swp1s0 (SN5600 lane, ConnectX-7 400G) 100G is below the plan and 400G
// is the plan; a port the inventory cables to nothing has no plan to judge.
func TestSpeedFault(t *testing.T) {
	inv, err := inventory.LoadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	leaf1 := inv.Switch("leaf1")
	for _, tc := range []struct {
		port      string
		gbps      int
		as, error string
	}{
		{"swp63", 1000, "", "link-speed: leaf1 swp63: 1000G is above the link's planned 800 Gb/s (leaf1 swp63 800 Gb/s, spine1 swp1 800 Gb/s), the most both ends run at: a slower cable or optic is 1-800"},
		{"swp63", 800, "its planned speed (leaf1 swp63 800 Gb/s, spine1 swp1 800 Gb/s)", ""},
		{"swp63", 400, "below its planned 800 Gb/s, as with a slower cable or optic", ""},
		{"swp1s0", 800, "", "link-speed: leaf1 swp1s0: 800G is above the link's planned 400 Gb/s (leaf1 swp1s0 400 Gb/s, h11's NIC 400 Gb/s)"},
		{"swp1s0", 100, "below its planned 400 Gb/s, as with a slower cable or optic", ""},
		{"swp9", 100, "as with another cable or optic (the inventory plans no speed for this port)", ""},
	} {
		as, err := speedFault(inv, leaf1, tc.port, tc.gbps)
		switch {
		case tc.error != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.error)):
			t.Errorf("%s %dG: %q, %v; want the error %q", tc.port, tc.gbps, as, err, tc.error)
		case tc.error == "" && (err != nil || as != tc.as):
			t.Errorf("%s %dG: %q, %v; want %q", tc.port, tc.gbps, as, err, tc.as)
		}
	}
}

// A value that is not one is refused before the lab is asked, as a usage
// error: mtu's N, link-speed's GBPS, a SWITCH:PORT without its colon or a
// side of it (mtu's too: a target with a colon is a SWITCH:PORT).
func TestCheckFaultValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"mtu", "leaf1:swp1", "abc"}, "mtu leaf1:swp1 abc: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes"},
		{[]string{"mtu", "gpu-1", "67"}, "mtu gpu-1 67: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes"},
		{[]string{"mtu", "gpu-1", "1500"}, ""},
		{[]string{"mtu", "leaf1:", "9000"}, `mtu: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", ":swp1", "9000"}, `mtu: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", ":", "9000"}, `mtu: ":": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", "leaf1:", "abc"}, `mtu: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", "leaf1:swp1", "9000"}, ""},
		{[]string{"link-speed", "leaf1:swp63", "fast"}, `link-speed: "fast": want a speed of 1-1600 Gb/s (100, 400G)`},
		{[]string{"link-speed", "leaf1:swp63", "0"}, `link-speed: "0": want a speed of 1-1600 Gb/s (100, 400G)`},
		{[]string{"link-speed", "leaf1:swp63", "400G"}, ""},
		{[]string{"link-down", "leaf2"}, `link-down: "leaf2": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", "leaf2:"}, `link-down: "leaf2:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", ":swp1"}, `link-down: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", "leaf2:1/31"}, ""},
		{[]string{"link-speed", "leaf1", "100"}, `link-speed: "leaf1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-speed", "leaf1:", "100"}, `link-speed: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-speed", ":swp63", "100"}, `link-speed: ":swp63": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", "spine1"}, `miswire: "spine1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:", "spine1:swp1"}, `miswire: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", ":swp1"}, `miswire: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", "spine1:swp1"}, ""},
	} {
		got := ""
		if err := CheckFault(tc.args); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%q: %q, want %q (\"\": accepted)", tc.args, got, tc.want)
		}
	}
}
