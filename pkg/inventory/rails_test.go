package inventory

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// railsLeaf0 puts both rails of a and b on leaf0: a leaf of two rails,
// whose (leaf, rail) subnets come from its hosts' addresses.
var railsLeaf0 = []string{
	"{address: 10.0.1.11/24, switch: leaf1, port: swp1", "{address: 10.0.1.11/24, switch: leaf0, port: swp11",
	"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: leaf0, port: swp12",
}

// railsGPUs are the defaults' three GPUs of railsYAML.
const railsGPUs = "    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n    - {model: H100-PCIE-80GB, memory_gb: 80}\n"

// TestRailsRules: every rule of the list form, each at its key's position,
// and docs/inventory.md's Rails table quotes each: every finding of
// rails.go and every finding elsewhere whose message names a rail
// (railFindingFormats) has a case here, and every case's finding is
// quoted in the table.
func TestRailsRules(t *testing.T) {
	cases := []struct {
		name      string
		edits     []string    // old, new pairs
		build     func(*Spec) // when set: Build this Spec of the edited inventory instead of Load
		warn      bool        // the finding is a warning
		path, pos string      // pos: "line:col"
		rule      string
		doc       string // the excerpt the Rails table quotes; "…" stands for what it leaves out
	}{
		{"empty list", []string{"    data:\n      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}\n      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n", "    data: []\n"}, nil, false,
			"hosts[0].data", "23:11", "is an empty list",
			"is an empty list: write one mapping per rail …"},
		{"data not a mapping or list", []string{"    data:\n      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}\n      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n", "    data: leaf0\n"}, nil, false,
			"hosts[0].data", "23:11", "must be a mapping",
			"must be a mapping of keys to values (address, switch, port) or a list of them, one per rail"},
		{"both forms", nil, func(s *Spec) {
			s.Hosts[0].Data.Address = "10.0.0.11/24"
		}, false, "hosts[0].data", "0:0", "sets both",
			"sets both the one-rail keys (address, switch, port) and a list of rails: write one form"},
		{"rail count", []string{"      - {address: 10.0.1.12/24, switch: leaf1, port: swp2, pf: vmnic5, interface: ens256}\n", ""}, nil, false,
			"hosts[1].data", "29:7", "1 rail(s), and a (hosts[0]) has 2: every host of a cluster has the same number of rails",
			"1 rail(s), and a (hosts[0]) has 2: every host of a cluster has the same number of rails …"},
		{"missing pf", []string{", port: swp1, pf: vmnic5}", ", port: swp1}"}, nil, false,
			"hosts[0].data[1].pf", "25:9", "is required (the ESXi uplink of this rail's NIC port",
			"is required (the ESXi uplink of this rail's NIC port, e.g. vmnic5)"},
		{"pf not an uplink name", []string{", port: swp1, pf: vmnic5}", ", port: swp1, pf: eth5}"}, nil, false,
			"hosts[0].data[1].pf", "25:64", `"eth5" is not an ESXi uplink name like vmnic5`,
			`"eth5" is not an ESXi uplink name like vmnic5`},
		{"shared pf", []string{", port: swp1, pf: vmnic5}", ", port: swp1, pf: vmnic4}"}, nil, false,
			"hosts[0].data[1].pf", "25:64", "vmnic4 is also rail 0's physical function",
			"vmnic4 is also rail 0's physical function …"},
		// The PF's cable is named as the switch's OS names the port, with
		// the VM and rail that name the PF first.
		{"shared pf cabled twice", []string{", port: swp1, pf: vmnic5}", ", port: swp1, pf: vmnic4}"}, nil, false,
			"hosts[0].data[1].port", "25:54", "vmnic4 of ESXi host esx-a is cabled to leaf0 swp1 (rail 0 of this VM, a, names it): one PF, one cable",
			"vmnic4 of ESXi host esx-a is cabled to leaf0 swp1 (rail 0 of this VM, a, names it): one PF, one cable"},
		{"pf of another VM's rail", []string{"esxi: esx-b", "esxi: esx-a"}, nil, false,
			"hosts[1].data[1].port", "30:54", "vmnic5 of ESXi host esx-a is cabled to leaf1 swp1 (rail 1 of VM a (hosts[0]) names it): one PF, one cable",
			"… (rail 1 of VM a (hosts[0]) names it): one PF, one cable"},
		{"rail 0 pf not nic.pf", []string{"swp1}\n      - {address: 10.0.1.11", "swp1, pf: vmnic9}\n      - {address: 10.0.1.11"}, nil, false,
			"hosts[0].data[0].pf", "24:64", "vmnic9 is not nic.pf vmnic4",
			"vmnic9 is not nic.pf vmnic4 …"},
		{"rail 0 interface not data_interface", []string{"swp1}\n      - {address: 10.0.1.11", "swp1, interface: ens192}\n      - {address: 10.0.1.11"}, nil, false,
			"hosts[0].data[0].interface", "24:71", `"ens192" is not data_interface "ens224"`,
			`"ens192" is not data_interface "ens224": rail 0's interface is data_interface …`},
		{"bad interface", []string{"interface: ens256", "interface: \"a;b\""}, nil, false,
			"hosts[1].data[1].interface", "30:83", "is not a Linux interface name",
			`"a;b" is not a Linux interface name (1–15 letters, digits, '_', '.', '-')`},
		{"interface lo", []string{"interface: ens256", "interface: lo"}, nil, false,
			"hosts[1].data[1].interface", "30:83", `"lo" is the VM's loopback interface, not a rail's VF: give the VF a name of its own, or leave interface out (then rail1)`,
			`"lo" is the VM's loopback interface, not a rail's VF …`},
		{"interface twice", []string{"interface: ens256", "interface: ens224"}, nil, false,
			"hosts[1].data[1].interface", "30:83", `interface "ens224" is also rail 0's`,
			`interface "ens224" is also rail 0's …`},
		{"interface is mgmt_interface", []string{"interface: ens256", "interface: ens192", "  data_interface: ens224\n", "  data_interface: ens224\n  template: {name: t1, mgmt_interface: ens192}\n"}, nil, false,
			"hosts[1].data[1].interface", "31:83", `interface "ens192" is also the template's mgmt_interface`,
			`interface "ens192" is also the template's mgmt_interface …`},
		{"address off its rail subnet", []string{"10.0.1.12/24", "10.0.7.12/24"}, nil, false,
			"hosts[1].data[1].address", "30:19", "is not on leaf1's data subnet 10.0.1.0/24 (taken from a's rail 1 address",
			"… is not on leaf1's data subnet 10.0.1.0/24 …"},
		{"address off its rail subnet, leaf of two rails", slices.Concat(railsLeaf0, []string{"10.0.1.12/24", "10.0.7.12/24"}), nil, false,
			"hosts[1].data[1].address", "30:19", "10.0.7.12/24 is not on leaf0's rail 1 subnet 10.0.1.0/24 (rail 1's, taken from a's address",
			"10.0.7.12/24 is not on leaf0's rail 1 subnet 10.0.1.0/24 …"},
		{"address is the gateway", []string{"10.0.1.12/24", "10.0.1.254/24"}, nil, false,
			"switches[2].subnet", "5:5", "the gateway 10.0.1.254 of leaf1 is hosts[1]'s (b) data address",
			"the gateway 10.0.1.254 of leaf1 is hosts[1]'s (b) data address …"},
		{"address is the gateway, leaf of two rails", slices.Concat(railsLeaf0, []string{"10.0.1.12/24", "10.0.1.254/24"}), nil, false,
			"hosts[1].data[1].address", "30:19", "10.0.1.254 is the gateway of leaf0's rail 1 subnet 10.0.1.0/24 (its last host address)",
			"… is the gateway of leaf0's rail 1 subnet …"},
		{"gateway off the subnet", []string{"{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, gateway: 10.0.7.1}"}, nil, false,
			"switches[2].gateway", "5:71", "the gateway 10.0.7.1 is not on leaf1's data subnet 10.0.1.0/24: set switches[2].gateway",
			"the gateway 10.0.7.1 is not on leaf1's data subnet 10.0.1.0/24: set switches[2].gateway to a free address of 10.0.1.0/24 …"},
		{"gateway the broadcast address", []string{"{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf, gateway: 10.0.1.255}"}, nil, false,
			"switches[2].gateway", "5:71", "the gateway 10.0.1.255 is the network or broadcast address of 10.0.1.0/24, not a host address: set switches[2].gateway",
			"the gateway 10.0.1.255 is the network or broadcast address of 10.0.1.0/24 …"},
		{"no gateway address", []string{"10.0.1.11/24", "10.0.1.10/31", "10.0.1.12/24", "10.0.1.11/31"}, nil, false,
			"switches[2].subnet", "5:5", "10.0.1.10/31 (taken from a's rail 1 address, hosts[0], the first host cabled to it; switches[2].subnet sets it) has no last host address for the leaf's gateway to default to: set switches[2].gateway, or widen the subnet",
			"10.0.1.10/31 … has no last host address for the leaf's gateway to default to: set switches[2].gateway, or widen the subnet …"},
		{"no gateway address, leaf of two rails", slices.Concat(railsLeaf0, []string{"10.0.1.11/24", "10.0.1.10/31", "10.0.1.12/24", "10.0.1.11/31"}), nil, false,
			"switches[1]", "4:5", "leaf0's rail 1 subnet 10.0.1.10/31 (rail 1's, taken from a's address, hosts[0], the first host whose rail 1 is cabled to it) has no last host address for the leaf's gateway: give rail 1's hosts a prefix length of /30 or shorter",
			"leaf0's rail 1 subnet 10.0.1.10/31 … has no last host address for the leaf's gateway: give rail 1's hosts a prefix length of /30 or shorter"},
		{"subnet key on a leaf of two rails", slices.Concat(railsLeaf0, []string{"{name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}", "{name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf, subnet: 10.0.0.0/24}"}), nil, false,
			"switches[1].subnet", "4:70", "leaf0 carries rails 0, 1, each with a subnet of its own",
			"leaf0 carries rails 0, 1, each with a subnet of its own … subnet names one; leave it out here"},
		{"rail subnets overlap", slices.Concat(railsLeaf0, []string{"10.0.0.11/24", "10.0.0.11/16", "10.0.0.12/24", "10.0.0.12/16"}), nil, false,
			"switches[1]", "4:5", "leaf0's rail 0 subnet 10.0.0.0/16 and rail 1 subnet 10.0.1.0/24 overlap",
			"leaf0's rail 0 subnet 10.0.0.0/16 and rail 1 subnet 10.0.1.0/24 overlap: each rail on a leaf routes a subnet of its own …"},
		{"duplicate address", []string{"10.0.1.12/24", "10.0.1.11/24"}, nil, false,
			"hosts[1].data[1].address", "30:19", "duplicate data address 10.0.1.11",
			"duplicate data address 10.0.1.11 (also hosts[0])"},
		{"leaf group", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.0.22/24, switch: leaf0, port: swp3"}, nil, false,
			"hosts[1].data[1].switch", "30:41", "hosts that share a leaf for one rail share one for every rail",
			"rail 1 of b is on leaf0, but a (hosts[0]), on leaf0 with it for rail 0, has rail 1 on leaf1: hosts that share a leaf for one rail share one for every rail …"},
		{"port carries one rail", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: leaf1, port: swp1"}, nil, false,
			"hosts[1].data[1].port", "30:54", "duplicate switch port leaf1 swp1 (also hosts[0] rail 1)",
			"duplicate switch port leaf1 swp1 (also hosts[0] rail 1) …"},
		// b on a's ESXi host: b's rail 1 names a's rail 0 PF and port.
		{"port carries two rails of one PF", []string{"esxi: esx-b", "esxi: esx-a", "{address: 10.0.1.12/24, switch: leaf1, port: swp2, pf: vmnic5", "{address: 10.0.1.12/24, switch: leaf0, port: swp1, pf: vmnic4"}, nil, false,
			"hosts[1].data[1].port", "30:54", "switch port leaf0 swp1 carries rail 0 of hosts[0] and rail 1 here",
			"switch port … carries rail 0 of hosts[0] and rail 1 here …"},
		{"link on a rail port", []string{"{switch: leaf1, port: swp64", "{switch: leaf1, port: swp2"}, nil, false,
			"fabric.links[1].port", "9:29", "is also hosts[1]'s (b) rail 1 port",
			"leaf1 swp2 is also hosts[1]'s (b) rail 1 port …"},
		{"rail on a spine", []string{"{address: 10.0.1.12/24, switch: leaf1, port: swp2", "{address: 10.0.1.12/24, switch: spine, port: swp9"}, nil, false,
			"hosts[1].data[1].switch", "30:41", "spine is a spine",
			"spine is a spine: hosts are cabled to leaves …"},
		{"no fabric", []string{"  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}\n  - {name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}\n  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}\nfabric:\n  links:\n    - {switch: leaf0, port: swp64, peer: spine, peer_port: swp1}\n    - {switch: leaf1, port: swp64, peer: spine, peer_port: swp2}\n",
			"  - {name: spine, model: SN5600, cumulus: 5.9.1}\n  - {name: leaf0, model: SN5600, cumulus: 5.9.1}\n  - {name: leaf1, model: SN5600, cumulus: 5.9.1}\n"}, nil, false,
			"hosts[0].data", "20:7", "2 rails on switches without roles",
			"2 rails on switches without roles: each rail is a routed subnet of its own …"},
		{"gpu rail out of range", []string{railsGPUs,
			"    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 0}\n    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 1}\n    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 2}\n"}, nil, false,
			"defaults.gpus[2].rail", "18:52", "rail 2: a has rails 0–1",
			"rail 2: a has rails 0–1"},
		{"some gpus name a rail", []string{"    - {model: H100-PCIE-80GB, memory_gb: 80}\n  nic", "    - {model: H100-PCIE-80GB, memory_gb: 80, rail: 0}\n  nic"}, nil, false,
			"defaults.gpus", "16:5", "1 of 3 GPUs name their rail",
			"1 of 3 GPUs name their rail …"},
		{"passthrough devices", []string{railsGPUs, strings.Repeat("    - {model: H100-PCIE-80GB, memory_gb: 80}\n", 127)}, nil, false,
			"hosts[0].data", "148:7", "127 GPUs and 2 rails' VFs are 129 PCI passthrough devices: a VM takes at most 128",
			"127 GPUs and 2 rails' VFs are 129 PCI passthrough devices: a VM takes at most 128 …"},
		{"rails without netplan", []string{"  os: ubuntu-22.04\n", "  os: ubuntu-16.04\n"}, nil, false,
			"hosts[0].data", "24:7", "2 rails on ubuntu-16.04: a VM's rails are set up with netplan",
			"2 rails on ubuntu-16.04: a VM's rails are set up with netplan …"},
		{"too many rails", []string{"      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n",
			"      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n" + strings.Repeat("      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic5}\n", 8)}, nil, false,
			"hosts[0].data", "24:7", "10 rails: a VM has at most 10 virtual network adapters",
			"10 rails: a VM has at most 10 virtual network adapters …"},
		{"two rails on one leaf", railsLeaf0, nil, true,
			"hosts[0].data[1].switch", "25:41", "rails 0 and 1 of a both end on leaf0",
			"rails 0 and 1 of a both end on leaf0 …"},
		{"rail without a GPU", []string{railsGPUs, "    - {model: H100-PCIE-80GB, memory_gb: 80}\n"}, nil, true,
			"hosts[0].data", "22:7", "rail(s) 1 of a have no GPU (1 GPUs on 2 rails)",
			"rail(s) 1 of a have no GPU …"},
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "inventory.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, railsDoc, _ := strings.Cut(string(doc), "\n### Rails\n")
	railsDoc, _, _ = strings.Cut(railsDoc, "\n### ")
	formats := railFindingFormats(t)
	covered := make([]string, len(formats)) // the first case whose finding each format gave
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == "" || !strings.Contains(railsDoc, "`"+tc.doc+"`") {
				t.Errorf("docs/inventory.md's Rails table does not quote `%s`", tc.doc)
			}
			src := railsYAML
			for i := 0; i < len(tc.edits); i += 2 {
				if !strings.Contains(src, tc.edits[i]) {
					t.Fatalf("%q not in the inventory", tc.edits[i])
				}
				src = strings.Replace(src, tc.edits[i], tc.edits[i+1], 1)
			}
			var inv *Inventory
			if tc.build != nil {
				s := railsSpec(t, src)
				tc.build(s)
				inv, err = Build("rl.yaml", s)
			} else {
				inv, err = Load("rl.yaml", []byte(src))
			}
			var found []Finding
			if tc.warn {
				if err != nil {
					t.Fatal(err)
				}
				found = inv.Warnings
			} else {
				rep, ok := err.(*Report)
				if !ok {
					t.Fatalf("accepted (%v)\n%s", err, src)
				}
				found = rep.Findings
			}
			for _, f := range found {
				if f.Path == tc.path && strings.Contains(f.Rule, tc.rule) {
					if got := fmt.Sprintf("%d:%d", f.Pos.Line, f.Pos.Col); got != tc.pos {
						t.Errorf("at %s, want %s: %s", got, tc.pos, f)
					}
					if !excerptOf(tc.doc, f.Rule) {
						t.Errorf("docs/inventory.md quotes `%s`, which is not an excerpt of %q", tc.doc, f.Rule)
					}
					var of []string
					for k, fm := range formats {
						if fm.re.MatchString(f.Rule) {
							of = append(of, fm.at)
							if covered[k] == "" {
								covered[k] = tc.name
							}
						}
					}
					if len(of) > 1 { // a pattern too loose to tell the rules apart
						t.Errorf("%q matches the formats of %s", f.Rule, strings.Join(of, " and "))
					}
					return
				}
			}
			t.Errorf("no finding at %s with %q:\n%v", tc.path, tc.rule, found)
		})
	}
	for k, fm := range formats {
		if covered[k] == "" {
			t.Errorf("%s: no case of TestRailsRules gives this rail finding: add one, with its quote in the Rails table: %q", fm.at, fm.format)
		}
	}
}

// railsSpec is src, an edit of railsYAML, as a Go Spec: each host's data
// list becomes DataSpec.Rails (the decoder's list form), which
// yaml.Unmarshal alone cannot fill.
func railsSpec(t *testing.T, src string) *Spec {
	t.Helper()
	var doc struct {
		Hosts []struct {
			Data []RailSpec `yaml:"data"`
		} `yaml:"hosts"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	var s Spec // data lists renamed out of the way: yaml.Unmarshal skips an unknown key
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(src, "    data:\n", "    data_list:\n")), &s); err != nil {
		t.Fatal(err)
	}
	for i, h := range doc.Hosts {
		s.Hosts[i].Data = &DataSpec{Rails: h.Data}
	}
	return &s
}

// railFormat is the message format of one call that reports a rail
// finding, and a pattern of the messages it gives.
type railFormat struct {
	at, format string // at: file:line
	re         *regexp.Regexp
}

// railFindingFormats reads this package's source for the calls that
// report a finding or warning (checker.errf, warnf, missing and
// gpuRails's once; decoder.fail) with a literal message format: every
// one in rails.go, and every one elsewhere whose format names a rail.
func railFindingFormats(t *testing.T) []railFormat {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	namesRail := regexp.MustCompile(`\brails?\b`)
	verb := regexp.MustCompile(`%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)
	var out []railFormat
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			arg, prefix := -1, ""
			switch name {
			case "errf", "warnf", "once":
				arg = 1
			case "fail":
				arg = 2
			case "missing": // missing(parent, key, hint): "is required" + hint
				arg, prefix = 2, "is required"
			}
			if arg < 0 || len(call.Args) <= arg {
				return true
			}
			lit, ok := call.Args[arg].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true // a format passed on (once's own errf)
			}
			format, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			format = prefix + format
			if file != "rails.go" && !namesRail.MatchString(format) {
				return true
			}
			var re strings.Builder
			re.WriteString("^")
			last := 0
			for _, m := range verb.FindAllStringIndex(format, -1) {
				re.WriteString(regexp.QuoteMeta(format[last:m[0]]))
				switch v := format[m[1]-1]; v {
				case '%':
					re.WriteString("%")
				case 'd':
					re.WriteString(`-?[0-9]+`)
				case 'q':
					re.WriteString(`".*"`)
				default:
					re.WriteString(`.*`)
				}
				last = m[1]
			}
			re.WriteString(regexp.QuoteMeta(format[last:]) + "$")
			out = append(out, railFormat{fset.Position(lit.Pos()).String(), format, regexp.MustCompile(re.String())})
			return true
		})
	}
	if len(out) < 30 {
		t.Fatalf("%d rail finding formats: the source scan no longer finds the finding calls", len(out))
	}
	return out
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
