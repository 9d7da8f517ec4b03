package onyx

// Split (breakout) ports and port descriptions on ONYX (docs/rules.md,
// "Split ports" and "Port descriptions"). A port splits with `interface
// ethernet 1/N module-type qsfp-split-2|4 force` after it is shut down;
// its lanes are then ports of their own, 1/N/1 … 1/N/4 (NVIDIA Onyx User
// Manual, "Ethernet Interfaces": "splitting port 10 into 4 lanes gives the
// following new ports: 1/10/1, 1/10/2, 1/10/3, 1/10/4"; the shutdown and
// the `force` form that skips the "Type 'YES' to confirm split" question
// are from published ONYX procedures, docs/research/onyx.md). A port's
// description is `interface ethernet 1/N description <text>`, printed as a
// flat line in running-config (mellanox.onyx's onyx_interface module; the
// intel/mfd-switchmanagement running-config fixture).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// ModuleType is `interface ethernet 1/N module-type qsfp-split-<mode>
// force`: port 1/N split into mode lanes (2 or 4; ONYX's QSFP ports split
// no further, and ONYX does not run on the SN5600, whose ports split 8x).
func ModuleType(n, mode int) Statement {
	return Statement{Kind: KindModuleType, Iface: Ethernet(1, n), Key: "module-type",
		Body: "module-type qsfp-split-" + strconv.Itoa(mode) + " force"}
}

// PortShutdown is `interface ethernet <port> shutdown`, which a port needs
// before its module type changes (published ONYX split procedures: shut
// the port, then `module-type qsfp-split-4 force`). Diff sends it right
// before a ModuleType; Desired never holds it.
func PortShutdown(i Iface) Statement {
	return Statement{Kind: KindPortShutdown, Iface: i, Key: "shutdown", Body: "shutdown"}
}

// Description is `interface ethernet <port> description <text>`: text is
// one of inventory.PortDescriptions, one word (no spaces or quotes), so it
// reads back as written.
func Description(i Iface, text string) Statement {
	return Statement{Kind: KindDescription, Iface: i, Key: "description", Body: "description " + text}
}

// splits are switch sw's breakout and description statements: each split
// port's ModuleType, and the Description of every port rdggen configures
// that has something cabled to it (inventory.PortDescriptions).
func splits(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	var out []Statement
	for _, n := range sw.SplitPorts() {
		m := ModuleType(n, sw.Breakout(n))
		if sw.Blocks(sw.Breakout(n)) {
			m.Unmaps = Ethernet(1, n+1)
		}
		out = append(out, m)
	}
	for p, d := range inv.PortDescriptions(sw.Name) {
		out = append(out, Description(PortIface(p), d))
	}
	return out
}

// splitShutdowns are the shutdowns of each split port of sw (and of the
// port its split unmaps), for the file to paste: a port is shut down
// before its module-type changes (PortShutdown). Not in Desired: once
// split, the port's lanes are the ports, and running-config shows the
// parent no more.
func splitShutdowns(inv *inventory.Inventory, sw inventory.Switch) []Statement {
	var out []Statement
	for _, s := range splits(inv, sw) {
		if s.Kind == KindModuleType {
			out = append(out, splitShutdown(s)...)
		}
	}
	return out
}

// splitShutdown is what is shut down before module-type statement m: its
// port, and the port the split unmaps (Statement.Unmaps: the published
// procedure for a 4-way split on an SN2700 shuts down both 1/31 and 1/32
// first).
func splitShutdown(m Statement) []Statement {
	out := []Statement{PortShutdown(m.Iface)}
	if m.Unmaps != (Iface{}) {
		out = append(out, PortShutdown(m.Unmaps))
	}
	return out
}

// splitHeader is what the file's header says of the split ports ("" for
// none).
func splitHeader(sw inventory.Switch) string {
	var parts []string
	for _, n := range sw.SplitPorts() {
		mode := sw.Breakout(n)
		unmapped := ""
		if sw.Blocks(mode) {
			unmapped = fmt.Sprintf("; 1/%d unmapped", n+1)
		}
		parts = append(parts, fmt.Sprintf("1/%d qsfp-split-%d (1/%d/1-1/%d/%d%s)", n, mode, n, n, mode, unmapped))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Split ports: " + strings.Join(parts, ", ") + "; each is shut down, then split (here and in apply's plan), which flaps the port."
}

// splitWarnings say of each breakout a plan sends that it flaps the port.
func splitWarnings(p Plan) []string {
	var out []string
	for _, c := range p.Changes {
		if c.Kind != KindModuleType {
			continue
		}
		for _, s := range c.Statements {
			w := strings.Fields(s.Body)
			mode := strings.TrimPrefix(w[1], "qsfp-split-")
			unmapped := ""
			if s.Unmaps != (Iface{}) {
				unmapped = fmt.Sprintf("; the split also unmaps ethernet %s (shut down with it), whose logical ports the lanes take", s.Unmaps.ID)
			}
			out = append(out, fmt.Sprintf("%s: the breakout flaps the port: apply shuts ethernet %s down and splits it into %s ports (%s/1 …), which come up as new ports; the host or uplink on each loses its link meanwhile%s",
				s.Command(), s.Iface.ID, mode, s.Iface.ID, unmapped))
		}
	}
	return out
}

// userDescriptions leaves the user's port descriptions alone: a desired
// Description is dropped where the port carries another description that
// is not in one of rdggen's forms (inventory.IsPortDescription), and a
// note names it; rdggen's own earlier description (a host recabled) is
// replaced.
func userDescriptions(desired, current []Statement, notes []string) ([]Statement, []string) {
	out := desired[:0:0]
	for _, d := range desired {
		if d.Kind == KindDescription {
			if c, ok := currentStatement(current, d.ID()); ok && c.Body != d.Body && !c.Negated() {
				if text := strings.TrimPrefix(c.Body, "description "); !inventory.IsPortDescription(text) {
					notes = append(notes, fmt.Sprintf("%s is not one of rdggen's descriptions, so rdggen leaves it (it would write %s)", c.Command(), d.Command()))
					continue
				}
			}
		}
		out = append(out, d)
	}
	return out, notes
}
