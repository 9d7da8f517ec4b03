package vmx

import "strings"

// ParamString joins parameters into one esxcli `-p` string, "a=1 b=2".
func ParamString(ps []Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + p.Value
	}
	return strings.Join(parts, " ")
}

// ParseParams splits a module parameter string ("max_vfs=8 ecn=1") into
// parameters in their order; a word without '=' has an empty value.
func ParseParams(s string) []Param {
	var out []Param
	for _, w := range strings.Fields(s) {
		name, value, _ := strings.Cut(w, "=")
		out = append(out, Param{Name: name, Value: value})
	}
	return out
}

// MergeParams returns the one parameter string to send with
// `esxcli system module parameters set -m nmlx5_core -p`: because -p
// REPLACES the module's whole parameter string, it keeps every parameter of
// current that want does not name (in its place), replaces the values of the
// ones it names, and appends the rest of want in want's order. changed is
// false when the result means the same as current (same name=value pairs),
// so a second apply sends nothing.
func MergeParams(current string, want []Param) (merged string, changed bool) {
	wanted := make(map[string]string, len(want))
	for _, p := range want {
		wanted[p.Name] = p.Value
	}
	used := map[string]bool{}
	var out []string
	for _, w := range strings.Fields(current) {
		name, value, _ := strings.Cut(w, "=")
		v, managed := wanted[name]
		switch {
		case !managed:
			out = append(out, w) // not ours: kept verbatim
		case used[name]:
			changed = true // a duplicate of a managed parameter is dropped
		default:
			used[name] = true
			if !sameValue(value, v) {
				changed = true
			}
			out = append(out, name+"="+v)
		}
	}
	for _, p := range want {
		if !used[p.Name] {
			changed = true
			out = append(out, p.Name+"="+p.Value)
		}
	}
	return strings.Join(out, " "), changed
}

// sameValue compares module parameter values the way the driver reads them:
// "0x08" and "8" are the same number.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	na, okA := parseNumber(a)
	nb, okB := parseNumber(b)
	return okA && okB && na == nb
}

func parseNumber(s string) (uint64, bool) {
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = s[2:], 16
	}
	if s == "" {
		return 0, false
	}
	var n uint64
	for _, r := range s {
		var d uint64
		switch {
		case r >= '0' && r <= '9':
			d = uint64(r - '0')
		case base == 16 && r >= 'a' && r <= 'f':
			d = uint64(r-'a') + 10
		case base == 16 && r >= 'A' && r <= 'F':
			d = uint64(r-'A') + 10
		default:
			return 0, false
		}
		n = n*uint64(base) + d
	}
	return n, true
}
