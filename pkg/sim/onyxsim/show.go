package onyxsim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The read-only show commands a readiness check sends, answered in every
// mode from the running configuration and each port's live state
// (PortState). The JSON shapes are the ones pkg/onyx parses, after the
// mellanox.onyx collection's fixtures (tests/unit/modules/fixtures/
// onyx_interfaces_show.cfg, onyx_pfc_interface_*.cfg,
// onyx_show_interface_congestion_control.cfg) in the layout of ONYX ≥
// 3.6.6000; values nobody has published (how `roce` shows in them, the text
// of `counters pfc prio`) are guesses.

// PortState is what configuration does not decide about a port: its link
// and its counters.
type PortState struct {
	// Up is the link (operational state) when the port is not shut down.
	Up bool
	// Speed is "Actual speed" as ONYX prints it, e.g. "100 Gbps".
	Speed string
	// ECNMarked is the port's "ECN marked packets".
	ECNMarked uint64
	// PauseRx and PauseTx are the PFC pause packets received and sent, per
	// switch priority 0–7.
	PauseRx, PauseTx [8]uint64
}

// The `roce lossless` template's fixed values, as `show roce` lists them
// (NVIDIA ONYX User Manual 3.10, "RoCE Commands"): PFC on switch priority 3,
// ECN on traffic class 3 between 150 and 1500 KB.
const (
	rocePriority = 3
	roceECNMinKB = 150
	roceECNMaxKB = 1500
)

// SetLink sets port 1/port's link state and, when speed is not "", its
// "Actual speed" (e.g. "25 Gbps"). Ports start up at Options.Speed.
func (s *Server) SetLink(port int, up bool, speed string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.port(port)
	p.Up = up
	if speed != "" {
		p.Speed = speed
	}
}

// SetPauseCounters sets the PFC pause packets port 1/port received (rx) and
// sent (tx) on switch priority prio (0–7).
func (s *Server) SetPauseCounters(port, prio int, rx, tx uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.port(port)
	p.PauseRx[prio], p.PauseTx[prio] = rx, tx
}

// SetECNMarked sets port 1/port's count of ECN-marked packets.
func (s *Server) SetECNMarked(port int, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.port(port).ECNMarked = n
}

// Port returns port 1/port's live state.
func (s *Server) Port(port int) PortState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.port(port)
}

// port is 1/n's state (s.mu held); it panics outside 1 … Ports, a test bug.
func (s *Server) port(n int) *PortState {
	if n < 1 || n > len(s.links) {
		panic(fmt.Sprintf("onyxsim: no port 1/%d (the switch has %d)", n, len(s.links)))
	}
	return &s.links[n-1]
}

// show answers the show commands of a readiness check (any mode) and
// refuses those of Options.NoShow; ok is false for any other line.
func (c *cli) show(line string) (out string, ok bool) {
	if !strings.HasPrefix(line, "show ") {
		return "", false
	}
	cmd, jsonOut := strings.CutSuffix(line, " | json-print")
	w := strings.Fields(cmd)
	s := c.srv
	l := s.fetch(cmd)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.opts.NoShow {
		if strings.HasPrefix(line, p) {
			f := strings.Fields(p)
			return fmt.Sprintf("%% Unrecognized command %q.\nType \"?\" for help.\n", f[len(f)-1]), true
		}
	}
	switch cmd {
	case "show ip bgp summary", "show ip bgp vrf all summary":
		return s.showBGPSummary(l, jsonOut), true
	case "show lldp interfaces ethernet remote":
		return s.showLLDPRemote(l, jsonOut), true
	case "show ip bfd neighbors":
		if jsonOut {
			return "% json-print is not supported for this command\n", true // the JSON form is not known
		}
		return s.showBFDNeighbors(l), true
	}
	known := (len(w) >= 3 && w[1] == "interfaces" && w[2] == "ethernet") || cmd == "show dcb priority-flow-control"
	if !known {
		return "", false
	}
	if cmd == "show dcb priority-flow-control" {
		return s.showPFC(jsonOut), true
	}
	if len(w) == 3 {
		return s.showInterfaces(nil, l.links, jsonOut), true
	}
	n, exists := s.cfg.port(w[3])
	if !exists {
		return fmt.Sprintf("%% Interface ethernet %s does not exist\n", w[3]), true
	}
	switch rest := w[4:]; {
	case len(rest) == 0:
		return s.showInterfaces([]int{n}, l.links, jsonOut), true
	case len(rest) == 1 && rest[0] == "congestion-control" && jsonOut:
		return s.showCongestion(n), true
	case len(rest) == 4 && rest[0] == "counters" && rest[1] == "pfc" && rest[2] == "prio" && !jsonOut:
		prio, err := strconv.Atoi(rest[3])
		if err != nil || prio < 0 || prio > 7 {
			return fmt.Sprintf("%% Unrecognized command %q.\nType \"?\" for help.\n", rest[3]), true
		}
		return s.showPauseCounters(n, prio), true
	}
	return fmt.Sprintf("%% Unrecognized command %q.\nType \"?\" for help.\n", w[len(w)-1]), true
}

// jsonText is v as `| json-print` prints it: indented JSON.
func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// showInterfaces is `show interfaces ethernet [1/n]` (s.mu held): every
// port when ports is nil. JSON in the ≥ 3.6.6000 layout {"Eth1/1": [{…}]};
// text as "key: value" lines per port. A port in links (Operational.Links)
// shows the data plane's carrier and MTU.
func (s *Server) showInterfaces(ports []int, links map[string]Link, jsonOut bool) string {
	if ports == nil {
		for n := 1; n <= len(s.links); n++ {
			ports = append(ports, n)
		}
	}
	all := map[string][]map[string]any{}
	var text strings.Builder
	for _, n := range ports {
		id := "1/" + strconv.Itoa(n)
		st := s.links[n-1]
		admin, oper := "Enabled", "Down"
		if s.cfg.slots["eth|"+id+"|shutdown"] != nil {
			admin = "Disabled"
		} else if st.Up {
			oper = "Up"
		}
		mtu := s.cfg.portMTU(id)
		speed := st.Speed
		if ln, ok := links[id]; ok {
			if admin == "Enabled" {
				oper = map[bool]string{true: "Up", false: "Down"}[ln.Up]
			}
			if ln.MTU != 0 {
				mtu = ln.MTU
			}
			if ln.Speed != "" {
				speed = ln.Speed
			}
		}
		desc := "N\\A"
		if e := s.cfg.slots["eth|"+id+"|description"]; e != nil {
			desc = strings.TrimPrefix(e.body, "description ")
		}
		attrs := map[string]any{
			"Admin state":       admin,
			"Operational state": oper,
			"Actual speed":      speed,
			"MTU":               fmt.Sprintf("%d bytes(Maximum packet size %d bytes)", mtu, mtu+22),
			"Flow-control":      "receive off send off",
			"Description":       desc,
			"Fec":               "auto",
			"Switchport mode":   "access",
			"Mac address":       fmt.Sprintf("7c:fe:90:f0:54:%02x", n),
			"Rx":                map[string]string{"packets": "0", "error packets": "0", "discard packets": "0"},
			"Tx":                map[string]string{"packets": "0", "error packets": "0", "discard packets": "0"},
		}
		all["Eth"+id] = []map[string]any{attrs}
		fmt.Fprintf(&text, "\nEth%s:\n", id)
		for _, k := range []string{"Admin state", "Operational state", "Description", "Mac address", "MTU", "Fec", "Flow-control", "Actual speed", "Switchport mode"} {
			fmt.Fprintf(&text, "  %-34s: %s\n", k, attrs[k])
		}
	}
	if jsonOut {
		return jsonText(all)
	}
	return text.String()
}

// showPFC is `show dcb priority-flow-control` (s.mu held): in JSON the
// global object, then the ports (the dss-sdk client's two-element layout).
func (s *Server) showPFC(jsonOut bool) string {
	global := "disabled"
	if s.cfg.pfcGlobal() {
		global = "enabled"
	}
	on := s.cfg.pfcPriorities()
	var enabled, disabled []string
	for p := 0; p <= 7; p++ {
		if on[p] {
			enabled = append(enabled, strconv.Itoa(p))
		} else {
			disabled = append(disabled, strconv.Itoa(p))
		}
	}
	ports := map[string][]map[string]string{}
	var names []string
	for n := 1; n <= len(s.links); n++ {
		id := "1/" + strconv.Itoa(n)
		admin, oper := "Auto", "Disabled"
		if s.cfg.portPFC(id) {
			admin = "on"
			if global == "enabled" {
				oper = "Enabled"
			}
		}
		ports["Eth"+id] = []map[string]string{{"PFC admin": admin, "PFC oper": oper}}
		names = append(names, "Eth"+id)
	}
	if jsonOut {
		return jsonText([]any{
			map[string]string{"PFC": global, "Priority Enabled List": strings.Join(enabled, " "), "Priority Disabled List": strings.Join(disabled, " ")},
			ports,
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nPFC: %s\nPriority Enabled List: %s\nPriority Disabled List: %s\n\n", global, strings.Join(enabled, " "), strings.Join(disabled, " "))
	b.WriteString("-------------------------------------------------\nInterface        PFC admin        PFC oper\n-------------------------------------------------\n")
	for _, n := range names {
		p := ports[n][0]
		fmt.Fprintf(&b, "%-17s%-17s%s\n", n, p["PFC admin"], p["PFC oper"])
	}
	return b.String()
}

// showCongestion is `show interfaces ethernet 1/n congestion-control |
// json-print` (s.mu held): the port and its ECN-marked packets, then TC-0 …
// TC-7.
func (s *Server) showCongestion(n int) string {
	id := "1/" + strconv.Itoa(n)
	list := []map[string]string{{"Interface ethernet": id, "ECN marked packets": strconv.FormatUint(s.links[n-1].ECNMarked, 10)}}
	for tc := 0; tc <= 7; tc++ {
		e := map[string]string{"header": "TC-" + strconv.Itoa(tc), "Mode": "none"}
		if mode, unit, lo, hi, ok := s.cfg.congestion(id, tc); ok {
			// "ECN" and "RED" are the fixture's; the spelling of mode
			// `both` is a guess.
			e["Mode"] = map[string]string{"ecn": "ECN", "red": "RED", "both": "ECN and RED"}[mode]
			e["Threshold mode"] = unit
			e["RED dropped packets"] = "0"
			sfx := " KB"
			if unit == "relative" {
				sfx = "%"
			}
			e["Minimum threshold"] = strconv.Itoa(lo) + sfx
			e["Maximum threshold"] = strconv.Itoa(hi) + sfx
		}
		list = append(list, e)
	}
	return jsonText(list)
}

// showPauseCounters is `show interfaces ethernet 1/n counters pfc prio p`
// (s.mu held). Its layout is not documented publicly; the only published
// reader (Intel's mfd-switchmanagement) keeps the lines with "pause packets"
// and takes `(\d+)\s*pause packets`. This layout follows the Rx/Tx blocks of
// ONYX's `show interfaces ethernet` counters.
func (s *Server) showPauseCounters(n, prio int) string {
	st := s.links[n-1]
	return fmt.Sprintf("\nPFC %d\n\nRx\n  %-20d pause packets\n  %-20d pause duration (usec)\n\nTx\n  %-20d pause packets\n  %-20d pause duration (usec)\n",
		prio, st.PauseRx[prio], 0, st.PauseTx[prio], 0)
}

// The configuration's effect on the data path, explicit commands or the
// `roce` template.

// roceMode is the configured `roce` mode, "" without one.
func (c *config) roceMode() string {
	e := c.slots["roce"]
	if e == nil {
		return ""
	}
	if m, ok := strings.CutPrefix(e.body, "roce "); ok {
		return m
	}
	return "lossless"
}

// pfcGlobal reports whether PFC is on globally.
func (c *config) pfcGlobal() bool { return c.slots["pfc"] != nil || c.roceMode() == "lossless" }

// pfcPriorities are the switch priorities with PFC on.
func (c *config) pfcPriorities() [8]bool {
	var on [8]bool
	for p := range on {
		on[p] = c.slots["pfcprio|"+strconv.Itoa(p)] != nil
	}
	if c.roceMode() == "lossless" {
		on[rocePriority] = true
	}
	return on
}

// portPFC reports whether port id has PFC mode on.
func (c *config) portPFC(id string) bool {
	return c.slots["eth|"+id+"|pfc"] != nil || c.roceMode() == "lossless"
}

// portMTU is port id's MTU in bytes (1500 when not configured).
func (c *config) portMTU(id string) int {
	if e := c.slots["eth|"+id+"|mtu"]; e != nil {
		if f := strings.Fields(e.body); len(f) >= 2 {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return n
			}
		}
	}
	return 1500
}

// congestion is port id's congestion control on traffic class tc.
func (c *config) congestion(id string, tc int) (mode, unit string, lo, hi int, ok bool) {
	if e := c.slots["eth|"+id+"|cc"+strconv.Itoa(tc)]; e != nil {
		// traffic-class <tc> congestion-control <mode> minimum-<unit> <lo> maximum-<unit> <hi>
		f := strings.Fields(e.body)
		lo, _ = strconv.Atoi(f[5])
		hi, _ = strconv.Atoi(f[7])
		return f[3], strings.TrimPrefix(f[4], "minimum-"), lo, hi, true
	}
	if c.roceMode() != "" && tc == rocePriority {
		return "ecn", "absolute", roceECNMinKB, roceECNMaxKB, true
	}
	return "", "", 0, 0, false
}
