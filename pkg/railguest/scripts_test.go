package railguest

import (
	"testing"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
)

// composedScripts are the topology's scripts for the rails golden case's
// first VM:
//   - nccl-topology.sh: BootScript, as installed (the tree's file);
//   - facts.sh: the hosts target's read of the facts in its round trip
//     (internal/transport/remote, a fixed nonce).
func composedScripts(t *testing.T) map[string]string {
	inv := load(t, "rails")
	w := remote.NewScriptNonce("", scripttest.Nonce)
	for _, v := range Vars(inv, &inv.Hosts[0], nil) {
		w.Set(v.Name, v.Value)
	}
	w.Text(Fragment())
	w.Line("fr topology-facts topo_facts")
	return map[string]string{
		"nccl-topology.sh": string(BootScript(inv, &inv.Hosts[0], nil)),
		"facts.sh":         string(w.End()),
	}
}

// TestScripts: the embedded file parses as POSIX sh and is shellcheck
// clean; so are the composed scripts, which equal their golden copies
// under testdata/golden/scripts/nccl-topology.
func TestScripts(t *testing.T) {
	scripttest.Check(t, scripttest.Fragment, Scripts())
	composed := composedScripts(t)
	scripttest.Golden(t, "../..", "nccl-topology", composed)
	scripttest.Check(t, scripttest.Composed, composed)
}
