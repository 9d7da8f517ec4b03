package onyx

import (
	"os"
	"slices"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestRailVLANs: a leaf that carries rails 0 and 1 (golden rails-shared)
// creates VLAN 2, puts rail 1's ports in it and has a gateway on
// interface vlan 1 and vlan 2, each subnet advertised; the statements
// read back from their text as the same statements, so a second apply
// sends nothing.
func TestRailVLANs(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/rails-shared/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"vlan 2",
		"interface ethernet 1/2 switchport access vlan 2",
		"interface ethernet 1/4 switchport access vlan 2",
		"interface vlan 1 ip address 10.1.0.254/24 primary",
		"interface vlan 2 ip address 10.1.1.254/24 primary",
		"router bgp 65101 vrf default network 10.1.1.0 /24",
	}
	d := Desired(inv, *inv.Switch("leaf-a"))
	var cmds []string
	for _, s := range d {
		cmds = append(cmds, s.Command())
	}
	for _, w := range want {
		if !slices.Contains(cmds, w) {
			t.Errorf("no %q in\n%v", w, cmds)
		}
	}
	for _, s := range d {
		if s.Kind != KindVLAN && s.Kind != KindAccessVLAN {
			continue
		}
		got := ParseLine(s.Command())
		if len(got) != 1 || got[0] != s {
			t.Errorf("%q parses as %+v, want %+v", s.Command(), got, s)
		}
	}
	if got := ParseLine("vlan 2-3"); len(got) != 2 || got[1] != VLANCreate(3) {
		t.Errorf("vlan 2-3: %+v", got)
	}
}
