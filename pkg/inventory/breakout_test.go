package inventory

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// sn5600YAML is a Cumulus SN5600 leaf with 200G ConnectX-7 hosts on the
// lanes of swp1 and an 800G uplink; the tests edit it.
const sn5600YAML = `name: s4
switches:
  - {name: spine1, model: SN5600, cumulus: 5.9.1, role: spine}
  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf1, port: swp64, peer: spine1, peer_port: swp1}
defaults:
  os: ubuntu-22.04
  data_interface: enp1f0
  gpus: [{model: H100-PCIE-80GB, memory_gb: 80, bar1_gb: 128}]
  nic: {model: ConnectX-7, pf: vmnic4, vfs: 4, speed_gbps: 200}
hosts:
  - {name: h1, esxi: e1, data: {address: 10.1.1.11/24, switch: leaf1, port: swp1s0}}
  - {name: h2, esxi: e2, data: {address: 10.1.1.12/24, switch: leaf1, port: swp1s1}}
  - {name: h3, esxi: e3, data: {address: 10.1.1.13/24, switch: leaf1, port: swp1s2}}
`

// The breakout mode is derived from the highest lane cabled (the smallest
// mode of the model that holds it), or written in switches[].breakout, and
// every lane's speed follows the mode: 400G at 2x, 200G at 4x, 100G at 8x
// on an SN5600.
func TestBreakoutDerived(t *testing.T) {
	inv, err := Load("s4.yaml", []byte(sn5600YAML))
	if err != nil {
		t.Fatal(err)
	}
	leaf := inv.Switch("leaf1")
	if got := leaf.Breakout(1); got != Breakout4x {
		t.Errorf("swp1 with lanes s0–s2 cabled: breakout %d, want 4 (lane s2 needs 4x)", got)
	}
	if leaf.Breakout(64) != 0 || len(leaf.SplitPorts()) != 1 {
		t.Errorf("only swp1 is split: %v", leaf.Breakouts)
	}
	for lane, want := range map[int]int{1: 200, 2: 200, 3: 200} {
		if got := leaf.PortSpeedGbps(Port{1, 1, lane}); got != want {
			t.Errorf("lane %d of a 4x SN5600 port: %d Gb/s, want %d (the mode sets every lane's speed)", lane, got, want)
		}
	}
	if got := leaf.LanesPerPort(Breakout4x); got != 2 {
		t.Errorf("lanes-per-port of 4x on an SN5600: %d, want 2", got)
	}
	// Two lanes: 2x at 400G each (the golden fabric's two 400G hosts).
	two := strings.Replace(sn5600YAML, "  - {name: h3, esxi: e3, data: {address: 10.1.1.13/24, switch: leaf1, port: swp1s2}}\n", "", 1)
	two = strings.Replace(two, "speed_gbps: 200", "speed_gbps: 400", 1)
	inv, err = Load("s4.yaml", []byte(two))
	if err != nil {
		t.Fatal(err)
	}
	if l := inv.Switch("leaf1"); l.Breakout(1) != Breakout2x || l.PortSpeedGbps(Port{1, 1, 2}) != 400 {
		t.Errorf("two lanes: %dx at %d Gb/s, want 2x at 400", l.Breakout(1), l.PortSpeedGbps(Port{1, 1, 2}))
	}
	// Written: 8x on swp57 with nothing cabled, and 4x where two lanes
	// would have made 2x.
	written := strings.Replace(two, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp57: 8x, swp1: 4x}}", 1)
	written = strings.Replace(written, "speed_gbps: 400", "speed_gbps: 200", 1)
	inv, err = Load("s4.yaml", []byte(written))
	if err != nil {
		t.Fatal(err)
	}
	if l := inv.Switch("leaf1"); l.Breakout(57) != Breakout8x || l.Breakout(1) != Breakout4x || l.PortSpeedGbps(Port{1, 57, 8}) != 100 || l.LanesPerPort(8) != 1 {
		t.Errorf("written: %v, swp57s7 at %d Gb/s", l.Breakouts, l.PortSpeedGbps(Port{1, 57, 8}))
	}
	// swp57's 8x takes swp58; swp1's 4x takes nothing.
	if l := inv.Switch("leaf1"); fmt.Sprint(l.DisabledPorts()) != "[58]" || l.DisabledBy(58) != 57 || l.DisabledBy(2) != 0 || !l.Blocks(8) || l.Blocks(4) {
		t.Errorf("disabled ports: %v, DisabledBy(58) %d", l.DisabledPorts(), l.DisabledBy(58))
	}
	// The golden fabric's inventory: 2x.
	src, err := os.ReadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if inv, err = Load("fc.yaml", src); err != nil || inv.Switch("leaf1").Breakout(1) != Breakout2x {
		t.Fatalf("fabric-cumulus: %v", err)
	}
}

// Each refused layout gets its own finding at file:line:col.
func TestBreakoutFindings(t *testing.T) {
	h3 := "  - {name: h3, esxi: e3, data: {address: 10.1.1.13/24, switch: leaf1, port: swp1s2}}\n"
	leaf := "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}"
	for _, tc := range []struct {
		name  string
		edits []string // old, new, …
		want  string
	}{
		{"400G hosts on lanes of a 4x port", []string{"speed_gbps: 200", "speed_gbps: 400"},
			"s4.yaml:14:77: hosts[0].data.port: swp1s0: leaf1 swp1 breaks out 4x (swp1s2, the highest lane cabled, needs 4x), so each of its lanes runs 200 Gb/s (SN5600: 800 Gb/s split 4 ways), but h1's NIC runs 400 Gb/s (defaults.nic.speed_gbps): cable 400 Gb/s hosts to the lanes of a 2x port, or set speed_gbps to 200"},
		{"400G hosts on a port written 4x", []string{"speed_gbps: 200", "speed_gbps: 400", h3, "", leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 4x}}"},
			"s4.yaml:14:77: hosts[0].data.port: swp1s0: leaf1 swp1 breaks out 4x (switches[1].breakout.swp1 says so), so each of its lanes runs 200 Gb/s"},
		{"8x on a model without it", []string{leaf, "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, breakout: {swp3: 8x}}", "port: swp64,", "port: swp32,", "speed_gbps: 200", "speed_gbps: 50"},
			"s4.yaml:4:79: switches[1].breakout.swp3: 8x: SN3700 ports break out 2x or 4x; 8x needs SN4700, SN5400 or SN5600 ports"},
		{"a lane that needs 8x on a model without it", []string{leaf, "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "port: swp64,", "port: swp32,", "port: swp1s2}}", "port: swp1s4}}", "speed_gbps: 200", "speed_gbps: 25"},
			"s4.yaml:16:77: hosts[2].data.port: swp1s4 (hosts[2] (h3)) is lane 5 of swp1: SN3700 ports break out 2x or 4x, 4 lanes at most (swp1s0–swp1s3); 8x needs SN4700, SN5400 or SN5600 ports"},
		// A split that takes the next port (the SN5600's 8x): only on an
		// odd port, and the even port after it carries nothing.
		{"8x on an even port", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp2: 8x}}", "speed_gbps: 200", "speed_gbps: 100"},
			"s4.yaml:4:79: switches[1].breakout.swp2: leaf1 swp2 breaks out 8x, but on the SN5600 a 8x port takes the next port's logical ports, so only odd-numbered ports split 8x"},
		{"a host on the port an 8x split disables", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 8x}}", "port: swp1s2}}", "port: swp2}}", "speed_gbps: 200", "speed_gbps: 100"},
			"s4.yaml:16:77: hosts[2].data.port: leaf1 swp2 is disabled: swp1's 8x breakout disables it (on the SN5600 a port split 8x takes the next port's logical ports; NVIDIA: \"disable the subsequent even-numbered port\"); cable hosts[2] (h3) to another port"},
		{"a lane of the port an 8x split disables", []string{"port: swp1s2}}", "port: swp1s5}}", "port: swp1s1}}", "port: swp2s0}}", "speed_gbps: 200", "speed_gbps: 100"},
			"hosts[1].data.port: leaf1 swp2s0 is disabled: swp1's 8x breakout disables it"},
		{"an uplink on the port an SN2700's 4x disables", []string{"model: SN5600, cumulus: 5.9.1, role: leaf}", "model: SN2700, cumulus: 5.9.1, role: leaf}", "port: swp64,", "port: swp2,", "speed_gbps: 200", "speed_gbps: 25"},
			"s4.yaml:7:29: fabric.links[0].port: leaf1 swp2 is disabled: swp1's 4x breakout disables it (on the SN2700 a port split 4x takes the next port's logical ports"},
		{"a written split of the disabled port", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 8x, swp2: 2x}}", "speed_gbps: 200", "speed_gbps: 100"},
			"switches[1].breakout.swp2: leaf1 swp2 is disabled: swp1's 8x breakout disables it"},
		{"8x under ONYX", []string{"model: SN5600, cumulus: 5.9.1, role: leaf}", "model: SN4700, onyx: 3.10.4006, role: leaf, breakout: {1/3: 8x}}", "port: swp64,", "port: 1/32,",
			"port: swp1s0}}", "port: 1/1/1}}", "port: swp1s1}}", "port: 1/1/2}}", "port: swp1s2}}", "port: 1/1/3}}", "speed_gbps: 200", "speed_gbps: 100"},
			"switches[1].breakout.1/3: 8x: SN4700 ports break out 2x or 4x; 8x needs Cumulus Linux on SN4700, SN5400 or SN5600 ports"},
		{"an uplink on a split parent", []string{"port: swp64, peer: spine1", "port: swp1, peer: spine1"},
			"s4.yaml:7:29: fabric.links[0].port: an uplink on a split port: leaf1 swp1 is fabric.links[0] (the uplink to spine1)'s, but its lanes carry hosts[0] (h1), hosts[1] (h2), hosts[2] (h3); a split port's parent carries no traffic of its own"},
		{"an uplink on a port written split", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp64: 2x}}"},
			"s4.yaml:7:29: fabric.links[0].port: an uplink on a split port: leaf1 swp64 is fabric.links[0] (the uplink to spine1)'s, but switches[1].breakout.swp64 splits it 2x"},
		{"mixed modes on one port (two spellings)", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 4x, 1/1: 8x}}"},
			"s4.yaml:4:79: switches[1].breakout.swp1: mixed modes on one port: swp1 is 4x here and 8x at switches[1].breakout.1/1"},
		{"mixed modes on one port (a lane past the mode)", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: 2x}}"},
			"s4.yaml:16:77: hosts[2].data.port: mixed modes on one port: swp1s2 (hosts[2] (h3)) is lane 3 of swp1, but switches[1].breakout.swp1 splits swp1 2x (lanes swp1s0–swp1s1); write swp1: 4x there, or cable it to lanes of 2x"},
		{"a lane as a breakout key", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1s0: 4x}}"},
			"switches[1].breakout.swp1s0: swp1s0 is a lane of a split port: switches[].breakout names the port that splits (swp1)"},
		{"not a mode", []string{leaf, "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, breakout: {swp1: four}}"},
			`switches[1].breakout.swp1: "four" is not a breakout mode: write 2x, 4x or 8x`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := sn5600YAML
			for i := 0; i+1 < len(tc.edits); i += 2 {
				if !strings.Contains(src, tc.edits[i]) {
					t.Fatalf("%q is not in sn5600YAML", tc.edits[i])
				}
				src = strings.Replace(src, tc.edits[i], tc.edits[i+1], 1)
			}
			_, err := Load("s4.yaml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q, got:\n%v", tc.want, err)
			}
		})
	}
	// A lane no model has (swp1s8, lane 9) is one finding, the lane range
	// of every model, not a second that asks for a 16x model.
	src := strings.Replace(sn5600YAML, "port: swp1s2}}", "port: swp1s8}}", 1)
	_, err := Load("s4.yaml", []byte(src))
	rep, _ := err.(*Report)
	if rep == nil || len(rep.Findings) != 1 || rep.Findings[0].String() != "s4.yaml:16:77: hosts[2].data.port: swp1s8: a split port has lanes 1–8 (Cumulus s0–s7): Spectrum ports break out into 2, 4 or 8" {
		t.Errorf("lane 9: want its one finding, got:\n%v", err)
	}
	// SFP ports do not split.
	src = strings.Replace(baseYAML, "model: SN2100", "model: SN2410", 1)
	src = strings.Replace(src, "port: 1/1}", "port: 1/1/1}", 1)
	if _, err := Load("mini.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "hosts[0].data.port: sw1 1/1 does not split: of the SN2410 only ports 1/49–1/56 break out") {
		t.Errorf("a lane of an SFP port: %v", err)
	}
	src = strings.Replace(src, "port: 1/1/1}", "port: 1/49/1}", 1)
	src = strings.Replace(src, "vfs: 8}", "vfs: 8, speed_gbps: 50}", 1)
	if inv, err := Load("mini.yaml", []byte(src)); err != nil || inv.Switches[0].Breakout(49) != Breakout2x || inv.Switches[0].PortSpeedGbps(Port{1, 49, 1}) != 50 {
		t.Errorf("a lane of a QSFP28 port of an SN2410: %v", err)
	}
}

// ONYX does not run on Spectrum-4.
func TestONYXModels(t *testing.T) {
	for _, m := range []string{"SN5400", "SN5600"} {
		src := strings.Replace(baseYAML, "model: SN2100", "model: "+m, 1)
		if _, err := Load("mini.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "mini.yaml:3:38: switches[0].onyx: ONYX does not run on the "+m+" (Spectrum-4)") {
			t.Errorf("%s on ONYX: %v", m, err)
		}
	}
	if _, err := Load("mini.yaml", []byte(strings.Replace(baseYAML, "model: SN2100", "model: SN4700", 1))); err != nil {
		t.Errorf("ONYX on an SN4700: %v", err)
	}
}

// The fabric's pools and ASNs: outside the special ranges, no loopback in
// the /31 pool, every ASN a router may have, and a warning for one that
// is not private.
func TestFabricPools(t *testing.T) {
	for _, tc := range []struct{ name, old, new, want string }{
		{"loopbacks in 127/8", "fabric:\n", "fabric:\n  loopbacks: 127.1.0.0/24\n",
			"fab.yaml:8:14: fabric.loopbacks: 127.1.0.0/24 overlaps 127.0.0.0/8 (loopback): the fabric's loopbacks and /31s are addresses the switches route"},
		{"p2p in 0/8", "fabric:\n", "fabric:\n  p2p: 0.0.0.0/16\n", "fabric.p2p: 0.0.0.0/16 overlaps 0.0.0.0/8 (this network)"},
		{"p2p in 224/4", "fabric:\n", "fabric:\n  p2p: 230.0.0.0/16\n", "fabric.p2p: 230.0.0.0/16 overlaps 224.0.0.0/4 (multicast)"},
		{"loopbacks in 240/4", "fabric:\n", "fabric:\n  loopbacks: 255.255.255.0/24\n", "fabric.loopbacks: 255.255.255.0/24 overlaps 240.0.0.0/4 (reserved)"},
		{"a written loopback: the broadcast address", "role: spine}\n  - {name: spine2", "role: spine, loopback: 255.255.255.255}\n  - {name: spine2",
			"switches[0].loopback: 255.255.255.255 is in 240.0.0.0/4 (reserved), not an address the fabric can route"},
		{"a loopback inside the /31 pool", "role: spine}\n  - {name: spine2", "role: spine, loopback: 10.254.0.9}\n  - {name: spine2",
			"switches[0].loopback: 10.254.0.9 is inside fabric.p2p (10.254.0.0/16): a loopback is an address of its own"},
		{"derived leaf ASN past the last", "fabric:\n", "fabric:\n  leaf_asn: 4294967294\n",
			"fabric.leaf_asn: leaf2's ASN would be 4294967295 (fabric.leaf_asn 4294967294 plus the leaf's place among the leaves), past 4294967294"},
		{"AS_TRANS", "fabric:\n", "fabric:\n  spine_asn: 23456\n", "fabric.spine_asn: spine1's ASN would be 23456 (the spines' fabric.spine_asn), AS_TRANS"},
		{"65535 derived", "fabric:\n", "fabric:\n  leaf_asn: 65534\n", "fabric.leaf_asn: leaf2's ASN would be 65535 (fabric.leaf_asn 65534 plus the leaf's place among the leaves), which is reserved (RFC 7300)"},
		{"65535 written", "cumulus: 5.9.1, role: leaf}\n  - {name: leaf2", "cumulus: 5.9.1, role: leaf, asn: 65535}\n  - {name: leaf2",
			"switches[2].asn: leaf1's ASN would be 65535 (switches[].asn), which is reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(fabricYAML, tc.old) {
				t.Fatalf("%q is not in fabricYAML", tc.old)
			}
			_, err := Load("fab.yaml", []byte(strings.Replace(fabricYAML, tc.old, tc.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want %q, got:\n%v", tc.want, err)
			}
		})
	}
	// A public ASN: a warning, once per key, not a finding.
	inv, err := Load("fab.yaml", []byte(strings.Replace(fabricYAML, "fabric:\n", "fabric:\n  leaf_asn: 3356\n  spine_asn: 4200000000\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var ws []string
	for _, w := range inv.Warnings {
		ws = append(ws, w.String())
	}
	got := strings.Join(ws, "\n")
	if want := "fab.yaml:8:13: fabric.leaf_asn: leaf1's ASN 3356 (fabric.leaf_asn 3356 plus the leaf's place among the leaves) is not a private AS number (RFC 6996: 64512–65534, 4200000000–4294967294)"; !strings.Contains(got, want) || strings.Count(got, "is not a private AS number") != 1 {
		t.Errorf("warnings: want %q once, got:\n%s", want, got)
	}
}
