package quote

import (
	"os/exec"
	"strings"
	"testing"
)

func TestSh(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                     "plain",
		"":                          "''",
		"a b":                       "'a b'",
		"it's":                      `'it'\''s'`,
		"-p 12345":                  "'-p 12345'",
		"$(rm -rf /)":               "'$(rm -rf /)'",
		"a;b":                       "'a;b'",
		"x=1,y=2:3/":                "x=1,y=2:3/",
		"V100\ntouch PWNED #":       "'V100\ntouch PWNED #'",
		"`id`":                      "'`id`'",
		"--privileged":              "--privileged",
		"*":                         "'*'",
		"~root":                     "'~root'",
		"a\\b":                      `'a\b'`,
		"horovod/horovod:0.16.0-tf": "horovod/horovod:0.16.0-tf",
	} {
		if got := Sh(in); got != want {
			t.Errorf("Sh(%q) = %s, want %s", in, got, want)
		}
	}
}

// A real shell gets back exactly the words ShJoin was given.
func TestShJoinRoundTrip(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	argv := []string{"plain", "", "a b", "it's", "$HOME", "$(touch /tmp/rdggen-PWNED)", "`id`", "line1\nline2", "*", "\x1b[31mred", "'\"", "\\"}
	out, err := exec.Command(sh, "-c", `for a in `+ShJoin(argv)+`; do printf '%s\0' "$a"; done`).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(argv, "|") {
		t.Errorf("round trip:\n got %q\nwant %q", got, argv)
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"cluster.yaml":                "cluster.yaml",
		"dir with spaces/ü.yaml":      "dir with spaces/ü.yaml",
		"x\ntouch PWNED #":            `x\ntouch PWNED #`,
		"a\r\nb":                      `a\r\nb`,
		"nul\x00esc\x1b[31m":          `nul\x00esc\x1b[31m`,
		"back\\slash":                 `back\\slash`,
		"bad utf8 \xff":               `bad utf8 \xff`,
		"next line \u0085 sep \u2028": `next line \u0085 sep \u2028`,
		"tab\there":                   `tab\there`,
	} {
		got := Line(in)
		if got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(got, "\n\r\x00") {
			t.Errorf("Line(%q) still breaks the line: %q", in, got)
		}
	}
}

func TestBidiAndTerminal(t *testing.T) {
	if got := Line("a\u202eb\u2066c"); got != `a\u202eb\u2066c` {
		t.Errorf("Line: %q", got)
	}
	if got := Terminal(`"V100\nx"` + "\x1b[31m\tx\\"); got != `"V100\nx"\x1b[31m`+"\tx\\" {
		t.Errorf("Terminal: %q", got)
	}
}

func TestTerminalWriter(t *testing.T) {
	var b strings.Builder
	w := NewTerminalWriter(&b)
	msg := "line one\nraw \x1b[2J and \u202e\nü split\n"
	// Written in pieces that cut runes in half.
	for i := 0; i < len(msg); i += 3 {
		if _, err := w.Write([]byte(msg[i:min(i+3, len(msg))])); err != nil {
			t.Fatal(err)
		}
	}
	if want := "line one\nraw \\x1b[2J and \\u202e\nü split\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
