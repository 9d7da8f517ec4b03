package dockernet

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// In a fabric each host routes the pool and every other leaf's data subnet
// via its own leaf's gateway, and never its own subnet or another host.
func TestFabricRoutes(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/fabric-mixed/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range Routes(inv, &inv.Hosts[2]) { // m21 on leaf2, gateway 10.2.0.1
		got = append(got, r.Command())
	}
	want := "route replace 172.16.0.0/16 via 10.2.0.1 dev enp1f0\nroute replace 10.1.0.0/24 via 10.2.0.1 dev enp1f0"
	if strings.Join(got, "\n") != want {
		t.Errorf("m21's routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	if r := PoolRoute(inv, &inv.Hosts[0]); r.Via.String() != "10.1.0.254" || !strings.Contains(r.Host, "leaf leaf1") {
		t.Errorf("m11's pool route %+v", r)
	}
	if s := string(RoutesPersist(inv, &inv.Hosts[0])); !strings.Contains(s, "- to: 10.2.0.0/24\n          via: 10.1.0.254\n") {
		t.Errorf("m11's netplan lacks the other leaf:\n%s", s)
	}
}
