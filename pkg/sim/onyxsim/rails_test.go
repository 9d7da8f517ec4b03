package onyxsim

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// rdggen's ONYX file of a leaf that carries two rails (VLAN 2, rail 1's
// ports in it with `switchport access vlan 2`, a gateway on interface vlan
// 1 and vlan 2, each rail port described with its rail, BFD) is taken by
// the simulator, as apply sends it and pasted line by line, and what the
// switch then prints plans nothing more. So is the same leaf with rail 1
// on the lanes of a split port (1/5 qsfp-split-2, 1/5/1 and 1/5/2).
func TestGeneratedRailsConfigTaken(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/golden/rails-shared/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lanes := strings.NewReplacer(
		"speed_gbps: 200", "speed_gbps: 100",
		"switch: leaf-a, port: 1/2,", "switch: leaf-a, port: 1/5/1,",
		"switch: leaf-a, port: 1/4,", "switch: leaf-a, port: 1/5/2,").Replace(string(b))
	for _, c := range []struct {
		name, src string
		want      []string // commands the file must hold
	}{
		{"rails-shared", string(b), []string{
			"vlan 2",
			"interface ethernet 1/2 switchport access vlan 2",
			"interface ethernet 1/2 description a1@esx-a1.example/vmnic5:rail1",
			"interface vlan 2 ip address 10.1.1.254/24 primary",
			"router bgp 65101 vrf default neighbor 10.254.0.1 fall-over bfd",
		}},
		{"rail 1 on split lanes", lanes, []string{
			"interface ethernet 1/5 module-type qsfp-split-2 force",
			"interface ethernet 1/5/1 switchport access vlan 2",
			"interface ethernet 1/5/2 description a2@esx-a2.example/vmnic5:rail1",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv, err := inventory.Load("inventory.yaml", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			sw := *inv.Switch("leaf-a")
			file := string(onyx.Config(inv, sw))
			for _, w := range c.want {
				if !strings.Contains(file, "   "+w+"\n") {
					t.Errorf("the file lacks %q:\n%s", w, file)
				}
			}
			generatedTaken(t, inv, sw)
		})
	}
}

// generatedTaken applies rdggen's plan for sw to a clean simulated switch
// of its model and release, then pastes rdggen's file for sw line by line
// on another; each must be taken whole and leave nothing to plan.
func generatedTaken(t *testing.T, inv *inventory.Inventory, sw inventory.Switch) {
	t.Helper()
	c := newConfig(sw.Name, sw.Ports, sw.ONYX.String())
	c.model = sw.Model
	plan := onyx.Reconcile(inv, sw, onyx.Parse(c.render(fixedTime)))
	if len(plan.Changes) == 0 {
		t.Fatal("nothing planned on a clean switch")
	}
	for _, cmd := range plan.Commands() {
		o := c.configCommand(cmd, false)
		if o.err != "" || o.confirm != "" {
			t.Fatalf("%q: refused: %q %q", cmd, o.err, o.confirm)
		}
		o.apply()
	}
	if again := onyx.Reconcile(inv, sw, onyx.Parse(c.render(fixedTime))); !again.Empty() {
		t.Errorf("after the apply the switch still lacks %q:\n%s", again.Commands(), c.render(fixedTime))
	}
	p := newConfig(sw.Name, sw.Ports, sw.ONYX.String())
	p.model = sw.Model
	for _, l := range strings.Split(string(onyx.Config(inv, sw)), "\n") {
		cmd := strings.TrimSpace(l)
		if cmd == "" || strings.HasPrefix(cmd, "#") || strings.Contains(cmd, "prefix-modes") {
			continue // the session's own (server.go), not configCommand's
		}
		o := p.configCommand(cmd, false)
		if o.err != "" || o.confirm != "" {
			t.Fatalf("pasting %q: refused: %q %q", cmd, o.err, o.confirm)
		}
		o.apply()
	}
	if plan := onyx.Reconcile(inv, sw, onyx.Parse(p.render(fixedTime))); !plan.Empty() {
		t.Errorf("after pasting the file the switch still lacks %q\n%s", plan.Commands(), p.render(fixedTime))
	}
}
