package inventory

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// parityValue is one value of a field, as a file spells it and as Go holds
// it (nil: the pointer or slice unset); bad says both paths must refuse it.
type parityValue struct {
	yaml string
	go_  any
	bad  bool
}

func pInt(v int) parityValue { return parityValue{strconv.Itoa(v), v, true} }
func pStr(v string, bad bool) parityValue {
	return parityValue{yamlQuoted(v), v, bad}
}

// hostileInts are refused by every integer field of the Spec: below, at
// and far above every range, and the extremes of int.
var hostileInts = []parityValue{pInt(-1), pInt(0), pInt(1 << 40), pInt(math.MaxInt), pInt(math.MinInt)}

func intPtr(v any) *int {
	if v == nil {
		return nil
	}
	i := v.(int)
	return &i
}

func strPtr(v any) *string {
	if v == nil {
		return nil
	}
	s := v.(string)
	return &s
}

func boolPtr(v any) *bool {
	if v == nil {
		return nil
	}
	b := v.(bool)
	return &b
}

func versionPtr(v any) *Version {
	if v == nil {
		return nil
	}
	x := v.(Version)
	return &x
}

// parityCases: for each field of every Spec type, the same hostile values
// written into baseYAML (edits: old, new pairs; V in new is the value, so
// no other V may be in new) and
// set on the Spec baseYAML decodes to.
func parityCases() []struct {
	field string // "RoCESpec.BufferPercent": the Spec field the case sets
	edits []string
	set   func(s *Spec, v any)
	vals  []parityValue
} {
	type pc = struct {
		field string
		edits []string
		set   func(s *Spec, v any)
		vals  []parityValue
	}
	roce := func(field, key string, set func(r *RoCESpec, v any)) pc {
		return pc{"RoCESpec." + field, []string{"name: mini\n", "name: mini\nroce: {" + key + ": V}\n"},
			func(s *Spec, v any) { s.RoCE = &RoCESpec{}; set(s.RoCE, v) }, hostileInts}
	}
	tmpl := func(field, key string, set func(t *TemplateSpec, v any), vals []parityValue) pc {
		return pc{"TemplateSpec." + field, []string{"vfs: 8}\n", "vfs: 8}\n  template: {name: t1, " + key + ": V}\n"},
			func(s *Spec, v any) {
				s.Defaults.Template = &TemplateSpec{Name: "t1"}
				set(s.Defaults.Template, v)
			}, vals}
	}
	fab := func(field, kv string, set func(f *SwitchFabricSpec, v any), vals []parityValue) pc {
		return pc{"SwitchFabricSpec." + field, []string{"onyx: 3.6.8190}", "onyx: 3.6.8190, " + kv + "}"},
			func(s *Spec, v any) { set(&s.Switches[0].SwitchFabricSpec, v) }, vals}
	}
	fabSec := func(field, kv string, set func(f *FabricSpec, v any), vals []parityValue) pc {
		return pc{"FabricSpec." + field, []string{"onyx: 3.6.8190}", "onyx: 3.6.8190, role: leaf}", "name: mini\n", "name: mini\nfabric: {" + kv + "}\n"},
			func(s *Spec, v any) { s.Switches[0].Role = "leaf"; s.Fabric = &FabricSpec{}; set(s.Fabric, v) }, vals}
	}
	// link: a leaf (sw1, ONYX) and a spine (sp1, Cumulus) joined by one link.
	link := func(field string, set func(l *LinkSpec, v any), vals []parityValue) pc {
		ends := map[string]string{"Switch": "sw1", "Port": "1/16", "Peer": "sp1", "PeerPort": "swp1"}
		ends[field] = "V"
		return pc{"LinkSpec." + field, []string{"  - {name: sw1, model: SN2100, onyx: 3.6.8190}\n",
			"  - {name: sw1, model: SN2100, onyx: 3.6.8190, role: leaf}\n  - {name: sp1, model: SN2700, cumulus: 5.9.1, role: spine}\n" +
				"fabric: {links: [{switch: " + ends["Switch"] + ", port: " + ends["Port"] + ", peer: " + ends["Peer"] + ", peer_port: " + ends["PeerPort"] + "}]}\n"},
			func(s *Spec, v any) {
				s.Switches[0].Role = "leaf"
				s.Switches = append(s.Switches, SwitchSpec{Name: "sp1", Model: "SN2700", Cumulus: versionPtr(MustVersion("5.9.1")), SwitchFabricSpec: SwitchFabricSpec{Role: "spine"}})
				l := LinkSpec{Switch: "sw1", Port: "1/16", Peer: "sp1", PeerPort: "swp1"}
				set(&l, v)
				s.Fabric = &FabricSpec{Links: []LinkSpec{l}}
			}, vals}
	}
	hostsTail := baseYAML[strings.Index(baseYAML, "hosts:\n"):]
	defaultsBlock := baseYAML[strings.Index(baseYAML, "defaults:\n"):strings.Index(baseYAML, "hosts:\n")]
	long := func(n int) string { return strings.Repeat("a", n) }
	label := func(n int) string { return strings.Repeat("b", n) }
	return []pc{
		{"Spec.Name", []string{"name: mini", "name: V"}, func(s *Spec, v any) { s.Name = v.(string) },
			[]parityValue{pStr("", true), pStr(long(81), true), pStr("a b", true), pStr("-x", true), pStr(long(80), false)}},
		{"Spec.RoCE", []string{"name: mini\n", "name: mini\nroce: V\n"}, func(s *Spec, v any) {
			if v != nil {
				s.RoCE = &RoCESpec{}
			}
		}, []parityValue{{"{}", 1, false}, {"~", nil, false}}},
		roce("DSCP", "dscp", func(r *RoCESpec, v any) { r.DSCP = intPtr(v) }),
		roce("Priority", "priority", func(r *RoCESpec, v any) { r.Priority = intPtr(v) }),
		roce("CNPDSCP", "cnp_dscp", func(r *RoCESpec, v any) { r.CNPDSCP = intPtr(v) }),
		roce("CNPPriority", "cnp_priority", func(r *RoCESpec, v any) { r.CNPPriority = intPtr(v) }),
		roce("ECNMinKB", "ecn_min_kb", func(r *RoCESpec, v any) { r.ECNMinKB = intPtr(v) }),
		roce("ECNMaxKB", "ecn_max_kb", func(r *RoCESpec, v any) { r.ECNMaxKB = intPtr(v) }),
		{"RoCESpec.BufferPercent", []string{"name: mini\n", "name: mini\nroce: {buffer_percent: V}\n"},
			func(s *Spec, v any) { f := v.(float64); s.RoCE = &RoCESpec{BufferPercent: &f} },
			[]parityValue{{".nan", math.NaN(), true}, {".inf", math.Inf(1), true}, {"-.inf", math.Inf(-1), true},
				{"0", 0.0, true}, {"-5", -5.0, true}, {"100.5", 100.5, true}, {"1.0e+308", 1e308, true}, {"12.5", 12.5, false}}},
		{"Spec.Switches", []string{"switches:\n  - {name: sw1, model: SN2100, onyx: 3.6.8190}\n", "switches: V\n"},
			func(s *Spec, v any) {
				if v == nil {
					s.Switches = nil
				} else {
					s.Switches = []SwitchSpec{}
				}
			}, []parityValue{{"[]", 1, true}, {"~", nil, true}}},
		{"SwitchSpec.Name", []string{"name: sw1,", "name: V,"}, func(s *Spec, v any) { s.Switches[0].Name = v.(string) },
			[]parityValue{pStr("", true), pStr(label(64), true), pStr("sw.1", true), pStr("-sw", true), pStr("sw_1", true)}},
		{"SwitchSpec.Model", []string{"model: SN2100", "model: V"}, func(s *Spec, v any) { s.Switches[0].Model = v.(string) },
			[]parityValue{pStr("", true), pStr("SN9999", true), pStr("sn2100", false)}},
		{"SwitchSpec.ONYX", []string{"onyx: 3.6.8190", "onyx: V"}, func(s *Spec, v any) { s.Switches[0].ONYX = versionPtr(v) },
			[]parityValue{{`""`, Version{}, true}, {"~", nil, true}, {"0", MustVersion("0"), true}, {`"3.5"`, MustVersion("3.5"), true}, {"3.8.2000", MustVersion("3.8.2000"), false}}},
		{"SwitchSpec.Cumulus", []string{"onyx: 3.6.8190", "cumulus: V"}, func(s *Spec, v any) { s.Switches[0].ONYX, s.Switches[0].Cumulus = nil, versionPtr(v) },
			[]parityValue{{`""`, Version{}, true}, {"~", nil, true}, {`"4.4"`, MustVersion("4.4"), true}, {"5.9.1", MustVersion("5.9.1"), false}, {`"5.0"`, MustVersion("5.0"), false}}},
		{"SwitchSpec.Cumulus", []string{"onyx: 3.6.8190", "onyx: 3.6.8190, cumulus: V"}, func(s *Spec, v any) { s.Switches[0].Cumulus = versionPtr(v) },
			[]parityValue{{"5.9.1", MustVersion("5.9.1"), true}}},
		// Other: the key of a registered OS (testos, register_test.go).
		{"SwitchSpec.Other", []string{"onyx: 3.6.8190", "testos: V"}, func(s *Spec, v any) {
			s.Switches[0].ONYX = nil
			s.Switches[0].Other = map[string]*Version{"testos": versionPtr(v)}
		}, []parityValue{{`""`, Version{}, true}, {"~", nil, true}, {"1.9", MustVersion("1.9"), true}, {"2.1", MustVersion("2.1"), false}}},
		{"SwitchSpec.Other", []string{"onyx: 3.6.8190", "onyx: 3.6.8190, testos: V"}, func(s *Spec, v any) {
			s.Switches[0].Other = map[string]*Version{"testos": versionPtr(v)}
		}, []parityValue{{"2.1", MustVersion("2.1"), true}}},
		{"SwitchSpec.Other", []string{"onyx: 3.6.8190", "onyx: 3.6.8190, nos: V"}, func(s *Spec, v any) {
			s.Switches[0].Other = map[string]*Version{"nos": versionPtr(v)}
		}, []parityValue{{"2.1", MustVersion("2.1"), true}}},
		{"SwitchSpec.Mgmt", []string{"onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: V}"}, func(s *Spec, v any) { s.Switches[0].Mgmt = v.(string) },
			[]parityValue{pStr("0.0.0.0", true), pStr("sw:0", true), pStr("a", true), pStr("127.1", true), pStr("", false)}},
		{"SwitchSpec.Breakout", []string{"onyx: 3.6.8190}", "onyx: 3.6.8190, breakout: V}"}, func(s *Spec, v any) {
			s.Switches[0].Breakout = nil
			if v != nil {
				s.Switches[0].Breakout = v.(map[string]string)
			}
		}, []parityValue{{`{"1/3": 4x}`, map[string]string{"1/3": "4x"}, false}, {"~", nil, false}, {"{}", map[string]string{}, false},
			{`{"1/3": 8x}`, map[string]string{"1/3": "8x"}, true}, {`{"1/3": 3x}`, map[string]string{"1/3": "3x"}, true},
			{`{"1/1": 2x}`, map[string]string{"1/1": "2x"}, true}, {`{swp3: 2x}`, map[string]string{"swp3": "2x"}, true},
			{`{"1/3/1": 2x}`, map[string]string{"1/3/1": "2x"}, true}, {`{"1/17": 2x}`, map[string]string{"1/17": "2x"}, true},
			{`{"1/3": 2x, "1/4": ""}`, map[string]string{"1/3": "2x", "1/4": ""}, true}}},
		{"SwitchSpec.SwitchFabricSpec", []string{"onyx: 3.6.8190}", "onyx: 3.6.8190, role: V}"}, func(s *Spec, v any) { s.Switches[0].Role = v.(string) },
			[]parityValue{pStr("", false), pStr("leaf", false), pStr("spine", true), pStr("core", true), pStr("x\ny", true)}},
		fab("Role", "role: V", func(f *SwitchFabricSpec, v any) { f.Role = v.(string) }, []parityValue{pStr("leaf", false), pStr("Leaf", true)}),
		fab("ASN", "role: leaf, asn: V", func(f *SwitchFabricSpec, v any) { f.Role, f.ASN = "leaf", intPtr(v) }, append(hostileInts, pInt(4294967295), parityValue{"65001", 65001, false})),
		fab("Loopback", "role: leaf, loopback: V", func(f *SwitchFabricSpec, v any) { f.Role, f.Loopback = "leaf", v.(string) },
			[]parityValue{pStr("x", true), pStr("10.0.0.5", true), pStr("fd00::1", true), pStr("10.9.9.9", false)}),
		fab("Subnet", "role: leaf, subnet: V", func(f *SwitchFabricSpec, v any) { f.Role, f.Subnet = "leaf", v.(string) },
			[]parityValue{pStr("10.0.0.0/24", false), pStr("10.0.1.0/24", true), pStr("10.0.0.1/24", true), pStr("10.0.0.0/31", true), pStr("x", true)}),
		fab("Gateway", "role: leaf, gateway: V", func(f *SwitchFabricSpec, v any) { f.Role, f.Gateway = "leaf", v.(string) },
			[]parityValue{pStr("10.0.0.1", true), pStr("10.0.0.200", false), pStr("10.0.0.255", true), pStr("10.1.0.1", true), pStr("x", true)}),
		fab("Ports", "ports: V", func(f *SwitchFabricSpec, v any) { f.Ports = v.(string) },
			[]parityValue{pStr("all", false), pStr("cabled", false), pStr("", false), pStr("some", true)}),
		{"Spec.Fabric", []string{"name: mini\n", "name: mini\nfabric: V\n"}, func(s *Spec, v any) {
			if s.Fabric = nil; v != nil {
				s.Fabric = &FabricSpec{}
			}
		}, []parityValue{{"{}", 1, true}, {"~", nil, false}}},
		fabSec("Loopbacks", "loopbacks: V", func(f *FabricSpec, v any) { f.Loopbacks = strPtr(v) },
			[]parityValue{pStr("x", true), pStr("10.0.0.0/24", true), pStr("172.16.5.0/24", true), pStr("10.9.0.0/24", false)}),
		fabSec("P2P", "p2p: V", func(f *FabricSpec, v any) { f.P2P = strPtr(v) },
			[]parityValue{pStr("x", true), pStr("10.0.0.0/16", true), pStr("10.10.10.0/24", true), pStr("10.99.0.0/24", false)}),
		fabSec("LeafASN", "leaf_asn: V", func(f *FabricSpec, v any) { f.LeafASN = intPtr(v) }, append(hostileInts, parityValue{"65100", 65100, false})),
		fabSec("SpineASN", "spine_asn: V", func(f *FabricSpec, v any) { f.SpineASN = intPtr(v) }, hostileInts),
		fabSec("Links", "links: V", func(f *FabricSpec, v any) {
			if v != nil {
				f.Links = []LinkSpec{}
			}
		}, []parityValue{{"[]", 1, false}, {"~", nil, false}}),
		link("Switch", func(l *LinkSpec, v any) { l.Switch = v.(string) }, []parityValue{pStr("", true), pStr("sw9", true), pStr("sp1", true), pStr("sw1", false)}),
		link("Port", func(l *LinkSpec, v any) { l.Port = v.(string) }, []parityValue{pStr("", true), pStr("1/1", true), pStr("1/17", true), pStr("swp16", true), pStr("1/16/5", true), pStr("1/16", false), pStr("1/16/2", false)}),
		link("Peer", func(l *LinkSpec, v any) { l.Peer = v.(string) }, []parityValue{pStr("", true), pStr("sw1", true), pStr("sp1", false)}),
		link("PeerPort", func(l *LinkSpec, v any) { l.PeerPort = v.(string) }, []parityValue{pStr("", true), pStr("1/1", true), pStr("swp33", true), pStr("swp1s0", false), pStr("swp1", false)}),
		{"Spec.VCenter", []string{"name: mini\n", "name: mini\nvcenter: V\n"}, func(s *Spec, v any) { s.VCenter = v.(string) },
			[]parityValue{pStr("ftp://vc.example", true), pStr("http://vc.example/sdk", true), pStr("https://u:p@vc.example/sdk", true),
				pStr("https://vc.example/sdk?x=1", true), pStr("https://[fd00::1]/sdk", false), pStr("vc.example", false), pStr("", false)}},
		{"Spec.Docker", []string{"docker:\n  mtu: 1500\n", "docker: V\n"}, func(s *Spec, v any) {
			if s.Docker = nil; v != nil {
				s.Docker = &DockerSpec{}
			}
		}, []parityValue{{"{}", 1, false}, {"~", nil, false}}},
		{"DockerSpec.Version", []string{"docker:\n", "docker:\n  version: V\n"}, func(s *Spec, v any) { s.Docker.Version = versionPtr(v) },
			[]parityValue{{`""`, Version{}, true}, {`"28.2"`, MustVersion("28.2"), false}}},
		{"DockerSpec.Pool", []string{"docker:\n", "docker:\n  pool: V\n"}, func(s *Spec, v any) { s.Docker.Pool = strPtr(v) },
			[]parityValue{pStr("", true), pStr("x", true), pStr("0.0.0.0/0", true), pStr("172.16.1.0/16", true), pStr("fd00::/64", true), pStr("127.0.0.0/8", true)}},
		{"DockerSpec.Prefix", []string{"docker:\n", "docker:\n  prefix: V\n"}, func(s *Spec, v any) { s.Docker.Prefix = intPtr(v) }, hostileInts},
		{"DockerSpec.MTU", []string{"  mtu: 1500", "  mtu: V"}, func(s *Spec, v any) { s.Docker.MTU = intPtr(v) }, hostileInts},
		{"DockerSpec.DNS", []string{"  mtu: 1500", "  mtu: 1500\n  dns: V"}, func(s *Spec, v any) {
			if v == nil {
				s.Docker.DNS = nil
			} else {
				s.Docker.DNS = v.([]string)
			}
		}, []parityValue{{"[]", []string{}, false}, {"[x]", []string{"x"}, true}, {"[0.0.0.0]", []string{"0.0.0.0"}, true},
			{`[""]`, []string{""}, true}, {"[172.16.1.53]", []string{"172.16.1.53"}, true}, {"[127.0.0.53]", []string{"127.0.0.53"}, true}}},
		{"DockerSpec.Routing", []string{"  mtu: 1500", "  mtu: 1500\n  routing: V"}, func(s *Spec, v any) { s.Docker.Routing = strPtr(v) },
			[]parityValue{pStr("", true), pStr("bgp", true), pStr("switch", false)}},
		{"DockerSpec.Gateway", []string{"  mtu: 1500", "  mtu: 1500\n  gateway: V"}, func(s *Spec, v any) { s.Docker.Gateway = strPtr(v) },
			[]parityValue{pStr("", true), pStr("x", true), pStr("10.0.1.1", true), pStr("10.0.0.1", true), pStr("10.0.0.255", true), pStr("10.0.0.9/24", true)}},
		{"Spec.Horovod", []string{"name: mini\n", "name: mini\nhorovod: V\n"}, func(s *Spec, v any) {
			if v != nil {
				s.Horovod = &HorovodSpec{}
			}
		}, []parityValue{{"{}", 1, false}, {"~", nil, false}}},
		{"HorovodSpec.Network", []string{"name: mini\n", "name: mini\nhorovod: {network: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{Network: strPtr(v)} }, []parityValue{pStr("", true), pStr("overlay", true)}},
		{"HorovodSpec.SSHPort", []string{"name: mini\n", "name: mini\nhorovod: {ssh_port: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{SSHPort: intPtr(v)} }, hostileInts},
		{"HorovodSpec.Image", []string{"name: mini\n", "name: mini\nhorovod: {image: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{Image: strPtr(v)} }, []parityValue{pStr("", true), pStr("--privileged", true), pStr("A/B", true)}},
		{"HorovodSpec.HCA", []string{"name: mini\n", "name: mini\nhorovod: {hca: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{HCA: strPtr(v)} }, []parityValue{pStr("", true), pStr("mlx5 0", true), pStr(long(33), true)}},
		{"HorovodSpec.Launcher", []string{"name: mini\n", "name: mini\nhorovod: {launcher: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{Launcher: strPtr(v)} }, []parityValue{pStr("", true), pStr("mpirun", true), pStr("torchrun", false)}},
		{"HorovodSpec.NprocPerNode", []string{"name: mini\n", "name: mini\nhorovod: {nproc_per_node: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{NprocPerNode: intPtr(v)} }, append([]parityValue{pInt(257), {"4", 4, false}}, hostileInts...)},
		{"HorovodSpec.RdzvPort", []string{"name: mini\n", "name: mini\nhorovod: {rdzv_port: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{RdzvPort: intPtr(v)} }, append([]parityValue{pInt(12345), pInt(65536)}, hostileInts...)},
		{"HorovodSpec.RdzvID", []string{"name: mini\n", "name: mini\nhorovod: {rdzv_id: V}\n"},
			func(s *Spec, v any) { s.Horovod = &HorovodSpec{RdzvID: strPtr(v)} }, []parityValue{pStr("", true), pStr("-job", true), pStr(long(65), true), pStr("job-1.a_b", false)}},
		{"Spec.Defaults", []string{defaultsBlock, "defaults: V\n"}, func(s *Spec, v any) {
			if s.Defaults = nil; v != nil {
				s.Defaults = &HostDefaults{}
			}
		}, []parityValue{{"{}", 1, true}, {"~", nil, true}}},
		{"HostDefaults.OS", []string{"os: ubuntu-18.04", "os: V"}, func(s *Spec, v any) { s.Defaults.OS = strPtr(v) },
			[]parityValue{pStr("", true), pStr("ubuntu-14.04", true), pStr("centos-7", true)}},
		{"HostDefaults.DataInterface", []string{"data_interface: ens224", "data_interface: V"}, func(s *Spec, v any) { s.Defaults.DataInterface = strPtr(v) },
			[]parityValue{pStr("", true), pStr("lo", true), pStr(long(16), true), pStr("a b", true)}},
		{"HostDefaults.DataMTU", []string{"  data_interface: ens224", "  data_interface: ens224\n  data_mtu: V"}, func(s *Spec, v any) { s.Defaults.DataMTU = intPtr(v) }, hostileInts},
		{"HostDefaults.GPUs", []string{"  gpus:\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n", "  gpus: V\n"}, func(s *Spec, v any) {
			if v == nil {
				s.Defaults.GPUs = nil
			} else {
				s.Defaults.GPUs = []GPUSpec{}
			}
		}, []parityValue{{"[]", 1, true}, {"~", nil, true}}},
		{"GPUSpec.Model", []string{"model: V100-PCIE-16GB", "model: V"}, func(s *Spec, v any) { s.Defaults.GPUs[0].Model = v.(string) },
			[]parityValue{pStr("", true), pStr(long(65), true), pStr(`V100"x`, true)}},
		{"GPUSpec.MemoryGB", []string{"memory_gb: 16}", "memory_gb: V}"}, func(s *Spec, v any) { s.Defaults.GPUs[0].MemoryGB = intPtr(v) }, hostileInts},
		{"GPUSpec.BAR1GB", []string{"memory_gb: 16}", "memory_gb: 16, bar1_gb: V}"}, func(s *Spec, v any) { s.Defaults.GPUs[0].BAR1GB = intPtr(v) }, hostileInts},
		{"GPUSpec.PCI", []string{"memory_gb: 16}", "memory_gb: 16, pci: V}"}, func(s *Spec, v any) { s.Defaults.GPUs[0].PCI = v.(string) },
			[]parityValue{pStr("3b:00.0", true), pStr("0000:3b:00.8", true), pStr("", false)}},
		{"HostDefaults.NIC", []string{"  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}", "  nic: V"}, func(s *Spec, v any) {
			if s.Defaults.NIC = nil; v != nil {
				s.Defaults.NIC = &NICSpec{}
			}
		}, []parityValue{{"{}", 1, true}, {"~", nil, true}}},
		{"NICSpec.Model", []string{"model: ConnectX-5", "model: V"}, func(s *Spec, v any) { s.Defaults.NIC.Model = v.(string) },
			[]parityValue{pStr("", true), pStr("ConnectX-9", true)}},
		{"NICSpec.PF", []string{"pf: vmnic4", "pf: V"}, func(s *Spec, v any) { s.Defaults.NIC.PF = v.(string) },
			[]parityValue{pStr("", true), pStr("eth0", true)}},
		{"NICSpec.VFs", []string{"vfs: 8", "vfs: V"}, func(s *Spec, v any) { s.Defaults.NIC.VFs = intPtr(v) }, hostileInts},
		{"NICSpec.PortGroup", []string{"vfs: 8}", "vfs: 8, portgroup: V}"}, func(s *Spec, v any) { s.Defaults.NIC.PortGroup = strPtr(v) },
			[]parityValue{pStr("", true), pStr("  ", true), pStr(long(81), true), pStr("a'b", true)}},
		{"NICSpec.SpeedGbps", []string{"vfs: 8}", "vfs: 8, speed_gbps: V}"}, func(s *Spec, v any) { s.Defaults.NIC.SpeedGbps = intPtr(v) }, hostileInts},
		{"HostDefaults.Template", []string{"vfs: 8}\n", "vfs: 8}\n  template: V\n"}, func(s *Spec, v any) {
			if s.Defaults.Template = nil; v != nil {
				s.Defaults.Template = &TemplateSpec{}
			}
		}, []parityValue{{"{}", 1, true}, {"~", nil, false}}},
		{"TemplateSpec.Name", []string{"vfs: 8}\n", "vfs: 8}\n  template: {name: V}\n"}, func(s *Spec, v any) {
			s.Defaults.Template = &TemplateSpec{Name: v.(string)}
		}, []parityValue{pStr("", true), pStr(long(81), true), pStr("a'b", true), pStr("ubuntu gpu (efi)", false)}},
		tmpl("Datastore", "datastore", func(t *TemplateSpec, v any) { t.Datastore = v.(string) },
			[]parityValue{pStr("a\nb", true), pStr("$x", true), pStr("datastore1", false), pStr("", false)}),
		tmpl("Folder", "folder", func(t *TemplateSpec, v any) { t.Folder = v.(string) },
			[]parityValue{pStr("a`b`", true), pStr("/DC0/vm/training", false)}),
		tmpl("ResourcePool", "resource_pool", func(t *TemplateSpec, v any) { t.ResourcePool = v.(string) },
			[]parityValue{pStr("a;b", true), pStr("gpu", false)}),
		tmpl("Cluster", "cluster", func(t *TemplateSpec, v any) { t.Cluster = v.(string) },
			[]parityValue{pStr("a\"b", true), pStr("C0", false)}),
		tmpl("CPUs", "cpus", func(t *TemplateSpec, v any) { t.CPUs = intPtr(v) }, hostileInts),
		tmpl("MemoryGB", "memory_gb", func(t *TemplateSpec, v any) { t.MemoryGB = intPtr(v) }, hostileInts),
		tmpl("CloudInit", "cloud_init", func(t *TemplateSpec, v any) { t.CloudInit = boolPtr(v) },
			[]parityValue{{"false", false, false}, {"true", true, false}, {"~", nil, false}}),
		tmpl("User", "user", func(t *TemplateSpec, v any) { t.User = strPtr(v) },
			[]parityValue{pStr("", true), pStr("root", true), pStr("Ubuntu", true), pStr("a b", true), pStr("ubuntu", false)}),
		tmpl("SSHKeys", "ssh_keys", func(t *TemplateSpec, v any) {
			if v != nil {
				t.SSHKeys = v.([]string)
			}
		}, []parityValue{{`["ssh-ed25519 AAAA x\nrm"]`, []string{"ssh-ed25519 AAAA x\nrm"}, true}, {`[""]`, []string{""}, true},
			{`["command=\"x\" ssh-ed25519 AAAA"]`, []string{`command="x" ssh-ed25519 AAAA`}, true},
			{`["ssh-ed25519 AAAAC3Nz me@laptop"]`, []string{"ssh-ed25519 AAAAC3Nz me@laptop"}, false}}),
		tmpl("MgmtInterface", "mgmt_interface", func(t *TemplateSpec, v any) { t.MgmtInterface = strPtr(v) },
			[]parityValue{pStr("", true), pStr("ens224", true), pStr("a/b", true), pStr("ens192", false)}),
		tmpl("MgmtPrefix", "mgmt_prefix", func(t *TemplateSpec, v any) { t.MgmtPrefix = intPtr(v) },
			append(slices.Clone(hostileInts), pInt(33), parityValue{"24", 24, false})),
		{"TemplateSpec.MgmtGateway", []string{"vfs: 8}\n", "vfs: 8}\n  template: {name: t1, mgmt_prefix: 24, mgmt_gateway: V}\n"}, func(s *Spec, v any) {
			s.Defaults.Template = &TemplateSpec{Name: "t1", MgmtPrefix: intPtr(24), MgmtGateway: v.(string)}
		}, []parityValue{pStr("10.0.0.1/24", true), pStr("gw", true), pStr("0.0.0.0", true), pStr("224.0.0.1", true), pStr("fe80::1", true), pStr("10.0.0.1", false), pStr("", false)}},
		{"TemplateSpec.MgmtDNS", []string{"vfs: 8}\n", "vfs: 8}\n  template: {name: t1, mgmt_prefix: 24, mgmt_dns: V}\n"}, func(s *Spec, v any) {
			s.Defaults.Template = &TemplateSpec{Name: "t1", MgmtPrefix: intPtr(24)}
			if v != nil {
				s.Defaults.Template.MgmtDNS = v.([]string)
			}
		}, []parityValue{{`["8.8.8.8\nx"]`, []string{"8.8.8.8\nx"}, true}, {`[""]`, []string{""}, true}, {`["127.0.0.1"]`, []string{"127.0.0.1"}, true},
			{`["10.0.0.2", "8.8.8.8"]`, []string{"10.0.0.2", "8.8.8.8"}, false}, {"~", nil, false}}},
		{"Spec.Hosts", []string{hostsTail, "hosts: V\n"}, func(s *Spec, v any) {
			if v == nil {
				s.Hosts = nil
			} else {
				s.Hosts = []HostSpec{}
			}
		}, []parityValue{{"[]", 1, true}, {"~", nil, true}}},
		{"HostSpec.Name", []string{"  - name: b", "  - name: V"}, func(s *Spec, v any) { s.Hosts[1].Name = v.(string) },
			[]parityValue{pStr("", true), pStr(label(64), true), pStr("a", true), pStr(strings.Repeat("b.", 127), true),
				pStr("x.1", true), pStr("b_1", true), pStr(long(81), true)}},
		{"HostSpec.ESXi", []string{"    esxi: esx-b", "    esxi: V"}, func(s *Spec, v any) { s.Hosts[1].ESXi = v.(string) },
			[]parityValue{pStr("", true), pStr("a..b", true), pStr(label(63)+"."+label(63)+"."+label(63)+"."+label(61), true),
				pStr("ESX-A", true), pStr(label(63)+"."+label(17), false)}},
		{"HostSpec.VM", []string{"    esxi: esx-b", "    esxi: esx-b\n    vm: V"}, func(s *Spec, v any) { s.Hosts[1].VM = v.(string) },
			[]parityValue{pStr("a", true), pStr(long(81), true), pStr("a b", true), pStr("", false)}},
		{"HostSpec.Mgmt", []string{"    esxi: esx-b", "    esxi: esx-b\n    mgmt: V"}, func(s *Spec, v any) { s.Hosts[1].Mgmt = v.(string) },
			[]parityValue{pStr("a", true), pStr("10.0.0.1", true), pStr("0.0.0.0", true), pStr("b:99999", true), pStr("", false)}},
		// The host's own inheritable keys: a finding names the host's key
		// in both paths (hosts[1].data_mtu, not hosts[1].name).
		{"HostSpec.HostDefaults", []string{"    esxi: esx-b", "    esxi: esx-b\n    data_mtu: V"}, func(s *Spec, v any) { s.Hosts[1].DataMTU = intPtr(v) },
			append([]parityValue{pInt(9000)}, hostileInts...)},
		{"HostSpec.HostDefaults", []string{"    esxi: esx-b", "    esxi: esx-b\n    os: V"}, func(s *Spec, v any) { s.Hosts[1].OS = strPtr(v) },
			[]parityValue{pStr("centos-7", true), pStr("", true)}},
		{"HostSpec.HostDefaults", // two VMs of one ESXi host pinning one GPU: the host's own gpus list is named
			[]string{"    esxi: esx-b\n    data: {address: 10.0.0.2/24, port: 1/2}", "    esxi: esx-a\n    gpus: [{model: A100-PCIE-40GB, memory_gb: 40, pci: V}]\n    data: {address: 10.0.0.2/24, port: 1/1}",
				"  - name: a\n    esxi: esx-a\n", "  - name: a\n    esxi: esx-a\n    gpus: [{model: A100-PCIE-40GB, memory_gb: 40, pci: V}]\n"},
			func(s *Spec, v any) {
				for i := range s.Hosts {
					s.Hosts[i].ESXi, s.Hosts[i].Data.Port = "esx-a", "1/1"
					s.Hosts[i].GPUs = []GPUSpec{{Model: "A100-PCIE-40GB", MemoryGB: intPtr(40), PCI: v.(string)}}
				}
			}, []parityValue{pStr("0000:3b:00.0", true)}},
		{"HostSpec.Data", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: V"}, func(s *Spec, v any) {
			if s.Hosts[1].Data = nil; v != nil {
				s.Hosts[1].Data = &DataSpec{}
			}
		}, []parityValue{{"{}", 1, true}, {"~", nil, true}}},
		{"DataSpec.Address", []string{"10.0.0.2/24", "V"}, func(s *Spec, v any) { s.Hosts[1].Data.Address = v.(string) },
			[]parityValue{pStr("", true), pStr("10.0.0.2", true), pStr("10.0.1.2/24", true), pStr("fd00::2/64", true),
				pStr("10.0.0.0/24", true), pStr("127.0.0.2/24", true), pStr("10.0.0.1/24", true)}},
		{"DataSpec.Switch", []string{"port: 1/2}", "port: 1/2, switch: V}"}, func(s *Spec, v any) { s.Hosts[1].Data.Switch = v.(string) },
			[]parityValue{pStr("sw9", true), pStr("", false)}},
		{"DataSpec.Port", []string{"port: 1/2}", "port: V}"}, func(s *Spec, v any) { s.Hosts[1].Data.Port = v.(string) },
			[]parityValue{pStr("", true), pStr("1/17", true), pStr("2/1", true), pStr("eth1", true), pStr("1/1", true), pStr("1/99999999999999999999", true)}},
		// The list form of data: one rail on host b (valid outside a
		// fabric), then each key of a rail.
		{"DataSpec.Rails", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: V"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: v.([]RailSpec)}
		}, []parityValue{
			{"[]", []RailSpec{}, true},
			{"[{address: 10.0.0.2/24, port: 1/2}]", []RailSpec{{Address: "10.0.0.2/24", Port: "1/2"}}, false},
			{"[{address: 10.0.0.2/24, port: 1/2}, {address: 10.0.1.2/24, port: 1/3, pf: vmnic5}]",
				[]RailSpec{{Address: "10.0.0.2/24", Port: "1/2"}, {Address: "10.0.1.2/24", Port: "1/3", PF: "vmnic5"}}, true}}},
		{"RailSpec.Address", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: V, port: 1/2}]"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: []RailSpec{{Address: v.(string), Port: "1/2"}}}
		}, []parityValue{pStr("10.0.0.2/24", false), pStr("", true), pStr("10.0.0.2", true), pStr("10.0.0.1/24", true), pStr("127.0.0.2/24", true)}},
		{"RailSpec.Switch", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, switch: V}]"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: []RailSpec{{Address: "10.0.0.2/24", Port: "1/2", Switch: v.(string)}}}
		}, []parityValue{pStr("sw1", false), pStr("sw9", true), pStr("x;y", true)}},
		{"RailSpec.Port", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: V}]"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: []RailSpec{{Address: "10.0.0.2/24", Port: v.(string)}}}
		}, []parityValue{pStr("1/2", false), pStr("", true), pStr("1/17", true), pStr("1/1", true)}},
		{"RailSpec.PF", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, pf: V}]"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: []RailSpec{{Address: "10.0.0.2/24", Port: "1/2", PF: v.(string)}}}
		}, []parityValue{pStr("vmnic4", false), pStr("", false), pStr("vmnic9", true), pStr("x;y", true)}},
		{"RailSpec.Interface", []string{"    data: {address: 10.0.0.2/24, port: 1/2}", "    data: [{address: 10.0.0.2/24, port: 1/2, interface: V}]"}, func(s *Spec, v any) {
			s.Hosts[1].Data = &DataSpec{Rails: []RailSpec{{Address: "10.0.0.2/24", Port: "1/2", Interface: v.(string)}}}
		}, []parityValue{pStr("ens224", false), pStr("", false), pStr("eth9", true), pStr("$(id)", true)}},
		{"GPUSpec.Rail", []string{"memory_gb: 16}", "memory_gb: 16, rail: V}"}, func(s *Spec, v any) { s.Defaults.GPUs[0].Rail = intPtr(v) },
			[]parityValue{{"0", 0, false}, pInt(1), pInt(-1), pInt(1 << 40), pInt(math.MaxInt), pInt(math.MinInt)}},
		{"HostSpec.Docker", []string{"    esxi: esx-b", "    esxi: esx-b\n    docker: V"}, func(s *Spec, v any) {
			if v != nil {
				s.Hosts[1].Docker = &HostDockerSpec{}
			}
		}, []parityValue{{"{}", 1, false}, {"~", nil, false}}},
		{"HostDockerSpec.Subnet", []string{"    esxi: esx-b", "    esxi: esx-b\n    docker: {subnet: V}"}, func(s *Spec, v any) { s.Hosts[1].Docker = &HostDockerSpec{Subnet: v.(string)} },
			[]parityValue{pStr("172.16.1.0/24", true), pStr("x", true), pStr("172.16.9.1/24", true), pStr("10.0.0.0/24", true),
				pStr("192.168.0.0/24", true), pStr("172.16.0.0/31", true), pStr("", false)}},
	}
}

// TestBuildIsLoad: Build enforces every rule Load does. Each hostile value
// of every field of the Spec goes through both paths — written into a file
// for Load, set on the Spec that file decodes to for Build — and both give
// the same findings (field path and rule; Build has no positions); a bad
// value is refused by both. Every field of every Spec type must have a case
// here, so that a new field is held to parity too.
func TestBuildIsLoad(t *testing.T) {
	withTestOS(t)
	covered := map[string]bool{}
	for _, tc := range parityCases() {
		covered[tc.field] = true
		for _, v := range tc.vals {
			name := fmt.Sprintf("%s=%s", tc.field, v.yaml)
			if len(name) > 80 {
				name = name[:80]
			}
			t.Run(name, func(t *testing.T) {
				src := baseYAML
				for i := 0; i+1 < len(tc.edits); i += 2 {
					if !strings.Contains(src, tc.edits[i]) {
						t.Fatalf("%q is not in the inventory", tc.edits[i])
					}
					src = strings.Replace(src, tc.edits[i], strings.ReplaceAll(tc.edits[i+1], "V", v.yaml), 1)
				}
				_, lerr := Load("mini.yaml", []byte(src))
				var s Spec
				if err := yaml.Unmarshal([]byte(baseYAML), &s); err != nil {
					t.Fatal(err)
				}
				tc.set(&s, v.go_)
				_, berr := Build("mini.yaml", &s)
				lf, bf := findingTexts(lerr), findingTexts(berr)
				if strings.Join(lf, "\n") != strings.Join(bf, "\n") {
					t.Errorf("Load and Build differ\nLoad:\n%s\nBuild:\n%s\nfile:\n%s", strings.Join(lf, "\n"), strings.Join(bf, "\n"), src)
				}
				if v.bad && (len(lf) == 0 || len(bf) == 0) {
					t.Errorf("accepted: Load %d finding(s), Build %d\n%s", len(lf), len(bf), src)
				}
			})
		}
	}
	for _, tp := range []reflect.Type{reflect.TypeFor[Spec](), reflect.TypeFor[RoCESpec](), reflect.TypeFor[SwitchSpec](),
		reflect.TypeFor[DockerSpec](), reflect.TypeFor[HorovodSpec](), reflect.TypeFor[HostDefaults](), reflect.TypeFor[GPUSpec](),
		reflect.TypeFor[NICSpec](), reflect.TypeFor[HostSpec](), reflect.TypeFor[DataSpec](), reflect.TypeFor[HostDockerSpec](),
		reflect.TypeFor[TemplateSpec](), reflect.TypeFor[SwitchFabricSpec](), reflect.TypeFor[FabricSpec](), reflect.TypeFor[LinkSpec](),
		reflect.TypeFor[RailSpec]()} {
		for i := range tp.NumField() {
			if f := tp.Field(i); !covered[tp.Name()+"."+f.Name] {
				t.Errorf("%s.%s has no case in parityCases: add its hostile values", tp.Name(), f.Name)
			}
		}
	}
	// Every type of the Spec is in the list above.
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(tp reflect.Type) {
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct || tp == versionType || seen[tp] {
			return
		}
		seen[tp] = true
		for i := range tp.NumField() {
			walk(tp.Field(i).Type)
		}
	}
	walk(reflect.TypeFor[Spec]())
	if len(seen) != 16 {
		t.Errorf("the Spec has %d struct types, the coverage list 16: add the new one", len(seen))
	}
}

// findingTexts is err's findings as "path: rule", sorted.
func findingTexts(err error) []string {
	rep, ok := err.(*Report)
	if err != nil && !ok {
		return []string{"not a report: " + err.Error()}
	}
	var out []string
	if rep != nil {
		for _, f := range rep.Findings {
			out = append(out, f.Path+": "+f.Rule)
		}
	}
	sort.Strings(out)
	return out
}
