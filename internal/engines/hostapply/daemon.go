package hostapply

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// planDaemon plans daemon.json, merged into the host's and never
// overwritten when it does not parse, or a Docker restart when the file is
// right but docker0 does not have its bip (po.docker0).
func (p *plan) planDaemon(st *hostState, po planOpts) error {
	h := p.d.Host
	d := p.d
	// daemon.json: merged, never overwritten when it does not parse.
	cur := st.Files[dockernet.DaemonPath]
	switch cur.Kind {
	case "link", "other":
		return hostErrorf("%s is not a regular file (%s); rdggen does not write through it", dockernet.DaemonPath, cur.Kind)
	}
	merged, err := dockernet.Merge(cur.Data, d.Daemon)
	if err != nil {
		return hostErrorf("%s: %v; the file was not changed", dockernet.DaemonPath, strings.TrimPrefix(err.Error(), "existing daemon.json: "))
	}
	if cur.Kind == "absent" || !bytes.Equal(merged, cur.Data) {
		if err := dockernet.Validate(merged); err != nil {
			return hostErrorf("%s: the merged file would not be valid, so it was not installed: %v", dockernet.DaemonPath, err)
		}
		dc := &daemonChange{Existed: cur.Kind == "file", Old: cur.Data, Mode: 0o644, New: merged}
		if dc.Existed {
			sum := sha256.Sum256(cur.Data)
			dc.OldSum, dc.Mode = hex.EncodeToString(sum[:]), cur.Mode
		}
		dc.Changed = dockernet.ChangedKeys(cur.Data, merged)
		ours := dockernet.Keys(d.Daemon)
		for _, k := range dockernet.Keys(cur.Data) {
			if !slices.Contains(ours, k) {
				dc.Kept = append(dc.Kept, k)
			}
		}
		p.daemon = dc
	} else if po.docker0 && st.Docker0.RC == 0 {
		// The file is right; is the running Docker using it?
		if bip := h.Bridge(); !slices.Contains(parseAddrs(st.Docker0.Out), bip) {
			p.restart = fmt.Sprintf("docker0 has %v, daemon.json says bip %s", parseAddrs(st.Docker0.Out), bip)
		}
	}
	return nil
}

// applyDaemon appends daemon.json's install (scripts/daemon.sh, with
// validate.sh and restart.sh) or Docker's restart.
func (p *plan) applyDaemon(w *remote.Script, o *Options, stamp string) {
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
}

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
