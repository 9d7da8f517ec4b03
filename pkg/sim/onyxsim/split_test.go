package onyxsim

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
)

var fixedTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// A port splits once shut down: it is unmapped, its lanes are ports, and
// the split prints in running-config; its lanes never merge into ranges.
func TestSplitPort(t *testing.T) {
	c := newConfig("sw", 32, "3.10.4006")
	run := func(cmd string) outcome {
		t.Helper()
		o := c.configCommand(cmd, false)
		if o.err == "" && o.confirm == "" {
			o.apply()
		}
		return o
	}
	for cmd, want := range map[string]string{
		"interface ethernet 1/1/1 mtu 9216 force":                "Interface ethernet 1/1/1 does not exist",
		"interface ethernet 1/1 module-type qsfp-split-4 force":  "must be shut down before its module type is changed",
		"interface ethernet 1/1 module-type qsfp-split-3 force":  "cannot be split to 3 ports",
		"interface ethernet 1/33 module-type qsfp-split-4 force": "Interface ethernet 1/33 does not exist",
	} {
		if o := run(cmd); !strings.Contains(o.err, want) {
			t.Errorf("%q: %q, want %q", cmd, o.err, want)
		}
	}
	run("interface ethernet 1/1 mtu 9216 force")
	run("interface ethernet 1/1 shutdown")
	// Without force the switch asks, and wants YES.
	if o := c.configCommand("interface ethernet 1/1 module-type qsfp-split-4", false); o.answer != "YES" || !strings.Contains(o.confirm, "the following interfaces will be unmapped: 1/1") {
		t.Errorf("the bare form: %+v", o)
	}
	if o := run("interface ethernet 1/1 module-type qsfp-split-4 force"); o.err != "" {
		t.Fatal(o.err)
	}
	for cmd, want := range map[string]string{
		"interface ethernet 1/1 mtu 9216 force":   "Interface ethernet 1/1 does not exist",
		"interface ethernet 1/1/5 mtu 9216 force": "Interface ethernet 1/1/5 does not exist",
	} {
		if o := run(cmd); !strings.Contains(o.err, want) {
			t.Errorf("split: %q: %q, want %q", cmd, o.err, want)
		}
	}
	for _, cmd := range []string{"interface ethernet 1/1/1-1/1/4 mtu 9216 force", "interface ethernet 1/1/2 description h12@esx-12.example/vmnic4", "interface ethernet 1/2 mtu 9216 force"} {
		if o := run(cmd); o.err != "" {
			t.Errorf("%q: %s", cmd, o.err)
		}
	}
	got := c.render(fixedTime)
	for _, want := range []string{
		"   interface ethernet 1/1 module-type qsfp-split-4 force\n   interface ethernet 1/1/1 mtu 9216 force\n   interface ethernet 1/1/2 mtu 9216 force\n",
		"   interface ethernet 1/1/4 mtu 9216 force\n   interface ethernet 1/2 mtu 9216 force\n",
		"   interface ethernet 1/1/2 description h12@esx-12.example/vmnic4\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("running-config lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "1/1 shutdown") || strings.Contains(got, "interface ethernet 1/1 mtu") {
		t.Errorf("the unmapped parent kept its settings:\n%s", got)
	}
	// Whole again: the lanes go.
	run("interface ethernet 1/1 module-type qsfp force")
	if got := c.render(fixedTime); strings.Contains(got, "1/1/") || strings.Contains(got, "module-type") {
		t.Errorf("after module-type qsfp:\n%s", got)
	}
	// An SN2410's SFP28 ports do not split; its QSFP28 ports do.
	c = newConfig("sw", 56, "3.10.4006")
	c.model = "SN2410"
	run("interface ethernet 1/1 shutdown")
	if o := run("interface ethernet 1/1 module-type qsfp-split-2 force"); !strings.Contains(o.err, "cannot be split to 2 ports on this system") {
		t.Errorf("an SFP port: %q", o.err)
	}
	run("interface ethernet 1/49 shutdown")
	if o := run("interface ethernet 1/49 module-type qsfp-split-2 force"); o.err != "" {
		t.Errorf("a QSFP28 port: %q", o.err)
	}

	// An SN2700's 4x split takes the next port: only an odd port splits
	// 4x, the even port after it is shut down first and then unmapped; 2x
	// takes nothing.
	c = newConfig("sw", 32, "3.10.4006")
	c.model = "SN2700"
	for _, cmd := range []string{"interface ethernet 1/2 shutdown", "interface ethernet 1/3 shutdown", "interface ethernet 1/4 mtu 9216 force", "interface ethernet 1/5 shutdown"} {
		run(cmd)
	}
	for cmd, want := range map[string]string{
		"interface ethernet 1/2 module-type qsfp-split-4 force": "Interface ethernet 1/2 cannot be split to 4 ports on this system",
		"interface ethernet 1/3 module-type qsfp-split-4 force": "Interface ethernet 1/4 must be shut down before 1/3 is split to 4 ports",
	} {
		if o := run(cmd); !strings.Contains(o.err, want) {
			t.Errorf("SN2700: %q: %q, want %q", cmd, o.err, want)
		}
	}
	if o := run("interface ethernet 1/2 module-type qsfp-split-2 force"); o.err != "" {
		t.Errorf("SN2700 2x on an even port: %q", o.err)
	}
	run("interface ethernet 1/4 shutdown")
	if o := c.configCommand("interface ethernet 1/3 module-type qsfp-split-4", false); !strings.Contains(o.confirm, "the following interfaces will be unmapped: 1/3 1/4\r\n") {
		t.Errorf("SN2700 4x asks: %+v", o)
	}
	if o := run("interface ethernet 1/3 module-type qsfp-split-4 force"); o.err != "" {
		t.Fatalf("SN2700 4x on 1/3 with 1/4 shut down: %q", o.err)
	}
	for cmd, want := range map[string]string{
		"interface ethernet 1/4 mtu 9216 force":                 "Interface ethernet 1/4 does not exist",
		"interface ethernet 1/4 module-type qsfp-split-2 force": "Interface ethernet 1/4 does not exist",
		"interface ethernet 1/3/4 mtu 9216 force":               "",
	} {
		if o := run(cmd); o.err != want && !strings.Contains(o.err, want) || want == "" && o.err != "" {
			t.Errorf("SN2700 after 1/3 4x: %q: %q, want %q", cmd, o.err, want)
		}
	}
	if got := c.render(fixedTime); strings.Contains(got, "ethernet 1/4 ") {
		t.Errorf("the unmapped 1/4 kept its settings:\n%s", got)
	}
	run("interface ethernet 1/3 module-type qsfp force")
	if o := run("interface ethernet 1/4 mtu 9216 force"); o.err != "" {
		t.Errorf("1/4 after 1/3 is whole again: %q", o.err)
	}
}

// BFD: the timers, typed in one line or three, print as three lines; a
// session's fall-over needs its neighbor.
func TestBFD(t *testing.T) {
	c := newConfig("sw", 32, "3.10.4006")
	if o := c.configCommand("ip bfd interval min-rx 300 multiplier 3 transmit-rate 300 force", false); o.err != "" {
		t.Fatal(o.err)
	} else {
		o.apply()
	}
	for cmd, want := range map[string]string{
		"ip bfd interval min-rx 10 multiplier 3 transmit-rate 300 force": "Invalid min-rx 10",
		"ip bfd interval multiplier 2":                                   "Invalid multiplier 2",
		"ip bfd interval min-tx 300":                                     `Unrecognized command "min-tx"`,
		"router bgp 65101 vrf default neighbor 10.0.0.1 fall-over bfd":   "BGP instance with AS number 65101 does not exist",
	} {
		if o := c.configCommand(cmd, false); !strings.Contains(o.err, want) {
			t.Errorf("%q: %q, want %q", cmd, o.err, want)
		}
	}
	c.configCommand("router bgp 65101 vrf default", false).apply()
	if o := c.configCommand("router bgp 65101 vrf default neighbor 10.0.0.1 fall-over bfd", false); !strings.Contains(o.err, "Neighbor 10.0.0.1 does not exist") {
		t.Errorf("fall-over before the neighbor: %q", o.err)
	}
	for _, cmd := range []string{"router bgp 65101 vrf default neighbor 10.0.0.1 remote-as 65100", "router bgp 65101 vrf default neighbor 10.0.0.1 fall-over bfd", "ip bfd vrf default interval multiplier 5 force"} {
		if o := c.configCommand(cmd, false); o.err != "" {
			t.Fatalf("%q: %s", cmd, o.err)
		} else {
			o.apply()
		}
	}
	got := c.render(fixedTime)
	for _, want := range []string{
		"##\n## BFD configuration\n##\n   ip bfd vrf default interval min-rx 300 force\n   ip bfd vrf default interval multiplier 5 force\n   ip bfd vrf default interval transmit-rate 300 force\n",
		"   router bgp 65101 vrf default neighbor 10.0.0.1 remote-as 65100\n   router bgp 65101 vrf default neighbor 10.0.0.1 fall-over bfd\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("running-config lacks %q:\n%s", want, got)
		}
	}
}

// rdggen's ONYX file of a leaf with split ports, BFD and descriptions is
// taken line by line by the simulator (module-type after the shutdown
// apply sends), and what the switch then prints plans nothing more.
func TestGeneratedSplitConfigTaken(t *testing.T) {
	b, err := os.ReadFile("../../../testdata/golden/fabric-breakout/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	sw := *inv.Switch("leaf3")
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
	again := onyx.Reconcile(inv, sw, onyx.Parse(c.render(fixedTime)))
	if !again.Empty() {
		t.Errorf("after the apply the switch still lacks %q:\n%s", again.Commands(), c.render(fixedTime))
	}

	// The file, pasted line by line on a clean switch, is taken whole
	// (the split port shut down before its module-type), and leaves
	// nothing to apply.
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
		t.Errorf("after pasting the file the switch still lacks %q", plan.Commands())
	}
}
