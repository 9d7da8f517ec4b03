package hostapply

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/internal/remote"

	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/hostqos"
)

// Command modes of Options.DockerValidate, Options.DockerRestart and
// Options.ModuleLoad.
const (
	ModeAuto = "auto" // detect on the host (never under a root prefix)
	ModeNone = "none" // skip, and say so
)

// validateFunc is the script's validate_daemon CANDIDATE.
func validateFunc(mode string) string {
	switch mode {
	case ModeNone:
		return `validate_daemon() { echo "dockerd check skipped (--docker-validate none); checked by rdggen only"; }`
	case ModeAuto:
		// dockerd ≥ 23 has --validate; older ones load the file before their
		// root check, so running them as nobody reports file errors without
		// starting anything. nobody may not open the candidate (a hardened
		// daemon.json is 0600, and so is its staged copy): it reads it from a
		// pipe that nobody's own shell makes, fed from a descriptor root opened
		// (a pipe root made would be root's, and /dev/stdin would not open).
		return `validate_daemon() {
	command -v dockerd >/dev/null 2>&1 || { echo "dockerd is not installed: checked by rdggen only"; return 0; }
	out=$(dockerd --validate --config-file "$1" 2>&1) && { echo "$out"; return 0; }
	case $out in
	*"unknown flag: --validate"*)
		command -v setpriv >/dev/null 2>&1 || { echo "dockerd has no --validate and setpriv is missing: checked by rdggen only"; return 0; }
		out=$(timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'cat <&3 | dockerd --config-file /dev/stdin' 3<"$1" 2>&1)
		case $out in *"unable to configure the Docker daemon"*) echo "$out"; return 1;; esac
		echo "dockerd (no --validate) loads the file as nobody without complaint"; return 0;;
	esac
	echo "$out"; return 1
}`
	}
	return "validate_daemon() { sh -c " + remote.Quote(mode) + ` rdggen-validate "$1"; }`
}

// restartFunc is the script's restart_docker.
func restartFunc(mode string) string {
	switch mode {
	case ModeNone:
		return `restart_docker() { echo "docker restart skipped (--docker-restart none): restart Docker for the new daemon.json to take effect"; }`
	case ModeAuto:
		return `restart_docker() {
	if [ -d /run/systemd/system ] && systemctl cat docker.service >/dev/null 2>&1; then systemctl restart docker.service
	elif [ -x /etc/init.d/docker ]; then /etc/init.d/docker restart
	else echo "docker is not installed as a service: nothing to restart"; fi
}`
	}
	return "restart_docker() { sh -c " + remote.Quote(mode) + "; }"
}

// daemonInstallFunc is daemon_install MODE OLDSUM BACKUP NEWDATA: refuse a
// file changed since the probe, stage the new file beside the old one,
// validate it, back the old one up, rename the new one into place, restart
// Docker; when the restart fails, put the old file back and restart again.
const daemonInstallFunc = `daemon_install() {
	f="$R"` + "'" + dockernet.DaemonPath + "'" + `
	if [ "$2" = - ]; then
		[ ! -e "$f" ] || { echo "$f appeared since the plan was made: not touched; run apply again"; return 3; }
	else
		s=$(sha256sum <"$f" 2>/dev/null | cut -d' ' -f1)
		[ "$s" = "$2" ] || { echo "$f changed since the plan was made: not touched; run apply again"; return 3; }
	fi
	mkdir -p "${f%/*}" || return 1
	new="${f%/*}/.daemon.json.rdggen-new"
	{ cp "$4" "$new" && chmod "$1" "$new"; } || { rm -f "$new"; return 1; }
	[ ! -e "$f" ] || chown --reference="$f" "$new" 2>/dev/null || true # the owner, like the mode, stays
	if ! validate_daemon "$new"; then rm -f "$new"; echo "the new file was rejected: $f not changed"; return 4; fi
	b=$3; i=1
	while [ -e "$b" ]; do b="$3.$i"; i=$((i + 1)); done
	if [ -e "$f" ]; then cp -p "$f" "$b" || { rm -f "$new"; echo "cannot write the backup $b: $f not changed"; return 1; }; fi
	sync "$new" 2>/dev/null
	mv -f "$new" "$f" || return 1
	[ "$2" = - ] || echo "backup: $b"
	if ! restart_docker; then
		if [ -e "$b" ] && [ "$2" != - ]; then
			cp -p "$b" "$f" && echo "docker restart failed with the new file: the previous one is back in place"
		else
			rm -f "$f" && echo "docker restart failed with the new file: it was removed again"
		fi
		restart_docker
		return 5
	fi
}`

const reloadFunc = `systemd_reload() {
	if [ -n "$R" ]; then echo "root prefix set: no daemon-reload"
	elif [ -d /run/systemd/system ]; then systemctl daemon-reload
	else echo "systemd is not running: nothing to reload"; fi
}`

// applyScript appends the changes of p, then the probe again to verify.
// Files and units come first, so that a Docker restart already finds the
// firewall unit; the firewall runs after the restart, which puts Docker's
// MASQUERADE rule back on top of POSTROUTING.
func applyScript(w *remote.Script, p *plan, o *Options, stamp string) {
	for _, f := range p.files {
		w.Line("step ", remote.Quote("file:"+f.Path), " put_file ", remote.RootPath(f.Path), " ", fmt.Sprintf("%o", f.Mode.Perm()), " ", w.Data(f.Data))
	}
	for _, l := range p.links {
		w.Line("step ", remote.Quote("link:"+l.Path), " put_link ", remote.RootPath(l.Path), " ", remote.Quote(l.Target))
	}
	for _, f := range p.remove {
		w.Line("step ", remote.Quote("remove:"+f.Path), " rm -f ", remote.RootPath(f.Path))
	}
	if p.reload {
		w.Line(reloadFunc)
		w.Line("step reload systemd_reload")
	}
	if p.daemon != nil || p.restart != "" {
		w.Line(validateFunc(o.validateMode()))
		w.Line(restartFunc(o.restartMode()))
	}
	if dc := p.daemon; dc != nil {
		w.Line(daemonInstallFunc)
		src := w.Data(dc.New)
		sum := dc.OldSum
		if !dc.Existed {
			sum = "-"
		}
		backup := `"$R"` + remote.Quote(dockernet.DaemonPath+".rdggen-"+stamp+".bak")
		w.Line("step daemon daemon_install ", fmt.Sprintf("%o", dc.Mode.Perm()), " ", sum, " ", backup, " ", src)
	} else if p.restart != "" {
		w.Line("step restart restart_docker")
	}
	if p.forwarding != "" {
		w.Line("step forwarding sysctl -qw ", dockernet.ForwardingKey, "=", p.d.Forwarding)
	}
	if p.mtu != "" {
		w.Line("step mtu ip ", dockernet.MTUCommand(p.d.Host))
	}
	if p.firewall() {
		w.Line("step firewall sh ", w.Data(p.d.Firewall))
	}
	if len(p.routes)+len(p.stale) > 0 {
		// New routes first, then the stale ones go: switching the routing
		// mode (per-host routes <-> one route for the pool) never leaves a
		// moment without a path between the containers.
		var b strings.Builder
		for _, r := range p.routes {
			b.WriteString(r.Route.Command() + "\n")
		}
		for _, e := range p.stale {
			b.WriteString("route del " + e.String() + "\n")
		}
		w.Line("step routes ip -force -batch ", w.Data([]byte(b.String())))
	}
	if len(p.roce) > 0 {
		w.Line(`step roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos apply`)
	}
	if p.loadPeermem {
		w.Line(loadFunc(o.loadMode()))
		w.Line("step peermem load_module ", hostqos.PeermemModule)
	}
}
