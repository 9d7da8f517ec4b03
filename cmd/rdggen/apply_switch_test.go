package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// runTarget runs one target alone, without a gate, and returns its output.
// runTarget applies one target as rdggen apply does (apply.ApplyAll, here
// with nothing to ask), its text in the string.
func runTarget(ctx context.Context, target *applyTarget, env *applyEnv) (string, *targetRun, error) {
	var out bytes.Buffer
	tr := &targetRun{t: target, Out: &out}
	at, err := target.target(env, tr)
	if err != nil {
		return out.String(), tr, err
	}
	tr.ended(apply.ApplyAll(ctx, env.Inv, []apply.Target{at}, apply.AllOptions{})[0])
	return out.String(), tr, tr.err
}

func TestApplySwitchTarget(t *testing.T) {
	const secret = "pw-secret-123"
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2", User: "ops", Password: secret})
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	sim.WriteKnownHosts(t, kh)
	inv := inventory.Reference()
	inv.Switches[0].Mgmt = sim.Addr // validation takes no port; tests point at the simulator directly

	target := switchTarget()
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	target.flags(fs)
	if err := fs.Parse([]string{"--backup-dir", filepath.Join(dir, "bk")}); err != nil {
		t.Fatal(err)
	}
	env := func(dry bool) *applyEnv {
		return &applyEnv{Inv: inv, DryRun: dry, Parallel: 2, KnownHosts: kh,
			Getenv: func(k string) string {
				return map[string]string{envSwitchUser: "ops", envSwitchPassword: secret}[k]
			}}
	}
	ctx := context.Background()

	out, tr, err := runTarget(ctx, target, env(true))
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if !strings.HasSuffix(out, "switch: dry run: 1 switch(es) would change, 0 up to date, 0 failed; 0 commands sent\n") || len(sim.Received()) != 0 {
		t.Errorf("dry run output:\n%s\nreceived %q", out, sim.Received())
	}

	if len(tr.Machines) != 1 || tr.Machines[0].Status != applyplan.Planned || len(tr.Machines[0].Changes) != 18 { // 8 port descriptions, 10 RoCE lines
		t.Errorf("dry run machines: %+v", tr.Machines)
	}
	out, tr, err = runTarget(ctx, target, env(false))
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if len(tr.Machines) != 1 || tr.Machines[0].Status != applyplan.Changed {
		t.Errorf("apply machines: %+v", tr.Machines)
	}
	if !strings.HasSuffix(out, "switch: 1 changed, 0 up to date, 0 failed; 18 command(s) sent\n") {
		t.Errorf("apply output:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Error("the password was printed")
	}

	sim.ResetLog()
	out, _, err = runTarget(ctx, target, env(false))
	if err != nil {
		t.Fatalf("second apply: %v\n%s", err, out)
	}
	if !strings.HasSuffix(out, "switch: 1 switch(es) up to date, nothing changed; 0 commands sent\n") || len(sim.Received()) != 0 {
		t.Errorf("second apply output:\n%s\nreceived %q", out, sim.Received())
	}
}

func TestApplySwitchFailureIsAnError(t *testing.T) {
	inv := inventory.Reference() // no mgmt
	target := switchTarget()
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	target.flags(fs)
	out, _, err := runTarget(context.Background(), target, &applyEnv{Inv: inv, Parallel: 1, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(out, "swx-mld-1-2: cannot plan: no mgmt address in the inventory") ||
		!strings.HasSuffix(out, "switch: 0 changed, 0 up to date, 1 failed; 0 command(s) sent\n") {
		t.Errorf("err %v, output:\n%s", err, out)
	}
}

// The whole CLI: rdggen apply --target switch -f cluster.yaml, twice.
func TestApplySwitchCLI(t *testing.T) {
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2"})
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	sim.WriteKnownHosts(t, kh)
	yaml := strings.Replace(string(inventory.ReferenceYAML), "# mgmt: 10.0.0.2", "mgmt: 127.0.0.1", 1)
	file := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(sim.Addr, ":")
	args := []string{"apply", "--yes", "--target", "switch", "-f", file, "--switch-ssh-port", port,
		"--known-hosts", kh, "--backup-dir", filepath.Join(dir, "bk")}
	getenv := func(k string) string { return map[string]string{envSwitchPassword: "admin"}[k] }
	for i, want := range []string{
		"switch: 1 changed, 0 up to date, 0 failed; 18 command(s) sent\n",
		"switch: 1 switch(es) up to date, nothing changed; 0 commands sent\n",
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb, getenv); code != exitOK {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, out.String(), errb.String())
		}
		if !strings.HasSuffix(out.String(), want) {
			t.Errorf("run %d output:\n%s", i+1, out.String())
		}
	}
	if sim.Saves() != 1 {
		t.Errorf("saves = %d", sim.Saves())
	}
}
