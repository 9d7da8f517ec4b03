package inventory

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// railsYAML is two hosts with two rails each on a rail-optimized fabric:
// rail r on leaf r, one spine.
const railsYAML = `name: rl
switches:
  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}
  - {name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}
  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf0, port: swp64, peer: spine, peer_port: swp1}
    - {switch: leaf1, port: swp64, peer: spine, peer_port: swp2}
docker: {version: "24.0"}
horovod: {launcher: torchrun, image: nvcr.io/nvidia/pytorch:24.01-py3}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus:
    - {model: H100-PCIE-80GB, memory_gb: 80}
    - {model: H100-PCIE-80GB, memory_gb: 80}
    - {model: H100-PCIE-80GB, memory_gb: 80}
  nic: {model: ConnectX-7, pf: vmnic4, vfs: 4, speed_gbps: 400}
hosts:
  - name: a
    esxi: esx-a
    data:
      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}
      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}
  - name: b
    esxi: esx-b
    data:
      - {address: 10.0.0.12/24, switch: leaf0, port: swp2}
      - {address: 10.0.1.12/24, switch: leaf1, port: swp2, pf: vmnic5, interface: ens256}
`

func TestRailsModel(t *testing.T) {
	inv, err := Load("rl.yaml", []byte(railsYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Warnings) != 0 {
		t.Errorf("warnings: %v", inv.Warnings)
	}
	a, b := &inv.Hosts[0], &inv.Hosts[1]
	if inv.RailCount() != 2 || !inv.MultiRail() || !a.MultiRail() {
		t.Fatalf("rails: %d", inv.RailCount())
	}
	if a.Data != a.Rails[0].DataLink || a.Data.Address != netip.MustParsePrefix("10.0.0.11/24") {
		t.Errorf("Data is not rail 0: %+v vs %+v", a.Data, a.Rails[0])
	}
	r1 := a.Rails[1]
	if r1.Index != 1 || r1.PF != "vmnic5" || r1.Interface != "rail1" || r1.Switch != "leaf1" || r1.Port != (Port{1, 1, 0}) {
		t.Errorf("a rail 1: %+v", r1)
	}
	if a.Rails[0].PF != "vmnic4" || a.Rails[0].Interface != "ens224" || b.Rails[1].Interface != "ens256" {
		t.Errorf("rail 0 PF/interface %s/%s, b rail 1 %s", a.Rails[0].PF, a.Rails[0].Interface, b.Rails[1].Interface)
	}
	// 3 GPUs on 2 rails: 2 per rail (rounded up), GPUs 0-1 rail 0, GPU 2 rail 1.
	if got := []int{a.GPUs[0].Rail, a.GPUs[1].Rail, a.GPUs[2].Rail}; !slices.Equal(got, []int{0, 0, 1}) {
		t.Errorf("GPU rails %v", got)
	}
	if !slices.Equal(a.Rails[0].GPUs, []int{0, 1}) || !slices.Equal(a.Rails[1].GPUs, []int{2}) {
		t.Errorf("rail GPUs %v %v", a.Rails[0].GPUs, a.Rails[1].GPUs)
	}
	l1 := inv.Switch("leaf1")
	if lr, ok := l1.LeafRail(1); !ok || lr.Subnet != netip.MustParsePrefix("10.0.1.0/24") || lr.Gateway != netip.MustParseAddr("10.0.1.254") {
		t.Errorf("leaf1 rail 1: %+v %v", lr, ok)
	}
	if _, ok := l1.LeafRail(0); ok {
		t.Error("leaf1 carries rail 0")
	}
	if gw := inv.RailGateway(b, 1); gw != netip.MustParseAddr("10.0.1.254") {
		t.Errorf("RailGateway(b, 1) = %s", gw)
	}
	if n := len(inv.RailNets()); n != 2 {
		t.Errorf("RailNets: %d", n)
	}
	if got := inv.RailsOnSwitch("leaf1"); len(got) != 2 || got[0].Host != a || got[1].Rail != &b.Rails[1] {
		t.Errorf("RailsOnSwitch(leaf1): %v", got)
	}
	if len(inv.HostsOnSwitch("leaf1")) != 0 {
		t.Error("HostsOnSwitch counts rail 1")
	}
	if len(inv.OtherLeafSubnets(a)) != 0 {
		t.Errorf("OtherLeafSubnets(a) = %v: rail 0 is on one leaf", inv.OtherLeafSubnets(a))
	}
	if !inv.RailsJoined() || inv.RailsOnOneSwitch() {
		t.Error("rails joined by the spine")
	}
	if got := inv.Horovod.RailHCA(3); got != "mlx5_3" {
		t.Errorf("RailHCA(3) = %s", got)
	}
	if got := (Horovod{HCA: "rocep"}).RailHCA(2); got != "rocep_2" {
		t.Errorf("RailHCA without number = %s", got)
	}
}

// TestRailsMappingIsOneRail: a host whose data is a mapping has one rail,
// rail 0, which is its data link, its NIC's PF and its data interface.
func TestRailsMappingIsOneRail(t *testing.T) {
	inv, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	h := inv.Hosts[0]
	want := []Rail{{Index: 0, DataLink: h.Data, PF: "vmnic4", Interface: "ens224", GPUs: []int{0}}}
	if fmt.Sprint(h.Rails) != fmt.Sprint(want) || inv.RailCount() != 1 || inv.MultiRail() {
		t.Errorf("rails %+v, want %+v", h.Rails, want)
	}
	if got := inv.RailsOnSwitch("sw1"); len(got) != 2 || got[0].Rail.Port != h.Data.Port {
		t.Errorf("RailsOnSwitch: %v", got)
	}
}

// TestRailsRules: every rule of the list form, each at its key's position.
func TestRailsRules(t *testing.T) {
	cases := []struct {
		name      string
		edits     []string // old, new pairs
		path, pos string   // pos: "line:col"
		rule      string
	}{
		{"empty list", []string{"    data:\n      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}\n      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n", "    data: []\n"},
			"hosts[0].data", "23:11", "is an empty list"},
		{"rail count", []string{"      - {address: 10.0.1.12/24, switch: leaf1, port: swp2, pf: vmnic5, interface: ens256}\n", ""},
			"hosts[1].data", "29:7", "1 rail(s), and a (hosts[0]) has 2: every host of a cluster has the same number of rails"},
		{"missing pf", []string{", port: swp1, pf: vmnic5}", ", port: swp1}"},
			"hosts[0].data[1].pf", "25:9", "is required (the ESXi uplink of this rail's NIC port"},
		{"shared pf", []string{", port: swp1, pf: vmnic5}", ", port: swp1, pf: vmnic4}"},
			"hosts[0].data[1].pf", "25:64", "vmnic4 is also rail 0's physical function"},
		// The PF's cable is named as the switch's OS names the port, with
		// the VM and rail that name the PF first.
		{"shared pf cabled twice", []string{", port: swp1, pf: vmnic5}", ", port: swp1, pf: vmnic4}"},
			"hosts[0].data[1].port", "25:54", "vmnic4 of ESXi host esx-a is cabled to leaf0 swp1 (rail 0 of this VM, a, names it): one PF, one cable"},
		{"pf of another VM's rail", []string{"esxi: esx-b", "esxi: esx-a"},
			"hosts[1].data[1].port", "30:54", "vmnic5 of ESXi host esx-a is cabled to leaf1 swp1 (rail 1 of VM a (hosts[0]) names it): one PF, one cable"},
		{"rail 0 pf not nic.pf", []string{"swp1}\n      - {address: 10.0.1.11", "swp1, pf: vmnic9}\n      - {address: 10.0.1.11"},
			"hosts[0].data[0].pf", "24:64", "vmnic9 is not nic.pf vmnic4"},
		{"bad interface", []string{"interface: ens256", "interface: \"a;b\""},
			"hosts[1].data[1].interface", "30:83", "is not a Linux interface name"},
		{"interface twice", []string{"interface: ens256", "interface: ens224"},
			"hosts[1].data[1].interface", "30:83", `interface "ens224" is also rail 0's`},
		{"address off its rail subnet", []string{"10.0.1.12/24", "10.0.7.12/24"},
			"hosts[1].data[1].address", "30:19", "is not on leaf1's data subnet 10.0.1.0/24 (taken from a's rail 1 address"},
		{"address is the gateway", []string{"10.0.1.12/24", "10.0.1.254/24"},
			"switches[2].subnet", "5:5", "the gateway 10.0.1.254 of leaf1 is hosts[1]'s (b) data address"},
		{"duplicate address", []string{"10.0.1.12/24", "10.0.1.11/24"},
			"hosts[1].data[1].address", "30:19", "duplicate data address 10.0.1.11"},
		{"leaf group", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.0.22/24, switch: leaf0, port: swp3"},
			"hosts[1].data[1].switch", "30:41", "hosts that share a leaf for one rail share one for every rail"},
		{"port carries one rail", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: leaf1, port: swp1"},
			"hosts[1].data[1].port", "30:54", "duplicate switch port leaf1 swp1 (also hosts[0] rail 1)"},
		{"link on a rail port", []string{"{switch: leaf1, port: swp64", "{switch: leaf1, port: swp2"},
			"fabric.links[1].port", "9:29", "is also hosts[1]'s (b) rail 1 port"},
		{"rail on a spine", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: spine, port: swp9"},
			"hosts[1].data[1].switch", "30:41", "spine is a spine"},
		{"no fabric", []string{"  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}\n  - {name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}\n  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}\nfabric:\n  links:\n    - {switch: leaf0, port: swp64, peer: spine, peer_port: swp1}\n    - {switch: leaf1, port: swp64, peer: spine, peer_port: swp2}\n",
			"  - {name: spine, model: SN5600, cumulus: 5.9.1}\n  - {name: leaf0, model: SN5600, cumulus: 5.9.1}\n  - {name: leaf1, model: SN5600, cumulus: 5.9.1}\n"},
			"hosts[0].data", "20:7", "2 rails on switches without roles"},
		{"gpu rail out of range", []string{"    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n",
			"    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 0}\n    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 1}\n    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 2}\n"},
			"defaults.gpus[2].rail", "18:52", "rail 2: a has rails 0–1"},
		{"some gpus name a rail", []string{"    - {model: H100-PCIE-80GB, memory_gb: 80}\n  nic", "    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 0}\n  nic"},
			"defaults.gpus", "16:5", "1 of 3 GPUs name their rail"},
		{"rails without netplan", []string{"  os: ubuntu-22.04\n", "  os: ubuntu-16.04\n"},
			"hosts[0].data", "24:7", "2 rails on ubuntu-16.04: a VM's rails are set up with netplan"},
		{"too many rails", []string{"      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n",
			"      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n" + strings.Repeat("      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n", 8)},
			"hosts[0].data", "24:7", "10 rails: a VM has at most 10 virtual network adapters"},
	}
	// documented is the excerpt of the finding docs/inventory.md's Rails
	// table quotes, by case; "…" stands for what the excerpt leaves out.
	documented := map[string]string{
		"empty list":              "is an empty list: write one mapping per rail …",
		"rail count":              "1 rail(s), and a (hosts[0]) has 2: every host of a cluster has the same number of rails …",
		"shared pf":               "vmnic4 is also rail 0's physical function …",
		"shared pf cabled twice":  "vmnic4 of ESXi host esx-a is cabled to leaf0 swp1 (rail 0 of this VM, a, names it): one PF, one cable",
		"pf of another VM's rail": "… (rail 1 of VM a (hosts[0]) names it): one PF, one cable",
		"rail 0 pf not nic.pf":    "vmnic9 is not nic.pf vmnic4 …",
		"interface twice":         "interface \"ens224\" is also rail 0's …",
		"port carries one rail":   "duplicate switch port leaf1 swp1 (also hosts[0] rail 1) …",
		"no fabric":               "2 rails on switches without roles: each rail is a routed subnet of its own …",
		"rails without netplan":   "2 rails on ubuntu-16.04: a VM's rails are set up with netplan …",
		"too many rails":          "10 rails: a VM has at most 10 virtual network adapters …",
		"gpu rail out of range":   "rail 2: a has rails 0–1",
		"some gpus name a rail":   "1 of 3 GPUs name their rail …",
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "inventory.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, railsDoc, _ := strings.Cut(string(doc), "\n### Rails\n")
	railsDoc, _, _ = strings.Cut(railsDoc, "\n### ")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if ex, ok := documented[tc.name]; ok && !strings.Contains(railsDoc, "`"+ex+"`") {
				t.Errorf("docs/inventory.md's Rails table does not quote `%s`", ex)
			}
			src := railsYAML
			for i := 0; i < len(tc.edits); i += 2 {
				if !strings.Contains(src, tc.edits[i]) {
					t.Fatalf("%q not in the inventory", tc.edits[i])
				}
				src = strings.Replace(src, tc.edits[i], tc.edits[i+1], 1)
			}
			_, err := Load("rl.yaml", []byte(src))
			rep, ok := err.(*Report)
			if !ok {
				t.Fatalf("accepted (%v)\n%s", err, src)
			}
			for _, f := range rep.Findings {
				if f.Path == tc.path && strings.Contains(f.Rule, tc.rule) {
					if got := fmt.Sprintf("%d:%d", f.Pos.Line, f.Pos.Col); got != tc.pos {
						t.Errorf("at %s, want %s: %s", got, tc.pos, f)
					}
					if ex, ok := documented[tc.name]; ok && !excerptOf(ex, f.Rule) {
						t.Errorf("docs/inventory.md quotes `%s`, which is not an excerpt of %q", ex, f.Rule)
					}
					return
				}
			}
			t.Errorf("no finding at %s with %q:\n%v", tc.path, tc.rule, err)
		})
	}
}

// excerptOf reports whether ex is an excerpt of msg: its parts between
// the "…" that stand for what it leaves out are in msg, in order.
func excerptOf(ex, msg string) bool {
	for _, part := range strings.Split(ex, "…") {
		part = strings.TrimSpace(part)
		i := strings.Index(msg, part)
		if i < 0 {
			return false
		}
		msg = msg[i+len(part):]
	}
	return true
}

// TestRailsWarnings: two rails of one host on one leaf, and a rail with
// no GPU, are valid with a warning.
func TestRailsWarnings(t *testing.T) {
	src := strings.NewReplacer(
		"{address: 10.0.1.11/24, switch: leaf1, port: swp1", "{address: 10.0.1.11/24, switch: leaf0, port: swp11",
		"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: leaf0, port: swp12",
	).Replace(railsYAML)
	src = strings.Replace(src, "    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n", "    - {model: H100-PCIE-80GB, memory_gb: 80}\n", 1)
	inv, err := Load("rl.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range inv.Warnings {
		got = append(got, w.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"rl.yaml:23:41: hosts[0].data[1].switch: rails 0 and 1 of a both end on leaf0",
		"rl.yaml:22:7: hosts[0].data: rail(s) 1 of a have no GPU (1 GPUs on 2 rails)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in\n%s", want, all)
		}
	}
	l := inv.Switch("leaf0")
	if len(l.Fabric.Rails) != 2 || l.Fabric.Rails[1].Subnet != netip.MustParsePrefix("10.0.1.0/24") || l.Fabric.Rails[1].Gateway != netip.MustParseAddr("10.0.1.254") {
		t.Errorf("leaf0 rails %+v", l.Fabric.Rails)
	}
	if !inv.RailsOnOneSwitch() {
		t.Error("every rail is on leaf0")
	}
}
