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

// validateFunc is the script's validate_daemon CANDIDATE (scripts/validate.sh).
func validateFunc(mode string) string {
	return remote.Assign("validate_mode", mode) + "\n" + script("validate.sh")
}

// restartFunc is the script's restart_docker (scripts/restart.sh).
func restartFunc(mode string) string {
	return remote.Assign("restart_mode", mode) + "\n" + script("restart.sh")
}

// daemonInstallFunc is daemon_install MODE OLDSUM BACKUP NEWDATA
// (scripts/daemon.sh).
func daemonInstallFunc() string {
	return remote.Assign("daemon_path", dockernet.DaemonPath) + "\n" + script("daemon.sh")
}

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
		w.Text(script("reload.sh"))
		w.Line("step reload systemd_reload")
	}
	if p.daemon != nil || p.restart != "" {
		w.Text(validateFunc(o.validateMode()))
		w.Text(restartFunc(o.restartMode()))
	}
	if dc := p.daemon; dc != nil {
		w.Text(daemonInstallFunc())
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
		w.Text(loadFunc(o.loadMode()))
		w.Line("step peermem load_module ", hostqos.PeermemModule)
	}
}
