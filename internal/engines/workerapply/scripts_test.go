package workerapply

import (
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// goldenKeys stand in for the cluster's worker keys in the golden copies
// (GenerateWorkerKeys is random).
var goldenKeys = horovod.WorkerKeys{
	ClientPrivate: []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nclient\n-----END OPENSSH PRIVATE KEY-----\n"),
	ClientPublic:  []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGNsaWVudA== rdggen\n"),
	HostPrivate:   []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nhost\n-----END OPENSSH PRIVATE KEY-----\n"),
	HostPublic:    []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGhvc3Q= rdggen\n"),
}

// composedScripts are the scripts this engine sends to the reference
// cluster's first host (its own root, default options, a fixed nonce):
//   - probe.sh: apply's first round trip;
//   - apply.sh: a first apply (the SSH directory, every file, the worker
//     created, the wait for its sshd), then the probe again to verify;
//   - recreate.sh: the container part of a recreate;
//   - check.sh: `rdggen check --target workers` (the probe, the logins of
//     the ring, the rule check against every other worker).
func composedScripts() map[string]string {
	inv := inventory.Reference()
	h := &inv.Hosts[0]
	d := desiredFor(inv, h, goldenKeys, "")
	o := &Options{ReadyTimeout: 60 * time.Second}
	m := map[string]string{}

	w := remote.NewScriptNonce(d.Root, scripttest.Nonce)
	probe(w, d)
	m["probe.sh"] = string(w.End())

	w = remote.NewScriptNonce(d.Root, scripttest.Nonce).WithTemp()
	applyScript(w, &plan{d: d, dir: true, files: d.Files, action: actCreate}, o)
	probe(w, d)
	m["apply.sh"] = string(w.End())

	w = remote.NewScriptNonce(d.Root, scripttest.Nonce).WithTemp()
	applyScript(w, &plan{d: d, action: actRecreate}, o)
	m["recreate.sh"] = string(w.End())

	var others []peer
	for i := 1; i < len(inv.Hosts); i++ {
		others = append(others, peer{Index: i, Name: inv.Hosts[i].Name, Address: horovod.WorkerAddress(inv, &inv.Hosts[i])})
	}
	w = remote.NewScriptNonce(d.Root, scripttest.Nonce).WithTemp()
	probe(w, d)
	peersScript(w)
	workerProbe(w, d, others[:1])
	rulesProbe(w, others)
	m["check.sh"] = string(w.End())
	return m
}

// TestScripts: every embedded file parses as POSIX sh and is shellcheck
// clean; every composed script is too, and equals its golden copy under
// testdata/golden/scripts/workers.
func TestScripts(t *testing.T) {
	embedded := Scripts()
	if len(embedded) != 4 {
		t.Fatalf("%d embedded scripts, want 4", len(embedded))
	}
	scripttest.Check(t, scripttest.Fragment, embedded)
	composed := composedScripts()
	scripttest.Golden(t, "../../..", "workers", composed)
	scripttest.Check(t, scripttest.Composed, composed)
}
