// Package quote makes text safe for the languages rdggen writes: one function
// per language, used by every generator, so that no string from an inventory
// or a command line becomes code in a shell script, a second line in a
// comment, or a second key in a configuration file.
//
// Most inventory strings never need it: validation holds them to a grammar
// (host names, interface names, image references…) that is safe everywhere.
// What is left — free text such as an inventory's file path — goes through
// here where it is written.
package quote

import (
	"fmt"
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
// (newline, carriage return, NUL, escape, DEL, C1 controls) and every byte
// that is not UTF-8 becomes a Go escape (\n, \x1b, \u0085…), and a backslash
// becomes \\ so the escapes are unambiguous. Printable text is unchanged.
func Line(s string) string {
	if isPlainLine(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func isPlainLine(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' || r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}
