package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// TestApplySwitchMixed plans, applies and checks an inventory with one
// ONYX switch (over SSH) and one Cumulus switch (the NVUE API over TLS):
// each in its own terms, one confirmation for both.
func TestApplySwitchMixed(t *testing.T) {
	const onyxSecret, nvueSecret = "pw-onyx-123", "pw-nvue-456"
	onyx := onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2", User: "ops", Password: onyxSecret})
	nvue := nvuesim.Start(t, nvuesim.Options{Hostname: "swx-mld-1-3", Password: nvueSecret,
		Applied: nvuesim.Tree{"qos": nvuesim.Tree{"roce": nvuesim.Tree{"enable": "on", "mode": "lossy"}}}})
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	onyx.WriteKnownHosts(t, kh)
	ca, err := nvue.WriteCA(dir, "nvue-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "mixed", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("mixed.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	inv.Switches[0].Mgmt, inv.Switches[1].Mgmt = onyx.Addr, nvue.Addr

	target := switchTarget()
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	target.flags(fs)
	if err := fs.Parse([]string{"--backup-dir", filepath.Join(dir, "bk"), "--nvue-ca", ca}); err != nil {
		t.Fatal(err)
	}
	if err := target.check(); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{envSwitchUser: "ops", envSwitchPassword: onyxSecret, envNVUEPassword: nvueSecret}
	env := func(dry bool) *applyEnv {
		return &applyEnv{Inv: inv, DryRun: dry, Parallel: 2, KnownHosts: kh, Getenv: func(k string) string { return vars[k] }}
	}
	if err := target.prepare(env(true)); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	ctx := context.Background()

	out, tr, err := runTarget(ctx, target, env(true))
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"interface ethernet 1/1-1/4 qos trust L3", // ONYX in its terms, on its 4 cabled ports
		"swx-mld-1-3 (" + nvue.Addr + ", Cumulus Linux 5.9.1): ",
		"  qos.roce.mode: lossy → lossless\n", // Cumulus in NVUE's
		"switch: dry run: 2 switch(es) would change, 0 up to date, 0 failed; nothing sent\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if len(tr.Machines) != 2 || tr.Machines[0].Name != "swx-mld-1-2" || tr.Machines[1].Name != "swx-mld-1-3" {
		t.Fatalf("machines: %+v", tr.Machines)
	}
	var mode *applyplan.Change
	for i, c := range tr.Machines[1].Changes {
		if c.Item == "qos.roce.mode" {
			mode = &tr.Machines[1].Changes[i]
		}
	}
	if mode == nil || mode.Op != applyplan.Update || mode.From != "lossy" || mode.To != "lossless" {
		t.Errorf("qos.roce.mode change: %+v", mode)
	}
	if len(onyx.Received()) != 0 || nvue.Count("PATCH", "") != 0 || nvue.Count("POST", "") != 0 {
		t.Errorf("the dry run changed something: %q %v", onyx.Received(), nvue.Requests())
	}

	// One gate for both engines, asked once with both switches.
	asked := 0
	gate := func(_ context.Context, planned []applyplan.Machine) bool {
		asked++
		if len(planned) != 2 {
			t.Errorf("the gate saw %d machines", len(planned))
		}
		return true
	}
	trun := &targetRun{t: target, Out: &strings.Builder{}}
	at, err := target.target(env(false), trun)
	if err != nil {
		t.Fatal(err)
	}
	if trun.ended(apply.ApplyAll(ctx, inv, []apply.Target{at}, apply.AllOptions{Confirm: gate})[0]); trun.err != nil {
		t.Fatalf("apply: %v\n%s", trun.err, trun.Out)
	}
	if asked != 1 {
		t.Errorf("the gate was asked %d times", asked)
	}
	for _, m := range trun.Machines {
		if m.Status != applyplan.Changed {
			t.Errorf("%s: %s %s", m.Name, m.Status, m.Error)
		}
	}
	res := trun.Out.(*strings.Builder).String()
	if !strings.Contains(res, "switch: 2 changed, 0 up to date, 0 failed; 14 ONYX command(s) sent, 1 NVUE revision(s) applied\n") {
		t.Errorf("apply output:\n%s", res)
	}
	if strings.Contains(res, onyxSecret) || strings.Contains(res, nvueSecret) {
		t.Error("a password was printed")
	}

	nvue.ResetRequests()
	onyx.ResetLog()
	out, _, err = runTarget(ctx, target, env(false))
	if err != nil || !strings.HasSuffix(out, "switch: 2 switch(es) up to date, nothing changed; 0 ONYX command(s) sent, 0 NVUE revision(s) applied\n") {
		t.Errorf("second apply: %v\n%s", err, out)
	}
	if nvue.Count("PATCH", "") != 0 || len(onyx.Received()) != 0 {
		t.Errorf("second apply sent: %v %q", nvue.Requests(), onyx.Received())
	}

	// check: both switches, each in its own terms, all passed.
	at, err = target.target(env(true), &targetRun{t: target, Out: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := at.Check(ctx, inv)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		seen[r.Machine+" "+r.Check] = true
		if r.Status != readiness.Passed {
			t.Errorf("check: %s", r.Line())
		}
	}
	for _, want := range []string{"swx-mld-1-2 pfc", "swx-mld-1-3 qos-roce", "swx-mld-1-3 pause-counters", "swx-mld-1-3 mtu"} {
		if !seen[want] {
			t.Errorf("check has no %s", want)
		}
	}
	if rs[0].Machine != "swx-mld-1-2" || rs[len(rs)-1].Machine != "swx-mld-1-3" {
		t.Errorf("check order: first %s, last %s", rs[0].Machine, rs[len(rs)-1].Machine)
	}
}

func TestApplySwitchCumulusNeedsPassword(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "cumulus", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("cumulus.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	inv.Switches[0].Mgmt = "127.0.0.1"
	target := switchTarget()
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	target.flags(fs)
	fs.Parse(nil)
	err = target.prepare(&applyEnv{Inv: inv, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "set RDGGEN_NVUE_PASSWORD") {
		t.Errorf("want a missing-password error, got %v", err)
	}
	if usesSSH([]*applyTarget{target}, inv) {
		t.Error("a Cumulus-only switch target asks for known_hosts")
	}
	fs2 := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	t2 := switchTarget()
	t2.flags(fs2)
	fs2.Parse([]string{"--nvue-ca", "x.pem", "--nvue-fingerprint", "ab"})
	if err := t2.check(); err == nil || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("--nvue-ca with --nvue-fingerprint: %v", err)
	}
}

// TestNVUETLSFlagsUpFront: a CA file that is missing or holds no
// certificate, and a fingerprint that is not a SHA-256, are usage errors
// found once before any switch is contacted (exit 2, one line), not one
// failure per switch.
func TestNVUETLSFlagsUpFront(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("no certificate here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--nvue-ca", filepath.Join(dir, "missing.pem"), "--nvue-ca: CA file: open"},
		{"--nvue-ca", empty, "no PEM certificate in it"},
		{"--nvue-fingerprint", "junk", "--nvue-fingerprint: certificate fingerprint \"junk\" is not a SHA-256"},
	} {
		code, _, stderr := rdggen(t, "apply", "--target", "switch", "--dry-run", tc.flag, tc.value)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, tc.want) != 1 {
			t.Errorf("%s %s: exit %d, stderr:\n%s\nwant exit %d with one %q", tc.flag, tc.value, code, stderr, exitUsage, tc.want)
		}
	}
}
