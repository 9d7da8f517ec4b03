package inventory

import (
	"strings"
	"testing"
)

// Rail ports are switch ports like rail 0's: a rail on the lanes of a port
// splits it (the mode derived from the highest lane cabled, or the one
// written), each lane's speed follows the mode, and a NIC faster than its
// rail's lane or port is refused at that rail's key.
func TestRailsSplitPorts(t *testing.T) {
	lanes := strings.NewReplacer(
		"{address: 10.0.1.11/24, switch: leaf1, port: swp1,", "{address: 10.0.1.11/24, switch: leaf1, port: swp1s0,",
		"{address: 10.0.1.12/24, switch: leaf1, port: swp2,", "{address: 10.0.1.12/24, switch: leaf1, port: swp1s1,").Replace(railsYAML)
	inv, err := Load("rl.yaml", []byte(lanes))
	if err != nil {
		t.Fatal(err)
	}
	leaf0, leaf1 := inv.Switch("leaf0"), inv.Switch("leaf1")
	if got := leaf1.SplitPorts(); len(got) != 1 || got[0] != 1 || leaf1.Breakout(1) != 2 {
		t.Errorf("leaf1 split ports %v, swp1 %dx; want swp1 2x from rail 1's lanes", got, leaf1.Breakout(1))
	}
	if got := leaf1.PortSpeedGbps(Port{Module: 1, Number: 1, Lane: 1}); got != 400 {
		t.Errorf("leaf1 swp1s0 runs %d Gb/s, want 400 (SN5600 800G split 2x)", got)
	}
	if len(leaf0.SplitPorts()) != 0 {
		t.Errorf("leaf0 split ports %v: rail 0 is on whole ports", leaf0.SplitPorts())
	}

	for _, c := range []struct {
		name  string
		edits []string // old, new pairs applied to lanes
		want  string   // one finding of the report
	}{
		{"a rail's lane slower than its NIC",
			[]string{"port: swp1s1,", "port: swp1s2,"},
			"rl.yaml:25:54: hosts[0].data[1].port: swp1s0: leaf1 swp1 breaks out 4x (swp1s2, the highest lane cabled, needs 4x), so each of its lanes runs 200 Gb/s (SN5600: 800 Gb/s split 4 ways), but a's NIC runs 400 Gb/s (defaults.nic.speed_gbps): cable 400 Gb/s hosts to the lanes of a 2x port, or set speed_gbps to 200"},
		{"a rail's lane beyond the mode written",
			[]string{"{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 2x}}", "port: swp1s1,", "port: swp1s2,"},
			"hosts[1].data[1].port: mixed modes on one port: swp1s2 (rail 1 of hosts[1] (b)) is lane 3 of swp1, but switches[2].breakout.swp1 splits swp1 2x"},
		{"an uplink on the parent of a rail's lanes",
			[]string{"{switch: leaf1, port: swp64,", "{switch: leaf1, port: swp1,"},
			"fabric.links[1].port: an uplink on a split port: leaf1 swp1 is fabric.links[1] (the uplink to spine)'s, but its lanes carry rail 1 of hosts[0] (a), rail 1 of hosts[1] (b)"},
		{"a rail's whole port slower than its NIC",
			[]string{"{name: leaf1, model: SN5600,", "{name: leaf1, model: SN3700,", "{switch: leaf1, port: swp64,", "{switch: leaf1, port: swp32,",
				"port: swp1s0,", "port: swp1,", "port: swp1s1,", "port: swp2,"},
			"defaults.nic.speed_gbps: 400 Gb/s is above SN3700's 200 Gb/s per port (switch leaf1, rail 1's port of hosts[0] a): set speed_gbps to the speed the link runs at, at most 200"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := lanes
			for i := 0; i < len(c.edits); i += 2 {
				if !strings.Contains(src, c.edits[i]) {
					t.Fatalf("%q not in the inventory", c.edits[i])
				}
				src = strings.Replace(src, c.edits[i], c.edits[i+1], 1)
			}
			_, err := Load("rl.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got\n%v\nwant a finding\n%s", err, c.want)
			}
		})
	}
}

// Every rail's port is described: in an inventory of several rails, the
// VM at its ESXi host and the rail's own PF, then the rail; rdggen knows
// the form as its own. An inventory of one rail keeps the form without
// the rail.
func TestRailsPortDescriptions(t *testing.T) {
	inv, err := Load("rl.yaml", []byte(railsYAML))
	if err != nil {
		t.Fatal(err)
	}
	for sw, want := range map[string]map[Port]string{
		"leaf0": {{1, 1, 0}: "a@esx-a/vmnic4:rail0", {1, 2, 0}: "b@esx-b/vmnic4:rail0", {1, 64, 0}: "spine:swp1"},
		"leaf1": {{1, 1, 0}: "a@esx-a/vmnic5:rail1", {1, 2, 0}: "b@esx-b/vmnic5:rail1", {1, 64, 0}: "spine:swp2"},
		"spine": {{1, 1, 0}: "leaf0:swp64", {1, 2, 0}: "leaf1:swp64"},
	} {
		got := inv.PortDescriptions(sw)
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", sw, got, want)
		}
		for p, d := range want {
			if got[p] != d {
				t.Errorf("%s %s: %q, want %q", sw, p, got[p], d)
			}
			if !IsPortDescription(d) {
				t.Errorf("%q is not rdggen's own form", d)
			}
		}
	}
	one, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range one.PortDescriptions("sw1") {
		if strings.Contains(d, ":rail") {
			t.Errorf("one rail: %q names a rail", d)
		}
	}
	for _, s := range []string{"a@esx-a/vmnic5:rail", "a@esx-a/vmnic5:rail10", "a@esx-a/vmnic5 rail1", "a@esx-a/vmnic5:r1"} {
		if IsPortDescription(s) {
			t.Errorf("%q taken as rdggen's own", s)
		}
	}
}
