package cumulus

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

func loadGolden(t *testing.T, name string) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/" + name + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// A fabric switch's intent: loopback, ASN, router-id, unnumbered eBGP to a
// Cumulus peer, numbered eBGP on a /31 to an ONYX peer, and on a leaf the
// gateway, the container routes and the networks; every leaf in Owned.
func TestFabricIntent(t *testing.T) {
	inv := loadGolden(t, "fabric-mixed")
	leaf := *inv.Switch("leaf1")
	var lines []string
	for _, w := range SetLines(Intent(inv, leaf)) {
		lines = append(lines, strings.Join(w, " "))
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"interface lo ip address 10.255.0.3/32",
		"router bgp autonomous-system 64601",
		"router bgp router-id 10.255.0.3",
		"vrf default router bgp neighbor swp31 remote-as external",
		"vrf default router bgp neighbor swp31 type unnumbered",
		"interface swp32 ip address 10.254.10.2/31",
		"vrf default router bgp neighbor 10.254.10.3 remote-as 64600",
		"interface swp31 link mtu 9216",
		"interface vlan1 ip address 10.1.0.254/24",
		"vrf default router static 172.16.11.0/24 via 10.1.0.11 type ipv4-address",
		"vrf default router bgp address-family ipv4-unicast network 10.1.0.0/24",
		"vrf default router bgp address-family ipv4-unicast network 10.255.0.3/32",
		"vrf default router bgp address-family ipv4-unicast network 172.16.12.0/24",
		"qos roce mode lossless",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("leaf1 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "neighbor 10.254.10.3 type") {
		t.Error("a numbered neighbor got a type")
	}
	// A spine: no bridge, no gateway, no static route; RoCE all the same.
	spine := *inv.Switch("spine1")
	st := Intent(inv, spine)
	if _, ok := st["bridge"]; ok {
		t.Error("spine has a bridge")
	}
	if st["qos"] == nil {
		t.Error("spine has no qos roce")
	}
	for _, sw := range inv.Switches {
		if !(sw.OS() == inventory.OSCumulus) {
			continue
		}
		paths, _ := Leaves(Intent(inv, sw))
		for _, p := range paths {
			owned := false
			for _, q := range Owned() {
				owned = owned || p.Match(q)
			}
			if !owned {
				t.Errorf("%s: leaf %q is not in Owned", sw.Name, p)
			}
		}
	}
}
