package onyxsim

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Running-config sections in the order ONYX prints them (docs/rules.md#switch-onyx
// §2.1 and the guide's sample). "RoCE configuration" is a guess: how `roce`
// shows in running-config is unknown (docs/rules.md#one-command-roce-template, inferred).
var sections = []string{
	"License keys",
	"BFD configuration",
	"RoCE configuration",
	"Interface Ethernet configuration",
	"Interface Ethernet buffer configuration",
	"VLAN configuration",
	"L3 configuration",
	"QoS switch configuration",
	"DCBX ETS configuration",
	"DCBX PFC configuration",
	"LLDP configuration",
	"Other IP configuration",
	"Local user account configuration",
	"AAA remote server configuration",
	"SNMP configuration",
	"Network management configuration",
	"X.509 certificates configuration",
}

const (
	secLicense = iota
	secBFD
	secRoCE
	secIfEth
	secBuffer
	secVLAN
	secL3
	secQoS
	secETS
	secPFC
	secLLDP
	secOtherIP
	secUsers
	secAAA
	secSNMP
	secNetMgmt
	secX509
)

// entry is one stored setting. Its line is prefix + " " + id (merged into
// ranges with its neighbours when the rest is equal) + " " + body, or just
// body for a global setting.
type entry struct {
	sec    int
	rank   int    // order within the section
	prefix string // "interface ethernet", "vlan" or "" (global)
	id     string // "1/5", "101"
	body   string
	seq    int
	// noFirst prints the line as "no <prefix> <id> <body>", the way ONYX
	// prints some negated interface settings (`no interface vlan 1 ip
	// icmp redirect`).
	noFirst bool
	// order sorts global lines within their rank before insertion order
	// (static routes by prefix).
	order uint64
}

// config is the switch's running state.
type config struct {
	hostname string
	ports    int
	// model is the Spectrum model ("" for any): which ports split, and
	// how (split.go).
	model   string
	version []int
	slots   map[string]*entry
	seq     int
	pools   map[string]bool
}

func newConfig(hostname string, ports int, version string) *config {
	c := &config{hostname: hostname, ports: ports, slots: map[string]*entry{}, pools: map[string]bool{}}
	for _, f := range strings.Split(version, ".") {
		n, _ := strconv.Atoi(f)
		c.version = append(c.version, n)
	}
	c.set("hostname", &entry{sec: secOtherIP, rank: 1, body: "hostname " + hostname})
	return c
}

func (c *config) atLeast(parts ...int) bool {
	for i, p := range parts {
		v := 0
		if i < len(c.version) {
			v = c.version[i]
		}
		if v != p {
			return v > p
		}
	}
	return true
}

func (c *config) set(slot string, e *entry) {
	if old, ok := c.slots[slot]; ok {
		e.seq = old.seq
	} else {
		c.seq++
		e.seq = c.seq
	}
	c.slots[slot] = e
}

func (c *config) del(slot string) { delete(c.slots, slot) }

// outcome of one configuration command.
type outcome struct {
	err     string // device error text (without the leading "% ")
	confirm string // a question to ask before applying
	answer  string // the answer the question wants ("yes" when "")
	apply   func() // the change, run directly or after "yes"
	enter   string // sub-mode to enter ("interface ethernet 1/1")
}

func fail(format string, a ...any) outcome { return outcome{err: fmt.Sprintf(format, a...)} }

func unrecognized(word string) outcome {
	return outcome{err: fmt.Sprintf("Unrecognized command %q.\r\nType \"?\" for help.", word)}
}

func ok(f func()) outcome { return outcome{apply: f} }

// configCommand interprets one config-mode command (flat form, prefix
// already added for sub-modes). prefixModes says whether bare context lines
// enter a sub-mode.
func (c *config) configCommand(line string, prefixModes bool) outcome {
	w := strings.Fields(line)
	if len(w) == 0 {
		return ok(func() {})
	}
	neg := w[0] == "no"
	if neg {
		w = w[1:]
		if len(w) == 0 {
			return fail("Incomplete command")
		}
	}
	switch w[0] {
	case "interface":
		return c.ifaceCommand(w, neg, line, prefixModes)
	case "traffic":
		return c.poolCommand(w, neg, prefixModes)
	case "dcb":
		return c.dcbCommand(w, neg)
	case "lldp":
		if len(w) != 1 {
			return unrecognized(w[1])
		}
		if neg {
			return ok(func() { c.del("lldp") })
		}
		return ok(func() { c.set("lldp", &entry{sec: secLLDP, body: "lldp"}) })
	case "hostname":
		if neg || len(w) != 2 {
			return fail("Incomplete command")
		}
		return ok(func() {
			c.hostname = w[1]
			c.set("hostname", &entry{sec: secOtherIP, rank: 1, body: "hostname " + w[1]})
		})
	case "roce":
		if !c.atLeast(3, 8, 2000) {
			return unrecognized("roce")
		}
		if neg {
			return ok(func() { c.del("roce") })
		}
		mode := "lossless"
		if len(w) == 2 {
			mode = w[1]
		}
		if len(w) > 2 || (mode != "lossless" && mode != "lossy" && mode != "semi-lossless") {
			return unrecognized(w[len(w)-1])
		}
		body := "roce"
		if mode != "lossless" {
			body = "roce " + mode
		}
		return ok(func() { c.set("roce", &entry{sec: secRoCE, body: body}) })
	case "vlan":
		return c.vlanCommand(w, neg, line)
	case "router":
		return c.bgpCommand(w, neg, prefixModes)
	case "protocol":
		return c.protocolCommand(w, neg)
	case "ip":
		if o, handled := c.ipCommand(w, neg); handled {
			return o
		}
		fallthrough
	case "snmp-server", "ntp":
		sec := map[string]int{"snmp-server": secSNMP, "ntp": secNetMgmt, "ip": secOtherIP}[w[0]]
		if w[0] == "ip" && (len(w) < 2 || w[1] != "route") {
			return unrecognized(w[1%len(w)])
		}
		if len(w) < 2 {
			return fail("Incomplete command")
		}
		key := "misc|" + strings.Join(w, " ")
		if w[0] == "snmp-server" && len(w) >= 3 && w[1] == "community" {
			key = "snmp|community|" + w[2]
		}
		if neg {
			return ok(func() { c.del(key) })
		}
		body := strings.Join(w, " ")
		return ok(func() { c.set(key, &entry{sec: sec, rank: 2, body: body}) })
	case "username":
		if len(w) < 2 {
			return fail("Incomplete command")
		}
		key := "user|" + w[1]
		if neg {
			return ok(func() { c.del(key) })
		}
		if len(w) == 5 && w[2] == "password" && w[3] == "0" {
			sum := sha256.Sum256([]byte(w[1] + "\x00" + w[4]))
			hash := fmt.Sprintf("$6$%x$%x", sum[:4], sum[4:24])
			return ok(func() {
				c.set(key, &entry{sec: secUsers, body: "username " + w[1] + " password 7 " + hash})
			})
		}
		return unrecognized(w[len(w)-1])
	case "license":
		if len(w) == 3 && w[1] == "install" {
			return ok(func() { c.set("license|"+w[2], &entry{sec: secLicense, body: "license install " + w[2]}) })
		}
		return fail("Incomplete command")
	case "ldap", "radius-server", "tacacs-server":
		// Secrets: accepted and never shown (running-config prints them as
		// comments with ********, which every rendering does anyway).
		return ok(func() {})
	}
	return unrecognized(w[0])
}

func (c *config) poolCommand(w []string, neg, prefixModes bool) outcome {
	if len(w) < 3 || w[1] != "pool" {
		return unrecognized(w[len(w)-1])
	}
	p := w[2]
	if len(p) > 20 {
		return fail("Pool name is longer than 20 characters")
	}
	if len(w) == 3 {
		if neg {
			return ok(func() {
				for k, e := range c.slots {
					if strings.HasPrefix(k, "pool|"+p+"|") || (strings.HasPrefix(k, "spmap|") && strings.HasPrefix(e.body, "traffic pool "+p+" ")) {
						delete(c.slots, k)
					}
				}
				delete(c.pools, p)
			})
		}
		if prefixModes {
			return outcome{apply: func() { c.pools[p] = true }, enter: "pool " + p}
		}
		return ok(func() { c.pools[p] = true })
	}
	switch {
	case len(w) == 5 && w[3] == "type" && !neg:
		if w[4] != "lossless" && w[4] != "lossy" && w[4] != "lossy-mc" {
			return unrecognized(w[4])
		}
		return ok(func() {
			c.pools[p] = true
			c.set("pool|"+p+"|type", &entry{sec: secBuffer, rank: 1, body: "traffic pool " + p + " type " + w[4], prefix: ""})
		})
	case len(w) == 6 && w[3] == "memory" && w[4] == "percent" && !neg:
		f, err := strconv.ParseFloat(w[5], 64)
		if err != nil || f < 0 || f > 100 {
			return fail("Invalid percent %q", w[5])
		}
		if !c.pools[p] {
			return fail("Traffic pool %s does not exist", p)
		}
		return ok(func() {
			c.set("pool|"+p+"|memory", &entry{sec: secBuffer, rank: 2, body: fmt.Sprintf("traffic pool %s memory percent %.2f", p, f)})
		})
	case len(w) >= 6 && w[3] == "map" && w[4] == "switch-priority":
		var sps []string
		for _, s := range w[5:] {
			if n, err := strconv.Atoi(s); err != nil || n < 0 || n > 7 {
				return unrecognized(s)
			}
			sps = append(sps, s)
		}
		return ok(func() {
			c.pools[p] = true
			for _, sp := range sps {
				if neg {
					if e := c.slots["spmap|"+sp]; e != nil && strings.HasPrefix(e.body, "traffic pool "+p+" ") {
						c.del("spmap|" + sp)
					}
					continue
				}
				c.set("spmap|"+sp, &entry{sec: secBuffer, rank: 3, body: "traffic pool " + p + " map switch-priority " + sp})
			}
		})
	}
	return unrecognized(w[len(w)-1])
}

func (c *config) dcbCommand(w []string, neg bool) outcome {
	if len(w) < 3 || w[1] != "priority-flow-control" {
		return unrecognized(w[len(w)-1])
	}
	switch {
	case w[2] == "enable" && (len(w) == 3 || (len(w) == 4 && w[3] == "force")):
		apply := func() {
			if neg {
				c.del("pfc")
			} else {
				c.set("pfc", &entry{sec: secPFC, rank: 1, body: "dcb priority-flow-control enable force"})
			}
		}
		if len(w) == 3 {
			// The bare form is interactive (docs/rules.md#explicit-qos-commands, inferred).
			return outcome{apply: apply, confirm: "Changing PFC global mode may affect traffic on all ports.\r\nType 'yes' to confirm: "}
		}
		return ok(apply)
	case w[2] == "priority" && len(w) == 5 && w[4] == "enable":
		n, err := strconv.Atoi(w[3])
		if err != nil || n < 0 || n > 7 {
			return unrecognized(w[3])
		}
		slot := "pfcprio|" + w[3]
		if neg {
			return ok(func() { c.del(slot) })
		}
		return ok(func() {
			c.set(slot, &entry{sec: secPFC, rank: 2, body: "dcb priority-flow-control priority " + w[3] + " enable"})
		})
	}
	return unrecognized(w[len(w)-1])
}

// expand turns "1/1-1/4" (or "1/3", "1/1-1/2,1/7", or lanes of a split
// port, "1/5/2", "1/5/1-1/5/4") into port IDs, each a port that exists
// now: a front-panel port of the model that is not split, or a lane of a
// split one (split.go).
func (c *config) expand(spec string) ([]string, string) {
	var out []string
	for _, item := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		if !isRange {
			hi = lo
		}
		an, al, okA := c.portID(lo)
		bn, bl, okB := c.portID(hi)
		switch {
		case !okA || !okB || (al == 0) != (bl == 0) || (al > 0 && an != bn):
			return nil, fmt.Sprintf("Interface ethernet %s does not exist", item)
		case al == 0 && an <= bn:
			for n := an; n <= bn; n++ {
				out = append(out, "1/"+strconv.Itoa(n))
			}
		case al > 0 && al <= bl:
			for l := al; l <= bl; l++ {
				out = append(out, fmt.Sprintf("1/%d/%d", an, l))
			}
		default:
			return nil, fmt.Sprintf("Interface ethernet %s does not exist", item)
		}
	}
	return out, ""
}

// port reads a front-panel port "1/N" within the model's range, split or
// not (the operational views' ports).
func (c *config) port(id string) (int, bool) {
	m, n, found := strings.Cut(id, "/")
	if !found || m != "1" {
		return 0, false
	}
	v, err := strconv.Atoi(n)
	return v, err == nil && v >= 1 && v <= c.ports
}

// portID reads "1/N" or "1/N/M"; ok is false unless the port (or lane)
// exists now.
func (c *config) portID(id string) (n, lane int, ok bool) {
	f := strings.Split(id, "/")
	if (len(f) != 2 && len(f) != 3) || f[0] != "1" {
		return 0, 0, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 1 || n > c.ports {
		return 0, 0, false
	}
	mode := c.splitMode(n)
	if len(f) == 2 {
		return n, 0, mode == 0 && c.unmappedBy(n) == 0
	}
	lane, err = strconv.Atoi(f[2])
	return n, lane, err == nil && lane >= 1 && lane <= mode
}

func (c *config) ifaceCommand(w []string, neg bool, raw string, prefixModes bool) outcome {
	if len(w) >= 3 && w[1] == "vlan" {
		return c.vlanIfaceCommand(w[2], w[3:], neg, raw, prefixModes)
	}
	if len(w) >= 3 && w[1] == "loopback" {
		return c.loopbackCommand(w[2], w[3:], neg)
	}
	if neg {
		return unrecognized("interface")
	}
	if len(w) < 3 || w[1] != "ethernet" {
		if len(w) >= 2 && (w[1] == "port-channel" || w[1] == "mlag-port-channel" || w[1] == "vlan" || w[1] == "loopback") {
			return fail("Interface %s %s does not exist", w[1], strings.Join(w[2:3], ""))
		}
		return unrecognized(w[len(w)-1])
	}
	if len(w) >= 5 && w[3] == "module-type" {
		return c.moduleTypeCommand(w[2], w[4:]) // split.go
	}
	ids, msg := c.expand(w[2])
	if msg != "" {
		return fail("%s", msg)
	}
	rest := w[3:]
	if len(rest) == 0 {
		if prefixModes && len(ids) == 1 {
			return outcome{apply: func() {}, enter: "interface ethernet " + ids[0]}
		}
		return ok(func() {})
	}
	rneg := rest[0] == "no"
	if rneg {
		rest = rest[1:]
		if len(rest) == 0 {
			return fail("Incomplete command")
		}
	}
	var outcomes []outcome
	for _, id := range ids {
		o := c.portCommand(id, rest, rneg, raw)
		if o.err != "" || o.confirm != "" {
			if o.confirm != "" {
				// One question for the whole range.
				var applies []func()
				for _, id2 := range ids {
					applies = append(applies, c.portCommand(id2, rest, rneg, raw).apply)
				}
				return outcome{confirm: o.confirm, apply: func() {
					for _, f := range applies {
						f()
					}
				}}
			}
			return o
		}
		outcomes = append(outcomes, o)
	}
	return ok(func() {
		for _, o := range outcomes {
			o.apply()
		}
	})
}

func (c *config) portCommand(id string, w []string, neg bool, raw string) outcome {
	slot := func(name string) string { return "eth|" + id + "|" + name }
	put := func(name string, sec, rank int, body string) func() {
		return func() {
			c.set(slot(name), &entry{sec: sec, rank: rank, prefix: "interface ethernet", id: id, body: body})
		}
	}
	drop := func(name string) func() { return func() { c.del(slot(name)) } }
	if o, handled := c.routedPortCommand(id, w, neg); handled {
		return o
	}
	switch {
	case w[0] == "description":
		if neg {
			return ok(drop("description"))
		}
		if len(w) < 2 {
			return fail("Incomplete command")
		}
		text := strings.TrimSpace(raw[strings.Index(raw, "description")+len("description"):])
		return ok(put("description", secIfEth, 3, "description "+text))
	case w[0] == "mtu" && !neg:
		if len(w) < 2 || len(w) > 3 || (len(w) == 3 && w[2] != "force") {
			return unrecognized(w[len(w)-1])
		}
		n, err := strconv.Atoi(w[1])
		if err != nil || n < 1500 || n > 9216 {
			return fail("MTU %s is out of range 1500-9216", w[1])
		}
		f := put("mtu", secIfEth, 1, "mtu "+w[1]+" force")
		if n == 1500 {
			f = drop("mtu")
		}
		if len(w) == 2 {
			return outcome{apply: f, confirm: "Changing the MTU will toggle the interface.\r\nType 'yes' to confirm: "}
		}
		return ok(f)
	case w[0] == "speed" && !neg && len(w) == 3 && w[2] == "force":
		return ok(put("speed", secIfEth, 2, "speed "+w[1]+" force"))
	case w[0] == "shutdown" && len(w) == 1:
		if neg {
			return ok(drop("shutdown"))
		}
		return ok(put("shutdown", secIfEth, 4, "shutdown"))
	case w[0] == "switchport" && !neg && len(w) == 3 && w[1] == "mode":
		if w[2] != "access" && w[2] != "trunk" && w[2] != "hybrid" {
			return unrecognized(w[2])
		}
		f := put("swmode", secVLAN, 10, "switchport mode "+w[2])
		if w[2] == "access" {
			f = drop("swmode")
		}
		return ok(f)
	case w[0] == "switchport" && len(w) == 4 && w[1] == "access" && w[2] == "vlan":
		if neg {
			return ok(drop("access"))
		}
		if !c.vlanExists(w[3]) {
			return fail("VLAN %s does not exist", w[3])
		}
		return ok(put("access", secVLAN, 11, "switchport access vlan "+w[3]))
	case w[0] == "qos" && len(w) == 3 && w[1] == "trust" && !neg:
		mode := map[string]string{"l2": "L2", "l3": "L3", "both": "both"}[strings.ToLower(w[2])]
		if mode == "" {
			return unrecognized(w[2])
		}
		// Inferred: modelled on onyx_qos, which turns DSCP rewrite off before
		// changing trust (docs/rules.md#comparing-with-a-live-switch).
		if mode != "L2" && c.slots[slot("rewrite-dscp")] != nil {
			return fail("Cannot set trust %s while DSCP rewrite is enabled on interface ethernet %s", mode, id)
		}
		if mode == "L2" { // the default: not shown
			return ok(drop("trust"))
		}
		return ok(put("trust", secQoS, 1, "qos trust "+mode))
	case w[0] == "qos" && len(w) == 3 && w[1] == "rewrite" && (w[2] == "dscp" || w[2] == "pcp"):
		if neg {
			return ok(drop("rewrite-" + w[2]))
		}
		return ok(put("rewrite-"+w[2], secQoS, 2, "qos rewrite "+w[2]))
	case w[0] == "traffic-class" && len(w) >= 3:
		tc, err := strconv.Atoi(w[1])
		if err != nil || tc < 0 || tc > 7 {
			return unrecognized(w[1])
		}
		switch {
		case w[2] == "congestion-control" && neg && len(w) == 3:
			return ok(drop("cc" + w[1]))
		case w[2] == "congestion-control" && !neg && len(w) == 8:
			mode, unit := w[3], strings.TrimPrefix(w[4], "minimum-")
			if (mode != "ecn" && mode != "red" && mode != "both") || (unit != "absolute" && unit != "relative") || w[6] != "maximum-"+unit {
				return unrecognized(w[3])
			}
			lo, e1 := strconv.Atoi(w[5])
			hi, e2 := strconv.Atoi(w[7])
			if e1 != nil || e2 != nil || lo > hi || lo < 0 {
				return fail("Invalid thresholds %s %s", w[5], w[7])
			}
			return ok(put("cc"+w[1], secQoS, 3, fmt.Sprintf("traffic-class %d congestion-control %s minimum-%s %d maximum-%s %d", tc, mode, unit, lo, unit, hi)))
		case w[2] == "dcb" && !neg && len(w) >= 5 && w[3] == "ets":
			if w[4] == "strict" && len(w) == 5 {
				return ok(put("ets"+w[1], secETS, 1, fmt.Sprintf("traffic-class %d dcb ets strict", tc)))
			}
			if w[4] == "wrr" && len(w) == 6 {
				if _, err := strconv.Atoi(w[5]); err == nil {
					return ok(put("ets"+w[1], secETS, 1, fmt.Sprintf("traffic-class %d dcb ets wrr %s", tc, w[5])))
				}
			}
		}
		return unrecognized(w[len(w)-1])
	case w[0] == "dcb" && len(w) >= 3 && w[1] == "priority-flow-control" && w[2] == "mode":
		if neg {
			if len(w) == 3 || (len(w) == 4 && w[3] == "force") {
				return ok(drop("pfc"))
			}
			return unrecognized(w[len(w)-1])
		}
		if len(w) >= 4 && w[3] == "on" && len(w) <= 5 {
			f := put("pfc", secPFC, 3, "dcb priority-flow-control mode on force")
			if len(w) == 4 {
				return outcome{apply: f, confirm: "PFC mode change will toggle the interface.\r\nType 'yes' to confirm: "}
			}
			if w[4] == "force" {
				return ok(f)
			}
		}
		return unrecognized(w[len(w)-1])
	}
	return unrecognized(w[0])
}

func (c *config) vlanCommand(w []string, neg bool, raw string) outcome {
	if len(w) < 2 {
		return fail("Incomplete command")
	}
	var ids []string
	for _, item := range strings.Split(w[1], ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		if !isRange {
			hi = lo
		}
		a, e1 := strconv.Atoi(lo)
		b, e2 := strconv.Atoi(hi)
		if e1 != nil || e2 != nil || a < 1 || b > 4094 || a > b {
			return unrecognized(w[1])
		}
		for n := a; n <= b; n++ {
			ids = append(ids, strconv.Itoa(n))
		}
	}
	switch {
	case len(w) == 2:
		return ok(func() {
			for _, id := range ids {
				if neg {
					for k := range c.slots {
						if k == "vlan|"+id || strings.HasPrefix(k, "vlan|"+id+"|") {
							delete(c.slots, k)
						}
					}
					continue
				}
				c.set("vlan|"+id, &entry{sec: secVLAN, rank: 1, prefix: "vlan", id: id})
			}
		})
	case w[2] == "name" && len(w) >= 4 && !neg:
		name := strings.TrimSpace(raw[strings.Index(raw, " name ")+len(" name "):])
		return ok(func() {
			for _, id := range ids {
				c.set("vlan|"+id, &entry{sec: secVLAN, rank: 1, prefix: "vlan", id: id})
				c.set("vlan|"+id+"|name", &entry{sec: secVLAN, rank: 2, prefix: "vlan", id: id, body: "name " + name})
			}
		})
	}
	return unrecognized(w[2])
}

// render prints the running-config the way ONYX does (docs/rules.md#running-config-format):
// header, prefix-mode wrapper, `##` banners, ranges merged, positive lines
// indented by 3 spaces, `50.00`, secrets as `# … ********` comments.
func (c *config) render(now time.Time) string {
	var b strings.Builder
	b.WriteString("##\n## Running database \"initial\"\n")
	b.WriteString("## Generated at " + now.UTC().Format("2006/01/02 15:04:05 -0700") + "\n")
	b.WriteString("## Hostname: " + c.hostname + "\n")
	if c.atLeast(3, 9) {
		var v []string
		for _, n := range c.version {
			v = append(v, strconv.Itoa(n))
		}
		b.WriteString("## Product release: " + strings.Join(v, ".") + "\n")
	}
	b.WriteString("##\n\n")
	banner := func(t string) { b.WriteString("##\n## " + t + "\n##\n") }
	banner("Running-config temporary prefix mode setting")
	b.WriteString("no cli default prefix-modes enable\n\n")
	bySec := make([][]*entry, len(sections))
	for _, e := range c.slots {
		bySec[e.sec] = append(bySec[e.sec], e)
	}
	for sec, list := range bySec {
		var lines []string
		switch sec {
		case secAAA:
			lines = []string{"# ldap bind-password ********", "# radius-server key ********", "# tacacs-server key ********"}
		case secNetMgmt:
			lines = append(renderEntries(list), "# web proxy auth basic password ********")
		case secX509:
			lines = []string{"#", "# Certificate name system-self-signed, ID 108bb9eb3e99edff47fc86e71cba530b6a6b8991",
				"# (public-cert config omitted since private-key config is hidden)"}
		default:
			lines = renderEntries(list)
		}
		if len(lines) == 0 {
			continue
		}
		banner(sections[sec])
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		b.WriteString("\n")
	}
	banner("Persistent prefix mode setting")
	b.WriteString("cli default prefix-modes enable\n")
	return b.String()
}

// renderEntries merges per-ID entries that share prefix, rank and body
// into ranges of consecutive IDs, and orders lines by rank, first ID, then
// insertion.
func renderEntries(list []*entry) []string {
	type group struct {
		rank   int
		prefix string
		body   string
		ids    []int
		seq    int
		// noFirst: see entry.
		noFirst bool
	}
	groups := map[string]*group{}
	var globals, lanes []*entry
	for _, e := range list {
		if e.prefix == "" {
			globals = append(globals, e)
			continue
		}
		if e.prefix == "interface ethernet" && strings.Count(e.id, "/") == 2 {
			lanes = append(lanes, e) // a lane of a split port: never in a range
			continue
		}
		k := fmt.Sprintf("%d|%s|%s|%t", e.rank, e.prefix, e.body, e.noFirst)
		g := groups[k]
		if g == nil {
			g = &group{rank: e.rank, prefix: e.prefix, body: e.body, seq: e.seq, noFirst: e.noFirst}
			groups[k] = g
		}
		g.ids = append(g.ids, lastNum(e.id))
		g.seq = min(g.seq, e.seq)
	}
	type line struct {
		rank, first, seq int
		order            uint64
		text             string
	}
	var lines []line
	for _, g := range groups {
		sort.Ints(g.ids)
		pre := ""
		if g.prefix == "interface ethernet" {
			pre = "1/"
		}
		for i := 0; i < len(g.ids); {
			j := i
			for j+1 < len(g.ids) && g.ids[j+1] == g.ids[j]+1 {
				j++
			}
			spec := pre + strconv.Itoa(g.ids[i])
			if j > i {
				spec += "-" + pre + strconv.Itoa(g.ids[j])
			}
			text := g.prefix + " " + spec
			if g.body != "" {
				text += " " + g.body
			}
			if g.noFirst {
				text = "no " + text
			}
			lines = append(lines, line{g.rank, 100 * g.ids[i], g.seq, 0, text})
			i = j + 1
		}
	}
	for _, e := range lanes {
		f := strings.Split(e.id, "/")
		n, _ := strconv.Atoi(f[1])
		l, _ := strconv.Atoi(f[2])
		text := e.prefix + " " + e.id
		if e.body != "" {
			text += " " + e.body
		}
		lines = append(lines, line{e.rank, 100*n + l, e.seq, 0, text})
	}
	for _, e := range globals {
		lines = append(lines, line{e.rank, 0, e.seq, e.order, e.body})
	}
	sort.Slice(lines, func(a, b int) bool {
		x, y := lines[a], lines[b]
		if x.rank != y.rank {
			return x.rank < y.rank
		}
		if x.first != y.first {
			return x.first < y.first
		}
		if x.order != y.order {
			return x.order < y.order
		}
		if x.seq != y.seq {
			return x.seq < y.seq
		}
		return x.text < y.text
	})
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.HasPrefix(l.text, "no ") {
			out[i] = l.text
		} else {
			out[i] = "   " + l.text
		}
	}
	return out
}

func lastNum(id string) int {
	n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '/')+1:])
	return n
}
