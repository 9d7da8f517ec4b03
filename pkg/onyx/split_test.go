package onyx

import (
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// splitFabric is the golden ONYX fabric with leaf1's hosts on lanes 1/1/1
// and 1/1/3 (a 4x breakout: 25G lanes of a 100G port) and their NICs at
// 25 Gb/s.
func splitFabric(t *testing.T) *inventory.Inventory {
	t.Helper()
	b, err := os.ReadFile("../../testdata/golden/fabric-onyx/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.NewReplacer(
		"switch: leaf1, port: 1/1}", "switch: leaf1, port: 1/1/1}",
		"switch: leaf1, port: 1/2}", "switch: leaf1, port: 1/1/3}",
		"vfs: 8}", "vfs: 8, speed_gbps: 25}").Replace(string(b))
	inv, err := inventory.Load("inventory.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// A split port is generated as its module type, shut down first when
// apply sends it, and the plan warns that it flaps the port; the lanes
// carry the per-port lines and the descriptions; every session has BFD.
func TestSplitPortsAndBFD(t *testing.T) {
	inv := splitFabric(t)
	leaf := *inv.Switch("leaf1")
	cfg := string(Config(inv, leaf))
	for _, want := range []string{
		"   interface ethernet 1/1 module-type qsfp-split-4 force\n",
		"   interface ethernet 1/1/1 description h11@esx-11.example/vmnic4\n",
		"   interface ethernet 1/1/3 description h12@esx-12.example/vmnic4\n",
		"   interface ethernet 1/31 description spine1:1/1\n",
		"   interface ethernet 1/1/1 mtu 9216 force\n",
		"   router bgp 65101 vrf default neighbor 10.254.0.1 fall-over bfd\n",
		"##\n## BFD configuration\n##\n   ip bfd vrf default interval min-rx 300 force\n   ip bfd vrf default interval multiplier 3 force\n   ip bfd vrf default interval transmit-rate 300 force\n",
		"## Split ports: 1/1 qsfp-split-4 (1/1/1-1/1/4; 1/2 unmapped); each is shut down, then split (here and in apply's plan), which flaps the port.\n",
		// Pasted, the port is shut down before it splits, as apply does,
		// with 1/2, whose logical ports an SN2700's 4x split takes.
		"   interface ethernet 1/1-1/2 shutdown\n   interface ethernet 1/1 module-type qsfp-split-4 force\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("leaf1.cfg lacks %q:\n%s", want, cfg)
		}
	}
	if strings.Contains(cfg, "interface ethernet 1/1 mtu") || strings.Contains(strings.ReplaceAll(cfg, "interface ethernet 1/1-1/2 shutdown", ""), "interface ethernet 1/1-") {
		t.Errorf("the split parent 1/1 got a port setting of its own:\n%s", cfg)
	}
	// The neighbor exists before its BFD line.
	if strings.Index(cfg, "neighbor 10.254.0.1 remote-as") > strings.Index(cfg, "neighbor 10.254.0.1 fall-over bfd") {
		t.Error("fall-over bfd before the neighbor")
	}
	// Against a clean switch: shutdown, then the split, before the lanes.
	plan := Reconcile(inv, leaf, nil)
	cmds := plan.Commands()
	if len(cmds) < 3 || cmds[0] != "interface ethernet 1/1-1/2 shutdown" || cmds[1] != "interface ethernet 1/1 module-type qsfp-split-4 force" {
		t.Errorf("plan starts %q", cmds[:min(3, len(cmds))])
	}
	warned := false
	for _, w := range plan.Warnings {
		warned = warned || strings.HasPrefix(w, "interface ethernet 1/1 module-type qsfp-split-4 force: the breakout flaps the port") &&
			strings.HasSuffix(w, "; the split also unmaps ethernet 1/2 (shut down with it), whose logical ports the lanes take")
	}
	if !warned || !strings.Contains(plan.String(), "# warning: interface ethernet 1/1 module-type qsfp-split-4 force: the breakout flaps the port") {
		t.Errorf("no breakout warning:\n%s", plan)
	}
	// Its own config read back: nothing to send (the module type, the
	// descriptions and the BFD lines parse to what was sent).
	if p := Reconcile(inv, leaf, Parse(cfg)); !p.Empty() {
		t.Errorf("second apply plans %q", p.Commands())
	}
	// The command form of the timers reads as the three lines.
	cur := Parse(cfg + "\n   ip bfd interval min-rx 300 multiplier 3 transmit-rate 300 force\n")
	if p := Reconcile(inv, leaf, cur); !p.Empty() {
		t.Errorf("with the command form: %q", p.Commands())
	}
	// Other timers: each line replaced.
	cur = Parse(strings.Replace(cfg, "interval multiplier 3 force", "interval multiplier 5 force", 1))
	if p := Reconcile(inv, leaf, cur); strings.Join(p.Commands(), "|") != "ip bfd vrf default interval multiplier 3 force" {
		t.Errorf("multiplier 5: %q", p.Commands())
	}
}

// A user's description on a port rdggen configures stays, with a note;
// rdggen's own earlier one (the host moved) is replaced.
func TestUserDescriptionKept(t *testing.T) {
	inv := splitFabric(t)
	leaf := *inv.Switch("leaf1")
	cfg := string(Config(inv, leaf))
	user := strings.Replace(cfg, "interface ethernet 1/31 description spine1:1/1", `interface ethernet 1/31 description "to spine-1 (rack 4)"`, 1)
	p := Reconcile(inv, leaf, Parse(user))
	if !p.Empty() {
		t.Errorf("a user's description is overwritten: %q", p.Commands())
	}
	if !strings.Contains(strings.Join(p.Warnings, "\n"), "interface ethernet 1/31 description to spine-1 (rack 4) is not one of rdggen's descriptions, so rdggen leaves it") {
		t.Errorf("warnings: %q", p.Warnings)
	}
	moved := strings.Replace(cfg, "interface ethernet 1/31 description spine1:1/1", "interface ethernet 1/31 description spine2:1/7", 1)
	if p := Reconcile(inv, leaf, Parse(moved)); strings.Join(p.Commands(), "|") != "interface ethernet 1/31 description spine1:1/1" {
		t.Errorf("rdggen's old description: %q", p.Commands())
	}
}
