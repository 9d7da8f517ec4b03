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
//   - gids.sh: the GID tables' read before a run;
//   - rails-probe.sh, rails-apply.sh, rails-check.sh: the same for a VM
//     with several rails (the rails-firstboot case's first VM): the rails'
//     live state and the guest's facts in the probe, the live rails and
//     NCCL's topology file after the files, each rail's gateway pinged.
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

	// A VM with several rails (the rails-firstboot case's first VM): the
	// probe, which reads the rails and the guest's facts too; a first
	// apply's rails steps (the live rails, the topology file) after its
	// files; the check, which pings each rail's gateway.
	rinv, err := inventory.LoadFile("../../../testdata/golden/rails-firstboot/inventory.yaml")
	if err != nil {
		panic(err)
	}
	rh := &rinv.Hosts[0]
	rd := desiredFor(rinv, rh)
	w = remote.NewScriptNonce(o.rootFor(rh), scripttest.Nonce)
	roceVar(w, rd.RoCEScript)
	probe(w, rd)
	m["rails-probe.sh"] = string(w.End())

	rp := &plan{d: rd, files: rd.Files, links: rd.Links, reload: true, rails: []railGap{{Fixable: true}}, topology: "absent"}
	w = remote.NewScriptNonce(o.rootFor(rh), scripttest.Nonce).WithTemp()
	roceVar(w, rd.RoCEScript)
	applyScript(w, rp, o, "20250101T000000Z")
	probe(w, rd)
	m["rails-apply.sh"] = string(w.End())

	w = remote.NewScriptNonce(o.rootFor(rh), scripttest.Nonce)
	roceVar(w, rd.RoCEScript)
	probe(w, rd)
	rdmaProbe(w, rinv.Horovod.HCA)
	guestProbe(w, rinv)
	pingProbe(w)
	m["rails-check.sh"] = string(w.End())
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
