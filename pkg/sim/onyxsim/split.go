package onyxsim

// Split ports and BFD on the simulated switch. A port splits with
// `interface ethernet 1/N module-type qsfp-split-2|4 [force]` once it is
// shut down; it is then unmapped (its settings go, and `interface ethernet
// 1/N …` no longer exists) and its lanes 1/N/1 … 1/N/M are ports of their
// own (NVIDIA Onyx User Manual, "Ethernet Interfaces"; the shutdown, the
// question "Type 'YES' to confirm split" that `force` skips, and the
// unmapping from published ONYX split procedures, docs/rules.md#split-ports).
// A split that takes the next port's logical ports (the SN2700's 4x;
// inventory.Switch.Blocks) splits only an odd port, needs the even port
// after it shut down too, and unmaps it as well ("the following
// interfaces will be unmapped: 1/31 1/32" [INF] by the published SN2700
// procedure, which shuts both down first); it exists again once the port
// is whole. `module-type qsfp` makes the port whole again. Where running-config
// prints the split is not shown in any source: here as the command was
// typed, on the parent, in "Interface Ethernet configuration" [INF], as
// is that a split port may change its mode without being made whole
// first. Which ports split, and how far, follows the model's table
// (Options.Model; pkg/inventory).
//
// BFD: the default VRF's timers, typed as `ip bfd [vrf default] interval
// min-rx <ms> multiplier <n> transmit-rate <ms> [force]` and printed one
// line each, `ip bfd vrf default interval min-rx <ms> force` … (the lines
// mellanox.onyx's onyx_bfd module reads back), under "BFD configuration"
// (a running-config section title of published ONYX configs); the ranges
// are onyx_bfd's (min-rx 50–6000, multiplier 3–50, transmit-rate
// 50–60000). A BGP session follows BFD with `router bgp ASN vrf default
// neighbor <a> fall-over bfd` (fabric.go).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// splitMode is the number of lanes port n is split into, 0 when whole.
func (c *config) splitMode(n int) int {
	e := c.slots["eth|1/"+strconv.Itoa(n)+"|module-type"]
	if e == nil {
		return 0
	}
	m, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(e.body, "module-type qsfp-split-"), " force"))
	return m
}

// splits reports whether port n of the model splits mode ways (an odd
// port, where the mode takes the next port).
func (c *config) splits(n, mode int) bool {
	if c.model == "" {
		return mode == 2 || mode == 4
	}
	sw := c.modelSwitch()
	return sw.Splits(n) && slices.Contains(sw.BreakoutModes(), mode) && mode <= 4 && (!sw.Blocks(mode) || n%2 == 1)
}

// modelSwitch is the simulated model as pkg/inventory knows it (running
// ONYX: a Switch without a Cumulus release).
func (c *config) modelSwitch() inventory.Switch {
	return inventory.Switch{Model: strings.ToUpper(c.model)}
}

// blocks reports whether a split of the model mode ways takes the next
// port.
func (c *config) blocks(mode int) bool {
	return c.model != "" && c.modelSwitch().Blocks(mode)
}

// unmappedBy is the split port whose split unmaps port n (n-1), or 0.
func (c *config) unmappedBy(n int) int {
	if n > 1 && c.blocks(c.splitMode(n-1)) {
		return n - 1
	}
	return 0
}

// moduleTypeCommand is `interface ethernet 1/N module-type <type> [force]`.
func (c *config) moduleTypeCommand(id string, w []string) outcome {
	f := strings.Split(id, "/")
	n, err := 0, error(nil)
	if len(f) == 2 && f[0] == "1" {
		n, err = strconv.Atoi(f[1])
	}
	if len(f) != 2 || f[0] != "1" || err != nil || n < 1 || n > c.ports || c.unmappedBy(n) > 0 {
		return fail("Interface ethernet %s does not exist", id)
	}
	force := len(w) == 2 && w[1] == "force"
	if len(w) != 1 && !force {
		return unrecognized(w[len(w)-1])
	}
	slot := "eth|1/" + strconv.Itoa(n) + "|"
	clearLanes := func() {
		for k := range c.slots {
			if strings.HasPrefix(k, "eth|1/"+strconv.Itoa(n)+"/") {
				delete(c.slots, k)
			}
		}
	}
	if w[0] == "qsfp" {
		return ok(func() { clearLanes(); c.del(slot + "module-type") })
	}
	mode, err := strconv.Atoi(strings.TrimPrefix(w[0], "qsfp-split-"))
	if !strings.HasPrefix(w[0], "qsfp-split-") || err != nil {
		return unrecognized(w[0])
	}
	if !c.splits(n, mode) {
		return fail("Interface ethernet 1/%d cannot be split to %d ports on this system", n, mode)
	}
	if c.splitMode(n) == 0 && c.slots[slot+"shutdown"] == nil {
		return fail("Interface ethernet 1/%d must be shut down before its module type is changed", n)
	}
	unmapped := "1/" + strconv.Itoa(n)
	next := "eth|1/" + strconv.Itoa(n+1) + "|"
	takesNext := c.blocks(mode) && c.splitMode(n) != mode
	if takesNext {
		switch {
		case c.splitMode(n+1) > 0:
			return fail("Interface ethernet 1/%d is split: a %d-way split of 1/%d takes its ports", n+1, mode, n)
		case c.slots[next+"shutdown"] == nil:
			return fail("Interface ethernet 1/%d must be shut down before 1/%d is split to %d ports", n+1, n, mode)
		}
		unmapped += " 1/" + strconv.Itoa(n+1)
	}
	apply := func() {
		for k := range c.slots {
			if strings.HasPrefix(k, slot) || takesNext && strings.HasPrefix(k, next) {
				delete(c.slots, k) // the parent (and the port it takes) unmapped
			}
		}
		clearLanes()
		c.set(slot+"module-type", &entry{sec: secIfEth, rank: 0, prefix: "interface ethernet", id: "1/" + strconv.Itoa(n),
			body: fmt.Sprintf("module-type qsfp-split-%d force", mode)})
	}
	if !force {
		return outcome{apply: apply, answer: "YES",
			confirm: fmt.Sprintf("the following interfaces will be unmapped: %s\r\nType 'YES' to confirm split: ", unmapped)}
	}
	return ok(apply)
}

// bfdCommand is `[no] ip bfd [vrf default] interval …`; handled is false
// for other `ip bfd` forms.
func (c *config) bfdCommand(w []string, neg bool) (o outcome, handled bool) {
	if len(w) >= 2 && w[0] == "vrf" {
		if w[1] != "default" {
			return fail("VRF %s does not exist", w[1]), true
		}
		w = w[2:]
	}
	if len(w) > 0 && w[len(w)-1] == "force" {
		w = w[:len(w)-1]
	}
	if len(w) < 3 || w[0] != "interval" || len(w)%2 != 1 {
		return outcome{}, false
	}
	limits := map[string][2]int{"min-rx": {50, 6000}, "multiplier": {3, 50}, "transmit-rate": {50, 60000}}
	type set struct{ key, val string }
	var sets []set
	for i := 1; i+1 < len(w); i += 2 {
		lim, known := limits[w[i]]
		if !known {
			return unrecognized(w[i]), true
		}
		v, err := strconv.Atoi(w[i+1])
		if err != nil || v < lim[0] || v > lim[1] {
			return fail("Invalid %s %s: %d-%d", w[i], w[i+1], lim[0], lim[1]), true
		}
		sets = append(sets, set{w[i], w[i+1]})
	}
	order := map[string]uint64{"min-rx": 1, "multiplier": 2, "transmit-rate": 3}
	return ok(func() {
		for _, x := range sets {
			if neg {
				c.del("bfd|" + x.key)
				continue
			}
			c.set("bfd|"+x.key, &entry{sec: secBFD, rank: 1, order: order[x.key], body: "ip bfd vrf default interval " + x.key + " " + x.val + " force"})
		}
	}), true
}
