package inventory

import (
	"net/netip"
	"os"
	"strings"
	"testing"
)

// fabricYAML is a 2 x 2 Cumulus fabric with two hosts per leaf; the
// tests edit it one rule at a time.
const fabricYAML = `name: fab
switches:
  - {name: spine1, model: SN3700, cumulus: 5.9.1, role: spine}
  - {name: spine2, model: SN3700, cumulus: 5.9.1, role: spine}
  - {name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}
  - {name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf1, port: swp31, peer: spine1, peer_port: swp1}
    - {switch: leaf1, port: swp32, peer: spine2, peer_port: swp1}
    - {switch: leaf2, port: swp31, peer: spine1, peer_port: swp2}
    - {switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}
defaults:
  os: ubuntu-22.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - {name: a, esxi: ea, data: {address: 10.1.1.11/24, switch: leaf1, port: swp1}}
  - {name: b, esxi: eb, data: {address: 10.1.1.12/24, switch: leaf1, port: swp2}}
  - {name: c, esxi: ec, data: {address: 10.1.2.21/24, switch: leaf2, port: swp1}}
  - {name: d, esxi: ed, data: {address: 10.1.2.22/24, switch: leaf2, port: swp2}}
`

func TestFabricDerives(t *testing.T) {
	inv, err := Load("fab.yaml", []byte(fabricYAML))
	if err != nil {
		t.Fatal(err)
	}
	if !inv.IsFabric() || len(inv.Leaves()) != 2 || len(inv.Spines()) != 2 {
		t.Fatalf("fabric %v, leaves %d, spines %d", inv.IsFabric(), len(inv.Leaves()), len(inv.Spines()))
	}
	want := map[string]struct {
		asn     int
		lo      string
		subnet  string
		gateway string
	}{
		"spine1": {65100, "10.10.10.1", "invalid Prefix", "invalid IP"},
		"spine2": {65100, "10.10.10.2", "invalid Prefix", "invalid IP"},
		"leaf1":  {65101, "10.10.10.3", "10.1.1.0/24", "10.1.1.254"},
		"leaf2":  {65102, "10.10.10.4", "10.1.2.0/24", "10.1.2.254"},
	}
	for _, sw := range inv.Switches {
		w := want[sw.Name]
		f := sw.Fabric
		if f.ASN != w.asn || f.Loopback.String() != w.lo || f.Subnet.String() != w.subnet || f.Gateway.String() != w.gateway {
			t.Errorf("%s: AS %d lo %s subnet %s gw %s, want %+v", sw.Name, f.ASN, f.Loopback, f.Subnet, f.Gateway, w)
		}
	}
	if inv.Docker.Routing != RoutingSwitch || inv.GatewaySwitch() != nil || inv.Docker.Gateway.IsValid() {
		t.Errorf("routing %q, gateway switch %v, docker.gateway %v: a fabric routes the pool at each leaf", inv.Docker.Routing, inv.GatewaySwitch(), inv.Docker.Gateway)
	}
	// All-Cumulus links are unnumbered; Uplinks orients each from the switch asked.
	ups := inv.Uplinks("spine2")
	if len(ups) != 2 || ups[0].Peer.Name != "leaf1" || ups[0].Port != (Port{1, 1, 0}) || ups[0].PeerPort != (Port{1, 32, 0}) || ups[0].Numbered {
		t.Errorf("spine2 uplinks %+v", ups)
	}
	// 2 hosts x 100 Gb/s down, 2 x 200 Gb/s up (SN3700 ports).
	if d, u := inv.Oversubscription("leaf1"); d != 200 || u != 400 {
		t.Errorf("leaf1 oversubscription %d:%d, want 200:400", d, u)
	}
	if got := inv.OtherLeafSubnets(&inv.Hosts[0]); len(got) != 1 || got[0] != netip.MustParsePrefix("10.1.2.0/24") {
		t.Errorf("other leaves of a: %v", got)
	}
	if len(inv.Warnings) != 0 {
		t.Errorf("warnings: %v", inv.Warnings)
	}
}

// An ONYX end makes a link numbered: a /31 from fabric.p2p by the link's
// position, the lower address at the end written first.
func TestFabricNumberedLinks(t *testing.T) {
	src := strings.Replace(fabricYAML, "{name: spine2, model: SN3700, cumulus: 5.9.1, role: spine}", "{name: spine2, model: SN2700, onyx: 3.10.4006, role: spine}", 1)
	src = strings.Replace(src, "peer: spine2, peer_port: swp1}", "peer: spine2, peer_port: 1/1}", 1)
	src = strings.Replace(src, "peer: spine2, peer_port: swp2}", "peer: spine2, peer_port: 1/2}", 1)
	inv, err := Load("fab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range inv.Fabric.Links {
		got = append(got, l.Net.String())
	}
	if strings.Join(got, " ") != "invalid Prefix 10.254.0.2/31 invalid Prefix 10.254.0.6/31" {
		t.Errorf("link nets %q", got)
	}
	u := inv.Uplinks("leaf2")[1]
	if !u.Numbered || u.Local.String() != "10.254.0.6/31" || u.Remote.String() != "10.254.0.7/31" {
		t.Errorf("leaf2's ONYX uplink %+v", u)
	}
}

// Every fabric rule: one edit of fabricYAML, and the finding (or
// warning) with its file:line:col, path and rule.
func TestFabricFindings(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           string // a substring of the report (or of a warning)
		warning        bool
	}{
		{"port in two links", "{switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}", "{switch: leaf2, port: swp32, peer: spine2, peer_port: swp1}",
			"fab.yaml:12:61: fabric.links[3].peer_port: spine2 swp1 is also fabric.links[1]: a port carries one link or one host", false},
		{"link written twice", "{switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}", "{switch: spine2, port: swp1, peer: leaf1, peer_port: swp32}",
			"fabric.links[3].port: spine2 swp1 is also fabric.links[1]", false},
		{"host port as uplink", "{switch: leaf1, port: swp31,", "{switch: leaf1, port: swp1,",
			"fab.yaml:9:29: fabric.links[0].port: leaf1 swp1 is also hosts[0]'s (a) data port: a port carries one link or one host", false},
		{"port outside the model", "port: swp31, peer: spine1, peer_port: swp1}", "port: swp33, peer: spine1, peer_port: swp1}",
			"fabric.links[0].port: swp33 is outside SN3700 ports swp1-swp32 (1/1-1/32)", false},
		{"ONYX spelling on Cumulus end", "peer: spine1, peer_port: swp2}", "peer: spine1, peer_port: 1/2/7}",
			"fab.yaml:11:61: fabric.links[2].peer_port: swp2s6 (fabric.links[2] (the uplink to leaf2)) is lane 7 of swp2: SN3700 ports break out 2x or 4x, 4 lanes at most (swp2s0–swp2s3); 8x needs SN4700, SN5400 or SN5600 ports", false},
		{"leaf to leaf", "{switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}", "{switch: leaf2, port: swp32, peer: leaf1, peer_port: swp30}",
			"fabric.links[3].peer: leaf2 and leaf1 are both leaves: a two-tier fabric cables each leaf to the spines", false},
		{"leaf not on every spine", "    - {switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}\n", "",
			"fab.yaml:6:5: switches[3]: leaf leaf2 has no link to spine(s) spine2 in fabric.links", true},
		{"host outside its leaf's subnet", "10.1.2.22/24", "10.1.1.22/24",
			"hosts[3].data.address: 10.1.1.22/24 is not on leaf2's data subnet 10.1.2.0/24 (taken from c's data address, hosts[2], the first host cabled to it; switches[3].subnet sets it)", false},
		{"duplicate ASN", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf, asn: 65101}",
			"fab.yaml:6:67: switches[3].asn: ASN 65101 is also leaf1's (switches[2])", false},
		{"leaf ASN of the spines", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf, asn: 65100}",
			"switches[3].asn: ASN 65100 is also spine1's (switches[0])", false},
		{"duplicate loopback", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf, loopback: 10.10.10.3}",
			"switches[3].loopback: 10.10.10.3 is also leaf1's (switches[2]) loopback", false},
		{"routing: hosts refused", "defaults:", "docker: {routing: hosts}\ndefaults:",
			"docker.routing: routing: hosts routes each host's container subnet via that host's data address, which needs every host on one L2 data network", false},
		{"docker.gateway refused", "defaults:", "docker: {gateway: 10.1.1.1}\ndefaults:",
			"docker.gateway: in a fabric each leaf is the gateway of its own hosts", false},
		{"host on a spine", "switch: leaf2, port: swp2}", "switch: spine2, port: swp20}",
			"hosts[3].data.switch: spine2 is a spine: hosts are cabled to leaves", false},
		{"switch without a role", "{name: spine2, model: SN3700, cumulus: 5.9.1, role: spine}", "{name: spine2, model: SN3700, cumulus: 5.9.1}",
			"fab.yaml:4:5: switches[1]: has no role: in a fabric every switch is role: leaf or role: spine", false},
		{"gateway is a host", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, gateway: 10.1.1.12}",
			"switches[2].gateway: the gateway 10.1.1.12 of leaf1 is hosts[1]'s (b) data address", false},
		{"leaf subnets overlap", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf, subnet: 10.1.0.0/16}",
			"switches[3].subnet: leaf2's data subnet 10.1.0.0/16 overlaps leaf1's (switches[2]) 10.1.1.0/24", false},
		{"pool overlaps a leaf subnet", "defaults:", "docker: {pool: 10.0.0.0/8}\ndefaults:",
			"overlaps docker.pool (10.0.0.0/8)", false},
		{"oversubscribed leaf", "  - {name: b, esxi: eb, data: {address: 10.1.1.12/24, switch: leaf1, port: swp2}}\n",
			"  - {name: b, esxi: eb, data: {address: 10.1.1.12/24, switch: leaf1, port: swp2}}\n" +
				"  - {name: b3, esxi: eb3, data: {address: 10.1.1.13/24, switch: leaf1, port: swp3}}\n" +
				"  - {name: b4, esxi: eb4, data: {address: 10.1.1.14/24, switch: leaf1, port: swp4}}\n" +
				"  - {name: b5, esxi: eb5, data: {address: 10.1.1.15/24, switch: leaf1, port: swp5}}\n",
			"fab.yaml:5:5: switches[2]: leaf leaf1 is oversubscribed 1.2:1: 500 Gb/s towards its hosts, 400 Gb/s towards the spines", true},
		{"role typo", "cumulus: 5.9.1, role: spine}\n  - {name: spine2", "cumulus: 5.9.1, role: spin}\n  - {name: spine2",
			"fab.yaml:3:57: switches[0].role: \"spin\" is neither \"leaf\"", false},
		{"in-band mgmt in a leaf subnet", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, mgmt: 10.1.2.200}",
			"switches[2].mgmt: 10.1.2.200 is inside switches[3].subnet (10.1.2.0/24), which the fabric routes: apply reaches leaf1 at this address while it changes those routes and addresses, and would cut its own path", false},
		{"in-band mgmt on a loopback", "{name: spine1, model: SN3700, cumulus: 5.9.1, role: spine}", "{name: spine1, model: SN3700, cumulus: 5.9.1, role: spine, mgmt: '10.10.10.1:8765'}",
			"switches[0].mgmt: 10.10.10.1 is inside fabric.loopbacks (10.10.10.0/24)", false},
		{"ports: all on Cumulus", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf, ports: all}",
			"switches[2].ports: all: Cumulus Linux's `qos roce` is switch-global", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(fabricYAML, tc.old) {
				t.Fatalf("%q is not in fabricYAML", tc.old)
			}
			src := strings.Replace(fabricYAML, tc.old, tc.new, 1)
			inv, err := Load("fab.yaml", []byte(src))
			if tc.warning {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				var ws []string
				for _, w := range inv.Warnings {
					ws = append(ws, w.String())
				}
				if !strings.Contains(strings.Join(ws, "\n"), tc.want) {
					t.Errorf("warnings lack %q:\n%s", tc.want, strings.Join(ws, "\n"))
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("report lacks %q:\n%v", tc.want, err)
			}
		})
	}
}

// An inventory with one switch and no roles is no fabric, and fabric keys
// without roles are refused, each at its key.
func TestFabricKeysNeedRoles(t *testing.T) {
	inv, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil || inv.IsFabric() || len(inv.Fabric.Links) != 0 {
		t.Fatalf("base: %v, fabric %v", err, inv != nil && inv.IsFabric())
	}
	src := strings.Replace(baseYAML, "onyx: 3.6.8190}", "onyx: 3.6.8190, asn: 65001}", 1)
	if _, err := Load("mini.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "mini.yaml:3:53: switches[0].asn: is a fabric key, and this switch has no role") {
		t.Errorf("asn without role: %v", err)
	}
	src = strings.Replace(baseYAML, "docker:", "fabric: {links: []}\ndocker:", 1)
	if _, err := Load("mini.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "fabric: is set, but no switch has a role") {
		t.Errorf("fabric without roles: %v", err)
	}
}

// Breakout ports: a lane's speed is its share of the port's, and a NIC
// faster than its lane is refused; swpNsM and 1/N/M name the same lane.
func TestBreakoutPorts(t *testing.T) {
	for _, tc := range []struct{ in, onyx, cumulus string }{
		{"swp1s0", "1/1/1", "swp1s0"}, {"swp64s3", "1/64/4", "swp64s3"}, {"1/2/2", "1/2/2", "swp2s1"}, {"swp7", "1/7", "swp7"},
	} {
		p, _, ok := parsePort(tc.in)
		cl := Switch{Cumulus: MustVersion("5.9.1")}
		if !ok || p.String() != tc.onyx || cl.PortName(p) != tc.cumulus {
			t.Errorf("%s: %v %s %s", tc.in, ok, p, cl.PortName(p))
		}
	}
	sw := Switch{Model: "SN5600"}
	if a, b, c := sw.PortSpeedGbps(Port{1, 1, 0}), sw.PortSpeedGbps(Port{1, 1, 2}), sw.PortSpeedGbps(Port{1, 1, 4}); a != 800 || b != 400 || c != 200 {
		t.Errorf("SN5600 speeds %d %d %d", a, b, c)
	}
	src, err := os.ReadFile("../../testdata/golden/fabric-cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load("fc.yaml", src); err != nil {
		t.Fatalf("the 400G-on-800G breakout fabric: %v", err)
	}
	fast := strings.Replace(string(src), "speed_gbps: 400", "speed_gbps: 800", 1)
	fast = strings.Replace(fast, "ConnectX-7", "ConnectX-8", 1)
	if _, err := Load("fc.yaml", []byte(fast)); err == nil || !strings.Contains(err.Error(), "fc.yaml:36:90: hosts[0].data.port: swp1s0: leaf1 swp1 breaks out 2x (swp1s1, the highest lane cabled, needs 2x), so each of its lanes runs 400 Gb/s (SN5600: 800 Gb/s split 2 ways), but h11's NIC runs 800 Gb/s (defaults.nic.speed_gbps): cable 800 Gb/s hosts to a whole port, or set speed_gbps to 400") {
		t.Errorf("800G NIC on a 2-lane breakout: %v", err)
	}
}

// Today's hardware: a 400 Gb/s ConnectX-7 inventory on an SN5600 loads.
func TestModelTables(t *testing.T) {
	for _, nic := range []struct {
		model string
		speed int
	}{{"ConnectX-7", 400}, {"BlueField-3", 400}, {"ConnectX-8", 800}} {
		if n := (NIC{Model: nic.model}); n.MaxSpeedGbps() != nic.speed || n.MaxVFs() != 127 {
			t.Errorf("%s: %d Gb/s, %d VFs", nic.model, n.MaxSpeedGbps(), n.MaxVFs())
		}
	}
	for _, sw := range []struct {
		model        string
		ports, speed int
	}{{"SN5400", 64, 400}, {"SN5600", 64, 800}} {
		if switchPorts[sw.model] != sw.ports || (Switch{Model: sw.model}).MaxSpeedGbps() != sw.speed {
			t.Errorf("%s: %d ports at %d", sw.model, switchPorts[sw.model], (Switch{Model: sw.model}).MaxSpeedGbps())
		}
	}
	src := strings.Replace(baseYAML, "model: SN2100, onyx: 3.6.8190", "model: SN5600, cumulus: 5.9.1", 1)
	src = strings.Replace(src, "{model: ConnectX-5, pf: vmnic4, vfs: 8}", "{model: ConnectX-7, pf: vmnic4, vfs: 8, speed_gbps: 400}", 1)
	if _, err := Load("cx7.yaml", []byte(src)); err != nil {
		t.Errorf("ConnectX-7 at 400 Gb/s on an SN5600: %v", err)
	}
}
