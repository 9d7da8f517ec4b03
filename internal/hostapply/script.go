package hostapply

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/dockernet"
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
// prints can be mistaken for a result and a cut-off run is noticed. The probe
// starts few processes (one stat and one cat for all files, builtins where
// possible): it is what an up-to-date host costs.

// remoteCommand is what the SSH session executes: the script runs as root,
// through `sudo -n` (never prompting) when the login user is not root.
const remoteCommand = `if [ "$(id -u)" = 0 ]; then exec /bin/sh -s; else exec sudo -n /bin/sh -s; fi`

// shQuote quotes s as one sh word.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// prelude follows R (the root prefix) and N (the nonce). Every command's
// stdin is /dev/null: the script itself is on the shell's stdin.
const prelude = `umask 022
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
export RDGGEN_ROOT="$R"
fr() { printf '@rdggen %s %s\n' "$N" "$1"; shift; "$@" </dev/null 2>&1; printf '\n@rdggen %s end %s\n' "$N" "$?"; }
step() { n=$1; shift; fr "step:$n" "$@"; }
`

// tempPrelude adds a private temp directory, removed on exit, and the file
// helpers; the apply script needs them, the probe does not.
const tempPrelude = `T=$(mktemp -d) || { echo "rdggen: mktemp failed" >&2; exit 97; }
trap 'rm -rf "$T"' EXIT
# put_file PATH MODE SRC: install SRC as PATH atomically (temp file beside it, then rename).
put_file() {
	d=${1%/*}; mkdir -p "$d" || return 1
	t="$d/.${1##*/}.rdggen-tmp"
	{ cp "$3" "$t" && chmod "$2" "$t"; } || { rm -f "$t"; return 1; }
	sync "$t" 2>/dev/null
	mv -f "$t" "$1"
}
put_link() { mkdir -p "${1%/*}" && ln -sfn "$2" "$1"; }
`

// scriptWriter builds a script.
type scriptWriter struct {
	b     bytes.Buffer
	nonce string
	n     int
}

func newScript(root string) *scriptWriter {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	w := &scriptWriter{nonce: hex.EncodeToString(raw[:])}
	w.b.WriteString("R=" + shQuote(root) + "\nN=" + w.nonce + "\n")
	w.b.WriteString(prelude)
	return w
}

// withTemp adds tempPrelude.
func (w *scriptWriter) withTemp() *scriptWriter {
	w.b.WriteString(tempPrelude)
	return w
}

// end marks a complete run.
func (w *scriptWriter) end() []byte {
	w.line(`printf '@rdggen %s done\n' "$N"`)
	return w.b.Bytes()
}

func (w *scriptWriter) line(s ...string) {
	for _, x := range s {
		w.b.WriteString(x)
	}
	w.b.WriteByte('\n')
}

// data writes content into a new file under $T and returns its shell path.
func (w *scriptWriter) data(content []byte) string {
	w.n++
	p := fmt.Sprintf(`"$T/d%d"`, w.n)
	delim := "RDGGEN_" + w.nonce
	w.line("base64 -d >", p, " <<'", delim, "'")
	enc := base64.StdEncoding.EncodeToString(content)
	for len(enc) > 76 {
		w.line(enc[:76])
		enc = enc[76:]
	}
	if enc != "" {
		w.line(enc)
	}
	w.line(delim)
	return p
}

// roceVar puts the RoCE script into the shell variable RS (no temp file,
// no process); run it with `sh -c "$RS" rdggen-roce-qos check|apply`.
func (w *scriptWriter) roceVar(script []byte) {
	w.line("RS=", shQuote(string(script)))
}

// rootPath is p under the root prefix, as a quoted shell word.
func rootPath(p string) string { return `"$R"` + shQuote(p) }

// probe appends the read-only part: every managed file (links by readlink,
// regular files by one stat and one cat), forwarding, the data interface's
// addresses, the routing table, both iptables chains, docker0, dockerd's
// version and the RoCE script's check. Needs roceVar first.
func (w *scriptWriter) probe(d *desired) {
	w.line("set --")
	var paths []string
	for _, p := range d.paths() {
		paths = append(paths, shQuote(p))
	}
	w.line("for p in ", strings.Join(paths, " "), "; do")
	w.line(`	f="$R$p"`)
	w.line(`	if [ -L "$f" ]; then fr "l:$p" readlink -- "$f"`)
	w.line(`	elif [ -f "$f" ]; then set -- "$@" "$f"`)
	w.line(`	elif [ -e "$f" ]; then fr "o:$p" true`)
	w.line(`	fi`)
	w.line("done")
	w.line(`if [ $# -gt 0 ]; then fr stat stat -c '%s %a %n' -- "$@"; fr cat cat -- "$@"; fi`)
	w.line("v=; read -r v </proc/sys/", strings.ReplaceAll(dockernet.ForwardingKey, ".", "/"), `; fr forwarding echo "$v"`)
	w.line("fr addr ip -4 -o addr show dev ", shQuote(d.Host.DataInterface))
	w.line("fr routes ip -4 route show table main")
	w.line("fr chain iptables -w -S ", dockernet.FirewallChain)
	w.line("fr dockeruser iptables -w -S ", dockernet.DockerUserChain)
	w.line("fr docker0 ip -4 -o addr show dev ", dockernet.DockerBridge)
	w.line(`nodockerd() { return 127; }`)
	w.line(`if command -v dockerd >/dev/null 2>&1; then fr dockerd dockerd --version; else fr dockerd nodockerd; fi`)
	w.line(`fr roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos check`)
}

// result is one framed result.
type result struct {
	Name, Status string
	Data         []byte
}

// parseResults reads the framed results of a script's output in order; it
// fails when the output was cut off (no "done").
func parseResults(out []byte, nonce string) ([]result, error) {
	hdr := []byte("@rdggen " + nonce + " ")
	endm := []byte("\n@rdggen " + nonce + " end ")
	var rs []result
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
		rs = append(rs, result{Name: name, Status: string(out[st : st+e]), Data: out[body : body+j]})
		pos = st + e + 1
	}
}

// rc is a cmd/step status as a number (-1 when it is not one).
func (r result) rc() int {
	n, err := strconv.Atoi(r.Status)
	if err != nil {
		return -1
	}
	return n
}
