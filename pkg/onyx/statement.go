package onyx

import (
	"sort"
	"strconv"
	"strings"
)

// Kind says which setting a Statement makes. The owned kinds are listed in
// running-config order (docs/rules.md#running-config-format, §2.3: the switch replays that
// file top-down at boot, so the order is one it accepts): RoCE template,
// buffer pool, L3 (routing, the data VLAN's interface, static routes), QoS
// (trust, ECN), DCBX ETS, DCBX PFC, LLDP, hostname. Everything else on a
// switch is KindOther.
type Kind int

// Kinds of statements, in the order they are rendered and sent.
const (
	// KindOther is any command rdggen does not generate; Diff never sends one.
	KindOther Kind = iota
	// KindPortShutdown is `interface ethernet 1/N shutdown`, which Diff
	// sends right before a port's breakout (KindModuleType); never in
	// Desired (split.go).
	KindPortShutdown
	// KindModuleType is `interface ethernet 1/N module-type
	// qsfp-split-2|4 force`: the port's breakout (split.go). Before every
	// setting of the port's lanes.
	KindModuleType
	// KindMTU is `interface … mtu <bytes> force`.
	KindMTU
	// KindRoutedPort is `interface ethernet … no switchport force`: a
	// fabric uplink made a routed port (fabric.go).
	KindRoutedPort
	// KindDescription is `interface ethernet … description <text>`: what
	// is cabled to the port (split.go).
	KindDescription
	// KindVLAN is `vlan <n>`, a VLAN of a rail other than rail 0 on a leaf
	// (RailVLAN), and KindAccessVLAN `interface ethernet <port> switchport
	// access vlan <n>`, a port of that rail in it.
	KindVLAN
	KindAccessVLAN
	// KindRoCE is the one-command template `roce lossless` (ONYX ≥ 3.8.2000).
	KindRoCE
	// KindPoolType is `traffic pool <name> type lossless`.
	KindPoolType
	// KindPoolMemory is `traffic pool <name> memory percent <pct>`.
	KindPoolMemory
	// KindPoolMap is `traffic pool <name> map switch-priority <sp>`.
	KindPoolMap
	// KindIPRouting is `ip routing vrf default` (l3.go).
	KindIPRouting
	// KindVLANIface is `interface vlan <n>`, the VLAN's IP interface (in a
	// fabric also `interface loopback 0`, fabric.go).
	KindVLANIface
	// KindVLANAddress is `interface vlan <n> ip address <a>/<m> primary`
	// (in a fabric also a loopback's and a routed uplink's address).
	KindVLANAddress
	// KindICMPRedirect is `no interface vlan <n> ip icmp redirect`.
	KindICMPRedirect
	// KindVLANMTU is `interface vlan <n> mtu <bytes>`.
	KindVLANMTU
	// KindVLANDescription is `interface vlan <n> description <text>`; rdggen
	// writes only its record of the routed pool (PoolRecord) there.
	KindVLANDescription
	// KindRoute is `ip route vrf default <prefix> <next hop>`.
	KindRoute
	// KindProtocolBGP is `protocol bgp`, BGP turned on (fabric.go).
	KindProtocolBGP
	// KindBGP is a `router bgp <asn> vrf default …` line (fabric.go).
	KindBGP
	// KindBGPBFD is `router bgp <asn> vrf default neighbor <a> fall-over
	// bfd`: BFD on a session, after the neighbor exists (fabric.go).
	KindBGPBFD
	// KindBFD is an `ip bfd vrf default interval …` line: the BFD timers
	// (fabric.go).
	KindBFD
	// KindRewriteDSCP is `interface … [no] qos rewrite dscp`; rdggen only
	// turns it off where it changes a port's trust (see Diff).
	KindRewriteDSCP
	// KindTrust is `interface … qos trust L3`.
	KindTrust
	// KindCongestion is `interface … traffic-class <tc> congestion-control ecn …`.
	KindCongestion
	// KindETS is `interface … traffic-class <tc> dcb ets strict`.
	KindETS
	// KindPFC is `dcb priority-flow-control enable force`.
	KindPFC
	// KindPFCPriority is `dcb priority-flow-control priority <sp> enable`.
	KindPFCPriority
	// KindPFCPort is `interface … dcb priority-flow-control mode on force`.
	KindPFCPort
	// KindLLDP is `lldp`.
	KindLLDP
	// KindHostname is `hostname <name>`.
	KindHostname
)

// section is the running-config section title of each kind. Titles come from
// real running-configs (docs/rules.md#explicit-qos-commands, §2.1) and the guide's sample;
// "RoCE configuration" is an assumption: how `roce` shows in running-config
// was not found (docs/rules.md#one-command-roce-template, inferred). The L3 kinds are under "L3
// configuration" as in HPE's published ONYX 3.9.3210 running-config; under
// which banner ONYX prints static routes was not found, so they are put
// there too (docs/research/onyx-l3.md).
var section = map[Kind]string{
	KindPortShutdown:    "Interface Ethernet configuration",
	KindModuleType:      "Interface Ethernet configuration",
	KindMTU:             "Interface Ethernet configuration",
	KindRoutedPort:      "Interface Ethernet configuration",
	KindVLAN:            "VLAN configuration",
	KindAccessVLAN:      "Interface Ethernet configuration",
	KindProtocolBGP:     "BGP protocol",
	KindBGP:             "BGP configuration",
	KindBGPBFD:          "BGP configuration",
	KindBFD:             "BFD configuration",
	KindDescription:     "Interface Ethernet configuration",
	KindRoCE:            "RoCE configuration",
	KindPoolType:        "Interface Ethernet buffer configuration",
	KindPoolMemory:      "Interface Ethernet buffer configuration",
	KindPoolMap:         "Interface Ethernet buffer configuration",
	KindIPRouting:       "L3 configuration",
	KindVLANIface:       "L3 configuration",
	KindVLANAddress:     "L3 configuration",
	KindICMPRedirect:    "L3 configuration",
	KindVLANMTU:         "L3 configuration",
	KindVLANDescription: "L3 configuration",
	KindRoute:           "L3 configuration",
	KindRewriteDSCP:     "QoS switch configuration",
	KindTrust:           "QoS switch configuration",
	KindCongestion:      "QoS switch configuration",
	KindETS:             "DCBX ETS configuration",
	KindPFC:             "DCBX PFC configuration",
	KindPFCPriority:     "DCBX PFC configuration",
	KindPFCPort:         "DCBX PFC configuration",
	KindLLDP:            "LLDP configuration",
	KindHostname:        "Other IP configuration",
	KindOther:           "Other configuration",
}

// Statement is one flat ONYX configuration command in normal form: a single
// interface (ranges expanded), numbers canonical (`50.00`), single spaces,
// the `force` of forms that would otherwise ask for confirmation included.
// Generator output and a parsed running-config are both []Statement, so they
// compare directly.
type Statement struct {
	// Kind is the setting; KindOther for commands rdggen does not own.
	Kind Kind
	// Iface is the interface of an interface command; zero for a global one.
	Iface Iface
	// Key names the setting within Iface; two statements with the same Iface
	// and Key set the same thing, so the switch keeps only one of them. For
	// example "qos trust" (value L2, L3 or both) or
	// "traffic-class 3 congestion-control" (value: mode and thresholds).
	// For KindOther the key is the whole Body.
	Key string
	// Body is the command after `interface <iface> ` (the whole command for a
	// global one), e.g. "qos trust L3" or "no lldp".
	Body string
	// Unmaps is, on a desired KindModuleType, the port the split unmaps
	// (the even port after an SN2700's 4x: inventory.Switch.Blocks), which
	// is shut down with the port before the split (split.go); zero
	// otherwise, and never read from a switch. It is not part of the ID.
	Unmaps Iface
}

// ID is what identifies a setting on a switch: the interface and the key.
type ID struct {
	Iface Iface
	Key   string
}

// ID returns the statement's identity: the statements of a switch with the
// same ID conflict.
func (s Statement) ID() ID { return ID{s.Iface, s.Key} }

// Negated reports whether the statement is a `no …` form.
func (s Statement) Negated() bool { return strings.HasPrefix(s.Body, "no ") }

// Command is the flat command for one interface, as it is sent or read,
// e.g. "interface ethernet 1/1 qos trust L3".
func (s Statement) Command() string {
	if s.Iface.IsZero() {
		return s.Body
	}
	return ifaceCommand(s.Kind, s.Iface.String(), s.Body)
}

// ifaceCommand is the flat command for body on the interface(s) iface
// ("vlan 1", "ethernet 1/1-1/8"): "interface <iface> <body>", or
// "interface <iface>" alone for an empty body. The negated forms of the
// kinds in noFirst put the `no` in front, as ONYX prints them and CANU's
// ONYX templates send them (`no interface vlan 1 ip icmp redirect`), and
// the body "no" removes the interface (`no interface vlan 1`).
func ifaceCommand(k Kind, iface, body string) string {
	if noFirst[k] && (body == "no" || strings.HasPrefix(body, "no ")) {
		return strings.TrimSpace("no interface " + iface + " " + strings.TrimPrefix(strings.TrimPrefix(body, "no"), " "))
	}
	if body == "" {
		return "interface " + iface
	}
	return "interface " + iface + " " + body
}

// noFirst are the kinds whose negated form starts with `no interface`.
var noFirst = map[Kind]bool{KindVLANIface: true, KindICMPRedirect: true}

// String is Command.
func (s Statement) String() string { return s.Command() }

// Compare orders statements as they are rendered and sent: by Kind, then
// interface (numerically), then key, then body.
func Compare(a, b Statement) int {
	switch {
	case a.Kind != b.Kind:
		return int(a.Kind) - int(b.Kind)
	case a.Iface != b.Iface:
		if a.Iface.IsZero() != b.Iface.IsZero() {
			if a.Iface.IsZero() {
				return -1
			}
			return 1
		}
		return compareIface(a.Iface, b.Iface)
	case a.Key != b.Key:
		if a.Kind == KindRoute { // by prefix, numerically: 172.16.9.0/24 before 172.16.10.0/24
			if c := compareRoutes(a, b); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Key, b.Key)
	}
	return strings.Compare(a.Body, b.Body)
}

// compareRoutes orders two routes by prefix address, length and next hop.
func compareRoutes(a, b Statement) int {
	da, va, okA := a.RouteOf()
	db, vb, okB := b.RouteOf()
	switch {
	case !okA || !okB:
		return 0
	case da.Addr() != db.Addr():
		return da.Addr().Compare(db.Addr())
	case da.Bits() != db.Bits():
		return da.Bits() - db.Bits()
	}
	return va.Compare(vb)
}

// Sort orders statements with Compare, stably.
func Sort(stmts []Statement) {
	sort.SliceStable(stmts, func(i, j int) bool { return Compare(stmts[i], stmts[j]) < 0 })
}

// RoCEPool is the name of the lossless buffer pool rdggen creates
// (`traffic pool roce …`; the NVIDIA recipe's and onyx_buffer_pool's name,
// docs/rules.md#explicit-qos-commands; at most 20 characters).
const RoCEPool = "roce"

// RoCE is the one-command RoCE template, `roce <mode>` with mode "lossless",
// "semi-lossless" or "lossy" (ONYX ≥ 3.8.2000, NVIDIA ONYX manual "RoCE
// commands"; docs/rules.md#one-command-roce-template). A bare `roce` means lossless.
func RoCE(mode string) Statement {
	return Statement{Kind: KindRoCE, Key: "roce", Body: "roce " + mode}
}

// PoolType is `traffic pool <pool> type <typ>`, typ "lossless", "lossy" or
// "lossy-mc"; it creates the pool when missing (ONYX manual "Shared buffer
// commands", from 3.6.5000; docs/rules.md#explicit-qos-commands).
func PoolType(pool, typ string) Statement {
	return Statement{Kind: KindPoolType, Key: "traffic pool " + pool + " type",
		Body: "traffic pool " + pool + " type " + typ}
}

// PoolMemory is `traffic pool <pool> memory percent <percent>`: the pool's
// share of the switch buffer, in percent, written with two decimals as the
// switch prints it (`50.00`; docs/rules.md#running-config-format).
func PoolMemory(pool string, percent float64) Statement {
	return Statement{Kind: KindPoolMemory, Key: "traffic pool " + pool + " memory",
		Body: "traffic pool " + pool + " memory percent " + strconv.FormatFloat(percent, 'f', 2, 64)}
}

// PoolMap is `traffic pool <pool> map switch-priority <sp>`: switch priority
// sp (0–7) uses the pool. A switch priority belongs to one pool, so the key
// is the priority and the value the pool (docs/rules.md#explicit-qos-commands; onyx_buffer_pool).
func PoolMap(pool string, sp int) Statement {
	p := strconv.Itoa(sp)
	return Statement{Kind: KindPoolMap, Key: "switch-priority " + p + " pool",
		Body: "traffic pool " + pool + " map switch-priority " + p}
}

// Trust is `interface <iface> qos trust <mode>`, mode "L2" (PCP, the
// default), "L3" (DSCP) or "both" (onyx_qos; docs/rules.md#explicit-qos-commands).
func Trust(iface Iface, mode string) Statement {
	return Statement{Kind: KindTrust, Iface: iface, Key: "qos trust", Body: "qos trust " + mode}
}

// NoRewriteDSCP is `interface <iface> no qos rewrite dscp`. Mellanox's
// onyx_qos module sends it before it changes a port's trust to L3 when DSCP
// rewrite is on (docs/rules.md#comparing-with-a-live-switch), and so does Diff.
func NoRewriteDSCP(iface Iface) Statement {
	return Statement{Kind: KindRewriteDSCP, Iface: iface, Key: "qos rewrite dscp", Body: "no qos rewrite dscp"}
}

// ECN is `interface <iface> traffic-class <tc> congestion-control ecn
// minimum-absolute <minKB> maximum-absolute <maxKB>`: ECN marking on traffic
// class tc between the thresholds, in KB (onyx_traffic_class; the NVIDIA
// recipe uses 150/1500; docs/rules.md#explicit-qos-commands).
func ECN(iface Iface, tc, minKB, maxKB int) Statement {
	return congestion(iface, tc, "ecn", "absolute", minKB, maxKB)
}

// congestion is the general congestion-control form: mode ecn, red or both;
// unit absolute (KB) or relative (percent).
func congestion(iface Iface, tc int, mode, unit string, lo, hi int) Statement {
	t := strconv.Itoa(tc)
	return Statement{Kind: KindCongestion, Iface: iface, Key: "traffic-class " + t + " congestion-control",
		Body: "traffic-class " + t + " congestion-control " + mode +
			" minimum-" + unit + " " + strconv.Itoa(lo) + " maximum-" + unit + " " + strconv.Itoa(hi)}
}

// ETSStrict is `interface <iface> traffic-class <tc> dcb ets strict`: strict
// priority scheduling for traffic class tc, used for CNPs (docs/rules.md#explicit-qos-commands).
func ETSStrict(iface Iface, tc int) Statement {
	return ets(iface, tc, "strict")
}

func ets(iface Iface, tc int, sched string) Statement {
	t := strconv.Itoa(tc)
	return Statement{Kind: KindETS, Iface: iface, Key: "traffic-class " + t + " dcb ets",
		Body: "traffic-class " + t + " dcb ets " + sched}
}

// PFC is `dcb priority-flow-control enable force`: PFC on globally, in the
// form that does not ask for confirmation (docs/rules.md#explicit-qos-commands).
func PFC() Statement {
	return Statement{Kind: KindPFC, Key: "dcb priority-flow-control", Body: "dcb priority-flow-control enable force"}
}

// PFCPriority is `dcb priority-flow-control priority <sp> enable`: PFC on
// switch priority sp (0–7) (docs/rules.md#explicit-qos-commands).
func PFCPriority(sp int) Statement {
	p := strconv.Itoa(sp)
	return Statement{Kind: KindPFCPriority, Key: "dcb priority-flow-control priority " + p,
		Body: "dcb priority-flow-control priority " + p + " enable"}
}

// PFCPort is `interface <iface> dcb priority-flow-control mode on force`: PFC
// on for the port, without a confirmation question (onyx_pfc_interface;
// docs/rules.md#explicit-qos-commands).
func PFCPort(iface Iface) Statement {
	return Statement{Kind: KindPFCPort, Iface: iface, Key: "dcb priority-flow-control mode",
		Body: "dcb priority-flow-control mode on force"}
}

// LLDP is `lldp`: LLDP on, so the NICs learn PFC/ETS through DCBX (the
// guide's running-config; docs/rules.md#one-command-roce-template).
func LLDP() Statement { return Statement{Kind: KindLLDP, Key: "lldp", Body: "lldp"} }

// Hostname is `hostname <name>` (the guide's running-config).
func Hostname(name string) Statement {
	return Statement{Kind: KindHostname, Key: "hostname", Body: "hostname " + name}
}

// MTU is `interface <iface> mtu <bytes> force`: the port's MTU, in the form
// that does not ask to confirm (a port that is up restarts its link;
// onyx_interface appends `force` too; docs/rules.md#explicit-qos-commands). ONYX's MTU is
// the frame's payload: `show interfaces` prints "MTU 1500 bytes (Maximum
// packet size 1522 bytes)", the 22 bytes being the Ethernet header, an
// 802.1Q tag and the FCS (mellanox.onyx fixture onyx_interfaces_show.cfg).
func MTU(iface Iface, bytes int) Statement {
	return Statement{Kind: KindMTU, Iface: iface, Key: "mtu", Body: "mtu " + strconv.Itoa(bytes) + " force"}
}

// MTUValue is the bytes of a KindMTU statement (0 when it is not one).
func (s Statement) MTUValue() int {
	f := strings.Fields(s.Body)
	if s.Kind != KindMTU || len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// other is a command rdggen does not own; its key is its body.
func other(iface Iface, body string) Statement {
	return Statement{Kind: KindOther, Iface: iface, Key: body, Body: body}
}

// NoShutdown is `interface <iface> no shutdown`: the port administratively
// up (onyx_interface.py of the mellanox.onyx collection sends `no shutdown`
// in the port's context for enabled: true). rdggen never sends it; `rdggen
// check` names it as the fix of a port that is shut down. It is a command
// rdggen does not own (KindOther).
func NoShutdown(iface Iface) Statement { return other(iface, "no shutdown") }
