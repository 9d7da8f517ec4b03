package onyx

import (
	"bytes"
	"slices"
	"strings"
)

// Line is one command as written to a file or sent to the switch: the
// statements of one Kind that share a body, on a run of consecutive ports,
// merged into one range command as the switch itself prints them
// (`interface ethernet 1/1-1/32 qos trust L3`; docs/rules.md#running-config-format).
type Line struct {
	// Kind is the statements' kind.
	Kind Kind
	// Command is the flat command, e.g. "interface ethernet 1/1-1/8 qos trust L3".
	Command string
	// Statements are the single-interface statements the line stands for.
	Statements []Statement
}

// Lines merges statements into range commands. Lines keep the order of
// their first statement; pass sorted statements (Sort) for running-config
// order. Duplicate statements are merged. Only the interface types whose
// ranges ONYX is seen to take are merged (sentTypes); a VLAN interface is
// one per line.
func Lines(stmts []Statement) []Line {
	type bucket struct {
		kind  Kind
		typ   string
		body  string
		order int
		byID  map[string]Statement
		ids   []Iface
	}
	type bkey struct {
		kind      Kind
		typ, body string
	}
	var buckets []*bucket
	index := map[bkey]*bucket{}
	for _, s := range stmts {
		k := bkey{s.Kind, s.Iface.Type, s.Body}
		b := index[k]
		if b == nil {
			b = &bucket{kind: s.Kind, typ: s.Iface.Type, body: s.Body, order: len(buckets), byID: map[string]Statement{}}
			index[k] = b
			buckets = append(buckets, b)
		}
		if _, dup := b.byID[s.Iface.ID]; !dup {
			b.byID[s.Iface.ID] = s
			b.ids = append(b.ids, s.Iface)
		}
	}
	var out []Line
	for _, b := range buckets {
		if b.typ == "" {
			for _, s := range b.byID {
				out = append(out, Line{Kind: b.kind, Command: s.Body, Statements: []Statement{s}})
			}
			continue
		}
		slices.SortFunc(b.ids, compareIface)
		ids := make([]string, len(b.ids))
		for k, i := range b.ids {
			ids[k] = i.ID
		}
		specs := ids
		if sentTypes[b.typ] {
			specs = compressIDs(ids)
		}
		start := 0
		for _, spec := range specs {
			n := 1
			if lo, hi, ok := strings.Cut(spec, "-"); ok {
				n = indexOf(ids, hi) - indexOf(ids, lo) + 1
			}
			l := Line{Kind: b.kind, Command: ifaceCommand(b.kind, b.typ+" "+spec, b.body)}
			for _, id := range ids[start : start+n] {
				l.Statements = append(l.Statements, b.byID[id])
			}
			out = append(out, l)
			start += n
		}
	}
	return out
}

// sentTypes are the interface types whose ranges rdggen sends and writes:
// those seen as input in running-configs and the CLI's published forms
// (`interface ethernet 1/1-1/32 …`, `interface mlag-port-channel 1-9 …`;
// docs/rules.md#running-config-format). `interface vlan 1-2` was not seen
// (docs/research/onyx-l3.md has only single VLAN interfaces), so a leaf
// with several rails' VLAN interfaces writes `interface vlan 1`,
// `interface vlan 2`, … one per line, as split ports' lanes are. Parse
// still reads ranges of every type in rangeTypes.
var sentTypes = map[string]bool{
	"ethernet":          true,
	"port-channel":      true,
	"mlag-port-channel": true,
}

func indexOf(ids []string, id string) int {
	for k, x := range ids {
		if x == id {
			return k
		}
	}
	return -1
}

// Prefix-mode wrapper of every running-config (docs/rules.md#prefix-modes): prefix
// modes off while the flat lines are read, back on at the end.
const (
	prefixModesOff = "no cli default prefix-modes enable"
	prefixModesOn  = "cli default prefix-modes enable"
)

// Render writes statements as ONYX running-config text (docs/rules.md#switch-onyx
// §2.1, §2.5): an optional header of comment lines, the prefix-mode wrapper,
// one `##` banner per section in Kind order, one flat command per line with
// ranges merged (Lines), positive commands indented by 3 spaces and `no`
// commands at column 0, a blank line after each section. Statements are
// sorted first; the input is not changed.
func Render(header []string, stmts []Statement) []byte {
	sorted := slices.Clone(stmts)
	Sort(sorted)
	var b bytes.Buffer
	if len(header) > 0 {
		b.WriteString("##\n")
		for _, h := range header {
			b.WriteString(strings.TrimRight("## "+h, " ") + "\n")
		}
		b.WriteString("##\n\n")
	}
	banner := func(title string) { b.WriteString("##\n## " + title + "\n##\n") }
	banner("Running-config temporary prefix mode setting")
	b.WriteString(prefixModesOff + "\n\n")
	current := ""
	for _, l := range Lines(sorted) {
		if title := section[l.Kind]; title != current {
			if current != "" {
				b.WriteString("\n")
			}
			banner(title)
			current = title
		}
		if !strings.HasPrefix(l.Command, "no ") {
			b.WriteString("   ")
		}
		b.WriteString(l.Command + "\n")
	}
	if current != "" {
		b.WriteString("\n")
	}
	banner("Persistent prefix mode setting")
	b.WriteString(prefixModesOn + "\n")
	return b.Bytes()
}
