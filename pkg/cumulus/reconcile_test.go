package cumulus

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// On a fabric leaf that already runs BGP as another AS, rdggen writes no
// BGP setting (it would rewrite the user's), says so, and still plans the
// rest; with its own AS there, a user's neighbor and network stay.
func TestReconcileForeignBGP(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	sw := *inv.Switch("leaf1")
	intent := Intent(inv, sw)
	applied := Tree{
		"router": map[string]any{"bgp": map[string]any{"autonomous-system": int64(65000)}},
		"vrf": map[string]any{"default": map[string]any{"router": map[string]any{"bgp": map[string]any{
			"neighbor": map[string]any{"192.0.2.9": map[string]any{"remote-as": int64(65500)}},
		}}}},
	}
	p := Reconcile(inv, sw, intent, applied)
	for _, c := range p.Changes {
		if k := c.Key(); strings.HasPrefix(k, "router.bgp") || strings.HasPrefix(k, "vrf.default.router.bgp") {
			t.Errorf("a BGP change beside AS 65000: %s", c)
		}
	}
	if !strings.Contains(p.String(), "interface.swp63.link.mtu: (unset) → 9216") {
		t.Errorf("the rest is not planned:\n%s", p)
	}
	want := "the switch runs BGP as AS 65000, not rdggen's AS 65101 for leaf1: rdggen writes no BGP setting here"
	if !strings.Contains(strings.Join(p.Warnings, "\n"), want) {
		t.Errorf("warnings lack %q:\n%s", want, strings.Join(p.Warnings, "\n"))
	}

	// rdggen's AS: its BGP is planned, the user's neighbor is not removed.
	applied["router"].(map[string]any)["bgp"].(map[string]any)["autonomous-system"] = int64(65101)
	p = Reconcile(inv, sw, intent, applied)
	got := p.String()
	if !strings.Contains(got, "vrf.default.router.bgp.neighbor.swp63.remote-as: (unset) → external\n") || !strings.Contains(got, "router.bgp.router-id: (unset) → 10.10.10.3\n") {
		t.Errorf("rdggen's neighbor is not planned:\n%s", got)
	}
	for _, c := range p.Changes {
		if strings.Contains(c.Key(), "192.0.2.9") || c.Op == applyplan.Remove {
			t.Errorf("the plan touches the user's neighbor or removes something: %s", c)
		}
	}
}
