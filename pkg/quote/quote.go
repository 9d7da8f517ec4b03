// Package quote makes text safe for the languages rdggen writes: one function
// per language, used by every generator, so that no string from an inventory
// or a command line becomes code in a shell script or a second line in a
// comment. YAML documents are Go values that yaml.v3 writes (pkg/netplan,
// pkg/cloudinit, pkg/cumulus), which quotes every scalar that needs it.
//
// Most inventory strings never need it: validation holds them to a grammar
// (host names, interface names, image references…) that is safe everywhere.
// What is left — free text such as an inventory's file path — goes through
// here where it is written.
package quote

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

var shSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./^-]+$`)

// Sh quotes s as one POSIX sh word: bare when it holds only characters
// that are never special to sh (letters, digits and _@%+=:,./^-), else in
// single quotes, inside which sh expands nothing; a single quote becomes
// '\”. The empty string is ”.
func Sh(s string) string {
	if shSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShJoin quotes each argument with Sh and joins them with spaces: one
// command line that runs exactly argv.
func ShJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Sh(a)
	}
	return strings.Join(q, " ")
}

// Line makes s safe as (part of) one line of any line-oriented file — a
// comment in sh, ONYX, VMX, YAML or a systemd unit: every control character
// (newline, carriage return, NUL, escape, DEL, C1 controls), every invisible
// format character that can reorder a line on screen (the bidirectional
// overrides U+202A–U+202E, U+2066–U+2069, …) or end it (U+2028, U+2029), and
// every byte that is not UTF-8 becomes a Go escape (\n, \x1b, \u202e…), and a
// backslash becomes \\ so the escapes are unambiguous. Printable text is
// unchanged.
func Line(s string) string { return escape(s, true, false) }

// Terminal is Line for text shown on a terminal or in a log: the same
// characters are escaped, but a backslash stays itself (messages quote
// values with Go's %q, whose escapes would otherwise double), and a tab stays.
func Terminal(s string) string { return escape(s, false, true) }

// special reports whether r must be escaped.
func special(r rune) bool {
	return r < 0x20 || r == 0x7f || r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) ||
		r == '\u2028' || r == '\u2029'
}

func escape(s string, backslash, keepTab bool) string {
	plain := true
	for _, r := range s {
		if special(r) || (backslash && r == '\\') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' && backslash:
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t' && keepTab:
			b.WriteByte('\t')
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case special(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// TerminalWriter passes text to a terminal with Terminal's escapes applied
// to everything but newlines: whatever a message quotes (a path, a flag, a
// remote error), it cannot move the cursor, recolour the screen or reorder
// a line. Write accepts UTF-8 split across calls.
type TerminalWriter struct {
	w    io.Writer
	part []byte // an incomplete UTF-8 sequence from the last Write
}

// NewTerminalWriter returns a TerminalWriter writing to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write escapes p (line by line) and writes it; it reports len(p) written
// when the underlying writer took everything.
func (t *TerminalWriter) Write(p []byte) (int, error) {
	data := append(t.part, p...)
	t.part = nil
	// Keep back a trailing incomplete rune for the next Write.
	for k := 1; k <= 3 && k <= len(data); k++ {
		if utf8.RuneStart(data[len(data)-k]) {
			if !utf8.FullRune(data[len(data)-k:]) {
				t.part = append([]byte(nil), data[len(data)-k:]...)
				data = data[:len(data)-k]
			}
			break
		}
	}
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for _, l := range lines {
		body, nl := strings.CutSuffix(l, "\n")
		b.WriteString(Terminal(body))
		if nl {
			b.WriteByte('\n')
		}
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
