package onyx

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The read-only show commands of `rdggen check --target switch`, and parsers
// for what ONYX prints. `| json-print` makes ONYX print a command's table as
// JSON; the shapes below are the ones of the mellanox.onyx Ansible
// collection's unit-test fixtures (github.com/ansible-collections/mellanox.onyx,
// tests/unit/modules/fixtures/*.cfg, read by plugins/modules/onyx_interface.py,
// onyx_pfc_interface.py and onyx_traffic_class.py) and of the OpenMPDK dss-sdk
// ONYX client (ufm/fabricmanager/systems/switch/switch_mellanox/
// switch_mellanox_client.py). ONYX 3.6.6000 changed several layouts; the
// parsers accept the layouts before and after it.

// jsonPrint is the pipe that makes ONYX print JSON.
const jsonPrint = " | json-print"

// ShowInterfacesCommand is `show interfaces ethernet | json-print` (every
// Ethernet port), or `show interfaces ethernet <id> | json-print` for one
// port i; ParseInterfaces reads its output.
func ShowInterfacesCommand(i Iface) string {
	if i.IsZero() {
		return "show interfaces ethernet" + jsonPrint
	}
	return "show interfaces " + i.String() + jsonPrint
}

// ShowPFCCommand is `show dcb priority-flow-control | json-print`, read by
// ParsePFC.
const ShowPFCCommand = "show dcb priority-flow-control" + jsonPrint

// ShowCongestionCommand is `show interfaces ethernet <id> congestion-control
// | json-print` for port i, read by ParseCongestion.
func ShowCongestionCommand(i Iface) string {
	return "show interfaces " + i.String() + " congestion-control" + jsonPrint
}

// ShowPFCCountersCommand is `show interfaces ethernet <id> counters pfc prio
// <sp>`: the PFC pause frames of switch priority sp (0–7) on port i, as text
// (read by ParsePauseCounters). The command is the one Intel's
// mfd-switchmanagement (mfd_switchmanagement/vendors/mellanox/base.py,
// get_pfc_port_statistics) and the dss-sdk ONYX client send.
func ShowPFCCountersCommand(i Iface, sp int) string {
	return "show interfaces " + i.String() + " counters pfc prio " + strconv.Itoa(sp)
}

// ShortName is the interface's name in ONYX's show output and JSON keys:
// "Eth1/3" for ethernet 1/3, "Po5" for port-channel 5, "Mpo9" for
// mlag-port-channel 9 (the names onyx_pfc_interface.py maps back to
// commands); other types keep their CLI spelling.
func (i Iface) ShortName() string {
	switch i.Type {
	case "ethernet":
		return "Eth" + i.ID
	case "port-channel":
		return "Po" + i.ID
	case "mlag-port-channel":
		return "Mpo" + i.ID
	}
	return i.String()
}

// PortStatus is one port as `show interfaces ethernet [<id>] | json-print`
// prints it. Fixture onyx_interfaces_show.cfg of the mellanox.onyx collection
// (before 3.6.6000, a list of objects named by "header"):
//
//	[{"header": "Eth1/1", "Admin state": "Enabled", "Operational state": "Down",
//	  "Actual speed": "40 Gbps", "MTU": "1500 bytes(Maximum packet size 1522 bytes)",
//	  "Flow-control": "receive off send off", …}, …]
//
// From 3.6.6000 the objects are keyed by the port, `{"Eth1/1": [{…}], …}`
// (onyx_interface.py, load_current_config, which also merges the keys of
// every object in a port's list).
type PortStatus struct {
	// Name is the port's name, e.g. "Eth1/3".
	Name string
	// Admin is "Admin state" as printed ("Enabled", "Disabled").
	Admin string
	// Oper is "Operational state" as printed ("Up", "Down"); `show interfaces
	// ethernet status` names it "State", which is read too.
	Oper string
	// Speed is "Actual speed" as printed, e.g. "100 Gbps"; "" when absent.
	Speed string
	// MTU is the first integer of "MTU" ("9216 bytes(Maximum packet size 9238
	// bytes)" → 9216), in bytes without the 22 bytes of Ethernet header,
	// 802.1Q tag and FCS; 0 when absent (onyx_interface.py get_mtu).
	MTU int
	// FlowControl is "Flow-control" as printed, e.g. "receive off send off"
	// (802.3x link pause).
	FlowControl string
}

// AdminUp reports whether the port is administratively enabled (not
// `shutdown`).
func (p PortStatus) AdminUp() bool { return strings.EqualFold(p.Admin, "enabled") }

// OperUp reports whether the link is up.
func (p PortStatus) OperUp() bool { return strings.EqualFold(p.Oper, "up") }

// SpeedGbps is Speed in Gbit/s ("100 Gbps" → 100, "10 Mbps" → 0.01), 0 when
// it is not a number (e.g. "Unknown").
func (p PortStatus) SpeedGbps() float64 {
	f := strings.Fields(p.Speed)
	if len(f) == 0 {
		return 0
	}
	num, unit := f[0], ""
	if len(f) > 1 {
		unit = strings.ToLower(f[1])
	}
	// "100G", "25Gbps": the unit glued to the number.
	if k := strings.IndexFunc(num, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); k > 0 {
		num, unit = num[:k], strings.ToLower(num[k:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0
	}
	switch {
	case strings.HasPrefix(unit, "t"):
		return v * 1000
	case strings.HasPrefix(unit, "m"):
		return v / 1000
	}
	return v
}

// ParseInterfaces reads the output of ShowInterfacesCommand into the ports
// by name ("Eth1/3"; VLAN and other interfaces keep their names, e.g. "Vlan
// 10"). It accepts the layout before 3.6.6000 (a list of objects with
// "header"), the one after (an object of name → list of objects) and a list
// of such objects; anything before the first line that opens the JSON (the
// echo, a banner) is skipped as onyx.py's _parse_json_output does.
func ParseInterfaces(out string) (map[string]PortStatus, error) {
	v, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("show interfaces: %w", err)
	}
	ports := map[string]PortStatus{}
	add := func(name string, attrs map[string]any) {
		if name == "" {
			return
		}
		p := ports[name]
		p.Name = name
		if s, ok := attrs["Admin state"].(string); ok {
			p.Admin = s
		}
		if s, ok := attrs["Operational state"].(string); ok {
			p.Oper = s
		} else if s, ok := attrs["State"].(string); ok && p.Oper == "" {
			p.Oper = s
		}
		if s, ok := attrs["Actual speed"].(string); ok {
			p.Speed = s
		} else if s, ok := attrs["Speed"].(string); ok && p.Speed == "" {
			p.Speed = s
		}
		if s, ok := attrs["MTU"].(string); ok {
			p.MTU = firstInt(s)
		}
		if s, ok := attrs["Flow-control"].(string); ok {
			p.FlowControl = s
		}
		ports[name] = p
	}
	byName := func(m map[string]any) {
		for name, val := range m {
			list, ok := val.([]any)
			if !ok {
				continue
			}
			for _, e := range list {
				if attrs, ok := e.(map[string]any); ok {
					add(name, attrs)
				}
			}
		}
	}
	switch v := v.(type) {
	case map[string]any:
		byName(v)
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			if h, ok := m["header"].(string); ok {
				add(h, m)
			} else {
				byName(m)
			}
		}
	default:
		return nil, errors.New("show interfaces: neither a JSON list nor an object")
	}
	return ports, nil
}

// PFCStatus is `show dcb priority-flow-control | json-print`: the global
// PFC state and each port's. From 3.6.6000 a list whose first element is
// global and a later one holds the ports (the dss-sdk client's
// show_pfc_status docstring; onyx_pfc_interface.py reads element [2]):
//
//	[{"PFC": "enabled", "Priority Enabled List": "3 4", "Priority Disabled List": "0 1 2 5 6 7"},
//	 {"Eth1/1": [{"PFC admin": "Auto", "PFC oper": "Disabled"}], …}]
//
// Before 3.6.6000 the ports sat under "Table 2". The per-port objects are
// those of fixtures onyx_pfc_interface_enabled.cfg ("PFC admin": "on",
// "PFC oper": "Enabled") and onyx_pfc_interface_disabled.cfg ("Auto",
// "Disabled").
type PFCStatus struct {
	// Global is "PFC" as printed ("enabled", "disabled"), "" when absent.
	Global string
	// Priorities are the switch priorities (0–7) of "Priority Enabled List".
	Priorities []int
	// Ports are the interfaces by name ("Eth1/3", "Po1", "Mpo2").
	Ports map[string]PortPFC
}

// Enabled reports whether PFC is on globally.
func (s PFCStatus) Enabled() bool { return strings.EqualFold(s.Global, "enabled") }

// PriorityEnabled reports whether PFC is on for switch priority sp.
func (s PFCStatus) PriorityEnabled(sp int) bool { return slices.Contains(s.Priorities, sp) }

// PortPFC is one interface's PFC state.
type PortPFC struct {
	// Admin is "PFC admin" as printed: "on" after `dcb priority-flow-control
	// mode on`, "Auto" by default (DCBX decides).
	Admin string
	// Oper is "PFC oper" as printed, "Enabled" or "Disabled".
	Oper string
}

// OperEnabled reports whether PFC is operationally on for the port.
func (p PortPFC) OperEnabled() bool { return strings.EqualFold(p.Oper, "enabled") }

// ParsePFC reads the output of ShowPFCCommand. It looks for the global
// object (the one with "PFC") and the port objects (name → [{"PFC oper": …}])
// wherever they are nested, so the layouts before and after 3.6.6000 both
// read.
func ParsePFC(out string) (PFCStatus, error) {
	v, err := decodeJSON(out)
	if err != nil {
		return PFCStatus{}, fmt.Errorf("show dcb priority-flow-control: %w", err)
	}
	st := PFCStatus{Ports: map[string]PortPFC{}}
	found := false
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			if g, ok := v["PFC"].(string); ok {
				st.Global, found = g, true
				if l, ok := v["Priority Enabled List"].(string); ok {
					for _, f := range strings.Fields(strings.ReplaceAll(l, ",", " ")) {
						if n, ok := smallInt(f, 7); ok && !slices.Contains(st.Priorities, n) {
							st.Priorities = append(st.Priorities, n)
						}
					}
					slices.Sort(st.Priorities)
				}
			}
			for name, val := range v {
				list, ok := val.([]any)
				if !ok || len(list) == 0 {
					walk(val)
					continue
				}
				attrs, ok := list[0].(map[string]any)
				oper, isPort := attrs["PFC oper"].(string)
				if !ok || !isPort {
					walk(val)
					continue
				}
				admin, _ := attrs["PFC admin"].(string)
				st.Ports[name] = PortPFC{Admin: admin, Oper: oper}
				found = true
			}
		}
	}
	walk(v)
	if !found {
		return st, errors.New("show dcb priority-flow-control: no \"PFC\" state and no port in the output")
	}
	return st, nil
}

// Congestion is `show interfaces ethernet <id> congestion-control |
// json-print`: a list whose first element is the port and its count of
// ECN-marked packets, then one element per traffic class (fixture
// onyx_show_interface_congestion_control.cfg; onyx_traffic_class.py reads
// the element of TC n at index n+1):
//
//	[{"Interface ethernet": "1/1", "ECN marked packets": "0"},
//	 {"header": "TC-0", "Mode": "none"}, …,
//	 {"header": "TC-3", "Mode": "ECN", "Threshold mode": "absolute",
//	  "Minimum threshold": "500 KB", "Maximum threshold": "1550 KB", "RED dropped packets": "0"}, …]
type Congestion struct {
	// Interface is "Interface ethernet" as printed, e.g. "1/1".
	Interface string
	// ECNMarked is "ECN marked packets", -1 when absent or not a number.
	ECNMarked int64
	// TCs are the traffic classes in output order.
	TCs []TCCongestion
}

// TC returns traffic class tc (0–7), false when the output has none.
func (c Congestion) TC(tc int) (TCCongestion, bool) {
	for _, t := range c.TCs {
		if t.TC == tc {
			return t, true
		}
	}
	return TCCongestion{}, false
}

// TCCongestion is one traffic class's congestion control.
type TCCongestion struct {
	// TC is the traffic class (0–7), from the header "TC-3".
	TC int
	// Mode is "Mode" as printed: "ECN", "RED" or "none".
	Mode string
	// ThresholdMode is "absolute" (thresholds in KB) or "relative" (percent
	// of the buffer); "" for mode none.
	ThresholdMode string
	// Min and Max are the thresholds' numbers: KB when absolute, percent
	// when relative; 0 when absent.
	Min, Max int
}

// ECN reports whether the class marks ECN (mode ECN, or one that names
// ECN together with RED).
func (t TCCongestion) ECN() bool { return strings.Contains(strings.ToUpper(t.Mode), "ECN") }

// String is e.g. "ECN, absolute 150-1500 KB", "RED, relative 9-90%" or "none".
func (t TCCongestion) String() string {
	switch t.ThresholdMode {
	case "absolute":
		return fmt.Sprintf("%s, absolute %d-%d KB", t.Mode, t.Min, t.Max)
	case "relative":
		return fmt.Sprintf("%s, relative %d-%d%%", t.Mode, t.Min, t.Max)
	}
	if t.Mode == "" {
		return "none"
	}
	return t.Mode
}

var tcHeader = regexp.MustCompile(`^TC-(\d)$`)

// ParseCongestion reads the output of ShowCongestionCommand. A traffic
// class is named by its "header"; without one, by its position (index n+1,
// as onyx_traffic_class.py reads it).
func ParseCongestion(out string) (Congestion, error) {
	v, err := decodeJSON(out)
	if err != nil {
		return Congestion{}, fmt.Errorf("show congestion-control: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return Congestion{}, errors.New("show congestion-control: not a JSON list")
	}
	c := Congestion{ECNMarked: -1}
	for k, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if s, ok := m["Interface ethernet"].(string); ok {
			c.Interface = s
		}
		if s, ok := m["ECN marked packets"].(string); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				c.ECNMarked = n
			}
		}
		mode, ok := m["Mode"].(string)
		if !ok {
			continue
		}
		t := TCCongestion{TC: k - 1, Mode: mode}
		if h, ok := m["header"].(string); ok {
			if sm := tcHeader.FindStringSubmatch(strings.TrimSpace(h)); sm != nil {
				t.TC = int(sm[1][0] - '0')
			}
		}
		if t.TC < 0 || t.TC > 7 {
			continue
		}
		t.ThresholdMode, _ = m["Threshold mode"].(string)
		if s, ok := m["Minimum threshold"].(string); ok {
			t.Min = firstInt(s)
		}
		if s, ok := m["Maximum threshold"].(string); ok {
			t.Max = firstInt(s)
		}
		c.TCs = append(c.TCs, t)
	}
	if len(c.TCs) == 0 {
		return c, errors.New("show congestion-control: no traffic class in the output")
	}
	return c, nil
}

// PauseCounters are the PFC pause frames of one priority on one port, from
// ShowPFCCountersCommand.
type PauseCounters struct {
	// Rx and Tx are the pause packets received and sent; Tx is -1 when the
	// output had only one count.
	Rx, Tx int64
}

// String is e.g. "rx 12, tx 5 pause packets".
func (p PauseCounters) String() string {
	if p.Tx < 0 {
		return fmt.Sprintf("%d pause packets", p.Rx)
	}
	return fmt.Sprintf("rx %d, tx %d pause packets", p.Rx, p.Tx)
}

var pausePackets = regexp.MustCompile(`(?i)(\d+)\s*pause packets`)

// ParsePauseCounters reads the text of ShowPFCCountersCommand. Its full
// layout is not documented publicly: Intel's mfd-switchmanagement keeps the
// lines with "pause packets" and takes `(\d+)\s*pause packets` (the first
// match). ParsePauseCounters takes the count after an "Rx" heading as Rx and
// after a "Tx" heading as Tx; without headings the first count is Rx and
// the second Tx. It fails when no count is found.
func ParsePauseCounters(out string) (PauseCounters, error) {
	p := PauseCounters{Rx: -1, Tx: -1}
	section := ""
	var loose []int64
	for _, line := range strings.Split(out, "\n") {
		t := strings.ToLower(strings.TrimSpace(line))
		switch {
		case t == "rx" || strings.HasPrefix(t, "rx:") || strings.HasPrefix(t, "rx "):
			section = "rx"
		case t == "tx" || strings.HasPrefix(t, "tx:") || strings.HasPrefix(t, "tx "):
			section = "tx"
		}
		m := pausePackets.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			continue
		}
		switch {
		case section == "rx" && p.Rx < 0:
			p.Rx = n
		case section == "tx" && p.Tx < 0:
			p.Tx = n
		default:
			loose = append(loose, n)
		}
	}
	for _, n := range loose {
		if p.Rx < 0 {
			p.Rx = n
		} else if p.Tx < 0 {
			p.Tx = n
		}
	}
	if p.Rx < 0 {
		return p, errors.New("no \"<n> pause packets\" line in the output")
	}
	return p, nil
}

// decodeJSON decodes the first JSON value of out, starting at the first
// line that opens a list or an object.
func decodeJSON(out string) (any, error) {
	start, off := -1, 0
	for _, line := range strings.SplitAfter(out, "\n") {
		if t := strings.TrimLeft(line, " \t\r"); t != "" && (t[0] == '[' || t[0] == '{') {
			start = off + len(line) - len(t)
			break
		}
		off += len(line)
	}
	if start < 0 {
		return nil, fmt.Errorf("no JSON in the output %q", abbreviate(out))
	}
	var v any
	if err := json.NewDecoder(strings.NewReader(out[start:])).Decode(&v); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	return v, nil
}

// abbreviate shortens a device reply for an error message.
func abbreviate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// firstInt is the first integer in s ("9216 bytes(…)" → 9216, "9%" → 9),
// 0 when there is none.
func firstInt(s string) int {
	s = strings.TrimSpace(s)
	k := 0
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	n, _ := strconv.Atoi(s[:k])
	return n
}
