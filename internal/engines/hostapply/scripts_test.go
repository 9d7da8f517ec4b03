package hostapply

import (
	"testing"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// composedScripts are the scripts this engine sends to the reference
// cluster's first host (its own root, default options, a fixed nonce):
//   - probe.sh: apply's first round trip;
//   - apply.sh: the changes of a first apply on a fresh host (every kind of
//     step: files, links, removals, the unit reload, daemon.json, forwarding,
//     the MTU, the firewall, routes, RoCE QoS, the peer-memory module), then
//     the probe again to verify;
//   - check.sh: `rdggen check --target hosts` (the probe, the RDMA port, the
//     guest);
//   - gids.sh: the GID tables' read before a run.
func composedScripts() map[string]string {
	inv := inventory.Reference()
	h := &inv.Hosts[0]
	d := desiredFor(inv, h)
	o := &Options{}
	m := map[string]string{}

	w := remote.NewScriptNonce(o.rootFor(h), scripttest.Nonce)
	roceVar(w, d.RoCEScript)
	probe(w, d)
	m["probe.sh"] = string(w.End())

	p := &plan{d: d, files: d.Files, links: d.Links, remove: d.Foreign, reload: true,
		daemon: &daemonChange{Mode: 0o644, New: d.Daemon}, forwarding: "0", mtu: "1500",
		roce: []hostqos.Result{{}}, loadPeermem: true}
	for _, r := range d.Routes {
		p.routes = append(p.routes, routeChange{Route: r})
	}
	w = remote.NewScriptNonce(o.rootFor(h), scripttest.Nonce).WithTemp()
	roceVar(w, d.RoCEScript)
	applyScript(w, p, o, "20250101T000000Z")
	probe(w, d)
	m["apply.sh"] = string(w.End())

	w = remote.NewScriptNonce(o.rootFor(h), scripttest.Nonce)
	roceVar(w, d.RoCEScript)
	probe(w, d)
	rdmaProbe(w, inv.Horovod.HCA)
	guestProbe(w, inv)
	m["check.sh"] = string(w.End())

	w = remote.NewScriptNonce(o.rootFor(h), scripttest.Nonce)
	rdmaProbe(w, inv.Horovod.HCA)
	m["gids.sh"] = string(w.End())
	return m
}

// TestScripts: every embedded file parses as POSIX sh and is shellcheck
// clean; every composed script is too, and equals its golden copy under
// testdata/golden/scripts/hosts.
func TestScripts(t *testing.T) {
	embedded := Scripts()
	if len(embedded) < 10 {
		t.Fatalf("%d embedded scripts", len(embedded))
	}
	scripttest.Check(t, scripttest.Fragment, embedded)
	composed := composedScripts()
	scripttest.Golden(t, "../../..", "hosts", composed)
	scripttest.Check(t, scripttest.Composed, composed)
}
