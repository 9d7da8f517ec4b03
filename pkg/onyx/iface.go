package onyx

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Iface is an interface that an interface command configures, as the ONYX CLI
// names it after `interface`: Type "ethernet" and ID "1/1" (module/port; split
// ports "1/1/2"), Type "port-channel" and ID "5", and so on
// (docs/rules.md#models-and-ports). The zero Iface stands for global commands.
type Iface struct {
	Type string
	ID   string
}

// Ethernet returns the front-panel port 1/n as an Iface.
func Ethernet(module, port int) Iface {
	return Iface{Type: "ethernet", ID: strconv.Itoa(module) + "/" + strconv.Itoa(port)}
}

// IsZero reports whether i is the global scope.
func (i Iface) IsZero() bool { return i.Type == "" }

// String gives the CLI spelling after `interface`, e.g. "ethernet 1/1".
func (i Iface) String() string {
	if i.IsZero() {
		return ""
	}
	return i.Type + " " + i.ID
}

// ids holds the numeric components of an interface ID ("1/12/2" -> 1,12,2).
type ids struct {
	n   [4]int
	len int
}

// nums parses the ID's numeric components; ok is false when a component is
// not a number or there are more than four.
func (i Iface) nums() (v ids, ok bool) {
	s := i.ID
	if s == "" {
		return v, false
	}
	cur, digits := 0, 0
	for k := 0; k <= len(s); k++ {
		if k == len(s) || s[k] == '/' {
			if digits == 0 || v.len == len(v.n) {
				return v, false
			}
			v.n[v.len] = cur
			v.len++
			cur, digits = 0, 0
			continue
		}
		c := s[k]
		if c < '0' || c > '9' || digits > 6 {
			return v, false
		}
		cur = cur*10 + int(c-'0')
		digits++
	}
	return v, true
}

// compareIface orders interfaces by type, then numerically by ID
// (1/2 before 1/10), as running-config lists them.
func compareIface(a, b Iface) int {
	if a.Type != b.Type {
		return strings.Compare(a.Type, b.Type)
	}
	na, okA := a.nums()
	nb, okB := b.nums()
	if !okA || !okB {
		return strings.Compare(a.ID, b.ID)
	}
	for k := 0; k < na.len && k < nb.len; k++ {
		if na.n[k] != nb.n[k] {
			if na.n[k] < nb.n[k] {
				return -1
			}
			return 1
		}
	}
	return na.len - nb.len
}

// rangeTypes are the interface types whose IDs ONYX writes as ranges in
// running-config (`interface ethernet 1/1-1/32`, `interface mlag-port-channel 1-9`;
// docs/rules.md#running-config-format, §2.5).
var rangeTypes = map[string]bool{
	"ethernet":          true,
	"port-channel":      true,
	"mlag-port-channel": true,
	"vlan":              true,
	"loopback":          true,
}

// expandIDs expands an ID list such as "1/1-1/4", "1-9" or "1/1-1/2,1/7" into
// single IDs. ok is false when spec is not a well-formed list, e.g. a range
// whose ends differ in more than their last component or run backwards.
func expandIDs(spec string) (ids []string, ok bool) {
	for _, item := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		if !isRange {
			if !validID(item) {
				return nil, false
			}
			ids = append(ids, item)
			continue
		}
		a, okA := Iface{ID: lo}.nums()
		b, okB := Iface{ID: hi}.nums()
		if !okA || !okB || a.len != b.len || a.n[a.len-1] > b.n[b.len-1] {
			return nil, false
		}
		for k := 0; k < a.len-1; k++ {
			if a.n[k] != b.n[k] {
				return nil, false
			}
		}
		prefix := lo[:strings.LastIndex(lo, "/")+1]
		for n := a.n[a.len-1]; n <= b.n[b.len-1]; n++ {
			ids = append(ids, prefix+strconv.Itoa(n))
		}
	}
	return ids, true
}

func validID(id string) bool { _, ok := Iface{ID: id}.nums(); return ok }

// compressIDs writes sorted IDs of one interface type as ONYX ranges: runs of
// consecutive last components become "1/1-1/32" (or "1-9"); a lone ID stays
// as it is. It returns one spec per run, in order, because rdggen sends one
// range per command (a comma list is not confirmed ONYX input, docs/rules.md#models-and-ports, inferred).
func compressIDs(ids []string) []string {
	var out []string
	for k := 0; k < len(ids); {
		j := k
		for j+1 < len(ids) && consecutive(ids[j], ids[j+1]) {
			j++
		}
		if j == k {
			out = append(out, ids[k])
		} else {
			out = append(out, ids[k]+"-"+ids[j])
		}
		k = j + 1
	}
	return out
}

// consecutive reports whether b directly follows a: same prefix, last
// component one more. Split ports (three components) are never merged,
// since ONYX's range syntax for them was not observed (docs/rules.md#models-and-ports, inferred).
func consecutive(a, b string) bool {
	na, okA := Iface{ID: a}.nums()
	nb, okB := Iface{ID: b}.nums()
	if !okA || !okB || na.len != nb.len || na.len > 2 {
		return false
	}
	for k := 0; k < na.len-1; k++ {
		if na.n[k] != nb.n[k] {
			return false
		}
	}
	return nb.n[nb.len-1] == na.n[na.len-1]+1
}

// Ranges writes interfaces of one type compactly, e.g. "ethernet 1/1-1/8".
// It is what plans and reports print for a set of ports.
func Ranges(ifaces []Iface) []string {
	byType := map[string][]Iface{}
	var types []string
	for _, i := range ifaces {
		if _, ok := byType[i.Type]; !ok {
			types = append(types, i.Type)
		}
		byType[i.Type] = append(byType[i.Type], i)
	}
	sort.Strings(types)
	var out []string
	for _, t := range types {
		list := byType[t]
		sort.Slice(list, func(a, b int) bool { return compareIface(list[a], list[b]) < 0 })
		ids := make([]string, len(list))
		for k, i := range list {
			ids[k] = i.ID
		}
		for _, spec := range compressIDs(ids) {
			out = append(out, fmt.Sprintf("%s %s", t, spec))
		}
	}
	return out
}
