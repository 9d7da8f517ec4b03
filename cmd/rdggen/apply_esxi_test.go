package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestApplyESXiCLI runs `rdggen apply --target esxi` end to end against the
// in-process simulator over HTTPS, configured the way a user would: GOVC_URL,
// GOVC_USERNAME, GOVC_PASSWORD and GOVC_TLS_CA_CERTS. Only the nmlx5_core
// parameter store is the simulator's (vcsim has no esxcli module namespace).
func TestApplyESXiCLI(t *testing.T) {
	inv := inventory.Reference()
	sim, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	esxiModules = sim.Modules
	t.Cleanup(func() { esxiModules = nil })

	env := map[string]string{
		"GOVC_URL":          sim.URL.String(),
		"GOVC_USERNAME":     vcsimtest.Username,
		"GOVC_PASSWORD":     vcsimtest.Password,
		"GOVC_TLS_CA_CERTS": sim.CAFile,
	}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(file, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	rdggen := func(args ...string) (int, string, string) {
		t.Helper()
		args = append(args, "-f", file)
		if !slices.Contains(args, "--dry-run") {
			args = append(args, "--yes")
		}
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
		if strings.Contains(out.String()+errb.String(), vcsimtest.Password) {
			t.Errorf("rdggen %s printed the password", strings.Join(args, " "))
		}
		return code, out.String(), errb.String()
	}

	code, out, errs := rdggen("apply", "--target", "esxi", "--dry-run")
	if code != exitOK || !strings.Contains(out, "vm clx-mld-41 (esx-41.example):\n  firmware: bios → efi") ||
		!strings.HasSuffix(out, "esxi: 8 VM(s) and 8 host(s) to change (dry run, nothing sent), 0 VM(s) and 0 host(s) already matched, 0 failed; reboot needed: 8 ESXi hosts (listed above)\n") {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, errs)
	}
	if !strings.HasPrefix(out, "vCenter "+sim.URL.String()+" as "+vcsimtest.Username+" (from GOVC_URL)\n") {
		t.Errorf("dry run does not say where it connects:\n%s", out)
	}

	code, out, errs = rdggen("apply", "--target", "esxi")
	if code != exitOK || errs != "" || !strings.HasSuffix(out, "esxi: 8 VM(s) and 8 host(s) changed, 0 VM(s) and 0 host(s) already matched, 0 failed; reboot needed: 8 ESXi hosts (listed above)\n") {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errs)
	}
	if got := sim.Modules.Params("esx-41.example", "nmlx5_core"); got != "max_vfs=8 pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1" {
		t.Errorf("nmlx5_core parameters %q", got)
	}

	code, out, errs = rdggen("apply", "--target", "esxi")
	if code != exitOK || errs != "" || !strings.HasSuffix(out, "esxi: nothing to do: 8 VM(s) and 8 ESXi host(s) already match the inventory\n") {
		t.Fatalf("second apply: exit %d\n%s%s", code, out, errs)
	}

	// Failures: exit 3, the reason on stderr.
	env["GOVC_PASSWORD"] = "not-" + vcsimtest.Password
	code, _, errs = rdggen("apply", "--target", "esxi")
	if code != exitFailed || !strings.Contains(errs, "rdggen: apply esxi: vCenter "+sim.URL.Host+`: login as "`+vcsimtest.Username+`" failed: incorrect user name or password`) {
		t.Errorf("wrong password: exit %d\n%s", code, errs)
	}
	env["GOVC_PASSWORD"] = vcsimtest.Password
	delete(env, "GOVC_TLS_CA_CERTS")
	code, _, errs = rdggen("apply", "--target", "esxi")
	if code != exitFailed || !strings.Contains(errs, "its TLS certificate is not trusted") {
		t.Errorf("untrusted certificate: exit %d\n%s", code, errs)
	}
	env["GOVC_TLS_CA_CERTS"] = sim.CAFile
	if err := sim.PowerOn(context.Background(), "clx-mld-43"); err != nil {
		t.Fatal(err)
	}
	sim.Reset()
	code, out, errs = rdggen("apply", "--target", "esxi")
	if code != exitFailed || !strings.Contains(out, "vm clx-mld-43: cannot apply: VM clx-mld-43 is poweredOn") || strings.Count(out+errs, "is poweredOn") != 1 ||
		!strings.Contains(out, "esxi: 7 VM(s) and 8 host(s) changed, 0 VM(s) and 0 host(s) already matched, 1 failed") ||
		errs != "rdggen: apply failed for: esxi (1 failed: clx-mld-43)\n" {
		t.Errorf("powered-on VM: exit %d\n%s%s", code, out, errs)
	}
}

// TestREADMECloneDryRun: the README's `rdggen apply --target esxi --dry-run`
// on an inventory with a template and no VMs is what the tool prints
// against the simulator (its vCenter URL written as the README's).
func TestREADMECloneDryRun(t *testing.T) {
	readme := docsText(t)
	_, block, ok := strings.Cut(string(readme), "$ rdggen apply -f cloned.yaml --target esxi --dry-run\n")
	if !ok {
		t.Fatal("README has no clone dry-run sample")
	}
	want, _, _ := strings.Cut(block, "```")
	src, err := os.ReadFile("../../testdata/golden/template/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "datastore: datastore1", "datastore: LocalDS_0", 1)
	s = strings.Replace(s, "folder: /DC0/vm/training", "folder: /DC0/vm", 1)
	inv, err := inventory.Load("cloned.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	var skip []string
	for _, h := range inv.Hosts {
		skip = append(skip, h.VM)
	}
	sim, err := vcsimtest.New(inv, vcsimtest.Options{SkipVMs: skip, Templates: []vcsimtest.Template{
		{Name: "ubuntu-22.04-gpu-efi", Firmware: "efi", Version: "vmx-21"}, {Name: "plain-ubuntu", Firmware: "efi"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	esxiModules = sim.Modules
	t.Cleanup(func() { esxiModules = nil })
	env := map[string]string{"GOVC_URL": sim.URL.String(), "GOVC_USERNAME": vcsimtest.Username, "GOVC_PASSWORD": vcsimtest.Password, "GOVC_TLS_CA_CERTS": sim.CAFile}
	t.Chdir(t.TempDir())
	if err := os.WriteFile("cloned.yaml", []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"apply", "-f", "cloned.yaml", "--target", "esxi", "--dry-run"}, &out, &errb, func(k string) string { return env[k] })
	got := strings.ReplaceAll(out.String()+errb.String(), sim.URL.String(), "https://vc.example/sdk")
	if code != exitOK || got != want {
		t.Errorf("exit %d; README shows:\n%s\nthe tool prints:\n%s", code, want, got)
	}
	if sim.CloneCalls() != 0 {
		t.Errorf("a dry run cloned %d VMs", sim.CloneCalls())
	}
}

// TestApplyESXiRecordCLI: apply keeps its record of the VMs it read whole in
// $XDG_CACHE_HOME/rdggen (one file per vCenter), a no-op then reads no VM
// whole, --full reads them all, a damaged file is said and costs a whole
// read, and check neither reads nor writes it (nor takes --full).
func TestApplyESXiRecordCLI(t *testing.T) {
	inv := inventory.Reference()
	sim, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	esxiModules = sim.Modules
	t.Cleanup(func() { esxiModules = nil })
	cache := t.TempDir()
	env := map[string]string{"GOVC_URL": sim.URL.String(), "GOVC_USERNAME": vcsimtest.Username, "GOVC_PASSWORD": vcsimtest.Password,
		"GOVC_TLS_CA_CERTS": sim.CAFile, "XDG_CACHE_HOME": cache}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(file, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	rdggen := func(args ...string) (int, string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(context.Background(), append(args, "-f", file), &out, &errb, func(k string) string { return env[k] })
		return code, out.String(), errb.String()
	}
	const unread = "8 VM(s) unchanged since the last apply read them (same change version): their device lists were not read (--full reads them)\n"
	if code, out, errs := rdggen("apply", "--target", "esxi", "--yes"); code != exitOK {
		t.Fatalf("first apply: exit %d\n%s%s", code, out, errs)
	}
	// The VMs the first apply changed are read whole once more, and
	// recorded then.
	if code, out, errs := rdggen("apply", "--target", "esxi", "--yes"); code != exitOK || strings.Contains(out, "unchanged since the last apply") {
		t.Fatalf("apply that records: exit %d\n%s%s", code, out, errs)
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "rdggen", "esxi-*.json"))
	if len(matches) != 1 {
		t.Fatalf("record files: %v", matches)
	}
	record := matches[0]
	code, out, errs := rdggen("apply", "--target", "esxi", "--yes")
	if code != exitOK || !strings.Contains(out, unread) || !strings.Contains(out, "esxi: nothing to do: 8 VM(s) and 8 ESXi host(s) already match the inventory") {
		t.Fatalf("no-op: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := rdggen("apply", "--target", "esxi", "--yes", "--full"); code != exitOK || strings.Contains(out, "unchanged since the last apply") {
		t.Fatalf("--full: exit %d\n%s%s", code, out, errs)
	}
	// check reads whole whatever the record says, and leaves it alone.
	before, _ := os.ReadFile(record)
	if err := os.Chtimes(record, time.Unix(1, 0), time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := rdggen("check", "--target", "esxi"); strings.Contains(out+errs, "unchanged since the last apply") || code == exitUsage {
		t.Errorf("check: exit %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Stat(record); err != nil || fi.ModTime().Unix() != 1 {
		t.Errorf("check touched the record: %v %v", fi.ModTime(), err)
	}
	if code, _, errs := rdggen("check", "--target", "esxi", "--full"); code != exitUsage {
		t.Errorf("check --full: exit %d\n%s", code, errs)
	}
	// A dry run reads the record and does not write it.
	if code, out, errs := rdggen("apply", "--target", "esxi", "--dry-run"); code != exitOK || !strings.Contains(out, unread) {
		t.Errorf("dry run: exit %d\n%s%s", code, out, errs)
	}
	if fi, err := os.Stat(record); err != nil || fi.ModTime().Unix() != 1 {
		t.Errorf("the dry run wrote the record: %v %v", fi.ModTime(), err)
	}
	if err := os.WriteFile(record, before[:len(before)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = rdggen("apply", "--target", "esxi", "--yes")
	if code != exitOK || !strings.Contains(out, "esxi: note: the record of the last apply cannot be used (") ||
		!strings.Contains(out, "): every VM is read whole\n") || strings.Contains(out, "unchanged since the last apply") {
		t.Fatalf("damaged record: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := rdggen("apply", "--target", "esxi", "--yes"); code != exitOK || !strings.Contains(out, unread) {
		t.Fatalf("after the damaged record: exit %d\n%s%s", code, out, errs)
	}
}
