// Package remote runs rdggen's work on the VMs: one POSIX sh script per
// round trip over an SSH connection, its results framed so that nothing else
// the host prints is mistaken for them. The apply engines of the hosts and the
// workers build their probes and changes with Script and read them back with
// ParseResults.
package remote

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/quote"
)

// The host's work travels as one POSIX sh script per round trip, fed to
// `sh -s` on the SSH session's stdin (no argument length limits, one exec per
// phase). Each result comes back framed by a random nonce:
//
//	@rdggen <nonce> <name>
//	<the output or file bytes, exactly>
//	@rdggen <nonce> end <status>
//
// and the script ends with "@rdggen <nonce> done", so nothing else the host
// prints can be mistaken for a result and a cut-off run is noticed.

// RemoteCommand is what the SSH session executes: the script runs as root,
// through `sudo -n` (never prompting) when the login user is not root.
const RemoteCommand = `if [ "$(id -u)" = 0 ]; then exec /bin/sh -s; else exec sudo -n /bin/sh -s; fi`

// Quote quotes s as one sh word (quote.Sh).
func Quote(s string) string { return quote.Sh(s) }

// The prelude (R's and N's uses, fr, step) and the temp directory's helpers
// (T, put_file, put_link) are shell files beside this one: scripts/.
var (
	//go:embed scripts/*.sh
	scriptFS    embed.FS
	shellFiles  = ShellFiles{FS: scriptFS}
	prelude     = shellFiles.Get("prelude.sh")
	tempPrelude = shellFiles.Get("temp.sh")
)

// Scripts are the embedded shell files, by name, for the tests that parse
// them and run shellcheck on them.
func Scripts() map[string]string { return shellFiles.All() }

// ShellFiles are a package's shell files (scripts/*.sh, embedded with
// //go:embed), each headed by what it does and the variables Go sets before
// it (Set, Assign): no inventory text is spliced into a script's body.
type ShellFiles struct{ FS embed.FS }

// Get is the file scripts/name; it panics when the build did not embed it
// (a programming error).
func (f ShellFiles) Get(name string) string {
	b, err := f.FS.ReadFile(path.Join("scripts", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// All are the files by name.
func (f ShellFiles) All() map[string]string {
	m := map[string]string{}
	ents, _ := f.FS.ReadDir("scripts")
	for _, e := range ents {
		m[e.Name()] = f.Get(e.Name())
	}
	return m
}

// Words is each of s quoted as one sh word, each after a space: the
// arguments of a call to a script's function.
func Words(s []string) string {
	var b strings.Builder
	for _, x := range s {
		b.WriteString(" " + Quote(x))
	}
	return b.String()
}

// Script builds one round trip's script.
type Script struct {
	b     bytes.Buffer
	nonce string
	n     int
}

// NewScript starts a script whose file paths live under root ("" for the
// host's own root): the shell variable R holds it.
func NewScript(root string) *Script {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	return NewScriptNonce(root, hex.EncodeToString(raw[:]))
}

// NewScriptNonce is NewScript with a given nonce (hex digits): the golden
// copies of the scripts are made with a fixed one.
func NewScriptNonce(root, nonce string) *Script {
	w := &Script{nonce: nonce}
	w.b.WriteString("R=" + Quote(root) + "\nN=" + w.nonce + "\n")
	w.b.WriteString(prelude)
	return w
}

// WithTemp adds the temp directory $T and the helpers put_file and put_link.
func (w *Script) WithTemp() *Script {
	w.b.WriteString(tempPrelude)
	return w
}

// Nonce is the script's framing nonce, for ParseResults.
func (w *Script) Nonce() string { return w.nonce }

// End marks a complete run and returns the script.
func (w *Script) End() []byte {
	w.Line(`printf '@rdggen %s done\n' "$N"`)
	return w.b.Bytes()
}

// Set appends the assignment name=value, value quoted as one sh word: how Go
// hands the embedded shell files what they work on.
func (w *Script) Set(name, value string) { w.Line(Assign(name, value)) }

// SetScript is Set for a variable that holds a whole script, run later with
// sh -c "$name": the value's $ and quotes are that script's own, which the
// comment before it tells shellcheck (SC2016, "expressions don't expand in
// single quotes").
func (w *Script) SetScript(name, script string) {
	w.Line("# shellcheck disable=SC2016 # ", name, " holds a script, run by sh -c \"$", name, "\": its expansions are its own")
	w.Set(name, script)
}

// Assign is the sh assignment name=value, value quoted as one sh word; it
// panics when name is not a shell name (a programming error).
func Assign(name, value string) string {
	if !isName(name) {
		panic("remote.Assign: not a shell variable name: " + name)
	}
	return name + "=" + Quote(value)
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Text appends an embedded shell file's text as it is (with a final newline).
func (w *Script) Text(s string) {
	w.b.WriteString(s)
	if !strings.HasSuffix(s, "\n") {
		w.b.WriteByte('\n')
	}
}

// Line appends the concatenation of s and a newline.
func (w *Script) Line(s ...string) {
	for _, x := range s {
		w.b.WriteString(x)
	}
	w.b.WriteByte('\n')
}

// Data writes content into a new file under $T (WithTemp) and returns its
// path as a quoted shell word.
func (w *Script) Data(content []byte) string {
	w.n++
	p := fmt.Sprintf(`"$T/d%d"`, w.n)
	delim := "RDGGEN_" + w.nonce
	w.Line("base64 -d >", p, " <<'", delim, "'")
	enc := base64.StdEncoding.EncodeToString(content)
	for len(enc) > 76 {
		w.Line(enc[:76])
		enc = enc[76:]
	}
	if enc != "" {
		w.Line(enc)
	}
	w.Line(delim)
	return p
}

// HostRoot is a root-prefix template (a directory with "{host}" standing for
// the host's name) for one host: "" when the template is "" or "/" (the
// host's own root).
func HostRoot(template, host string) string {
	if template == "" || template == "/" {
		return ""
	}
	return strings.TrimRight(strings.ReplaceAll(template, "{host}", host), "/")
}

// RootPath is p under the root prefix, as a quoted shell word.
func RootPath(p string) string { return `"$R"` + Quote(p) }

// Result is one framed result.
type Result struct {
	Name, Status string
	Data         []byte
}

// ParseResults reads the framed results of a script's output in order; it
// fails when the output was cut off (no "done").
func ParseResults(out []byte, nonce string) ([]Result, error) {
	hdr := []byte("@rdggen " + nonce + " ")
	endm := []byte("\n@rdggen " + nonce + " end ")
	var rs []Result
	pos := 0
	for {
		i := bytes.Index(out[pos:], hdr)
		if i < 0 {
			return nil, fmt.Errorf("the script's output ends early (after %d results); the connection or the shell was cut off", len(rs))
		}
		start := pos + i
		nl := bytes.IndexByte(out[start:], '\n')
		if nl < 0 {
			return nil, fmt.Errorf("the script's output ends inside a header")
		}
		name := string(out[start+len(hdr) : start+nl])
		if name == "done" {
			return rs, nil
		}
		body := start + nl + 1
		j := bytes.Index(out[body:], endm)
		if j < 0 {
			return nil, fmt.Errorf("the script's output ends inside result %q", name)
		}
		st := body + j + len(endm)
		e := bytes.IndexByte(out[st:], '\n')
		if e < 0 {
			return nil, fmt.Errorf("the script's output ends inside result %q", name)
		}
		rs = append(rs, Result{Name: name, Status: string(out[st : st+e]), Data: out[body : body+j]})
		pos = st + e + 1
	}
}

// RC is a result's status as a number (-1 when it is not one).
func (r Result) RC() int {
	n, err := strconv.Atoi(r.Status)
	if err != nil {
		return -1
	}
	return n
}

// FirstLine is the first non-empty line of s, trimmed, or "(no output)".
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no output)"
	}
	return s
}

// OneLine joins s's words into one line of at most 400 bytes, or "(no output)".
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	if s == "" {
		return "(no output)"
	}
	return s
}
