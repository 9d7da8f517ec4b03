package fakeos_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/render"
	"github.com/rdggen/rdggen/internal/testing/fakeos"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// cluster is an inventory of two fake switches at mgmt addresses A and B,
// each with one host.
const cluster = `name: fake
switches:
  - {name: fk1, model: SN2100, fakeos: 1.2, mgmt: "A"}
  - {name: fk2, model: SN2100, fakeos: 1.2, mgmt: "B"}
defaults:
  os: ubuntu-18.04
  data_interface: ens224
  gpus:
    - {model: V100-PCIE-16GB, memory_gb: 16}
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - name: a
    esxi: esx-a
    data: {address: 10.0.0.1/24, switch: fk1, port: 1/1}
  - name: b
    esxi: esx-b
    data: {address: 10.0.0.2/24, switch: fk2, port: 1/3}
`

// TestFakeOS takes a switch OS that only its own package and one
// registration (fakeos.Register) make known through the library's whole
// life cycle, as a program uses it: validate (inventory.Load, its key,
// version rule and port names), generate (render: its files, the
// picture's MTU), apply (apply.Switches: plan, confirm, backup, push,
// verify; a second run changes nothing), check (apply.CheckSwitches:
// passed, then failed after a change behind rdggen's back, then could not
// tell, an unreachable switch an *apply.UnreachableError), and the
// switch target's command line (apply.SwitchFlags: its flag, its
// credentials, apply.SwitchChecks). No dispatch code names it.
func TestFakeOS(t *testing.T) {
	if err := fakeos.Register(); err != nil {
		t.Fatal(err)
	}
	const token = "t0ken"
	sims := map[string]*fakeos.Sim{}
	for _, name := range []string{"fk1", "fk2"} {
		s, err := fakeos.NewSim(token, "hostname switch", "user line kept")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		sims[name] = s
	}
	src := strings.NewReplacer(`"A"`, sims["fk1"].Addr(), `"B"`, sims["fk2"].Addr()).Replace(cluster)

	// Validate.
	inv, err := inventory.Load("fake.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if sw := inv.Switches[1]; sw.OS() != fakeos.OS || sw.Release() != "Fake OS 1.2" || sw.PortName(inv.Hosts[1].Data.Port) != "fp3" {
		t.Errorf("fk2: OS %q, release %q, port %q", sw.OS(), sw.Release(), sw.PortName(inv.Hosts[1].Data.Port))
	}
	_, err = inventory.Load("fake.yaml", []byte(strings.Replace(src, "fakeos: 1.2", "fakeos: 0.9", 1)))
	if want := "fake.yaml:3:40: switches[0].fakeos: Fake OS 0.9: the fake OS starts at 1.0"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("version 0.9: %v, want %q", err, want)
	}

	// Generate.
	files := map[string]string{}
	for _, f := range render.Tree(inv) {
		files[f.Path] = string(f.Data)
	}
	if got, want := files["switch/fk2.fake"], "hostname fk2\nroce priority 3 dscp 26\nport fp3 mtu 9216\n"; got != want {
		t.Errorf("switch/fk2.fake:\n%s\nwant:\n%s", got, want)
	}
	for p := range files {
		if strings.HasPrefix(p, "switch/") && !strings.HasSuffix(p, ".fake") {
			t.Errorf("%s: another OS's file for a fake switch", p)
		}
	}
	if !strings.Contains(files["cluster.txt"], "MTU per hop: switch ports 9216,") {
		t.Errorf("cluster.txt does not give the fake ports' MTU:\n%s", files["cluster.txt"])
	}

	// Apply: a dry run, then the push, then nothing to do.
	ctx := context.Background()
	dir := t.TempDir()
	o := apply.SwitchOptions{BackupDir: filepath.Join(dir, "bk"), OS: map[inventory.SwitchOS]any{fakeos.OS: fakeos.Options{Token: token}}}
	o.DryRun = true
	res, err := apply.Switches(ctx, inv, o)
	if err != nil || res.Summary != "switch: dry run: 2 switch(es) would change, 0 up to date, 0 failed; nothing sent" || len(sims["fk1"].Lines()) != 2 {
		t.Fatalf("dry run: %v, %q, fk1 %q", err, res.Summary, sims["fk1"].Lines())
	}
	o.DryRun = false
	asked := 0
	o.Confirm = func(_ context.Context, planned []applyplan.Machine) bool { asked++; return len(planned) == 2 }
	res, err = apply.Switches(ctx, inv, o)
	if err != nil || asked != 1 || res.Summary != "switch: 2 changed, 0 up to date, 0 failed; 6 fake line(s) set" {
		t.Fatalf("apply: %v, asked %d, %q", err, asked, res.Summary)
	}
	if got, want := sims["fk2"].Lines(), []string{"hostname fk2", "user line kept", "roce priority 3 dscp 26", "port fp3 mtu 9216"}; !slices.Equal(got, want) {
		t.Errorf("fk2 holds %q, want %q", got, want)
	}
	backups, _ := filepath.Glob(filepath.Join(dir, "bk", "fk1-*"+fakeos.BackupExt))
	if len(backups) != 1 {
		t.Errorf("backups of fk1: %v", backups)
	} else if b, _ := os.ReadFile(backups[0]); string(b) != "hostname switch\nuser line kept\n" {
		t.Errorf("fk1's backup: %q", b)
	}
	res, err = apply.Switches(ctx, inv, o)
	if err != nil || res.Summary != "switch: 2 switch(es) up to date, nothing changed; 0 fake line(s) set" {
		t.Errorf("second apply: %v, %q", err, res.Summary)
	}

	// Check: passed; failed after a change by hand; an unreachable switch.
	rs, err := apply.CheckSwitches(ctx, inv, o)
	if err != nil || len(rs) != 4 || slices.ContainsFunc(rs, func(r readiness.Result) bool { return r.Status != readiness.Passed }) {
		t.Errorf("check: %v, %+v", err, rs)
	}
	sims["fk1"].Set("port fp1 mtu 1500")
	rs, _ = apply.CheckSwitches(ctx, inv, o)
	if len(rs) != 4 || rs[0].Machine != "fk1" || rs[0].Check != fakeos.CheckLines || rs[0].Status != readiness.Failed || rs[0].Expected != "port fp1 mtu 9216" {
		t.Errorf("check after an MTU set by hand: %+v", rs)
	}
	sims["fk2"].Close()
	rs, err = apply.CheckSwitches(ctx, inv, o)
	if err == nil || rs[len(rs)-1].Check != apply.CheckConnect || rs[len(rs)-1].Status != readiness.Unknown {
		t.Errorf("check of a stopped switch: %v, %+v", err, rs)
	}
	_, err = apply.Switches(ctx, inv, o)
	var unreachable *apply.UnreachableError
	if !errors.As(err, &unreachable) || unreachable.Addr != inv.Switches[1].Mgmt {
		t.Errorf("apply to a stopped switch: %v, want an *apply.UnreachableError for %s", err, inv.Switches[1].Mgmt)
	}
	var me *apply.MachineError
	if !errors.As(err, &me) || !strings.HasPrefix(me.Error(), "switch fk2: "+inv.Switches[1].Mgmt+": dial tcp ") || strings.Count(me.Error(), "fk2") != 1 {
		t.Errorf("the machine's error names it once: %v", me)
	}
	if err == nil || err.Error() != "some machines failed: 1 of 2 fake switch(es) failed: fk2" {
		t.Errorf("the target's error: %v", err)
	}

	// The command line: the OS's flag, its credentials, its checks.
	fs := pflag.NewFlagSet("apply", pflag.ContinueOnError)
	sf := apply.NewSwitchFlags(fs)
	if err := fs.Parse([]string{"--fakeos-timeout", "0s"}); err != nil {
		t.Fatal(err)
	}
	if err := sf.Check(); err == nil || !strings.Contains(err.Error(), "--fakeos-timeout: must be more than 0") {
		t.Errorf("--fakeos-timeout 0s: %v", err)
	}
	env := apply.SwitchEnv{Getenv: func(string) string { return "" }}
	if err := sf.Credentials(inv, env); err == nil || err.Error() != "the fake switches (fk1, fk2) need a token: set "+fakeos.TokenVar {
		t.Errorf("no token: %v", err)
	}
	if got := sf.CountersMissing(inv, env); got != "token for the fake switches ("+fakeos.TokenVar+")" {
		t.Errorf("bench without a token: %q", got)
	}
	env.Getenv = func(k string) string { return map[string]string{fakeos.TokenVar: token}[k] }
	if err := sf.Credentials(inv, env); err != nil {
		t.Errorf("with a token: %v", err)
	}
	if so := sf.Options(env, apply.Common{}); so.OS[fakeos.OS].(*fakeos.Options).Token != token {
		t.Errorf("the options do not carry the token: %+v", so.OS)
	}
	if !strings.Contains(apply.SwitchHelp(), "fake switches over their line protocol ("+fakeos.TokenVar+")") {
		t.Errorf("the switch target's help: %s", apply.SwitchHelp())
	}
	if i := slices.IndexFunc(apply.SwitchChecks(), func(c apply.SwitchOSChecks) bool { return c.OS == fakeos.OS }); i < 0 || len(apply.SwitchChecks()[i].Checks) != 2 {
		t.Errorf("apply.SwitchChecks has no fake OS's checks: %+v", apply.SwitchChecks())
	}
}
