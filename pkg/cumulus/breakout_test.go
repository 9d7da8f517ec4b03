package cumulus

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// loadEdited is golden case name's inventory with edits (old, new, …).
func loadEdited(t *testing.T, name string, edits ...string) *inventory.Inventory {
	t.Helper()
	b, err := os.ReadFile("../../testdata/golden/" + name + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for i := 0; i+1 < len(edits); i += 2 {
		if !strings.Contains(src, edits[i]) {
			t.Fatalf("%q is not in %s", edits[i], name)
		}
		src = strings.Replace(src, edits[i], edits[i+1], 1)
	}
	inv, err := inventory.Load("inventory.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func setLines(inv *inventory.Inventory, sw string) string {
	var lines []string
	for _, w := range SetLines(Intent(inv, *inv.Switch(sw))) {
		lines = append(lines, strings.Join(w, " "))
	}
	return strings.Join(lines, "\n") + "\n"
}

// The split ports are generated: the golden fabric's 400G hosts on swp1s0
// and swp1s1 make swp1 a 2x breakout (lanes-per-port 4 on an SN5600), the
// uplinks and data ports are described, and every BGP neighbor has BFD
// at 3 × 300 ms.
func TestIntentBreakoutDescriptionsBFD(t *testing.T) {
	inv := loadGolden(t, "fabric-cumulus")
	got := setLines(inv, "leaf1")
	for _, want := range []string{
		"interface swp1 link breakout 2x lanes-per-port 4",
		"interface swp1s0 description h11@esx-11.example/vmnic4",
		"interface swp1s1 description h12@esx-12.example/vmnic4",
		"interface swp63 description spine1:swp1",
		"interface swp64 description spine2:swp1",
		"vrf default router bgp neighbor swp63 bfd enable on",
		"vrf default router bgp neighbor swp63 bfd detect-multiplier 3",
		"vrf default router bgp neighbor swp63 bfd min-rx-interval 300",
		"vrf default router bgp neighbor swp63 bfd min-tx-interval 300",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("leaf1 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "interface swp1 type") || strings.Contains(got, "interface swp1 link mtu") {
		t.Errorf("the split parent swp1 got a port setting of its own:\n%s", got)
	}
	if spine := setLines(inv, "spine1"); !strings.Contains(spine, "interface swp1 description leaf1:swp63\n") || strings.Contains(spine, "breakout") {
		t.Errorf("spine1:\n%s", spine)
	}
	// 4x and 8x: three lanes make 4x; a written 8x on a port nothing uses.
	inv = loadEdited(t, "fabric-cumulus",
		"speed_gbps: 400}", "speed_gbps: 200}",
		"{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp57: 8x}}",
		"port: swp1s1}}", "port: swp1s2}}")
	got = setLines(inv, "leaf1")
	// swp57's 8x takes swp58, which NVIDIA's own SN5600 configurations
	// disable in so many words.
	for _, want := range []string{"interface swp1 link breakout 4x lanes-per-port 2", "interface swp57 link breakout 8x lanes-per-port 1", "interface swp58 link breakout disabled"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("leaf1 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "swp2 link breakout") {
		t.Errorf("swp1's 4x disables swp2 on an SN5600:\n%s", got)
	}
	if h := string(Commands(inv, *inv.Switch("leaf1"))); !strings.Contains(h, "swp57 8x (swp57s0-swp57s7, swp58 disabled)") {
		t.Errorf("the header does not name swp58:\n%s", h)
	}
	// Against a clean switch the plan says what disabling swp58 does.
	sw := *inv.Switch("leaf1")
	warned := false
	for _, w := range Reconcile(inv, sw, Intent(inv, sw), Tree{}).Warnings {
		warned = warned || strings.HasPrefix(w, "interface swp58 link breakout disabled: the port goes down for good")
	}
	if !warned {
		t.Error("no warning for swp58's disabling")
	}
	// An SN3700 (4 lanes a port): no lanes-per-port.
	inv = loadEdited(t, "fabric-mixed", "port: swp2}}", "port: swp3s1}}", "port: swp1}}", "port: swp3s0}}")
	if got := setLines(inv, "leaf1"); !strings.Contains(got, "interface swp3 link breakout 2x\n") || strings.Contains(got, "lanes-per-port") {
		t.Errorf("SN3700 leaf1:\n%s", got)
	}
	// Cumulus Linux 5.15: no BFD (its profiles' BGP attachment is not
	// documented), and the header says so.
	inv = loadEdited(t, "fabric-cumulus", "cumulus: 5.9.1, role: leaf}    #", "cumulus: 5.15.0, role: leaf}    #")
	if got := setLines(inv, "leaf1"); strings.Contains(got, "bfd") {
		t.Errorf("5.15 leaf1 has BFD:\n%s", got)
	}
	if h := string(Commands(inv, *inv.Switch("leaf1"))); !strings.Contains(h, "no BFD (Cumulus Linux 5.15's BFD profiles") {
		t.Errorf("5.15 header:\n%s", h)
	}
}

// A breakout is an owned change: another mode on the port is replaced, and
// the plan warns that the breakout flaps the port.
func TestPlanBreakout(t *testing.T) {
	inv := loadGolden(t, "fabric-cumulus")
	sw := *inv.Switch("leaf1")
	intent := Intent(inv, sw)
	applied := Tree{"interface": Tree{"swp1": Tree{"link": Tree{"breakout": Tree{"4x": Tree{"lanes-per-port": 2}}}}}}
	p := Reconcile(inv, sw, intent, applied)
	var rm, add bool
	for _, c := range p.Changes {
		switch {
		case c.Key() == "interface.swp1.link.breakout.4x" && c.Op == applyplan.Remove:
			rm = true
		case c.Key() == "interface.swp1.link.breakout.2x.lanes-per-port" && c.Op == applyplan.Add:
			add = true
		}
	}
	if !rm || !add {
		t.Errorf("4x → 2x: remove %v, add %v:\n%s", rm, add, p)
	}
	body := p.Patch()
	if b, _ := Lookup(body, []string{"interface", "swp1", "link", "breakout"}); b == nil || b.(map[string]any)["4x"] != nil || b.(map[string]any)["2x"] == nil {
		t.Errorf("patch body's breakout: %v", b)
	}
	warned := false
	for _, w := range p.Warnings {
		warned = warned || strings.HasPrefix(w, "interface swp1 link breakout 2x: the breakout flaps the port")
	}
	if !warned {
		t.Errorf("no breakout warning: %q", p.Warnings)
	}
	// Applied as wanted: no change, no warning.
	p = Reconcile(inv, sw, intent, intent)
	for _, w := range p.Warnings {
		if strings.Contains(w, "breakout") {
			t.Errorf("an applied breakout warns: %s", w)
		}
	}
}

// A user's description on a port rdggen configures stays, with a note;
// rdggen's own earlier one is replaced.
func TestPlanUserDescription(t *testing.T) {
	inv := loadGolden(t, "fabric-cumulus")
	sw := *inv.Switch("leaf1")
	intent := Intent(inv, sw)
	applied := CloneTree(intent).(map[string]any)
	applied["interface"].(map[string]any)["swp63"].(map[string]any)["description"] = "to spine-1, rack 4"
	applied["interface"].(map[string]any)["swp64"].(map[string]any)["description"] = "spine1:swp9"
	p := Reconcile(inv, sw, intent, applied)
	var keys []string
	for _, c := range p.Changes {
		if !c.IsRecord() {
			keys = append(keys, c.String())
		}
	}
	if strings.Join(keys, "|") != "interface.swp64.description: spine1:swp9 → spine2:swp1" {
		t.Errorf("changes: %q", keys)
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), `interface swp63 carries the description "to spine-1, rack 4", which is not one of rdggen's: rdggen leaves it`) {
		t.Errorf("warnings: %q", p.Warnings)
	}
}
