package onyx

import "github.com/rdggen/rdggen/pkg/inventory"

// Desired returns the statements rdggen wants on switch sw, sorted (Sort):
// lossless RoCE in DSCP-based QoS mode (docs/rules.md#switch-onyx) on every front-panel port
// 1/1 … 1/sw.Ports, as the guide configures `1/1-1/32`. Every value comes
// from inv.RoCE through the constructors in statement.go:
//
// ONYX < 3.8.2000, the explicit commands (docs/rules.md#explicit-qos-commands):
//
//	traffic pool roce type lossless
//	traffic pool roce memory percent <buffer_percent>
//	traffic pool roce map switch-priority <priority>
//	interface ethernet <all> qos trust L3
//	interface ethernet <all> traffic-class <priority> congestion-control ecn minimum-absolute <ecn_min_kb> maximum-absolute <ecn_max_kb>
//	interface ethernet <all> traffic-class <cnp_priority> dcb ets strict
//	dcb priority-flow-control enable force
//	dcb priority-flow-control priority <priority> enable
//	interface ethernet <all> dcb priority-flow-control mode on force
//
// ONYX ≥ 3.8.2000, the one-command template instead (docs/rules.md#one-command-roce-template; never
// both forms): `roce lossless`, when UsesRoCETemplate says the template's
// fixed values are the inventory's.
//
// With docker.routing: switch, the gateway switch also gets the routed
// pool's statements (L3). Every split port gets its breakout
// (`interface ethernet 1/N module-type qsfp-split-<mode> force`) and every
// port with a host or an uplink a description naming it (split.go).
//
// Both end with `lldp` (so DCBX can tell the NICs the PFC/ETS settings) and
// `hostname <switch>`, and for a jumbo-frame data network both set every
// front-panel port's MTU to PortMTU: the data network's frames cross every
// port, uplinks included. DSCP values do not appear: with trust L3 ONYX maps DSCP
// to switch priority as DSCP/8, which inventory validation checks (docs/rules.md#dscp-and-switch-priority).
func Desired(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	var out []Statement
	if UsesRoCETemplate(inv, sw) {
		out = append(out, RoCE("lossless"))
	} else {
		r := inv.RoCE
		out = append(out,
			PoolType(RoCEPool, "lossless"),
			PoolMemory(RoCEPool, r.BufferPercent),
			PoolMap(RoCEPool, r.Priority),
			PFC(),
			PFCPriority(r.Priority),
		)
		for _, p := range Ports(inv, sw) {
			out = append(out,
				Trust(p, "L3"),
				ECN(p, r.Priority, r.ECNMinKB, r.ECNMaxKB),
				ETSStrict(p, r.CNPPriority),
				PFCPort(p),
			)
		}
	}
	if mtu := SwitchPortMTU(inv, sw); mtu != DefaultPortMTU {
		for _, p := range Ports(inv, sw) {
			out = append(out, MTU(p, mtu))
		}
	}
	out = append(out, splits(inv, sw)...) // split.go: breakouts and port descriptions
	out = append(out, L3(inv, sw)...)
	out = append(out, Fabric(inv, sw)...) // fabric.go; nil outside a fabric
	out = append(out, LLDP(), Hostname(sw.Name))
	Sort(out)
	return out
}

// JumboPortMTU is the switch ports' MTU for a jumbo-frame data network:
// 9216 bytes, Spectrum's largest common port MTU and NVIDIA's setting for
// RoCE fabrics, so that the hosts' MTU (at most 9000, vSphere's limit) is
// the one that decides, with 216 bytes to spare for tags and
// encapsulations.
const JumboPortMTU = 9216

// DefaultPortMTU is ONYX's port MTU when none is configured; running-config
// does not show it.
const DefaultPortMTU = 1500

// PortMTU is the MTU the switch ports need, in bytes: JumboPortMTU when the
// data MTU is above 1500, else ONYX's default 1500, which carries 1500-byte
// IP packets (ONYX's MTU excludes the 22 bytes of Ethernet header, 802.1Q
// tag and FCS — see MTU) and is left as it is: Desired writes no MTU then.
// Diff never lowers a port's MTU: a larger one is harmless and may serve
// other traffic.
func PortMTU(inv *inventory.Inventory) int {
	if inv.DataMTU() > DefaultPortMTU {
		return JumboPortMTU
	}
	return DefaultPortMTU
}

// SwitchPortMTU is the MTU apply sets on switch sw's ports: PortMTU, and
// JumboPortMTU on every port of a fabric switch (one MTU on every hop of
// the fabric, uplinks included).
func SwitchPortMTU(inv *inventory.Inventory, sw inventory.Switch) int {
	if sw.Fabric.Role != "" {
		return JumboPortMTU
	}
	return PortMTU(inv)
}

// FrontPanel returns the switch's front-panel ports 1/1 … 1/sw.Ports (the
// model's port count, pkg/inventory; docs/rules.md#models-and-ports).
func FrontPanel(sw inventory.Switch) []Iface {
	out := make([]Iface, sw.Ports)
	for n := range out {
		out[n] = Ethernet(1, n+1)
	}
	return out
}

// The fixed values of the `roce lossless` template, from `show roce` on an
// SN2700 with ONYX 3.10.4006 (docs/rules.md#one-command-roce-template): RoCE on switch priority
// and traffic class 3 with PFC, CNPs on 6 with strict ETS, ECN between 150
// and 1500 KB. Its lossless pool (roce-reserved) is sized automatically.
const (
	templatePriority    = 3
	templateCNPPriority = 6
	templateECNMinKB    = 150
	templateECNMaxKB    = 1500
)

// UsesRoCETemplate reports whether switch sw gets the one-command `roce
// lossless` form: its ONYX has it (≥ 3.8.2000) and the inventory's
// priorities and ECN thresholds are the template's. Otherwise the explicit
// commands are used, which ONYX 3.6–3.10 all take (docs/rules.md#explicit-qos-commands), so that
// no inventory value is silently dropped. The template sizes its lossless pool
// itself, so a buffer_percent other than the default also selects the
// explicit commands, which set it.
func UsesRoCETemplate(inv *inventory.Inventory, sw inventory.Switch) bool {
	r := inv.RoCE
	return sw.HasRoCECommand() && r.Priority == templatePriority && r.CNPPriority == templateCNPPriority &&
		r.ECNMinKB == templateECNMinKB && r.ECNMaxKB == templateECNMaxKB && r.BufferPercent == inventory.DefaultBufferPercent
}
