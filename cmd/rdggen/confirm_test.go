package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// fabric is the reference cluster's switch (onyxsim) and vCenter (vcsim),
// reached the way a user reaches them: an inventory file with the switch's
// mgmt address, GOVC_* variables, a known_hosts file.
type fabric struct {
	sw   *onyxsim.Server
	vc   *vcsimtest.Sim
	file string
	args []string // the common flags
	env  map[string]string
}

func newFabric(t *testing.T) *fabric {
	t.Helper()
	f := &fabric{sw: onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2"})}
	inv := inventory.Reference()
	vc, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	f.vc = vc
	esxiModules = vc.Modules
	t.Cleanup(func() { esxiModules = nil })
	dir := t.TempDir()
	kh := filepath.Join(dir, "known_hosts")
	f.sw.WriteKnownHosts(t, kh)
	f.file = filepath.Join(dir, "cluster.yaml")
	yaml := strings.Replace(string(inventory.ReferenceYAML), "# mgmt: 10.0.0.2", "mgmt: 127.0.0.1", 1)
	if err := os.WriteFile(f.file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(f.sw.Addr, ":")
	f.args = []string{"-f", f.file, "--target", "switch,esxi", "--switch-ssh-port", port, "--known-hosts", kh, "--backup-dir", filepath.Join(dir, "bk")}
	f.env = map[string]string{
		envSwitchPassword: "admin",
		"GOVC_URL":        vc.URL.String(), "GOVC_USERNAME": vcsimtest.Username, "GOVC_PASSWORD": vcsimtest.Password, "GOVC_TLS_CA_CERTS": vc.CAFile,
	}
	return f
}

// apply runs `rdggen apply` with the fabric's flags and extra ones.
func (f *fabric) apply(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args := append(append([]string{"apply"}, f.args...), extra...)
	code := run(context.Background(), args, &out, &errb, func(k string) string { return f.env[k] })
	return code, out.String(), errb.String()
}

// withTerminal makes the test's console a terminal on which a person
// answers answer; it returns how many questions were read.
func withTerminal(t *testing.T, answer string) {
	t.Helper()
	saved := console
	console = consoleInfo{In: strings.NewReader(answer), InTerminal: true}
	t.Cleanup(func() { console = saved })
}

func (f *fabric) changed(t *testing.T) (switchSaves int, firmware string) {
	t.Helper()
	return f.sw.Saves(), f.vc.VM("clx-mld-41").Config.Firmware
}

// Without a terminal and without --yes, apply refuses before it contacts
// anything; --dry-run and --yes are the two ways out it names.
func TestApplyRefusesWithoutTerminal(t *testing.T) {
	f := newFabric(t)
	code, out, errs := f.apply(t)
	if code != exitUsage || out != "" ||
		errs != "rdggen: apply: stdin is not a terminal, so there is no one to confirm the push: pass --yes to push without asking, or --dry-run to only see the plan\n" {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if n := f.sw.Sessions(); n != 0 {
		t.Errorf("the switch was contacted %d time(s)", n)
	}
	if code, _, errs := f.apply(t, "--yes", "--dry-run"); code != exitUsage || !strings.Contains(errs, "--yes and --dry-run") {
		t.Errorf("--yes --dry-run: exit %d %s", code, errs)
	}
}

// On a terminal, one question for all targets after every plan; "n" (or
// anything but y/yes) changes nothing; "y" pushes; --yes never asks.
func TestApplyConfirmsOnceForAllTargets(t *testing.T) {
	f := newFabric(t)
	question := regexp.MustCompile(`\nPush (\d+) change\(s\) to (\d+) machine\(s\) \(switch 18, esxi (\d+)\)\? \[y/N\] `)

	withTerminal(t, "n\n")
	code, out, errs := f.apply(t)
	if code != exitFailed || !strings.Contains(errs, "rdggen: apply cancelled: nothing was changed") {
		t.Fatalf("declined: exit %d\n%s%s", code, out, errs)
	}
	if n := len(question.FindAllString(out, -1)); n != 1 {
		t.Fatalf("%d questions, want 1:\n%s", n, out)
	}
	// The question comes after both plans.
	q := question.FindStringIndex(out)[0]
	for _, plan := range []string{"[switch] swx-mld-1-2 (127.0.0.1:", "[esxi] vm clx-mld-48 (esx-48.example):"} {
		if i := strings.Index(out, plan); i < 0 || i > q {
			t.Errorf("plan line %q not before the question:\n%s", plan, out)
		}
	}
	m := question.FindStringSubmatch(out)
	if m[1] == "0" || m[2] != "17" { // 1 switch, 8 ESXi hosts, 8 VMs
		t.Errorf("question %q: want 17 machines", m[0])
	}
	for _, want := range []string{"switch: 0 changed, 1 not applied (planned)", "esxi: nothing sent: 8 VM(s) and 8 host(s) to change"} {
		if !strings.Contains(out, want) {
			t.Errorf("declined output lacks %q:\n%s", want, out)
		}
	}
	if saves, fw := f.changed(t); saves != 0 || fw != "bios" || len(f.sw.Refused()) != 0 {
		t.Fatalf("declined, but the switch saved %d time(s) / the VM has firmware %s", saves, fw)
	}
	for _, c := range f.sw.Received() {
		if c != "show running-config" && !strings.HasPrefix(c, "enable") && !strings.HasPrefix(c, "terminal") && !strings.HasPrefix(c, "no cli") {
			t.Errorf("declined, but the switch received %q", c)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(f.file), "bk", "*")); len(m) != 0 {
		t.Errorf("declined, but backups were written: %v", m)
	}

	withTerminal(t, "yes\n")
	code, out, errs = f.apply(t)
	if code != exitOK || len(question.FindAllString(out, -1)) != 1 {
		t.Fatalf("accepted: exit %d\n%s%s", code, out, errs)
	}
	if saves, fw := f.changed(t); saves != 1 || fw != "efi" {
		t.Errorf("accepted: switch saves %d, firmware %s", saves, fw)
	}
	for _, want := range []string{"[switch] swx-mld-1-2: sent 18 command(s), saved (configuration write) (", "[esxi] vm clx-mld-41: reconfigured, 9 change(s) ("} {
		if !strings.Contains(out, want) {
			t.Errorf("accepted output lacks the machine line %q:\n%s", want, out)
		}
	}

	// Nothing left to push: no question.
	withTerminal(t, "")
	code, out, errs = f.apply(t)
	if code != exitOK || strings.Contains(out, "[y/N]") || !strings.Contains(out, "switch: 1 switch(es) up to date") {
		t.Errorf("converged: exit %d\n%s%s", code, out, errs)
	}
}

// The JSON plan (--dry-run -o json) and result (--yes -o json) of the
// reference cluster's switch and vCenter, compared with golden files. Port
// numbers, the inventory's temporary path and timings are normalized.
func TestApplyJSONGolden(t *testing.T) {
	f := newFabric(t)
	normalize := func(t *testing.T, out string) []byte {
		t.Helper()
		var doc applyplan.Document
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("stdout is not one JSON document: %v\n%s", err, out)
		}
		if doc.Schema != applyplan.SchemaApply {
			t.Errorf("schema %q", doc.Schema)
		}
		doc.Inventory = "cluster.yaml"
		for i := range doc.Targets {
			doc.Targets[i].Seconds = 0
		}
		port := regexp.MustCompile(`127\.0\.0\.1:\d+`)
		backup := regexp.MustCompile(`backed up to \S+`)
		for i := range doc.Machines {
			m := &doc.Machines[i]
			m.Seconds = 0
			m.Address = port.ReplaceAllString(m.Address, "127.0.0.1:PORT")
			for j := range m.Notes {
				m.Notes[j] = backup.ReplaceAllString(m.Notes[j], "backed up to BACKUP")
			}
		}
		var b bytes.Buffer
		if err := doc.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	code, out, errs := f.apply(t, "--dry-run", "-o", "json")
	if code != exitOK || !strings.Contains(errs, "esxi: 8 VM(s) and 8 host(s) to change (dry run") {
		t.Fatalf("dry run: exit %d\n%s", code, errs)
	}
	golden.Check(t, "../../testdata/golden/cli/apply/plan.json", normalize(t, out))

	code, out, errs = f.apply(t, "--yes", "-o", "json")
	if code != exitOK {
		t.Fatalf("apply: exit %d\n%s", code, errs)
	}
	golden.Check(t, "../../testdata/golden/cli/apply/result.json", normalize(t, out))
}

// validate -o json: the findings of a broken inventory, and a valid one.
func TestValidateJSONGolden(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "cluster.yaml")
	yaml := strings.Replace(string(inventory.ReferenceYAML), "  mtu: 1500 ", "  mtu: 99999 ", 1)
	yaml = strings.Replace(yaml, "name: clx-mld-42", "name: clx-mld-41", 1)
	if err := os.WriteFile(bad, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := rdggen(t, "validate", "-o", "json", "-f", bad)
	if code != exitInvalid || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	golden.Check(t, "../../testdata/golden/cli/validate/invalid.json", []byte(strings.ReplaceAll(out, dir+"/", "")))
	code, out, _ = rdggen(t, "validate", "-o", "json")
	if code != exitOK {
		t.Fatalf("reference: exit %d", code)
	}
	golden.Check(t, "../../testdata/golden/cli/validate/reference.json", []byte(out))
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := rdggen(t, args...)
		if code != exitOK || errs != "" || !regexp.MustCompile(`^rdggen \S+.*, go1\.\d+\S* linux/\w+\n$`).MatchString(out) {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errs)
		}
	}
	if code, out, _ := rdggen(t, "help", "version"); code != exitOK || !strings.HasPrefix(out, "Usage: rdggen version") {
		t.Errorf("help version: %d %q", code, out)
	}
}
