package onyx

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The read-only show commands that check a leaf-spine fabric on ONYX: the
// BGP sessions and the LLDP neighbors of the uplinks.

// ShowBGPSummaryCommand is `show ip bgp summary`, as text: per VRF a
// "key : value" header and a table of neighbors, read by ParseBGPSummary.
// The command and its layout are the ones HPE's Cray System Management
// documentation shows on a Mellanox ONYX spine (github.com/Cray-HPE/docs-csm,
// operations/network/metallb_bgp/Check_BGP_Status_and_Reset_Sessions.md),
// which also checks BGP is on with `show protocols | include bgp` and
// resets the sessions with `clear ip bgp all`.
const ShowBGPSummaryCommand = "show ip bgp summary"

// ShowLLDPRemoteCommand is `show lldp interfaces ethernet remote |
// json-print`: each Ethernet port's LLDP neighbors, read by
// ParseLLDPRemote. HPE's CANU sends `show lldp interfaces ethernet remote`
// through the ONYX JSON API, whose "data" has the structure `| json-print`
// prints (github.com/Cray-HPE/canu, canu/report/switch/cabling/cabling.py
// and the fixture lldp_json_mellanox of its tests/test_report_switch_cabling.py).
const ShowLLDPRemoteCommand = "show lldp interfaces ethernet remote" + jsonPrint

// BGPVRF is one VRF of `show ip bgp summary`.
type BGPVRF struct {
	// VRF is "VRF name" ("default").
	VRF string
	// RouterID is "BGP router identifier"; LocalAS "local AS number"
	// (0 when absent).
	RouterID string
	LocalAS  uint32
	// Neighbors are the table's rows, in output order.
	Neighbors []BGPNeighbor
}

// Neighbor returns the row of neighbor address a.
func (v BGPVRF) Neighbor(a netip.Addr) (BGPNeighbor, bool) {
	for _, n := range v.Neighbors {
		if n.Address == a {
			return n, true
		}
	}
	return BGPNeighbor{}, false
}

// BGPNeighbor is one row of the neighbor table:
//
//	Neighbor          V    AS           MsgRcvd   MsgSent   TblVer    InQ    OutQ   Up/Down       State/PfxRcd
//	10.252.1.10       4    65533        3144      3564      50        0      0      1:01:50:41    ESTABLISHED/13
type BGPNeighbor struct {
	// Address is "Neighbor".
	Address netip.Addr
	// AS is the neighbor's AS number, 0 when it is not a number.
	AS uint32
	// UpDown is "Up/Down" as printed ("1:01:50:41"), "" when the row has
	// no such column.
	UpDown string
	// State is the state word of "State/PfxRcd" as printed
	// ("ESTABLISHED"). The public outputs show only established sessions;
	// a session that is not is assumed to show its state word alone
	// ("IDLE", "CONNECT", "ACTIVE", "OPENSENT", "OPENCONFIRM"), with or
	// without a "/count" — the documentation names the Idle state without
	// showing its row.
	State string
	// PfxRcd is the count after the "/", the prefixes received; -1 when
	// absent.
	PfxRcd int
}

// Established reports whether the session is up.
func (n BGPNeighbor) Established() bool { return strings.EqualFold(n.State, "established") }

// ParseBGPSummary reads the output of ShowBGPSummaryCommand (or of `show ip
// bgp vrf all summary`, one header and table per VRF): "VRF name : X"
// starts a VRF, "BGP router identifier" and "local AS number" are its
// header, and every line whose first field is an IP address is a neighbor
// row (a line of dashes and the column heads are skipped). The JSON form of
// the same command through the ONYX JSON API ({"VRF name": "default"}, then
// {"<neighbor>": [{"State/PfxRcd": "ESTABLISHED/13"}]}: CANU's
// canu/validate/network/bgp/bgp.py and its test fixture
// bgp_status_mellanox) is read too. It fails when the output has no "VRF
// name" (it is then not a BGP summary: an error text, an empty answer).
func ParseBGPSummary(out string) ([]BGPVRF, error) {
	if t := strings.TrimSpace(out); strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
		return parseBGPSummaryJSON(out)
	}
	var vrfs []BGPVRF
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.Contains(k, "/") {
			key, val := strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
			switch key {
			case "vrf name":
				vrfs = append(vrfs, BGPVRF{VRF: val})
				continue
			case "bgp router identifier":
				if len(vrfs) > 0 {
					vrfs[len(vrfs)-1].RouterID = val
				}
				continue
			case "local as number":
				if n, err := strconv.ParseUint(val, 10, 32); err == nil && len(vrfs) > 0 {
					vrfs[len(vrfs)-1].LocalAS = uint32(n)
				}
				continue
			}
		}
		f := strings.Fields(line)
		if len(f) < 3 || len(vrfs) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		n := BGPNeighbor{Address: a, PfxRcd: -1}
		if as, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			n.AS = uint32(as)
		}
		n.State, n.PfxRcd = statePfx(f[len(f)-1])
		if len(f) == 10 {
			n.UpDown = f[8]
		}
		vrfs[len(vrfs)-1].Neighbors = append(vrfs[len(vrfs)-1].Neighbors, n)
	}
	if len(vrfs) == 0 {
		return nil, fmt.Errorf("show ip bgp summary: no \"VRF name\" in the output %q", abbreviate(out))
	}
	return vrfs, nil
}

// statePfx splits "ESTABLISHED/13" into its state and count.
func statePfx(s string) (string, int) {
	st, cnt, ok := strings.Cut(s, "/")
	if !ok {
		return s, -1
	}
	n, err := strconv.Atoi(cnt)
	if err != nil {
		return st, -1
	}
	return st, n
}

// parseBGPSummaryJSON reads the JSON API's (or `| json-print`'s) form: a
// list, or {"data": list}.
func parseBGPSummaryJSON(out string) ([]BGPVRF, error) {
	v, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("show ip bgp summary: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		if d, ok := m["data"]; ok {
			v = d
		}
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("show ip bgp summary: the JSON is not a list")
	}
	var vrfs []BGPVRF
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if name, ok := m["VRF name"].(string); ok {
			vrfs = append(vrfs, BGPVRF{VRF: name})
			if id, ok := m["BGP router identifier"].(string); ok {
				vrfs[len(vrfs)-1].RouterID = id
			}
			if as, ok := m["local AS number"].(string); ok {
				if n, err := strconv.ParseUint(as, 10, 32); err == nil {
					vrfs[len(vrfs)-1].LocalAS = uint32(n)
				}
			}
			continue
		}
		if len(vrfs) == 0 {
			continue
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			a, err := netip.ParseAddr(k)
			if err != nil {
				continue
			}
			rows, _ := m[k].([]any)
			if len(rows) == 0 {
				continue
			}
			attrs, _ := rows[0].(map[string]any)
			sp, _ := attrs["State/PfxRcd"].(string)
			n := BGPNeighbor{Address: a, PfxRcd: -1}
			n.State, n.PfxRcd = statePfx(sp)
			if as, ok := attrs["AS"].(string); ok {
				if x, err := strconv.ParseUint(as, 10, 32); err == nil {
					n.AS = uint32(x)
				}
			}
			n.UpDown, _ = attrs["Up/Down"].(string)
			vrfs[len(vrfs)-1].Neighbors = append(vrfs[len(vrfs)-1].Neighbors, n)
		}
	}
	if len(vrfs) == 0 {
		return nil, errors.New("show ip bgp summary: no \"VRF name\" in the JSON")
	}
	return vrfs, nil
}

// LLDPRemote is one LLDP neighbor of `show lldp interfaces ethernet
// remote`. In JSON (CANU's fixture lldp_json_mellanox,
// tests/test_report_switch_cabling.py) the answer is a
// list of objects, each keyed by a local port and its port channel, if
// any, with a list of attribute objects:
//
//	[{"Eth1/1 (Po100)": [{"port id subtype": "Interface Name (5)",
//	   "Remote chassis id": "aa:bb:cc:dd:ee:ff", "Remote port-id": "Eth1/11",
//	   "Remote port description": "sw-leaf03", "Remote system name": "sw-leaf03", …}]}, …]
//
// and a switch without neighbors answers {"Lines": ["", "No lldp remote
// information.", ""]} (what CANU's cabling.py tests for). A value "Not
// Advertised" is read as "". A port that hears several neighbors (two
// devices on one link: a miswire) lists one object each, and in the text
// layout one block each, numbered by "Remote Index" (the line the ska-sa
// switch_exporter's sample shows; its numbering of a second neighbor is
// inferred): each is its own LLDPRemote, never merged with the others.
type LLDPRemote struct {
	// Port is the local port's name ("Eth1/1", without the port channel).
	Port string
	// SystemName is "Remote system name", PortID "Remote port-id" (for an
	// ONYX neighbor "Eth1/11", for a Cumulus one "swp1"), PortIDSubtype
	// "port id subtype", ChassisID "Remote chassis id" and PortDescription
	// "Remote port description".
	SystemName, PortID, PortIDSubtype, ChassisID, PortDescription string
}

// lldpPortKey reads a local port heading, "Eth1/1", "Eth1/1 (Po100)" or
// "Eth1/1:" (the text layout the ska-sa switch_exporter reads,
// src/switch_exporter/switch.py: `^Eth([^ :]*)(?: \(.*\))?:?$`).
var lldpPortKey = regexp.MustCompile(`^(Eth[0-9/]+)(?: \(.*\))?:?$`)

// ParseLLDPRemote reads the output of ShowLLDPRemoteCommand into the
// neighbors by local port name ("Eth1/31"). Besides the JSON of `|
// json-print` (or the JSON API's {"data": …}) it reads the text layout the
// ska-sa switch_exporter parses (a port heading line, then "Remote
// system name : X", "Remote port-id : Y ; port id subtype: Z", "Remote
// chassis id : W" lines). A switch without neighbors gives an empty map;
// an output that is neither gives an error.
func ParseLLDPRemote(out string) (map[string][]LLDPRemote, error) {
	t := strings.TrimSpace(out)
	if strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") || strings.Contains(t, "\n[") || strings.Contains(t, "\n{") {
		return parseLLDPJSON(out)
	}
	res := map[string][]LLDPRemote{}
	var cur *LLDPRemote
	var has map[string]bool // the attribute lines cur has had
	flush := func() {
		if cur != nil {
			res[cur.Port] = append(res[cur.Port], *cur)
		}
		cur = nil
	}
	seen := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if strings.Contains(strings.ToLower(line), "no lldp remote information") {
			seen = true
			continue
		}
		if m := lldpPortKey.FindStringSubmatch(line); m != nil {
			flush()
			cur, has = &LLDPRemote{Port: m[1]}, map[string]bool{}
			seen = true
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || cur == nil {
			continue
		}
		key, val := strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		// A port heard from more than one neighbor lists each under the
		// heading, numbered by "Remote Index": a new index, or an
		// attribute again, is the next neighbor.
		if key == "remote index" && len(has) > 0 || has[key] {
			port := cur.Port
			flush()
			cur, has = &LLDPRemote{Port: port}, map[string]bool{}
		}
		has[key] = true
		switch key {
		case "remote system name":
			cur.SystemName = advertised(val)
		case "remote port-id":
			id, sub, _ := strings.Cut(val, ";")
			cur.PortID = advertised(strings.TrimSpace(id))
			if _, s, ok := strings.Cut(sub, ":"); ok {
				cur.PortIDSubtype = strings.TrimSpace(s)
			}
		case "remote chassis id":
			cur.ChassisID = advertised(val)
		case "remote port description":
			cur.PortDescription = advertised(val)
		}
	}
	flush()
	if !seen {
		return nil, fmt.Errorf("show lldp interfaces ethernet remote: no port and no \"No lldp remote information\" in the output %q", abbreviate(out))
	}
	return res, nil
}

func parseLLDPJSON(out string) (map[string][]LLDPRemote, error) {
	v, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("show lldp interfaces ethernet remote: %w", err)
	}
	if m, ok := v.(map[string]any); ok {
		if d, ok := m["data"]; ok {
			v = d
		}
	}
	var objs []map[string]any
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if m, ok := e.(map[string]any); ok {
				objs = append(objs, m)
			}
		}
	case map[string]any:
		objs = append(objs, v)
	default:
		return nil, errors.New("show lldp interfaces ethernet remote: the JSON is neither a list nor an object")
	}
	res := map[string][]LLDPRemote{}
	seen := false
	for _, m := range objs {
		if _, ok := m["Lines"]; ok {
			seen = true // "No lldp remote information."
			continue
		}
		for k, val := range m {
			mk := lldpPortKey.FindStringSubmatch(strings.TrimSpace(k))
			if mk == nil {
				continue
			}
			seen = true
			rows, _ := val.([]any)
			// Each object of the list is one neighbor (CANU's fixture has
			// one per port, the simulator one per neighbor); an object
			// that only adds attributes the current neighbor lacks is read
			// as more of it, one that repeats one starts the next.
			var cur *LLDPRemote
			var has map[string]bool // the attributes cur has been given
			for _, row := range rows {
				attrs, _ := row.(map[string]any)
				if len(attrs) == 0 {
					continue
				}
				if cur == nil || repeats(has, attrs) {
					res[mk[1]] = append(res[mk[1]], LLDPRemote{Port: mk[1]})
					cur, has = &res[mk[1]][len(res[mk[1]])-1], map[string]bool{}
				}
				cur.set(attrs, has)
			}
			if cur == nil {
				res[mk[1]] = append(res[mk[1]], LLDPRemote{Port: mk[1]})
			}
		}
	}
	if !seen {
		return nil, errors.New("show lldp interfaces ethernet remote: no port and no \"Lines\" in the JSON")
	}
	return res, nil
}

// lldpKeys are the JSON keys of a neighbor's attributes LLDPRemote keeps.
var lldpKeys = []string{"Remote system name", "Remote port-id", "port id subtype", "Remote chassis id", "Remote port description"}

// repeats reports whether attrs has a value for an attribute a neighbor
// already has (has): attrs then describe another neighbor.
func repeats(has map[string]bool, attrs map[string]any) bool {
	for _, k := range lldpKeys {
		if v, ok := attrs[k].(string); ok && v != "" && has[k] {
			return true
		}
	}
	return false
}

// field is the LLDPRemote field of JSON key k.
func (r *LLDPRemote) field(k string) *string {
	switch k {
	case "Remote system name":
		return &r.SystemName
	case "Remote port-id":
		return &r.PortID
	case "port id subtype":
		return &r.PortIDSubtype
	case "Remote chassis id":
		return &r.ChassisID
	case "Remote port description":
		return &r.PortDescription
	}
	return nil
}

// set reads attrs into r ("Not Advertised" as "", the subtype as is),
// noting in has what it was given.
func (r *LLDPRemote) set(attrs map[string]any, has map[string]bool) {
	for _, k := range lldpKeys {
		v, ok := attrs[k].(string)
		if !ok || v == "" {
			continue
		}
		has[k] = true
		if k != "port id subtype" {
			v = advertised(v)
		}
		*r.field(k) = v
	}
}

// advertised reads "Not Advertised" (a TLV the neighbor does not send) as "".
func advertised(s string) string {
	if strings.EqualFold(s, "Not Advertised") {
		return ""
	}
	return s
}
