package inventory

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// baseYAML is a valid two-host inventory; the bad cases below each change it in
// one place. Line numbers in the cases refer to this text.
const baseYAML = `name: mini
switches:
  - {name: sw1, model: SN2100, onyx: 3.6.8190}
docker:
  mtu: 1500
defaults:
  os: ubuntu-18.04
  data_interface: ens224
  gpus:
    - {model: V100-PCIE-16GB, memory_gb: 16}
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - name: a
    esxi: esx-a
    data: {address: 10.0.0.1/24, port: 1/1}
  - name: b
    esxi: esx-b
    data: {address: 10.0.0.2/24, port: 1/2}
`

func TestBaseIsValid(t *testing.T) {
	inv, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	a, b := inv.Hosts[0], inv.Hosts[1]
	for _, ok := range []string{"sw.example", "10.0.0.9", "10.0.0.9:2222", "[fd00::1]:22", "fd00::1", "sw:22"} {
		if !validMgmt(ok) {
			t.Errorf("mgmt %q rejected", ok)
		}
	}
	if a.VM != "a" || a.Mgmt != "a" {
		t.Errorf("VM/mgmt default: got %q/%q, want the name", a.VM, a.Mgmt)
	}
	if got, want := a.Subnet, netip.MustParsePrefix("172.16.1.0/24"); got != want {
		t.Errorf("derived subnet of a: %s, want %s", got, want)
	}
	if got, want := b.Bridge(), netip.MustParsePrefix("172.16.2.1/24"); got != want {
		t.Errorf("bip of b: %s, want %s", got, want)
	}
	if a.Data.Switch != "sw1" {
		t.Errorf("the only switch is the default: got %q", a.Data.Switch)
	}
	if a.Slots() != 1 || a.GPUs[0].MemoryGB != 16 || a.NIC.VFs != 8 || a.NIC.PortGroup != DefaultPortGroup {
		t.Errorf("defaults not inherited: %+v", a)
	}
	if !a.OS.UsesNetplan() {
		t.Error("ubuntu-18.04 uses netplan")
	}
	if inv.RoCE != (RoCE{26, 3, 48, 6, 150, 1500, 50}) || inv.RoCE.ToS() != 106 {
		t.Errorf("RoCE defaults: %+v (ToS %d)", inv.RoCE, inv.RoCE.ToS())
	}
	if inv.Switches[0].Ports != 16 || inv.Switches[0].HasRoCECommand() {
		t.Errorf("switch: %+v", inv.Switches[0])
	}
	// Inherited slices are copies: changing one host's GPUs changes no other.
	inv.Hosts[0].GPUs[0].Model = "changed"
	if inv.Hosts[1].GPUs[0].Model == "changed" {
		t.Error("hosts share the defaults' GPU slice")
	}
}

func TestReference(t *testing.T) {
	inv := Reference()
	if len(inv.Hosts) != 8 || len(inv.ESXiHosts()) != 8 {
		t.Fatalf("reference: %d hosts on %d ESXi hosts, want 8 on 8", len(inv.Hosts), len(inv.ESXiHosts()))
	}
	for i, h := range inv.Hosts {
		n := 41 + i
		if h.Name != fmt.Sprintf("clx-mld-%d", n) || h.Data.Address.String() != fmt.Sprintf("31.31.31.%d/24", n) ||
			h.Subnet.String() != fmt.Sprintf("172.16.%d.0/24", n) || h.Data.Port.String() != fmt.Sprintf("1/%d", i+1) ||
			h.Slots() != 2 || h.DataInterface != "enp1f0" || h.OS.String() != "ubuntu-16.04" || h.OS.UsesNetplan() {
			t.Errorf("host %d: %+v", i, h)
		}
	}
	if sw := inv.Switches[0]; sw.Name != "swx-mld-1-2" || sw.Model != "SN2700" || sw.Ports != 32 || sw.ONYX.String() != "3.6.8190" {
		t.Errorf("switch: %+v", sw)
	}
	if inv.Docker.AllowDirectRouting() {
		t.Error("Docker 18.09 has no allow-direct-routing")
	}
	if inv.Horovod.SSHPort != 12345 || inv.Horovod.Network != NetworkBridge || inv.Horovod.HCA != "mlx5_0" {
		t.Errorf("horovod: %+v", inv.Horovod)
	}
	// Positions point into the embedded YAML.
	if p := inv.Pos("hosts[7].data.address"); p.Line == 0 {
		t.Error("no position for hosts[7].data.address")
	}
}

// pos finds the 1-based column of token on line of src.
func pos(t *testing.T, src string, line int, token string) Pos {
	t.Helper()
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		t.Fatalf("line %d out of range", line)
	}
	col := strings.LastIndex(lines[line-1], token)
	if col < 0 {
		t.Fatalf("token %q not on line %d: %q", token, line, lines[line-1])
	}
	return Pos{line, col + 1}
}

// TestValidationRules has one bad inventory per rule of docs/inventory.md#keys (and of the
// decoder), each asserting the finding's line:col, field path and message.
func TestValidationRules(t *testing.T) {
	cases := []struct {
		name     string
		old, new string // replacement applied to baseYAML
		line     int    // expected finding: line and the token its column points at
		token    string
		path     string
		rule     string // substring of the rule
	}{
		{"unknown key", "  mtu: 1500", "  mtuu: 1500", 5, "mtuu", "docker.mtuu", `unknown key "mtuu" (known keys here: dns, gateway, mtu, pool, prefix, routing, version)`},
		{"misspelt host key", "    esxi: esx-b", "    exsi: esx-b", 17, "exsi", "hosts[1].exsi", `unknown key "exsi"`},
		{"duplicate key", "  mtu: 1500", "  mtu: 1500\n  mtu: 9000", 6, "mtu", "docker.mtu", "duplicate key (first at line 5)"},
		{"not a number", "  mtu: 1500", "  mtu: jumbo", 5, "jumbo", "docker.mtu", `must be a whole number, not "jumbo"`},
		{"not a list", "  gpus:\n    - {model: V100-PCIE-16GB, memory_gb: 16}", "  gpus: V100", 9, "V100", "defaults.gpus", "must be a list"},
		{"syntax error", "name: mini", "name: [mini", 1, "name", "", "not valid YAML"},
		{"missing required", "    esxi: esx-b\n", "", 16, "name", "hosts[1].esxi", "is required"},
		{"duplicate host name", "  - name: b", "  - name: a", 16, "a", "hosts[1].name", "duplicate host name a (also hosts[0])"},
		{"duplicate VM name", "  - name: b", "  - name: b\n    vm: a", 17, "a", "hosts[1].vm", "duplicate VM name a (also hosts[0])"},
		{"duplicate address", "10.0.0.2/24", "10.0.0.1/24", 18, "10.0.0.1/24", "hosts[1].data.address", "duplicate data address 10.0.0.1 (also hosts[0])"},
		{"duplicate port", "port: 1/2", "port: 1/1", 18, "1/1", "hosts[1].data.port", "duplicate switch port sw1 1/1 (also hosts[0])"},
		{"duplicate subnet", "    esxi: esx-b", "    esxi: esx-b\n    docker: {subnet: 172.16.1.0/24}", 18, "172.16.1.0/24", "hosts[1].docker.subnet", "duplicate container subnet 172.16.1.0/24 (also hosts[0])"},
		{"duplicate switch", "switches:\n", "switches:\n  - {name: sw1, model: SN2700, onyx: 3.6.8190}\n", 4, "sw1", "switches[1].name", `duplicate switch name "sw1" (also switches[0])`},
		{"port outside model", "port: 1/2", "port: 1/17", 18, "1/17", "hosts[1].data.port", "1/17 is outside SN2100 ports 1/1-1/16"},
		{"port syntax", "port: 1/2", "port: eth2", 18, "eth2", "hosts[1].data.port", `"eth2" is not a switch port like 1/1`},
		{"unknown switch", "port: 1/2}", "port: 1/2, switch: sw9}", 18, "sw9", "hosts[1].data.switch", `unknown switch "sw9" (switches: sw1)`},
		{"unknown switch model", "model: SN2100", "model: SN9999", 3, "SN9999", "switches[0].model", `unknown switch model "SN9999"`},
		{"not one data network", "10.0.0.2/24", "10.0.1.2/24", 18, "10.0.1.2/24", "hosts[1].data.address", "is not on the data network 10.0.0.0/24 of hosts[0]"},
		{"network address", "10.0.0.2/24", "10.0.0.0/24", 18, "10.0.0.0/24", "hosts[1].data.address", "10.0.0.0 is the network or broadcast address"},
		{"offset outside pool", "docker:\n", "docker:\n  pool: 172.16.0.0/23\n", 19, "10.0.0.2/24", "hosts[1].data.address",
			"offset 2 of 10.0.0.2 in 10.0.0.0/24 does not fit the pool 172.16.0.0/23, which holds 2 /24 subnets (offsets 0–1)"},
		{"subnets overlap", "    esxi: esx-a", "    esxi: esx-a\n    docker: {subnet: 172.16.0.0/22}", 19, "10.0.0.2/24", "hosts[1].data.address", "container subnet 172.16.2.0/24 overlaps hosts[0]'s 172.16.0.0/22"},
		{"subnet outside pool", "    esxi: esx-b", "    esxi: esx-b\n    docker: {subnet: 192.168.7.0/24}", 18, "192.168.7.0/24", "hosts[1].docker.subnet", "container subnet 192.168.7.0/24 is outside the pool 172.16.0.0/16"},
		{"subnet on the data network", "    esxi: esx-b", "    esxi: esx-b\n    docker: {subnet: 10.0.0.0/24}", 18, "10.0.0.0/24", "hosts[1].docker.subnet", "overlaps the data network 10.0.0.0/24"},
		{"subnet host bits", "    esxi: esx-b", "    esxi: esx-b\n    docker: {subnet: 172.16.9.1/24}", 18, "172.16.9.1/24", "hosts[1].docker.subnet", "has host bits set"},
		{"bip out of range", "docker:\n", "docker:\n  prefix: 31\n", 5, "31", "docker.prefix", "/31 leaves no address for docker0's bip"},
		{"prefix larger than pool", "docker:\n", "docker:\n  prefix: 12\n", 5, "12", "docker.prefix", "/12 is larger than the pool 172.16.0.0/16"},
		{"pool host bits", "docker:\n", "docker:\n  pool: 172.16.1.0/16\n", 5, "172.16.1.0/16", "docker.pool", "has host bits set"},
		{"docker mtu range", "  mtu: 1500", "  mtu: 9300", 5, "9300", "docker.mtu", "9300 is outside 68–9000"},
		{"docker mtu above link", "  mtu: 1500", "  mtu: 9000", 5, "9000", "docker.mtu", "9000 is above the data link MTU of a (1500), b (1500); raise data_mtu"},
		{"data mtu above vSphere's", "  data_interface: ens224", "  data_interface: ens224\n  data_mtu: 9216", 9, "9216", "defaults.data_mtu", "9216 is outside 1280–9000 (bytes; vSphere's standard and distributed switches carry at most 9000)"},
		{"mixed data mtu", "    esxi: esx-b", "    esxi: esx-b\n    data_mtu: 9000", 18, "9000", "hosts[1].data_mtu", "data_mtu 9000 differs from 1500 of hosts[0] and the others: the data network has one MTU"},
		{"dns not an address", "  mtu: 1500", "  mtu: 1500\n  dns: [dns.example]", 6, "dns.example", "docker.dns[0]", `"dns.example" is not an IP address`},
		{"dscp range", "name: mini\n", "name: mini\nroce: {dscp: 64}\n", 2, "64", "roce.dscp", "64 is outside 0–63"},
		{"priority range", "name: mini\n", "name: mini\nroce: {priority: 8}\n", 2, "8", "roce.priority", "8 is outside 0–7"},
		{"roce priority is the CNPs'", "name: mini\n", "name: mini\nroce: {priority: 6, dscp: 50}\n", 2, "6", "roce.priority", "6 is roce.cnp_priority, the NIC's CNP priority: CNPs need their own strict-priority class"},
		{"cnp dscp not the NIC's", "name: mini\n", "name: mini\nroce: {cnp_dscp: 49}\n", 2, "49", "roce.cnp_dscp", "49: the NIC sends its CNPs with DSCP 48, and rdggen cannot change that here"},
		{"cnp priority not the NIC's", "name: mini\n", "name: mini\nroce: {cnp_priority: 7, cnp_dscp: 56}\n", 2, "7", "roce.cnp_priority", "7: the NIC sends its CNPs at priority 6 (DSCP 48)"},
		{"dscp does not map to priority", "name: mini\n", "name: mini\nroce: {dscp: 34}\n", 2, "34", "roce.dscp", "DSCP 34 maps to switch priority 4 by default (DSCP/8), not roce.priority 3; use a DSCP in 24–31"},
		{"ecn min above max", "name: mini\n", "name: mini\nroce: {ecn_min_kb: 2000}\n", 2, "2000", "roce.ecn_min_kb", "2000 KB is above ecn_max_kb 1500 KB"},
		{"buffer percent", "name: mini\n", "name: mini\nroce: {buffer_percent: 0}\n", 2, "0", "roce.buffer_percent", "0 is outside 1–100"},
		{"gpu memory", "memory_gb: 16}", "memory_gb: 0}", 10, "0}", "defaults.gpus[0].memory_gb", "0 GB: GPU memory must be more than 0"},
		{"bar1 not a power of two", "memory_gb: 16}", "memory_gb: 16, bar1_gb: 24}", 10, "24", "defaults.gpus[0].bar1_gb", "a BAR size is a power of two"},
		{"pci syntax", "memory_gb: 16}", "memory_gb: 16, pci: 3b:00.0}", 10, "3b:00.0", "defaults.gpus[0].pci", `"3b:00.0" is not a PCI address`},
		{"gpu shared by two VMs", "    esxi: esx-b", "    esxi: esx-a", 10, "0000:3b:00.0", "defaults.gpus[0].pci", "GPU 0000:3b:00.0 on ESXi host esx-a is already passed through to a"},
		{"vf count", "vfs: 8", "vfs: 200", 11, "200", "defaults.nic.vfs", "200 VFs is outside ConnectX-5's range 1–127"},
		{"link speed", "vfs: 8", "vfs: 8, speed_gbps: 1000", 11, "1000", "defaults.nic.speed_gbps", "1000 is not an Ethernet link speed in Gb/s (1, 10, 25, 40, 50, 100, 200, 400, 800)"},
		{"more VMs than VFs", "vfs: 8", "vfs: 1", 16, "name", "hosts[1].nic", "ESXi host esx-a runs 2 VMs but its NIC has only 1 VFs"},
		{"link faster than the NIC", "vfs: 8", "vfs: 8, speed_gbps: 200", 11, "200", "defaults.nic.speed_gbps", "200 Gb/s is above ConnectX-5's 100 Gb/s per port"},
		{"link faster than the switch", "model: ConnectX-5, pf: vmnic4, vfs: 8", "model: ConnectX-6, pf: vmnic4, vfs: 8, speed_gbps: 200", 11, "200", "defaults.nic.speed_gbps",
			"200 Gb/s is above SN2100's 100 Gb/s per port (switch sw1, the data port of hosts[0] a)"},
		{"host's own link faster than the switch", "    esxi: esx-b", "    esxi: esx-b\n    nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 8, speed_gbps: 200}", 18, "200", "hosts[1].nic.speed_gbps",
			"200 Gb/s is above SN2100's 100 Gb/s per port (switch sw1, the data port of hosts[1] b)"},
		{"ConnectX-4 Lx at 100", "model: ConnectX-5, pf: vmnic4, vfs: 8", "model: ConnectX-4 Lx, pf: vmnic4, vfs: 8, speed_gbps: 100", 11, "100", "defaults.nic.speed_gbps", "100 Gb/s is above ConnectX-4 Lx's 50 Gb/s per port"},
		{"unknown nic", "model: ConnectX-5", "model: ConnectX-9", 11, "ConnectX-9", "defaults.nic.model", `unknown NIC model "ConnectX-9"`},
		{"pf name", "pf: vmnic4", "pf: eth4", 11, "eth4", "defaults.nic.pf", `"eth4" is not an ESXi uplink name like vmnic4`},
		{"os", "ubuntu-18.04", "centos-7", 7, "centos-7", "defaults.os", `"centos-7" is not a supported OS`},
		{"horovod network", "name: mini\n", "name: mini\nhorovod: {network: overlay}\n", 2, "overlay", "horovod.network", `"overlay" is neither "bridge"`},
		{"ssh port", "name: mini\n", "name: mini\nhorovod: {ssh_port: 0}\n", 2, "0", "horovod.ssh_port", "0 is outside 1–65535"},
		{"onyx too old", "onyx: 3.6.8190", "onyx: 3.5.1000", 3, "3.5.1000", "switches[0].onyx", "ONYX 3.5.1000 has no `traffic pool` commands"},
		{"onyx and cumulus", "onyx: 3.6.8190", "onyx: 3.6.8190, cumulus: 5.9.1", 3, "5.9.1", "switches[0].cumulus", "a switch runs one OS: give onyx (3.6.8190) or cumulus (5.9.1), not both"},
		{"no switch OS", ", onyx: 3.6.8190}", "}", 3, "{name", "switches[0]", "names no OS: give the switch's OS and version, onyx: 3.6.8190 for ONYX or cumulus: 5.9.1 for Cumulus Linux"},
		{"cumulus too old", "onyx: 3.6.8190", "cumulus: 4.4.0", 3, "4.4.0", "switches[0].cumulus", "Cumulus Linux 4.4.0 has no NVUE `qos roce` (from 5.0.0"},
		{"cumulus malformed", "onyx: 3.6.8190", "cumulus: latest", 3, "latest", "switches[0].cumulus", `"latest" is not a dotted version number`},
		{"swp port on onyx", "port: 1/2", "port: swp2", 18, "swp2", "hosts[1].data.port", `"swp2" is Cumulus Linux's spelling, but sw1 runs ONYX, which calls front-panel port 2 1/2`},
		{"onyx malformed", "onyx: 3.6.8190", "onyx: latest", 3, "latest", "switches[0].onyx", `"latest" is not a dotted version number`},
		{"mgmt", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 10.1.1.1:99999", 18, "10.1.1.1:99999", "hosts[1].mgmt", "is not an IP address or host name, optionally with :port"},
		{"duplicate mgmt", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: a", 18, "a", "hosts[1].mgmt", "management address a is also a's (hosts[0].name): apply would configure one machine twice"},
		{"mgmt is another host's data address", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 10.0.0.1", 18, "10.0.0.1", "hosts[1].mgmt", "management address 10.0.0.1 is hosts[0]'s (a) data address"},
		{"switch mgmt equals a host's", "onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: b}", 16, "b", "hosts[1].name", "management address b is also sw1's (switches[0].mgmt)"},
		{"VMs on one ESXi host on different ports", "    esxi: esx-b", "    esxi: esx-a", 18, "1/2", "hosts[1].data.port", "b shares ESXi host esx-a (and its uplink vmnic4) with a, so its data port is sw1 1/1, not sw1 1/2"},
		{"sshd port clash in host mode", "name: mini\n", "name: mini\nhorovod: {network: host, ssh_port: 22}\n", 2, "22", "horovod.ssh_port", "22 is the VM's own sshd"},
		{"gpu memory too large", "memory_gb: 16}", "memory_gb: 9223372036854775807}", 10, "9223372036854775807", "defaults.gpus[0].memory_gb", "is more than any GPU has (at most 1024 GB)"},
		{"bar1 too large", "memory_gb: 16}", "memory_gb: 16, bar1_gb: 4611686018427387904}", 10, "4611686018427387904", "defaults.gpus[0].bar1_gb", "is larger than any GPU's BAR1"},
		{"too many GPUs", "    - {model: V100-PCIE-16GB, memory_gb: 16}\n", strings.Repeat("    - {model: V100-PCIE-16GB, memory_gb: 16}\n", 129), 10, "- {model", "defaults.gpus", "129 GPUs: a VM takes at most 128 PCI passthrough devices"},
		{"pool in a special range", "docker:\n", "docker:\n  pool: 127.0.0.0/8\n", 5, "127.0.0.0/8", "docker.pool", "127.0.0.0/8 overlaps 127.0.0.0/8 (loopback)"},
		{"pool too large", "docker:\n", "docker:\n  pool: 0.0.0.0/0\n", 5, "0.0.0.0/0", "docker.pool", "is larger than /8"},
		{"data address loopback", "10.0.0.1/24, port: 1/1", "127.0.0.1/24, port: 1/1", 15, "127.0.0.1/24", "hosts[0].data.address", "127.0.0.1 is in 127.0.0.0/8 (loopback)"},
		{"second document", "name: mini\n", "name: mini\n---\nname: other\n", 2, "---", "", "a second YAML document starts here"},
		{"vcenter url", "name: mini\n", "name: mini\nvcenter: \"https://\"\n", 2, `"https://"`, "vcenter", "is not a vSphere SDK URL like https://vcenter.example/sdk ([https://]host[:port][/path])"},
		{"vcenter credentials", "name: mini\n", "name: mini\nvcenter: https://root:secret@vc.example/sdk\n", 2, "https", "vcenter", "must not carry credentials"},
		{"no hosts", "hosts:\n", "hosts: []\n", 12, "[]", "hosts", "is required (at least one host)"},
		// Hostile and broken input: text that would become code, or values without meaning.
		{"gpu model with a newline", "model: V100-PCIE-16GB", `model: "V100\ntouch PWNED #"`, 10, `"V100`, "defaults.gpus[0].model", `"V100\ntouch PWNED #" is not a GPU model name`},
		{"gpu model with NUL", "model: V100-PCIE-16GB", `model: "V100\0"`, 10, `"V100`, "defaults.gpus[0].model", "is not a GPU model name"},
		{"gpu model with a terminal escape", "model: V100-PCIE-16GB", `model: "V100\e[31m"`, 10, `"V100`, "defaults.gpus[0].model", "is not a GPU model name"},
		{"gpu model with a quote", "model: V100-PCIE-16GB", `model: 'V100"x'`, 10, `'V100`, "defaults.gpus[0].model", "is not a GPU model name"},
		{"image that is an option", "name: mini\n", "name: mini\nhorovod: {image: \"--privileged\"}\n", 2, `"--privileged"`, "horovod.image", `"--privileged" is not a container image reference`},
		{"image with a space", "name: mini\n", "name: mini\nhorovod: {image: \"horovod/horovod latest\"}\n", 2, `"horovod/horovod`, "horovod.image", "is not a container image reference"},
		{"image in capitals", "name: mini\n", "name: mini\nhorovod: {image: Horovod/Horovod}\n", 2, "Horovod/Horovod", "horovod.image", "is not a container image reference"},
		{"buffer percent NaN", "name: mini\n", "name: mini\nroce: {buffer_percent: .nan}\n", 2, ".nan", "roce.buffer_percent", "must be a finite number, not NaN"},
		{"buffer percent infinite", "name: mini\n", "name: mini\nroce: {buffer_percent: -.inf}\n", 2, "-.inf", "roce.buffer_percent", "must be a finite number, not -Inf"},
		{"bar1 below memory", "memory_gb: 16}", "memory_gb: 16, bar1_gb: 1}", 10, "1}", "defaults.gpus[0].bar1_gb", "1 GB is less than memory_gb 16: a passed-through GPU's BAR1 maps all of its memory"},
		{"esxi with an empty label", "    esxi: esx-b", "    esxi: a..b", 17, "a..b", "hosts[1].esxi", `"a..b" is not a host name`},
		{"esxi ending in a dot", "    esxi: esx-b", "    esxi: x.", 17, "x.", "hosts[1].esxi", `"x." is not a host name`},
		{"broken second document", "port: 1/2}\n", "port: 1/2}\n---\nhosts: [unclosed\n", 19, "---", "", "a second YAML document follows the first, and it is not valid YAML"},
		{"unknown YAML tag", "name: mini", "name: !!python/object:os.system mini", 1, "!!python", "name", "YAML tag !!python/object:os.system is not allowed"},
		{"local YAML tag", "  mtu: 1500", "  mtu: !jumbo 1500", 5, "!jumbo", "docker.mtu", "YAML tag !jumbo is not allowed"},
		{"dns unspecified", "  mtu: 1500", "  mtu: 1500\n  dns: [0.0.0.0]", 6, "0.0.0.0", "docker.dns[0]", "0.0.0.0 cannot be a container's DNS server"},
		{"dns multicast", "  mtu: 1500", "  mtu: 1500\n  dns: [8.8.8.8, 224.0.0.251]", 6, "224.0.0.251", "docker.dns[1]", "224.0.0.251 cannot be a container's DNS server"},
		{"dns loopback", "  mtu: 1500", "  mtu: 1500\n  dns: [127.0.0.53]", 6, "127.0.0.53", "docker.dns[0]", "127.0.0.53 cannot be a container's DNS server"},
		{"mgmt unspecified", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 0.0.0.0", 18, "0.0.0.0", "hosts[1].mgmt", `"0.0.0.0" is not an IP address or host name`},
		{"switch mgmt broadcast", "onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: 255.255.255.255}", 3, "255.255.255.255", "switches[0].mgmt", "is not an IP address or host name"},
		{"data interface lo", "data_interface: ens224", "data_interface: lo", 8, "lo", "defaults.data_interface", `"lo" is the VM's loopback interface, not the data network's VF`},
		{"data interface docker0", "data_interface: ens224", "data_interface: docker0", 8, "docker0", "defaults.data_interface", `"docker0" is the VM's Docker bridge`},
		{"port group with a quote", "vfs: 8}", `vfs: 8, portgroup: 'RoCE"net'}`, 11, `'RoCE`, "defaults.nic.portgroup", "is not a port group name rdggen can write safely"},
		{"host names that differ by case", "  - name: b", "  - name: A", 16, "A", "hosts[1].name", "duplicate host name A (also hosts[0])"},
		{"VM names that differ by case", "  - name: b", "  - name: b\n    vm: A", 17, "A", "hosts[1].vm", "duplicate VM name A (also hosts[0])"},
		{"ESXi names that differ by case", "    esxi: esx-b", "    esxi: ESX-A", 17, "ESX-A", "hosts[1].esxi", "ESX-A and esx-a (hosts[0]) name the same ESXi host"},
		{"same short host name", "  - name: b", "  - name: a.b.example", 16, "a.b.example", "hosts[1].name", "a.b.example has the short name a of hosts[0] (a): run.sh tells hosts apart by `hostname -s`"},
		{"mgmt all digits", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 2130706433", 18, "2130706433", "hosts[1].mgmt", `"2130706433" is not an IP address or host name`},
		{"mgmt inet_aton form", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 127.1", 18, "127.1", "hosts[1].mgmt", `"127.1" is not an IP address or host name`},
		{"vcenter port", "name: mini\n", "name: mini\nvcenter: https://vc.example:99999/sdk\n", 2, "https", "vcenter", "vc.example:99999 is not a host name or a reachable IP address, optionally with a port 1–65535"},
		{"vcenter unspecified", "name: mini\n", "name: mini\nvcenter: https://0.0.0.0/sdk\n", 2, "https", "vcenter", "0.0.0.0 is not a host name or a reachable IP address"},
		{"vcenter bad host", "name: mini\n", "name: mini\nvcenter: https://-x/sdk\n", 2, "https", "vcenter", "-x is not a host name"},
		{"NUL byte", "  mtu: 1500", "  mtu: 15\x0000", 5, "\x00", "", "a NUL byte: an inventory is a text file"},
		{"control character", "  mtu: 1500", "  mtu: 1500 \x01", 5, "\x01", "", "not valid YAML: control characters are not allowed"},
		{"port group with a newline", "vfs: 8}", `vfs: 8, portgroup: "a\nb"}`, 11, `"a`, "defaults.nic.portgroup", "is not a port group name rdggen can write safely"},
		// A DNS server in a host's container subnet: the other hosts route it to that host's docker0.
		{"dns in a container subnet", "  mtu: 1500", "  mtu: 1500\n  dns: [8.8.8.8, 172.16.2.53]", 6, "172.16.2.53", "docker.dns[1]",
			"172.16.2.53 is inside hosts[1]'s (b) container subnet 172.16.2.0/24: the other hosts route that subnet to b's docker0"},
		// vCenter: plain http is refused at validation, naming the escape; one grammar for the URL.
		{"vcenter plain http", "name: mini\n", "name: mini\nvcenter: http://vc.example/sdk\n", 2, "http", "vcenter",
			"http://vc.example/sdk is plain http: vCenter's login would send the password unencrypted; use https://, or pass --vcenter-allow-http"},
		{"vcenter credentials without a scheme", "name: mini\n", "name: mini\nvcenter: admin:pw@vc.example\n", 2, "admin", "vcenter", "must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead"},
		{"vcenter scheme", "name: mini\n", "name: mini\nvcenter: ftp://vc.example\n", 2, "ftp", "vcenter", `"ftp://vc.example": a vCenter URL is https:// (or http://), not ftp://`},
		{"vcenter query", "name: mini\n", "name: mini\nvcenter: https://vc.example/sdk?x=1\n", 2, "https", "vcenter", "a vSphere SDK URL has no query or fragment"},
		// Names: the limit and where it comes from.
		{"vm name too long", "  - name: b", "  - name: b\n    vm: " + strings.Repeat("v", 81), 17, strings.Repeat("v", 81), "hosts[1].vm",
			"is 81 characters; vSphere limits a VM name to 80 (VMware KB 2051649) (it names esxi/<vm>.vmx)"},
		{"host name label too long", "  - name: b", "  - name: " + strings.Repeat("b", 64), 16, strings.Repeat("b", 64), "hosts[1].name",
			`is not a host name: the label "bbbbbbbbbbbbbbbbbbbb"… is 64 characters; a DNS label is at most 63 (RFC 1035 §2.3.4)`},
		{"host name too long", "  - name: b", "  - name: " + strings.Repeat("b.", 127), 16, strings.Repeat("b.", 127), "hosts[1].name",
			"is not a host name: 254 characters; a host name is at most 253 (RFC 1035 §2.3.4)"},
		{"host name with an underscore", "  - name: b", "  - name: b_1", 16, "b_1", "hosts[1].name",
			`is not a host name: the label "b_1" holds characters other than letters, digits and '-' (RFC 1123 §2.1)`},
		{"host name that is the default VM name", "  - name: b", "  - name: " + strings.Repeat("b", 63) + "." + strings.Repeat("c", 20), 16, strings.Repeat("b", 63) + "." + strings.Repeat("c", 20), "hosts[1].name",
			"is 84 characters, and it is also the VM name (vm defaults to name); vSphere limits a VM name to 80 (VMware KB 2051649): set vm"},
		{"esxi name too long for its file", "    esxi: esx-b", "    esxi: " + strings.Repeat("e", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("e", 61), 17, strings.Repeat("e", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("e", 63) + "." + strings.Repeat("e", 61), "hosts[1].esxi",
			"is 253 characters; at most 252, so that esxi/<esxi>.sh fits a file name (255 bytes)"},
		{"cluster name too long", "name: mini", "name: " + strings.Repeat("m", 81), 1, strings.Repeat("m", 81), "name",
			"is 81 characters; a cluster name is at most 80 (rdggen's limit, that of VM names"},
		{"switch name with a dot", "name: sw1,", "name: sw.a,", 3, "sw.a", "switches[0].name", "is not a switch hostname (one DNS label: 1–63 letters, digits and '-'): it is one label, without dots"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := baseYAML
			if tc.name == "gpu shared by two VMs" {
				src = strings.Replace(src, "memory_gb: 16}", "memory_gb: 16, pci: 0000:3b:00.0}", 1)
			}
			if tc.name == "more VMs than VFs" {
				src = strings.Replace(src, "    esxi: esx-b", "    esxi: esx-a", 1)
			}
			if !strings.Contains(src, tc.old) {
				t.Fatalf("base has no %q", tc.old)
			}
			src = strings.Replace(src, tc.old, tc.new, 1)
			if tc.name == "no hosts" {
				src = src[:strings.Index(src, "hosts: []")+len("hosts: []\n")]
			}
			inv, err := Load("mini.yaml", []byte(src))
			var rep *Report
			if !errors.As(err, &rep) || inv != nil {
				t.Fatalf("Load accepted the inventory (err %v):\n%s", err, src)
			}
			want := Finding{File: "mini.yaml", Pos: pos(t, src, tc.line, tc.token), Path: tc.path}
			for _, f := range rep.Findings {
				if f.File == want.File && f.Pos == want.Pos && f.Path == want.Path && strings.Contains(f.Rule, tc.rule) {
					if !strings.HasPrefix(f.String(), fmt.Sprintf("mini.yaml:%d:%d: %s", want.Pos.Line, want.Pos.Col, tc.path)) {
						t.Errorf("format: %s", f)
					}
					return
				}
			}
			t.Errorf("want finding %s:%d:%d: %s: …%s…\ngot:\n%v", want.File, want.Pos.Line, want.Pos.Col, tc.path, tc.rule, rep)
		})
	}
}

// TestOneFindingPerMistake: a value of the wrong type is one finding, not
// also "required" or a range error about the zero value left behind; a stray
// host on another network is the one reported, not the majority.
func TestOneFindingPerMistake(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{"docker:\n", "docker:\n  prefix: twenty\n", `mini.yaml:5:11: docker.prefix: must be a whole number, not "twenty"`},
		{"  mtu: 1500", "  mtu: 1500.5", `mini.yaml:5:8: docker.mtu: must be a whole number, not "1500.5"`},
		{"name: mini\n", "name: mini\nroce: {dscp: \"26\"}\n", `mini.yaml:2:14: roce.dscp: must be a whole number, not "26"`},
		{"onyx: 3.6.8190", "onyx: x", `mini.yaml:3:38: switches[0].onyx: "x" is not a dotted version number`},
		// The CNPs' DSCP and priority are the NIC's (48, 6): a value other
		// than those is one finding saying so, not also a DSCP/8 rule that
		// would suggest a third value; a RoCE priority of 6 is one finding
		// on roce.priority, the key the user can change.
		{"name: mini\n", "name: mini\nroce: {cnp_dscp: 40}\n", "mini.yaml:2:18: roce.cnp_dscp: 40: the NIC sends its CNPs with DSCP 48"},
		{"name: mini\n", "name: mini\nroce: {cnp_priority: 5}\n", "mini.yaml:2:22: roce.cnp_priority: 5: the NIC sends its CNPs at priority 6"},
		{"name: mini\n", "name: mini\nroce: {priority: 6}\n", "mini.yaml:2:18: roce.priority: 6 is roce.cnp_priority"},
		{"name: mini\n", "name: mini\nroce: {priority: 6, dscp: 50}\n", "mini.yaml:2:18: roce.priority: 6 is roce.cnp_priority"},
		// A merge key: one finding saying what to write instead, not also
		// every key the merge would have brought "is required".
		{"  - name: a\n    esxi: esx-a\n", "  - &h\n    name: a\n    esxi: esx-a\n", ""},
	} {
		if tc.want == "" { // the merge key case: host b merges host a
			src := strings.Replace(strings.Replace(baseYAML, tc.old, tc.new, 1), "  - name: b\n    esxi: esx-b\n", "  - <<: *h\n    name: b\n", 1)
			_, err := Load("mini.yaml", []byte(src))
			var rep *Report
			want := "mini.yaml:17:5: hosts[1].<<: YAML merge keys (<<) are not supported: write the keys out, put what every host shares under defaults: (each host inherits every key it does not set), or use an alias for a whole value (gpus: *gpus)"
			if !errors.As(err, &rep) || len(rep.Findings) != 1 || rep.Findings[0].String() != want {
				t.Errorf("merge key: want exactly one finding\n%s\ngot:\n%v\n%s", want, err, src)
			}
			continue
		}
		_, err := Load("mini.yaml", []byte(strings.Replace(baseYAML, tc.old, tc.new, 1)))
		var rep *Report
		if !errors.As(err, &rep) || len(rep.Findings) != 1 || !strings.HasPrefix(rep.Findings[0].String(), tc.want) {
			t.Errorf("%q: want exactly one finding %s…, got:\n%v", tc.new, tc.want, err)
		}
	}
	// A switch whose OS key is wrong, missing or doubled is one finding on
	// that key, not also one per host whose port is spelt swpN.
	for _, tc := range []struct{ os, want string }{
		{"cumulus: \"5.9.1; rm\"", `switches[0].cumulus: "5.9.1; rm" is not a dotted version number`},
		{"onyx: 3.6.8190, cumulus: 5.9.1", "switches[0].cumulus: a switch runs one OS"},
		{"cumulus: null", "switches[0]: names no OS"},
	} {
		src := strings.NewReplacer("onyx: 3.6.8190", tc.os, "port: 1/1", "port: swp1", "port: 1/2", "port: swp2").Replace(baseYAML)
		_, err := Load("mini.yaml", []byte(src))
		var rep *Report
		if !errors.As(err, &rep) || len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].String(), tc.want) {
			t.Errorf("%s with swp ports: want exactly one finding …%s…, got:\n%v", tc.os, tc.want, err)
		}
	}
	src := strings.Replace(baseYAML, "10.0.0.1/24", "10.0.0.1/32", 1) + "  - name: c\n    esxi: esx-c\n    data: {address: 10.0.0.3/24, port: 1/3}\n"
	_, err := Load("mini.yaml", []byte(src))
	if err == nil || strings.Count(err.Error(), "is not on the data network") != 1 || !strings.Contains(err.Error(), "hosts[0].data.address: 10.0.0.1/32 is not on the data network 10.0.0.0/24 of hosts[1]") {
		t.Errorf("majority network:\n%v", err)
	}
}

// TestSharedESXiHost: VMs on one ESXi host share its NIC and so its switch port.
func TestSharedESXiHost(t *testing.T) {
	src := strings.NewReplacer("    esxi: esx-b", "    esxi: esx-a", "port: 1/2", "port: 1/1").Replace(baseYAML)
	inv, err := Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.HostsOnESXi("esx-a"); len(got) != 2 || len(inv.ESXiHosts()) != 1 {
		t.Errorf("hosts on esx-a: %d", len(got))
	}
}

// TestAllFindingsAtOnce checks that one Load reports every problem, in file order.
func TestAllFindingsAtOnce(t *testing.T) {
	src := strings.NewReplacer("  mtu: 1500", "  mtuu: 1500", "port: 1/2", "port: 1/99", "vfs: 8", "vfs: 0").Replace(baseYAML)
	_, err := Load("mini.yaml", []byte(src))
	var rep *Report
	if !errors.As(err, &rep) {
		t.Fatalf("want a report, got %v", err)
	}
	want := []string{
		`mini.yaml:5:3: docker.mtuu: unknown key "mtuu"`,
		"mini.yaml:11:45: defaults.nic.vfs: 0 VFs is outside ConnectX-5's range 1–127",
		"mini.yaml:18:40: hosts[1].data.port: 1/99 is outside SN2100 ports 1/1-1/16",
	}
	if len(rep.Findings) != len(want) {
		t.Fatalf("got %d findings, want %d:\n%v", len(rep.Findings), len(want), rep)
	}
	for i, f := range rep.Findings {
		if !strings.HasPrefix(f.String(), want[i]) {
			t.Errorf("finding %d: %s\nwant prefix %s", i, f, want[i])
		}
	}
}

func TestEmptyFile(t *testing.T) {
	_, err := Load("empty.yaml", []byte("\n# nothing\n"))
	if err == nil || !strings.Contains(err.Error(), "empty.yaml: the file is empty") {
		t.Fatalf("got %v", err)
	}
}

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		v     string
		parts []int
		want  int
	}{
		{"18.09", []int{18, 10}, -1},
		{"28.2", []int{28, 2}, 0},
		{"28.2.1", []int{28, 2}, 1},
		{"3.8.2008", []int{3, 8, 2000}, 1},
		{"3.6.8190", []int{3, 8, 2000}, -1},
		{"3.10.4006", []int{3, 8, 2000}, 1},
	} {
		if got := MustVersion(tc.v).Compare(tc.parts...); got != tc.want {
			t.Errorf("%s vs %v: %d, want %d", tc.v, tc.parts, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v, w string
		want bool
	}{{"4.4.0", "5.0.0", true}, {"5", "5.0.0", false}, {"5.0.1", "5.0", false}, {"5.10", "5.9.1", false}} {
		if got := MustVersion(tc.v).Before(MustVersion(tc.w)); got != tc.want {
			t.Errorf("%s before %s: %v, want %v", tc.v, tc.w, got, tc.want)
		}
	}
	for _, bad := range []string{"", "3..1", "v1", "1.2.3.4.5", "-1", "+1"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

// TestUnquotedVersionKeepsDigits: docker.version 18.10 unquoted is a YAML
// float (18.1); the version must still read 18.10.
func TestUnquotedVersionKeepsDigits(t *testing.T) {
	inv, err := Load("v.yaml", []byte(strings.Replace(baseYAML, "docker:\n", "docker:\n  version: 18.10\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.Docker.Version.String(); got != "18.10" {
		t.Errorf("version %q", got)
	}
}

// Names as long as their limits allow are valid: an 81-character ESXi FQDN
// (DNS allows 253), a 63-character label, an 80-character VM name.
func TestNamesUpToTheirLimits(t *testing.T) {
	fqdn := strings.Repeat("e", 63) + ".example.com.lab" + strings.Repeat("x", 2) // 81 characters
	if len(fqdn) != 81 {
		t.Fatalf("%d", len(fqdn))
	}
	src := strings.NewReplacer("    esxi: esx-b", "    esxi: "+fqdn+"\n    vm: "+strings.Repeat("v", 80),
		"  - name: a\n", "  - name: "+strings.Repeat("a", 63)+"\n").Replace(baseYAML)
	inv, err := Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Hosts[1].ESXi != fqdn || len(inv.Hosts[1].VM) != 80 || len(inv.Hosts[0].Name) != 63 {
		t.Errorf("%+v", inv.Hosts)
	}
}

// TestLinkSpeedLimits: nic.speed_gbps may not exceed what the NIC model or
// the switch model runs a port at (ConnectX-4 Lx 50 Gb/s, SN2000 100,
// SN3700 200, SN4700 400, …); one finding per NIC setting and switch, at
// the speed's line; left out, the speed is 100 or the NIC's maximum when
// that is lower. Unknown models are only their own finding.
func TestLinkSpeedLimits(t *testing.T) {
	load := func(sw, nic string) (*Inventory, *Report) {
		t.Helper()
		src := strings.NewReplacer("model: SN2100", "model: "+sw, "{model: ConnectX-5, pf: vmnic4, vfs: 8}", nic).Replace(baseYAML)
		inv, err := Load("mini.yaml", []byte(src))
		var rep *Report
		if err != nil && !errors.As(err, &rep) {
			t.Fatalf("%s, %s: %v", sw, nic, err)
		}
		return inv, rep
	}
	for _, tc := range []struct {
		sw, nic string
		speed   int
	}{
		{"SN2100", "{model: ConnectX-4 Lx, pf: vmnic4, vfs: 8}", 50},
		{"SN2100", "{model: ConnectX-5, pf: vmnic4, vfs: 8}", 100},
		{"SN2700", "{model: ConnectX-5 Ex, pf: vmnic4, vfs: 8, speed_gbps: 100}", 100},
		{"SN3700", "{model: ConnectX-6 Dx, pf: vmnic4, vfs: 8, speed_gbps: 200}", 200},
		{"SN4600", "{model: ConnectX-6, pf: vmnic4, vfs: 8, speed_gbps: 200}", 200},
		{"SN4700", "{model: ConnectX-6, pf: vmnic4, vfs: 8, speed_gbps: 200}", 200},
		{"SN3700C", "{model: ConnectX-4, pf: vmnic4, vfs: 8, speed_gbps: 25}", 25},
	} {
		inv, rep := load(tc.sw, tc.nic)
		if rep != nil {
			t.Errorf("%s, %s: refused:\n%v", tc.sw, tc.nic, rep)
			continue
		}
		for _, h := range inv.Hosts {
			if h.NIC.SpeedGbps != tc.speed {
				t.Errorf("%s, %s: %s speed %d Gb/s, want %d", tc.sw, tc.nic, h.Name, h.NIC.SpeedGbps, tc.speed)
			}
		}
	}
	for _, tc := range []struct {
		sw, nic string
		want    []string
	}{
		// Both limits, each once though two hosts share the setting.
		{"SN2700", "{model: ConnectX-5, pf: vmnic4, vfs: 8, speed_gbps: 400}", []string{
			"mini.yaml:11:60: defaults.nic.speed_gbps: 400 Gb/s is above ConnectX-5's 100 Gb/s per port",
			"mini.yaml:11:60: defaults.nic.speed_gbps: 400 Gb/s is above SN2700's 100 Gb/s per port (switch sw1, the data port of hosts[0] a)",
		}},
		{"SN4700", "{model: ConnectX-6 Dx, pf: vmnic4, vfs: 8, speed_gbps: 400}", []string{
			"mini.yaml:11:63: defaults.nic.speed_gbps: 400 Gb/s is above ConnectX-6 Dx's 200 Gb/s per port",
		}},
		{"SN3800", "{model: ConnectX-6, pf: vmnic4, vfs: 8, speed_gbps: 200}", []string{
			"mini.yaml:11:60: defaults.nic.speed_gbps: 200 Gb/s is above SN3800's 100 Gb/s per port (switch sw1, the data port of hosts[0] a)",
		}},
		// Unknown models: their own finding, no speed rule.
		{"SN9999", "{model: ConnectX-6, pf: vmnic4, vfs: 8, speed_gbps: 400}", []string{
			`mini.yaml:3:24: switches[0].model: unknown switch model "SN9999"`,
			"mini.yaml:11:60: defaults.nic.speed_gbps: 400 Gb/s is above ConnectX-6's 200 Gb/s per port",
		}},
		{"SN2100", "{model: ConnectX-9, pf: vmnic4, vfs: 8, speed_gbps: 800}", []string{
			`mini.yaml:11:16: defaults.nic.model: unknown NIC model "ConnectX-9"`,
			"mini.yaml:11:60: defaults.nic.speed_gbps: 800 Gb/s is above SN2100's 100 Gb/s per port (switch sw1, the data port of hosts[0] a)",
		}},
	} {
		_, rep := load(tc.sw, tc.nic)
		if rep == nil {
			t.Errorf("%s, %s: accepted", tc.sw, tc.nic)
			continue
		}
		var got []string
		for _, f := range rep.Findings {
			got = append(got, f.String())
		}
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s, %s: findings\n%s\nwant (prefixes)\n%s", tc.sw, tc.nic, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
