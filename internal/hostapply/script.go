package hostapply

import (
	"strings"

	"github.com/rdggen/rdggen/internal/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// The probe starts few processes (one stat and one cat for all files,
// builtins where possible): it is what an up-to-date host costs.

// roceVar puts the RoCE script into the shell variable RS (no temp file,
// no process); run it with `sh -c "$RS" rdggen-roce-qos check|apply`.
func roceVar(w *remote.Script, script []byte) {
	w.Line("RS=", remote.Quote(string(script)))
}

// probe appends the read-only part: every managed file (links by readlink,
// regular files by one stat and one cat), forwarding, the data interface's
// addresses, the routing table, rdggen's iptables chains and the chains that
// jump to them, docker0, dockerd's
// version, the RoCE script's check and the peer-memory module. Needs roceVar
// first.
func probe(w *remote.Script, d *desired) {
	w.Line("set --")
	var paths []string
	for _, p := range d.paths() {
		paths = append(paths, remote.Quote(p))
	}
	w.Line("for p in ", strings.Join(paths, " "), "; do")
	w.Line(`	f="$R$p"`)
	w.Line(`	if [ -L "$f" ]; then fr "l:$p" readlink -- "$f"`)
	w.Line(`	elif [ -f "$f" ]; then set -- "$@" "$f"`)
	w.Line(`	elif [ -e "$f" ]; then fr "o:$p" true`)
	w.Line(`	fi`)
	w.Line("done")
	w.Line(`if [ $# -gt 0 ]; then fr stat stat -c '%s %a %n' -- "$@"; fr cat cat -- "$@"; fi`)
	w.Line("v=; read -r v </proc/sys/", strings.ReplaceAll(dockernet.ForwardingKey, ".", "/"), `; fr forwarding echo "$v"`)
	w.Line("fr addr ip -4 -o addr show dev ", remote.Quote(d.Host.DataInterface))
	w.Line("fr link ip -o link show dev ", remote.Quote(d.Host.DataInterface))
	if d.Host.OS.UsesNetplan() {
		var globs []string
		for _, dir := range netplanDirs {
			globs = append(globs, `"$R"`+remote.Quote(dir)+"/*.yaml")
		}
		w.Line("for f in ", strings.Join(globs, " "), `; do [ -f "$f" ] && fr "np:${f#"$R"}" cat -- "$f"; done`)
	}
	w.Line("fr routes ip -4 route show table main")
	w.Line("fr chain iptables -w -S ", dockernet.FirewallChain)
	w.Line("fr dockeruser iptables -w -S ", dockernet.DockerUserChain)
	w.Line("fr nat iptables -w -t nat -S ", dockernet.NATChain)
	w.Line("fr postrouting iptables -w -t nat -S POSTROUTING")
	w.Line("fr docker0 ip -4 -o addr show dev ", dockernet.DockerBridge)
	w.Line(`nodockerd() { return 127; }`)
	w.Line(`if command -v dockerd >/dev/null 2>&1; then fr dockerd dockerd --version; else fr dockerd nodockerd; fi`)
	w.Line(`fr roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos check`)
	peermemProbe(w)
}
