// Package cumulus is the switch side of rdggen for NVIDIA Spectrum switches
// on Cumulus Linux: inventory → the NVUE configuration intent (Intent, a
// Tree in the shape of `nv config show -o json`) → the files a person
// reviews and applies by hand (NVUE YAML for `nv config patch`, and the
// equivalent `nv set` lines).
//
// The NVUE forms, each with the NVIDIA page it comes from, are in
// docs/rules.md ("Switch (Cumulus Linux, NVUE)"); doc comments cite the
// pages by title.
package cumulus

import (
	"cmp"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Tree is an NVUE configuration tree in the JSON shape that `nv config show
// -o json` prints and the NVUE REST API's GET and PATCH of /nvue_v1/ take:
// nested objects keyed by NVUE's own names, e.g.
//
//	Tree{"qos": Tree{"roce": Tree{"enable": "on", "mode": "lossless"}}}
//
// A leaf is a string, an int (Intent writes ints for numbers; encoding/json
// reads them back as float64) or an empty Tree, NVUE's way of saying that a
// keyed entry exists (`"31.31.31.254/24": {}` under an interface's ip
// address, `"up": {}` under link state).
type Tree = map[string]any

// DataVLAN is the VLAN of the hosts' data ports: 1, the VLAN NVUE's default
// bridge br_default carries untagged (NVIDIA Cumulus Linux user guide,
// "VLAN-aware Bridge Mode": br_default, untagged 1). It is ONYX's data VLAN
// too (pkg/onyx.DataVLAN).
const DataVLAN = 1

// Bridge is the bridge the data ports join: br_default, the VLAN-aware
// bridge NVUE creates with no ports ("VLAN-aware Bridge Mode").
const Bridge = "br_default"

// PortMTU is the MTU rdggen sets on every data port, in bytes: 9216,
// Cumulus Linux's default for switch ports ("Switch Port Attributes": the
// default MTU is 9216) and NVIDIA's setting for RoCE fabrics. rdggen writes
// it although it is the default, for every data MTU (1500 included): the
// hosts' frames (at most 9000 bytes, vSphere's limit, plus headers) always
// fit, and with the value in the intent, apply and check find a port that
// someone lowered (to 1500, say, under hosts at 9000), which a default left
// implicit would hide. ONYX differs: its default is 1500, and pkg/onyx sets
// 9216 only for a jumbo data network.
const PortMTU = 9216

// Intent is the NVUE configuration rdggen owns on Cumulus switch sw: ONLY
// the paths below (Owned lists them as patterns), nothing else of the
// switch's configuration. It never fails on a valid inventory. For the
// reference cluster on Cumulus Linux 5.9.1:
//
//	system hostname <switch>                          the switch's name
//	qos roce enable on, qos roce mode lossless        lossless RoCE ("RDMA over Converged Ethernet - RoCE";
//	                                                  qos roce state enabled from Cumulus 5.15)
//	service lldp  (system lldp from Cumulus 5.15)     LLDP, which also carries the RoCE application TLV
//	bridge domain br_default vlan 1                   the data VLAN in NVUE's default bridge
//	per data port swpN (each host's port, in port order):
//	  interface swpN type swp
//	  interface swpN link state up
//	  interface swpN link mtu 9216                    PortMTU
//	  interface swpN bridge domain br_default access 1
//	  interface swpN description <what is cabled>     inventory.PortDescriptions
//	per split port swpN (inventory.Switch.Breakouts; its lanes are swpNs0…):
//	  interface swpN link breakout <mode>x [lanes-per-port <n>]   Breakout
//	per port a breakout disables (inventory.Switch.DisabledPorts: the even
//	port after an SN2700's 4x, an SN5600's 8x):
//	  interface swpN+1 link breakout disabled                     BreakoutDisabled
//
// and with docker.routing: switch, on the gateway switch
// (Inventory.GatewaySwitch):
//
//	interface vlan1 type svi, interface vlan1 vlan 1
//	interface vlan1 ip address <docker.gateway>/<data prefix>          e.g. 31.31.31.254/24 (ipv4 address from 5.15)
//	vrf default router static <host's container subnet> address-family ipv4-unicast
//	vrf default router static <host's container subnet> via <host's data address> type ipv4-address
//
// one static route per host on the switch, in the default VRF.
//
// `qos roce` brings the rest of lossless RoCE as one profile: trust of PCP
// and DSCP, switch priority 3 → traffic class 3 with PFC and ECN (150–1500
// KB), 6 → traffic class 6 strict, the lossless buffer pool, and the LLDP
// application TLV for UDP 4791 on priority 3 — the DSCP 26/48 convention
// the hosts use (inventory validation refuses roce values the profile
// cannot take). The data ports are bridged because Cumulus's switch ports
// are routed ports until they join a bridge, and the hosts share one data
// network (ONYX's ports are switchports in VLAN 1 by default).
func Intent(inv *inventory.Inventory, sw inventory.Switch) Tree {
	system := Tree{"hostname": sw.Name}
	t := Tree{
		"system": system,
		"qos":    Tree{"roce": RoCEOn(sw)},
	}
	if LLDPUnderSystem(sw) {
		system["lldp"] = Tree{}
	} else {
		t["service"] = Tree{"lldp": Tree{}}
	}
	ifaces := Tree{}
	vlans := Tree{}
	portVLAN := PortVLANs(inv, sw)
	desc := inv.PortDescriptions(sw.Name)
	for _, p := range DataPorts(inv, sw) {
		v := portVLAN[p]
		port := Tree{
			"type":   "swp",
			"link":   Tree{"mtu": PortMTU, "state": Tree{"up": Tree{}}},
			"bridge": Tree{"domain": Tree{Bridge: Tree{"access": v}}},
		}
		if d := desc[p]; d != "" {
			port["description"] = d
		}
		ifaces[sw.PortName(p)] = port
		vlans[strconv.Itoa(v)] = Tree{}
	}
	if len(vlans) > 0 {
		t["bridge"] = Tree{"domain": Tree{Bridge: Tree{"vlan": vlans}}}
	}
	for _, n := range sw.SplitPorts() {
		ifaces[sw.PortName(inventory.Port{Module: 1, Number: n})] = Tree{"link": Tree{"breakout": Breakout(sw, n)}}
	}
	for _, n := range sw.DisabledPorts() {
		ifaces[sw.PortName(inventory.Port{Module: 1, Number: n})] = Tree{"link": Tree{"breakout": Tree{BreakoutDisabled: Tree{}}}}
	}
	if gw := inv.GatewaySwitch(); gw != nil && gw.Name == sw.Name && inv.GatewayPrefix().IsValid() {
		svi := Tree{"type": "svi", "vlan": DataVLAN}
		SetAddress(sw, svi, inv.GatewayPrefix())
		ifaces[SVI] = svi
		static := Tree{}
		for _, h := range inv.HostsOnSwitch(sw.Name) {
			static[h.Subnet.String()] = Route(h.Data.Address.Addr())
		}
		if len(static) > 0 {
			t["vrf"] = Tree{"default": Tree{"router": Tree{"static": static}}}
		}
	}
	if len(ifaces) > 0 {
		t["interface"] = ifaces
	}
	if sw.Fabric.Role != "" {
		fabricIntent(inv, sw, t) // fabric.go
	}
	return t
}

// Breakout is the NVUE value of split port n of sw: {"<mode>x": {}} (`nv
// set interface swpN link breakout 4x`, NVIDIA Cumulus Linux user guide,
// "Switch Port Attributes", breakout ports; NVUE command reference, `nv
// set interface <id> link breakout`), and on a model whose ports have 8
// SerDes lanes (the SN5600) {"<mode>x": {"lanes-per-port": 8/mode}}, as
// NVIDIA-generated SN5600 configurations write it (`… link breakout 4x
// lanes-per-port 2`, `… 8x lanes-per-port 1`). The mode is the key: a port
// has one.
//
// A port whose logical ports a neighbour's breakout takes (the even port
// after an SN2700's 4x or an SN5600's 8x; inventory.Switch.DisabledPorts)
// is {BreakoutDisabled: {}}: `nv set interface swp2 link breakout
// disabled` (user guide, "Configure a Breakout Port"; NVIDIA-generated
// SN5600 configurations pair each `… link breakout 8x lanes-per-port 1`
// with the next port's `… link breakout disabled`). NVUE would disable it
// by itself ("NVUE automatically disables the subsequent even-numbered
// port"); rdggen writes it, as NVIDIA's configurations do, so that the
// file says it.
func Breakout(sw inventory.Switch, n int) Tree {
	mode := sw.Breakout(n)
	v := Tree{}
	if l := sw.LanesPerPort(mode); l > 0 {
		v["lanes-per-port"] = l
	}
	return Tree{strconv.Itoa(mode) + "x": v}
}

// BreakoutDisabled is the breakout of a disabled port: `link breakout
// disabled` (Breakout).
const BreakoutDisabled = "disabled"

// RoCEOn is the `qos roce` object that turns lossless RoCE on: {"enable":
// "on", "mode": "lossless"} (`nv set qos roce enable on`), or from Cumulus
// Linux 5.15 {"state": "enabled", "mode": "lossless"} (`nv set qos roce
// state enabled`; RenamedForms).
func RoCEOn(sw inventory.Switch) Tree {
	if RenamedForms(sw) {
		return Tree{"state": "enabled", "mode": "lossless"}
	}
	return Tree{"enable": "on", "mode": "lossless"}
}

// AddressKey is the key of an interface's IPv4 addresses: "ip" (`nv set
// interface vlan1 ip address …`), or from Cumulus Linux 5.15 "ipv4" (`nv
// set interface vlan1 ipv4 address …`; RenamedForms).
func AddressKey(sw inventory.Switch) string {
	if RenamedForms(sw) {
		return "ipv4"
	}
	return "ip"
}

// SVI is the name of the data VLAN's IP interface on Cumulus: vlan1
// (NVUE names a VLAN interface vlan<id>; "VLAN-aware Bridge Mode", "VLAN
// Layer 3 Addressing").
var SVI = "vlan" + strconv.Itoa(DataVLAN)

// Route is the NVUE value of one static route via next hop via, in the
// default VRF: {"address-family": "ipv4-unicast", "via": {"<via>": {"type":
// "ipv4-address"}}}, the form `nv config show` prints for `nv set vrf
// default router static <prefix> via <via>` ("Static Routing").
func Route(via netip.Addr) Tree {
	return Tree{"address-family": "ipv4-unicast", "via": Tree{via.String(): Tree{"type": "ipv4-address"}}}
}

// DataPorts are the front-panel ports of sw that hosts' data links are
// cabled to, each once, in port order. Unlike ONYX's DSCP commands, which
// rdggen writes on every front-panel port, Cumulus's `qos roce` is global,
// so rdggen touches only the ports it knows to be data ports (uplinks and
// unused ports stay the user's).
//
// With several rails every rail's ports are data ports (a leaf carries the
// host rails cabled to it, Inventory.RailsOnSwitch).
func DataPorts(inv *inventory.Inventory, sw inventory.Switch) []inventory.Port {
	seen := map[inventory.Port]bool{}
	var out []inventory.Port
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		if p := hr.Rail.Port; p.Number > 0 && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b inventory.Port) int {
		return cmp.Or(cmp.Compare(a.Module, b.Module), cmp.Compare(a.Number, b.Number), cmp.Compare(a.Lane, b.Lane))
	})
	return out
}

// PortVLANs is the access VLAN of each of DataPorts' ports: the VLAN of
// the rail it carries, inventory.RailVLAN (DataVLAN, 1, for rail 0, so
// every port of an inventory of one rail), so that the rails one leaf
// carries are separate broadcast domains, each with its own SVI.
func PortVLANs(inv *inventory.Inventory, sw inventory.Switch) map[inventory.Port]int {
	out := map[inventory.Port]int{}
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		if _, ok := out[hr.Rail.Port]; !ok {
			out[hr.Rail.Port] = inventory.RailVLAN(hr.Rail.Index)
		}
	}
	return out
}

// RailSVI is the VLAN interface of rail r's (leaf, rail) subnet:
// "vlan<RailVLAN(r)>", SVI ("vlan1") for rail 0.
func RailSVI(r int) string { return "vlan" + strconv.Itoa(inventory.RailVLAN(r)) }

// LLDPUnderSystem reports whether the switch's NVUE has LLDP under system
// (`nv set system lldp`, Cumulus Linux 5.15 and later) rather than under
// service (`nv set service lldp`, 5.14 and earlier; NVIDIA Cumulus Linux
// 5.15 release, "New and Changed NVUE Commands", LLDP).
func LLDPUnderSystem(sw inventory.Switch) bool { return sw.Cumulus.AtLeast(5, 15) }

// RenamedForms reports whether the switch's NVUE has the names Cumulus
// Linux 5.15 introduced (NVIDIA Cumulus Linux 5.15 release, "New and
// Changed NVUE Commands"): `qos roce state enabled|disabled` for `qos
// roce enable on|off`, `interface <id> ipv4 address` for `ip address`,
// `system config auto-save state` for `auto-save enable`, and `system lldp`
// for `service lldp` (LLDPUnderSystem).
func RenamedForms(sw inventory.Switch) bool { return sw.Cumulus.AtLeast(5, 15) }

// AutoSaves reports whether `nv config apply` also saves the configuration
// as the startup configuration: Cumulus Linux 5.9 and later turn auto-save
// on by default (NVIDIA Cumulus Linux 5.9 release notes and user guide,
// "NVUE CLI": "nv config apply ... saves the configuration automatically";
// `nv set system config auto-save enable`). Before 5.9 an applied
// configuration is lost on reboot until `nv config save`.
func AutoSaves(sw inventory.Switch) bool { return sw.Cumulus.AtLeast(5, 9) }

// Path is one NVUE configuration path as its keys, e.g. {"qos", "roce",
// "mode"} or {"vrf", "default", "router", "static", "172.16.41.0/24"}. In a
// pattern (Owned) the key "*" stands for any one key.
type Path []string

// String is the path as `nv set` words, e.g. "qos roce mode", the form
// Cumulus users read (keys are never empty or spaced in Intent's paths).
func (p Path) String() string { return strings.Join(p, " ") }

// REST is the path of the NVUE REST API's endpoint for p, e.g.
// "/nvue_v1/vrf/default/router/static/172.16.41.0%2F24": each key
// URL-path-escaped, so a prefix's "/" is %2F ("NVUE API": a targeted
// PATCH names the object in the URL).
func (p Path) REST() string {
	var b strings.Builder
	b.WriteString("/nvue_v1")
	for _, k := range p {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(url.PathEscape(k), "/", "%2F"))
	}
	return b.String()
}

// Match reports whether p matches pattern q: the same length, and each key
// equal or q's "*".
func (p Path) Match(q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if q[i] != "*" && q[i] != p[i] {
			return false
		}
	}
	return true
}

// Owned lists, as patterns, every leaf path Intent can write on any switch:
// the paths rdggen owns, and the only ones apply may change: the apply
// engine diffs the switch's applied configuration against Intent on these
// paths only, and never touches another. "*" is a switch port (swpN) in the interface patterns, an
// address or prefix elsewhere. Which entries of the keyed collections
// (interface vlan1's addresses, the default VRF's static routes) are
// rdggen's when they are not in the intent is the apply engine's rule: a
// key matching a pattern is not by that alone rdggen's; only what rdggen's
// Record names is. The description of interface vlan1 holds that record
// (Record), written by the apply engine, not by Intent.
func Owned() []Path {
	out := []Path{
		{"system", "hostname"},
		{"qos", "roce", "enable"},
		{"qos", "roce", "state"},
		{"qos", "roce", "mode"},
		{"service", "lldp"},
		{"system", "lldp"},
		{"bridge", "domain", Bridge, "vlan", strconv.Itoa(DataVLAN)},
		{"interface", "*", "type"},
		{"interface", "*", "link", "mtu"},
		{"interface", "*", "link", "state", "up"},
		{"interface", "*", "bridge", "domain", Bridge, "access"},
		{"interface", "*", "description"},
		{"interface", "*", "link", "breakout", "*"},
		{"interface", "*", "link", "breakout", "*", "lanes-per-port"},
		{"interface", SVI, "vlan"},
		{"interface", SVI, "ip", "address", "*"},
		{"interface", SVI, "ipv4", "address", "*"},
		{"interface", SVI, "description"},
		{"vrf", "default", "router", "static", "*", "address-family"},
		{"vrf", "default", "router", "static", "*", "via", "*", "type"},
		// A fabric switch's (fabric.go): loopback and uplink addresses,
		// the ASN and router-id, BGP neighbors with BFD, and networks.
		{"interface", "*", "ip", "address", "*"},
		{"interface", "*", "ipv4", "address", "*"},
		{"router", "bgp", "autonomous-system"},
		{"router", "bgp", "router-id"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "remote-as"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "type"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "bfd", "enable"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "bfd", "detect-multiplier"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "bfd", "min-rx-interval"},
		{"vrf", "default", "router", "bgp", "neighbor", "*", "bfd", "min-tx-interval"},
		{"vrf", "default", "router", "bgp", "address-family", "ipv4-unicast", "network", "*"},
	}
	// A leaf that carries rails 1 and up: each rail's VLAN in the bridge
	// and its SVI (RailSVI), for the rails an inventory can have.
	for r := 1; r < inventory.MaxRails; r++ {
		v, svi := strconv.Itoa(inventory.RailVLAN(r)), RailSVI(r)
		out = append(out, Path{"bridge", "domain", Bridge, "vlan", v}, Path{"interface", svi, "vlan"},
			Path{"interface", svi, "ip", "address", "*"}, Path{"interface", svi, "ipv4", "address", "*"})
	}
	return out
}

// Leaves returns the path and value of every leaf of t (a scalar, or an
// empty Tree for an entry that only exists), in Walk's order.
func Leaves(t Tree) (paths []Path, values []any) {
	Walk(t, func(p Path, v any) {
		paths = append(paths, slices.Clone(p))
		values = append(values, v)
	})
	return paths, values
}

// Walk calls f for every leaf of t with its path, keys in NVUE's order for
// display: sorted, with interface and port names compared by their numbers
// (swp2 before swp10) and prefixes by address.
func Walk(t Tree, f func(Path, any)) {
	var walk func(p Path, v any)
	walk = func(p Path, v any) {
		sub, ok := v.(Tree)
		if !ok || len(sub) == 0 {
			f(p, v)
			return
		}
		for _, k := range sortedKeys(sub) {
			walk(append(p, k), sub[k])
		}
	}
	for _, k := range sortedKeys(t) {
		walk(Path{k}, t[k])
	}
}

func sortedKeys(t Tree) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	return keys
}

// compareKeys orders keys as a person expects: swp2 before swp10, and
// addresses and prefixes by their numbers; else as strings.
func compareKeys(a, b string) int {
	if c, ok := compareNumbered(a, b); ok {
		return c
	}
	if x, err := netip.ParsePrefix(a); err == nil {
		if y, err := netip.ParsePrefix(b); err == nil {
			return cmp.Or(x.Addr().Compare(y.Addr()), cmp.Compare(x.Bits(), y.Bits()))
		}
	}
	if x, err := netip.ParseAddr(a); err == nil {
		if y, err := netip.ParseAddr(b); err == nil {
			return x.Compare(y)
		}
	}
	return strings.Compare(a, b)
}

// compareNumbered compares two names of the form <letters><number> with
// the same letters (swp2, swp10) by number; ok is false otherwise.
func compareNumbered(a, b string) (c int, ok bool) {
	ia, ib := strings.IndexFunc(a, isDigit), strings.IndexFunc(b, isDigit)
	if ia <= 0 || ib <= 0 || a[:ia] != b[:ib] {
		return 0, false
	}
	na, ea := strconv.Atoi(a[ia:])
	nb, eb := strconv.Atoi(b[ib:])
	if ea != nil || eb != nil {
		return 0, false
	}
	return cmp.Compare(na, nb), true
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
