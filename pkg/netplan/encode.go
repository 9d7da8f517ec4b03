package netplan

import (
	"bytes"
	"slices"
	"strconv"
)

// marked returns c with each non-empty Routes replaced by a placeholder
// (Routes.mark 1, 2, … in order), and those Routes.
func (c Config) marked() (Config, []Routes) {
	var routes []Routes
	es := slices.Clone(c.Ethernets)
	for i := range es {
		if es[i].Routes.Len() > 0 {
			routes = append(routes, es[i].Routes)
			es[i].Routes = Routes{mark: len(routes)}
		}
	}
	c.Ethernets = es
	return c, routes
}

// markText is the placeholder scalar of the mark-th route list.
func markText(mark int) string { return "rdggen-netplan-routes-" + strconv.Itoa(mark) }

// appendDocument appends doc's YAML to b: yaml.v3 writes marked (doc with
// its route lists as placeholders, Config.marked), and each placeholder's
// line ("- rdggen-netplan-routes-N" at the list's indentation) becomes the
// entries of routes[N-1] at that indentation. yaml.v3 writes a block
// sequence as its entries one after the other, each at the sequence's
// indentation, so the result is what it writes for doc; when a
// placeholder's line is not found exactly once (a string of doc that
// spells it), yaml.v3 writes doc itself. The placeholders are found in
// order: yaml.v3 writes the definitions in order.
func appendDocument(b []byte, marked, doc any, routes []Routes) []byte {
	skel := Marshal(marked)
	type cut struct {
		start, end int // the placeholder's line
		e          *entries
		r          Routes
	}
	cuts := make([]cut, 0, len(routes))
	size := len(skel)
	for k, r := range routes {
		line := []byte("- " + markText(k+1) + "\n")
		i := bytes.Index(skel, line)
		if i < 0 || bytes.Contains(skel[i+1:], line) {
			return append(b, Marshal(doc)...)
		}
		start := bytes.LastIndexByte(skel[:i], '\n') + 1
		indent := skel[start:i]
		if len(bytes.TrimLeft(indent, " ")) != 0 {
			return append(b, Marshal(doc)...) // not at a line's start: never, as it is found once
		}
		e := r.list.entries(string(indent))
		n := len(e.text)
		if r.omit > 0 {
			n -= len(e.entry(r.omit - 1))
		}
		size += n - (i + len(line) - start)
		cuts = append(cuts, cut{start, i + len(line), e, r})
	}
	b = slices.Grow(b, size)
	last := 0
	for _, c := range cuts {
		b = append(b, skel[last:c.start]...)
		if o := c.r.omit; o > 0 {
			b = append(b, c.e.text[:c.e.off[o-1]]...)
			b = append(b, c.e.text[c.e.off[o]:]...)
		} else {
			b = append(b, c.e.text...)
		}
		last = c.end
	}
	return append(b, skel[last:]...)
}
