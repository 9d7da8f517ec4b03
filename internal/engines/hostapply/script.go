package hostapply

import (
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// roceVar puts the RoCE script into the shell variable RS (no temp file,
// no process); run it with `sh -c "$RS" rdggen-roce-qos check|apply`.
func roceVar(w *remote.Script, script []byte) {
	w.SetScript("RS", string(script))
}

// probe appends the read-only part (scripts/probe.sh): every managed file,
// forwarding, the data interface's addresses, the routing table, rdggen's
// iptables chains and the chains that jump to them, docker0, dockerd's
// version, the RoCE script's check and the peer-memory module; on a VM with
// several rails, the rails' live state and NCCL's topology file
// (railsProbe). Needs roceVar first.
func probe(w *remote.Script, d *desired) {
	w.Set("data_dev", d.Host.DataInterface)
	w.Set("fwd_proc", strings.ReplaceAll(dockernet.ForwardingKey, ".", "/"))
	w.Set("fw_chain", dockernet.FirewallChain)
	w.Set("user_chain", dockernet.DockerUserChain)
	w.Set("nat_chain", dockernet.NATChain)
	w.Set("bridge", dockernet.DockerBridge)
	peermemProbe(w)
	w.Text(script("probe.sh"))
	w.Line("probe_files", remote.Words(d.paths()))
	var dirs []string
	if d.Host.OS.UsesNetplan() {
		dirs = netplanDirs
	}
	w.Line("probe_host", remote.Words(dirs))
	if d.Rails != nil && d.Rails.Guest != nil {
		railsProbe(w, d)
	}
}
