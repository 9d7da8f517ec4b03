package onyxapply

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// A leaf that carries two rails of each of its hosts (the rails-shared
// golden): the check and bench's counters read every rail's port, as the
// switch file configures them, not only rail 0's (1/1 and 1/3), each with
// its host.
func TestDataPortsEveryRail(t *testing.T) {
	src, err := os.ReadFile("../../../testdata/golden/rails-shared/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	ports, hosts := dataPorts(inv, "leaf-a")
	got := map[string]string{}
	var order []string
	for _, p := range ports {
		order = append(order, p.String())
		for _, h := range hosts[p] {
			got[p.String()] += h.Name
		}
	}
	if want := []string{"1/1", "1/2", "1/3", "1/4"}; !cmp.Equal(order, want) {
		t.Errorf("ports %v, want %v", order, want)
	}
	if want := map[string]string{"1/1": "a1", "1/2": "a1", "1/3": "a2", "1/4": "a2"}; !cmp.Equal(got, want) {
		t.Errorf("hosts per port %v, want %v", got, want)
	}
}
