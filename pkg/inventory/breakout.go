package inventory

// Split (breakout) ports (docs/rules.md#split-ports): a front-panel port
// breaks out into 2, 4 or 8 ports (its lanes), and the breakout MODE sets
// every lane's speed, not the lane's index: on an SN5600 (an 800G OSFP
// port of 8 SerDes lanes) 2x gives two 400G lanes, 4x four 200G lanes and
// 8x eight 100G lanes. A port is split or not: its parent then carries
// nothing of its own. The mode of each split port is written in
// switches[].breakout or derived from the lanes the inventory cables.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Breakout modes: the number of ports a split front-panel port becomes,
// the values of Switch.Breakouts (written 2x, 4x, 8x in switches[].breakout,
// as NVUE's `nv set interface swpN link breakout 4x` writes them).
const (
	Breakout2x = 2
	Breakout4x = 4
	Breakout8x = 8
)

// breakoutTable is what a switch model's ports do when split.
type breakoutTable struct {
	// modes are the breakout modes the ports take, ascending.
	modes []int
	// serdes is the SerDes lanes of a port when NVUE is given
	// lanes-per-port (serdes / mode), 0 where rdggen writes none.
	serdes int
	// first and last bound the ports that split (the QSFP ports of a
	// model with SFP ports too); 0 when every port splits.
	first, last int
	// blocking is the smallest mode that takes the next port's logical
	// ports: a port split that many ways or more is odd-numbered, and the
	// even port after it is disabled (0: none does).
	blocking int
	// onyx are the modes ONYX takes where they differ from Cumulus
	// Linux's (nil: the same).
	onyx []int
}

// switchBreakouts is the breakout table of each Spectrum model
// (docs/rules.md#split-ports), from NVIDIA's Cumulus Linux user guide,
// "Switch Port Attributes", "Breakout Ports" (5.12: a tab per model;
// 5.6: the notes on Spectrum 1 and 64-port Spectrum-2/3 switches), which
// the hardware sets, so ONYX is held to it too:
//
//   - QSFP28 and QSFP56 ports (4 SerDes lanes) split in 2 or 4; the
//     SN2010, SN2410 and SN3420 split only their QSFP28 ports (1/19–1/22,
//     1/49–1/56, 1/49–1/60), not their SFP28 ports (ONYX User Manual,
//     "Ethernet Interfaces": "Certain ports cannot be split at all");
//   - a 4x split takes the next port on the SN2410 and SN2700 ("the top
//     … QSFP28 ports can break out into 4x SFP28. You cannot use the lower
//     … disabled ports"), the SN2740 (Spectrum 1: "You can only break out
//     odd-numbered ports into four logical ports. You must disable the
//     next even numbered port", not on the SN2100 and SN2010), the SN3800
//     (a 64-port Spectrum-2: "if you split ports into four interfaces …
//     you must disable the adjacent port"), the SN4600 and SN4600C ("Only
//     32x … ports can break out into 4x … You must disable the adjacent
//     … port"); not on the SN2010, SN2100, SN3420, SN3700 or SN3700C;
//   - the SN4700's QSFP-DD ports split in 2 or 4, and in 8 on the top 16
//     with the adjacent port disabled (Cumulus Linux; ONYX's manual gives
//     QSFP-DD 2 or 4: "QSFP-DD can be divided in 2 quad-lane ports or 4
//     dual-lane ports");
//   - the SN5400's 400G ports in 2 or 4, and in 8 on the 32 odd ports;
//   - the SN5600's 800G OSFP ports in 2 or 4, and in 8 on 32 of them
//     ("You must disable the adjacent OSFP port"), with lanes-per-port 4,
//     2, 1 (NVIDIA-generated SN5600 NVUE configurations: `nv set
//     interface swp1 link breakout 4x lanes-per-port 2`, `… swp55 link
//     breakout 8x lanes-per-port 1` with `… swp56 link breakout
//     disabled`).
//
// "Certain switches, such as the SN2700, SN4600, and SN4600c, require
// that you disable the subsequent even-numbered port when you configure a
// breakout port for 4x or 8x" (5.12): the blocking modes split odd ports
// and disable the even port after.
var switchBreakouts = map[string]breakoutTable{
	"SN2010":  {modes: []int{2, 4}, first: 19, last: 22},
	"SN2100":  {modes: []int{2, 4}},
	"SN2410":  {modes: []int{2, 4}, first: 49, last: 56, blocking: 4},
	"SN2700":  {modes: []int{2, 4}, blocking: 4},
	"SN2740":  {modes: []int{2, 4}, blocking: 4},
	"SN3420":  {modes: []int{2, 4}, first: 49, last: 60},
	"SN3700":  {modes: []int{2, 4}},
	"SN3700C": {modes: []int{2, 4}},
	"SN3800":  {modes: []int{2, 4}, blocking: 4},
	"SN4600C": {modes: []int{2, 4}, blocking: 4},
	"SN4600":  {modes: []int{2, 4}, blocking: 4},
	"SN4700":  {modes: []int{2, 4, 8}, blocking: 8, onyx: []int{2, 4}},
	"SN5400":  {modes: []int{2, 4, 8}, blocking: 8},
	"SN5600":  {modes: []int{2, 4, 8}, serdes: 8, blocking: 8},
}

// MaxLanes is the most lanes a split port has on any model rdggen knows:
// 8 (the SN5600's 8x; Switch.BreakoutModes has each model's).
const MaxLanes = Breakout8x

// BreakoutModes are the breakout modes the switch model's ports take
// under its OS, ascending (2, 4; and 8 on the SN4700, SN5400 and SN5600
// under Cumulus Linux); nil for an unknown model.
func (s Switch) BreakoutModes() []int {
	t := switchBreakouts[s.Model]
	if t.onyx != nil && s.OS() == OSONYX {
		return t.onyx
	}
	return t.modes
}

// Blocks reports whether a port of the switch model split mode ways
// takes the next port: it is odd-numbered, and the even port after it is
// disabled (the SN2700's 4x, the SN5600's 8x; switchBreakouts).
func (s Switch) Blocks(mode int) bool {
	b := switchBreakouts[s.Model].blocking
	return b > 0 && mode >= b
}

// DisabledPorts are the front-panel ports the switch's breakouts disable,
// ascending: port n+1 of each split port n in a mode that Blocks.
func (s Switch) DisabledPorts() []int {
	var out []int
	for _, n := range s.SplitPorts() {
		if s.Blocks(s.Breakout(n)) {
			out = append(out, n+1)
		}
	}
	return out
}

// DisabledBy is the split port whose breakout disables front-panel port
// n (n-1), or 0 when none does.
func (s Switch) DisabledBy(n int) int {
	if n > 1 && s.Blocks(s.Breakout(n-1)) {
		return n - 1
	}
	return 0
}

// Splits reports whether front-panel port n of the switch model can split
// (every port, or only the QSFP ports of a model that also has SFP ports).
func (s Switch) Splits(n int) bool {
	t, ok := switchBreakouts[s.Model]
	return ok && (t.first == 0 || n >= t.first && n <= t.last)
}

// Breakout is the breakout mode of front-panel port n (2, 4 or 8), 0 for
// a port that is not split.
func (s Switch) Breakout(n int) int { return s.Breakouts[n] }

// SplitPorts are the switch's split front-panel ports, ascending.
func (s Switch) SplitPorts() []int {
	out := make([]int, 0, len(s.Breakouts))
	for n := range s.Breakouts {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// LanesPerPort is the SerDes lanes each port of a mode-way breakout gets,
// for NVUE's `link breakout <mode>x lanes-per-port <n>`: 4, 2 and 1 for
// 2x, 4x and 8x on an SN5600 (8 lanes); 0 on the models whose NVUE
// breakout rdggen writes without it.
func (s Switch) LanesPerPort(mode int) int {
	t := switchBreakouts[s.Model]
	if t.serdes == 0 || mode == 0 {
		return 0
	}
	return t.serdes / mode
}

// laneMode is the mode a lane's port takes when nothing else says: the
// port's breakout, else the smallest mode of the model with the lane
// (lane 3 needs 4x), else the lane rounded up to a power of two.
func (s Switch) laneMode(p Port) int {
	if m := s.Breakouts[p.Number]; m > 0 {
		return m
	}
	for _, m := range s.BreakoutModes() {
		if m >= p.Lane {
			return m
		}
	}
	m := 2
	for m < p.Lane {
		m *= 2
	}
	return m
}

// PortSpeedGbps is the fastest Ethernet speed, Gb/s, port p of the switch
// runs at: MaxSpeedGbps for a whole port; for a lane of a split port the
// port's speed divided by its breakout mode (an SN5600's 800G port: 400G
// lanes at 2x, 200G at 4x, 100G at 8x; the mode sets every lane's speed,
// whatever the lane's index: NVIDIA-generated SN5600 NVUE configurations
// give `link speed 200G` to all four lanes of a 4x port); 0 for unknown
// models.
func (s Switch) PortSpeedGbps(p Port) int {
	max := s.MaxSpeedGbps()
	if p.Lane == 0 {
		return max
	}
	return max / s.laneMode(p)
}

// ParseBreakout reads a breakout mode as written: "2x", "4x" or "8x".
func ParseBreakout(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSuffix(s, "x"))
	if err != nil || !strings.HasSuffix(s, "x") || (n != Breakout2x && n != Breakout4x && n != Breakout8x) {
		return 0, false
	}
	return n, true
}

// modeList writes modes as "2x or 4x", "2x, 4x or 8x".
func modeList(modes []int) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = strconv.Itoa(m) + "x"
	}
	return orList(s)
}

// orList writes "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// portUser is something cabled to a switch port: a host's data link or an
// end of a fabric link.
type portUser struct {
	port Port
	path string // where the port is written
	what string // "hosts[0] (h11)", "fabric.links[2] (to spine1 swp1)"
	host int    // the host's index, -1 for a link
	link bool
}

// breakouts resolves every switch's split ports: the mode written in
// switches[].breakout, else the smallest mode of the model that holds the
// highest lane cabled. It refuses a lane beyond the model's modes (8x on a
// model without it), a lane beyond the mode written, two modes for one
// port, a split port whose parent carries a host or an uplink, a split of
// a port that does not split, and a host faster than its lane. A lane no
// model has (beyond MaxLanes) is switchPort's finding alone. It runs after
// the hosts and links are resolved.
func (c *checker) breakouts() {
	inv := c.inv
	users := make([]map[int][]portUser, len(inv.Switches))
	at := map[string]int{}
	for i, sw := range inv.Switches {
		at[sw.Name] = i
		users[i] = map[int][]portUser{}
	}
	add := func(sw string, u portUser) {
		if u.port.Lane > MaxLanes || u.port.Lane > 0 && u.port.Module != 1 {
			return // no lane of any model: switchPort's one finding
		}
		if i, ok := at[sw]; ok && u.port.Number > 0 {
			users[i][u.port.Number] = append(users[i][u.port.Number], u)
		}
	}
	// Every rail's port: rail r of a host is a lane or a port as rail 0 is.
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		for _, r := range h.Rails {
			what := fmt.Sprintf("hosts[%d] (%s)", i, h.Name)
			if len(h.Rails) > 1 {
				what = fmt.Sprintf("rail %d of %s", r.Index, what)
			}
			add(r.Switch, portUser{port: r.Port, path: c.railPath(i, r.Index) + ".port", what: what, host: i})
		}
	}
	for _, l := range inv.Fabric.Links {
		p := fmt.Sprintf("fabric.links[%d]", l.Index)
		add(l.A.Switch, portUser{port: l.A.Port, path: p + ".port", what: fmt.Sprintf("%s (the uplink to %s)", p, l.B.Switch), host: -1, link: true})
		add(l.B.Switch, portUser{port: l.B.Port, path: p + ".peer_port", what: fmt.Sprintf("%s (the uplink to %s)", p, l.A.Switch), host: -1, link: true})
	}
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		if _, known := switchBreakouts[sw.Model]; !known {
			continue // an unknown model has its own finding
		}
		written := c.writtenBreakouts(i, sw)
		ports := map[int]bool{}
		for n := range users[i] {
			ports[n] = true
		}
		for n := range written {
			ports[n] = true
		}
		from := map[int]string{}
		for _, n := range sortedInts(ports) {
			if p := c.splitPort(i, sw, n, users[i][n], written[n]); p != "" {
				from[n] = p
			}
		}
		c.blockingSplits(sw, from, users[i], written)
	}
}

// blockingSplits checks the splits of sw that take the next port
// (Switch.Blocks: the SN2700's 4x, the SN5600's 8x): the port is
// odd-numbered, and nothing is cabled to, or split on, the even port
// after it, which the breakout disables. from is where each split port's
// mode comes from.
func (c *checker) blockingSplits(sw *Switch, from map[int]string, users map[int][]portUser, written map[int]writtenBreakout) {
	for _, n := range sw.SplitPorts() {
		mode := sw.Breakout(n)
		if !sw.Blocks(mode) {
			continue
		}
		parent := sw.PortName(Port{Module: 1, Number: n})
		next := sw.PortName(Port{Module: 1, Number: n + 1})
		if n%2 == 0 {
			c.errf(from[n], "%s %s breaks out %dx, but on the %s a %dx port takes the next port's logical ports, so only odd-numbered ports split %dx (the even port after each is disabled; NVIDIA: \"disable the subsequent even-numbered port\"): split %s %s, or cable these lanes to an odd port",
				sw.Name, parent, mode, sw.Model, mode, mode, modeList(smaller(sw.BreakoutModes(), sw)), parent)
			continue
		}
		why := fmt.Sprintf("%s's %dx breakout disables it (on the %s a port split %dx takes the next port's logical ports; NVIDIA: \"disable the subsequent even-numbered port\")", parent, mode, sw.Model, mode)
		for _, u := range users[n+1] {
			c.errf(u.path, "%s %s is disabled: %s; cable %s to another port", sw.Name, sw.PortName(u.port), why, u.what)
		}
		if w := written[n+1]; w.mode > 0 {
			c.errf(w.path, "%s %s is disabled: %s; it cannot split", sw.Name, next, why)
		}
	}
}

// smaller are the modes of sw below its blocking one ("2x" on an
// SN2700), for a message.
func smaller(modes []int, sw *Switch) []int {
	var out []int
	for _, m := range modes {
		if !sw.Blocks(m) {
			out = append(out, m)
		}
	}
	return out
}

// writtenBreakout is one entry of switches[].breakout.
type writtenBreakout struct {
	mode int
	path string
}

// writtenBreakouts reads switches[i].breakout: each key a whole port of
// the switch (swpN or 1/N), each value a mode of the model; one mode per
// port (swp1 and 1/1 are one port).
func (c *checker) writtenBreakouts(i int, sw *Switch) map[int]writtenBreakout {
	if c.raw == nil || i >= len(c.raw.Switches) || len(c.raw.Switches[i].Breakout) == 0 {
		return nil
	}
	raw := c.raw.Switches[i].Breakout
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := map[int]writtenBreakout{}
	for _, k := range keys {
		path := fmt.Sprintf("switches[%d].breakout.%s", i, k)
		p, ok := c.switchPort(path, k, sw)
		if !ok {
			continue
		}
		if p.Lane > 0 {
			c.errf(path, "%s is a lane of a split port: switches[].breakout names the port that splits (%s), and its mode", k, sw.PortName(Port{Module: 1, Number: p.Number}))
			continue
		}
		mode, ok := ParseBreakout(raw[k])
		if !ok {
			c.errf(path, "%q is not a breakout mode: write 2x, 4x or 8x (the ports %s becomes)", raw[k], sw.PortName(p))
			continue
		}
		if !slices.Contains(sw.BreakoutModes(), mode) {
			c.errf(path, "%dx: %s ports break out %s; %dx needs %s", mode, sw.Model, modeList(sw.BreakoutModes()), mode, c.modelsWith(sw, mode))
			continue
		}
		if prev, dup := out[p.Number]; dup {
			if prev.mode != mode {
				c.errf(path, "mixed modes on one port: %s is %dx here and %dx at %s (swp%d and 1/%d name one port); a port has one breakout mode", sw.PortName(p), mode, prev.mode, prev.path, p.Number, p.Number)
			} else {
				c.errf(path, "%s is written twice (also at %s; swp%d and 1/%d name one port)", sw.PortName(p), prev.path, p.Number, p.Number)
			}
			continue
		}
		out[p.Number] = writtenBreakout{mode: mode, path: path}
	}
	return out
}

// modelsWith names the models whose ports take mode under sw's OS ("SN4700
// or SN5600 ports"; under ONYX, where none splits 8x, "Cumulus Linux on
// …").
func (c *checker) modelsWith(sw *Switch, mode int) string {
	var out, cumulus []string
	for m, t := range switchBreakouts {
		if !slices.Contains(t.modes, mode) {
			continue
		}
		cumulus = append(cumulus, m)
		if sw.OS() == OSCumulus || (t.onyx == nil || slices.Contains(t.onyx, mode)) && !noONYX[m] {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	slices.Sort(cumulus)
	switch {
	case len(out) > 0:
		return orList(out) + " ports"
	case len(cumulus) > 0:
		return "Cumulus Linux on " + orList(cumulus) + " ports"
	}
	return "a model rdggen does not know"
}

// splitPort resolves and checks port n of switch sw (switches[i]): what is
// cabled to it (us) and the mode written for it (w, zero when none).
//
// It returns where the port's mode comes from (w's path, or the highest
// lane's), "" when the port is not split.
func (c *checker) splitPort(i int, sw *Switch, n int, us []portUser, w writtenBreakout) string {
	var lanes, whole []portUser
	for _, u := range us {
		if u.port.Lane > 0 {
			lanes = append(lanes, u)
		} else {
			whole = append(whole, u)
		}
	}
	if len(lanes) == 0 && w.mode == 0 {
		return "" // a whole port, not split
	}
	parent := sw.PortName(Port{Module: 1, Number: n})
	if !sw.Splits(n) {
		t := switchBreakouts[sw.Model]
		path := w.path
		if path == "" {
			path = lanes[0].path
		}
		c.errf(path, "%s %s does not split: of the %s only ports %s–%s break out (its QSFP ports; the others are SFP ports, which hold one lane)",
			sw.Name, parent, sw.Model, sw.PortName(Port{Module: 1, Number: t.first}), sw.PortName(Port{Module: 1, Number: t.last}))
		return ""
	}
	// A split port's parent carries nothing of its own.
	for _, u := range whole {
		kind := "a host"
		if u.link {
			kind = "an uplink"
		}
		by := "its lanes carry " + whats(lanes)
		if len(lanes) == 0 {
			by = fmt.Sprintf("%s splits it %dx", w.path, w.mode)
		}
		c.errf(u.path, "%s on a split port: %s %s is %s's, but %s; a split port's parent carries no traffic of its own (NVUE: parent ports split into sub-interfaces swpNs0…): cable %s to a port that is not split, or to a free lane",
			kind, sw.Name, parent, u.what, by, u.what)
	}
	mode := w.mode
	if len(lanes) > 0 {
		top := lanes[0]
		for _, u := range lanes[1:] {
			if u.port.Lane > top.port.Lane {
				top = u
			}
		}
		switch {
		case mode > 0:
			for _, u := range lanes {
				if u.port.Lane > mode {
					c.errf(u.path, "mixed modes on one port: %s (%s) is lane %d of %s, but %s splits %s %dx (lanes %s–%s); write %s: %dx there, or cable it to lanes of %dx",
						sw.PortName(u.port), u.what, u.port.Lane, parent, w.path, parent, mode,
						sw.PortName(Port{Module: 1, Number: n, Lane: 1}), sw.PortName(Port{Module: 1, Number: n, Lane: mode}),
						parent, sw.laneMode(Port{Number: n, Lane: u.port.Lane}), mode)
				}
			}
		default:
			for _, m := range sw.BreakoutModes() {
				if m >= top.port.Lane {
					mode = m
					break
				}
			}
			if mode == 0 {
				modes := sw.BreakoutModes()
				most := modes[len(modes)-1]
				c.errf(top.path, "%s (%s) is lane %d of %s: %s ports break out %s, %d lanes at most (%s–%s); %dx needs %s",
					sw.PortName(top.port), top.what, top.port.Lane, parent, sw.Model, modeList(modes), most,
					sw.PortName(Port{Module: 1, Number: n, Lane: 1}), sw.PortName(Port{Module: 1, Number: n, Lane: most}),
					sw.laneMode(Port{Number: n, Lane: top.port.Lane}), c.modelsWith(sw, sw.laneMode(Port{Number: n, Lane: top.port.Lane})))
				return ""
			}
		}
	}
	if mode == 0 {
		return ""
	}
	if sw.Breakouts == nil {
		sw.Breakouts = map[int]int{}
	}
	sw.Breakouts[n] = mode
	// Each lane runs at the port's speed divided by the mode.
	lane := sw.MaxSpeedGbps() / mode
	why := fmt.Sprintf("%s, the highest lane cabled, needs %dx", sw.PortName(Port{Module: 1, Number: n, Lane: maxLane(lanes)}), mode)
	from := w.path
	if w.mode > 0 {
		why = w.path + " says so"
	} else {
		for _, u := range lanes {
			if u.port.Lane == maxLane(lanes) {
				from = u.path
				break
			}
		}
	}
	reported := false
	for _, u := range lanes {
		if u.host < 0 || reported || u.port.Lane > mode {
			continue
		}
		h := &c.inv.Hosts[u.host]
		if lane == 0 || h.NIC.SpeedGbps <= lane {
			continue
		}
		reported = true
		c.errf(u.path, "%s: %s %s breaks out %dx (%s), so each of its lanes runs %d Gb/s (%s: %d Gb/s split %d ways), but %s's NIC runs %d Gb/s (%s.speed_gbps): cable %d Gb/s hosts to %s, or set speed_gbps to %d",
			sw.PortName(u.port), sw.Name, parent, mode, why, lane, sw.Model, sw.MaxSpeedGbps(), mode, h.Name, h.NIC.SpeedGbps, c.nicPathOf(u.host),
			h.NIC.SpeedGbps, lanesFor(sw, h.NIC.SpeedGbps), lane)
	}
	return from
}

// lanesFor says where a host of speed Gb/s fits on sw: "the lanes of a
// 2x port" (the most ways a port splits with lanes that fast), or "a
// whole port".
func lanesFor(sw *Switch, speed int) string {
	best := 0
	for _, m := range sw.BreakoutModes() {
		if sw.MaxSpeedGbps()/m >= speed {
			best = m
		}
	}
	if best == 0 {
		return "a whole port"
	}
	return fmt.Sprintf("the lanes of a %dx port", best)
}

func maxLane(us []portUser) int {
	m := 0
	for _, u := range us {
		m = max(m, u.port.Lane)
	}
	return m
}

// whats joins the users' names: "hosts[0] (h11), hosts[1] (h12)".
func whats(us []portUser) string {
	s := make([]string, len(us))
	for i, u := range us {
		s[i] = u.what
	}
	return strings.Join(s, ", ")
}

// nicPathOf is where host i's nic setting is written ("defaults.nic" or
// "hosts[3].nic").
func (c *checker) nicPathOf(i int) string {
	if p := c.nicPaths[i]; p != "" {
		return p
	}
	return fmt.Sprintf("hosts[%d].nic", i)
}

func sortedInts(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
