package hostapply

import "github.com/rdggen/rdggen/internal/transport/remote"

// Command modes of Options.DockerValidate, Options.DockerRestart and
// Options.ModuleLoad.
const (
	ModeAuto = "auto" // detect on the host (never under a root prefix)
	ModeNone = "none" // skip, and say so
)

// applyScript appends the changes of p, then the probe again to verify.
// Files and units come first, so that a Docker restart already finds the
// firewall unit; the firewall runs after the restart, which puts Docker's
// MASQUERADE rule back on top of POSTROUTING.
func applyScript(w *remote.Script, p *plan, o *Options, stamp string) {
	p.applyFiles(w)
	p.applyDaemon(w, o, stamp)
	p.applyForwarding(w)
	p.applyMTU(w)
	p.applyFirewall(w)
	p.applyRoutes(w)
	p.applyRoCE(w)
	p.applyPeermem(w, o)
	p.applyRails(w)
}
