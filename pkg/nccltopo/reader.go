package nccltopo

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// The reader below accepts the language NCCL's own XML reader accepts
// (NVIDIA/nccl src/graph/xml.cc xmlGetNode, xmlGetToken, xmlGetValue,
// xmlSkipComment, xmlLoadSub at NCCLCommit), and refuses a few oddities
// NCCL tolerates by accident; docs/nccl-topology.md lists both:
//
//   - Between elements only spaces, line feeds and carriage returns; any
//     other character (a tab, text, an <?xml …?> declaration's '?') stops
//     NCCL's reader, and then NCCL's communicator init.
//   - A tag is '<', a name, then attributes each after one space: name,
//     '=', a value in double (or, since NCCL 2.27, single) quotes, nothing
//     escaped; then "/>" or '>'. NCCL allows no line break inside a tag.
//     An extra space before an attribute or "/>" makes NCCL read an empty
//     attribute, which counts toward its 16.
//   - "<!--" starts a comment that ends at the next "-->"; the comment's
//     first word (up to a space, '>', '/' or line break) is read as a name,
//     so it must not hold '=' and must fit a name's length.
//   - Names are at most 253 bytes, attribute names 254, values 253
//     (MAX_STR_LEN 255 less the terminator and, for names and values, the
//     character that ends them).
//   - Refused here although NCCL reads on: an attribute without '=' (NCCL
//     reads an empty value), an element without a name, a closing tag that
//     does not match inside an element NCCL ignores, anything after '/'
//     but '>', a NUL byte (NCCL's C strings end there), nesting deeper
//     than maxDepth.

// elem is one element of the file.
type elem struct {
	name      string
	attrs     []attr // in file order; empty ones (extra spaces) have key ""
	kids      []*elem
	parent    *elem
	line, col int // of the '<'
	nth       int // how many elements of this name come before it under its parent
	// loaded: NCCL's reader keeps this element (a known name under a
	// known parent), rather than skipping it with its whole subtree.
	loaded bool
}

// attr is one attribute as NCCL reads it.
type attr struct {
	key, val  string
	line, col int
	quote     byte // '"' or '\''; 0 for an empty attribute
}

// get returns the first attribute named key, as NCCL's xmlGetAttr does.
func (e *elem) get(key string) (attr, bool) {
	for _, a := range e.attrs {
		if a.key == key {
			return a, true
		}
	}
	return attr{}, false
}

const (
	maxNameLen  = 253 // element names, including a comment's first word
	maxKeyLen   = 254 // attribute names
	maxValueLen = 253 // attribute values
	maxDepth    = 1024
)

// reader reads src; its errors are *Finding (rule "parse" or "limit").
type reader struct {
	src        []byte
	i          int
	depth      int
	lineStarts []int
	warnings   []Finding
}

// parse reads src into its top-level elements. A non-nil *Finding is the
// first thing NCCL's reader would stop at (NCCL then fails its
// communicator init); warnings are what NCCL reads differently in older
// releases.
func parse(src []byte) (top []*elem, warnings []Finding, fatal *Finding) {
	r := &reader{src: src, lineStarts: []int{0}}
	for i, c := range src {
		if c == '\n' {
			r.lineStarts = append(r.lineStarts, i+1)
		}
	}
	top, err := r.nodes(nil)
	if err != nil {
		return nil, r.warnings, err
	}
	return top, r.warnings, nil
}

// pos is the 1-based line and byte column of offset i.
func (r *reader) pos(i int) (int, int) {
	l := sort.Search(len(r.lineStarts), func(k int) bool { return r.lineStarts[k] > i }) - 1
	return l + 1, i - r.lineStarts[l] + 1
}

func (r *reader) fail(at int, rule Rule, format string, args ...any) *Finding {
	l, c := r.pos(at)
	src := srcXMLReader
	if rule == RuleLimit {
		src = srcXMLLimits
	}
	return &Finding{Severity: Error, Rule: rule, Line: l, Col: c, Message: fmt.Sprintf(format, args...), Source: src}
}

func (r *reader) eof() bool { return r.i >= len(r.src) }

// nodes reads elements until parent's closing tag, or to the end of the
// file at the top (parent nil).
func (r *reader) nodes(parent *elem) ([]*elem, *Finding) {
	var out []*elem
	names := map[string]int{}
	for {
		for !r.eof() && (r.src[r.i] == ' ' || r.src[r.i] == '\n' || r.src[r.i] == '\r') {
			r.i++
		}
		if r.eof() {
			if parent != nil {
				return nil, r.fail(r.i, RuleParse, "the file ends inside <%s> (line %d): no </%s>", parent.name, parent.line, parent.name)
			}
			return out, nil
		}
		start := r.i
		if c := r.src[r.i]; c != '<' {
			what := "text"
			if c == '\t' {
				what = "a tab"
			}
			return nil, r.fail(start, RuleParse, "%q (%s) where NCCL's reader expects '<': it allows only spaces, line feeds and carriage returns between elements", rune(c), what)
		}
		r.i++
		name, term, err := r.token(maxNameLen, "element name")
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "!--") {
			end := bytes.Index(r.src[start+4:], []byte("-->"))
			if end < 0 {
				return nil, r.fail(start, RuleParse, "comment without \"-->\"")
			}
			r.i = start + 4 + end + 3
			continue
		}
		if name == "" && term == '/' {
			cname, cterm, err := r.token(maxNameLen, "element name")
			if err != nil {
				return nil, err
			}
			if cterm != '>' {
				return nil, r.fail(r.i-1, RuleParse, "closing tag </%s must end with '>' right after the name, found %q", clip(cname), rune(cterm))
			}
			switch {
			case parent == nil:
				return nil, r.fail(start, RuleParse, "</%s> closes no element", clip(cname))
			case cname != parent.name:
				return nil, r.fail(start, RuleParse, "</%s> where <%s> (line %d) must close: NCCL's reader stops (\"XML Mismatch\")", clip(cname), parent.name, parent.line)
			}
			return out, nil
		}
		if name == "" {
			return nil, r.fail(start, RuleParse, "'<' without an element name")
		}
		if name[0] == '?' || name[0] == '!' {
			return nil, r.fail(start, RuleParse, "<%s …>: NCCL's reader has no XML declaration, DOCTYPE or processing instruction; it stops there (an <?xml?> line breaks every NCCL)", clip(name))
		}
		l, c := r.pos(start)
		e := &elem{name: name, parent: parent, line: l, col: c, nth: names[name]}
		names[name]++
		for term == ' ' {
			at := r.i
			key, kterm, hasValue, err := r.key()
			if err != nil {
				return nil, err
			}
			al, ac := r.pos(at)
			if !hasValue {
				if key != "" {
					return nil, r.fail(at, RuleParse, "attribute %s has no =\"value\" (NCCL would read it as empty)", clip(key))
				}
				e.attrs = append(e.attrs, attr{line: al, col: ac})
				term = kterm
				continue
			}
			val, quote, err := r.value()
			if err != nil {
				return nil, err
			}
			if quote == '\'' {
				r.warnings = append(r.warnings, Finding{Severity: Warning, Rule: RuleQuote, Line: al, Col: ac,
					Message: fmt.Sprintf("%s='…' is in single quotes: NCCL reads them since 2.27; older releases read on to the next double quote", clip(key)),
					Source:  srcXMLReader + "; NVIDIA/nccl v2.26.2-1 xml.cc xmlGetValue"})
			}
			e.attrs = append(e.attrs, attr{key: key, val: val, line: al, col: ac, quote: quote})
			if r.eof() {
				return nil, r.fail(r.i, RuleParse, "the file ends inside <%s>", clip(name))
			}
			term = r.src[r.i]
			r.i++
		}
		switch term {
		case '/':
			if r.eof() || r.src[r.i] != '>' {
				return nil, r.fail(r.i, RuleParse, "<%s …/ must end with \"/>\"", clip(name))
			}
			r.i++
		case '>':
			if r.depth >= maxDepth {
				return nil, r.fail(start, RuleLimit, "elements nested deeper than %d", maxDepth)
			}
			r.depth++
			kids, err := r.nodes(e)
			r.depth--
			if err != nil {
				return nil, err
			}
			e.kids = kids
		default:
			return nil, r.fail(r.i-1, RuleParse, "%q after <%s …: NCCL's reader wants ' ', \"/>\" or '>' (it allows no line break inside a tag)", rune(term), clip(name))
		}
		out = append(out, e)
	}
}

// isTerm: the characters that end a name in NCCL's xmlGetToken.
func isTerm(c byte) bool { return c == ' ' || c == '>' || c == '/' || c == '\n' || c == '\r' }

// token reads a name up to its terminator, which it consumes and returns.
func (r *reader) token(limit int, what string) (string, byte, *Finding) {
	start := r.i
	for !r.eof() && !isTerm(r.src[r.i]) {
		switch r.src[r.i] {
		case '=':
			return "", 0, r.fail(r.i, RuleParse, "'=' in an %s (NCCL: \"Unexpected value with name\"); a comment's first word must not hold '=' either", what)
		case 0:
			return "", 0, r.fail(r.i, RuleParse, "a NUL byte: NCCL's C strings end there")
		}
		r.i++
		if r.i-start > limit {
			return "", 0, r.fail(start, RuleLimit, "%s longer than %d bytes: NCCL's reader stops (\"too long\"; MAX_STR_LEN 255)", what, limit)
		}
	}
	if r.eof() {
		return "", 0, r.fail(r.i, RuleParse, "the file ends inside a tag")
	}
	name := string(r.src[start:r.i])
	term := r.src[r.i]
	r.i++
	return name, term, nil
}

// key reads an attribute name up to '=' (hasValue) or a terminator.
func (r *reader) key() (key string, term byte, hasValue bool, err *Finding) {
	start := r.i
	for !r.eof() {
		c := r.src[r.i]
		if c == '=' {
			key = string(r.src[start:r.i])
			r.i++
			return key, 0, true, nil
		}
		if isTerm(c) {
			r.i++
			return string(r.src[start : r.i-1]), c, false, nil
		}
		if c == 0 {
			return "", 0, false, r.fail(r.i, RuleParse, "a NUL byte: NCCL's C strings end there")
		}
		r.i++
		if r.i-start > maxKeyLen {
			return "", 0, false, r.fail(start, RuleLimit, "attribute name longer than %d bytes: NCCL's reader stops (\"too long\"; MAX_STR_LEN 255)", maxKeyLen)
		}
	}
	return "", 0, false, r.fail(r.i, RuleParse, "the file ends inside a tag")
}

// value reads a quoted value; the quote is the same at both ends.
func (r *reader) value() (string, byte, *Finding) {
	if r.eof() {
		return "", 0, r.fail(r.i, RuleParse, "the file ends inside a tag")
	}
	q := r.src[r.i]
	if q != '"' && q != '\'' {
		return "", 0, r.fail(r.i, RuleParse, "an attribute value must be in double quotes (NCCL: \"Expected (double) quote\")")
	}
	r.i++
	start := r.i
	for !r.eof() && r.src[r.i] != q {
		if r.src[r.i] == 0 {
			return "", 0, r.fail(r.i, RuleParse, "a NUL byte: NCCL's C strings end there")
		}
		r.i++
		if r.i-start > maxValueLen {
			return "", 0, r.fail(start-1, RuleLimit, "attribute value longer than %d bytes: NCCL's reader stops (\"too long\"; MAX_STR_LEN 255)", maxValueLen)
		}
	}
	if r.eof() {
		return "", 0, r.fail(start-1, RuleParse, "a value without its closing quote")
	}
	v := string(r.src[start:r.i])
	r.i++
	return v, q, nil
}
