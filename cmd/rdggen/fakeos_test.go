package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/fakeos"
)

// fakeOSVar registers the fake switch OS in this test binary
// (TestFakeOSCLI's child and the lab supervisor it starts), and nowhere
// else: the other tests see rdggen's OSes only.
const fakeOSVar = "RDGGEN_TEST_FAKEOS"

func init() {
	if os.Getenv(fakeOSVar) == "1" {
		if err := fakeos.Register(); err != nil {
			panic(err)
		}
	}
}

// TestFakeOSCLI: a switch OS that only its package and its registration
// make known (internal/testing/fakeos) goes through the CLI as ONYX and
// Cumulus do, with no line of cmd/rdggen, pkg/apply, internal/render or
// internal/lab naming it: `lab up` runs its simulators and writes its
// variable, validate and generate take its key and write its file, apply
// pushes and a second apply finds nothing to do, check passes, a fault of
// the lab makes it fail, its flag is in apply's help and its checks in
// check's, and apply without its token stops before contacting anything.
// It runs in a child process of this test binary, which registers the
// fake OS (fakeOSVar).
func TestFakeOSCLI(t *testing.T) {
	if os.Getenv(fakeOSVar) != "1" {
		// Without RDGGEN_TEST_MAIN, which TestMain sets: with it the
		// child would be rdggen (generating ./rdg-out), not this test.
		cmd := exec.Command(os.Args[0], "-test.run=^TestFakeOSCLI$", "-test.count=1", "-test.v")
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "RDGGEN_TEST_MAIN=") }), fakeOSVar+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the fake OS's child test: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS: TestFakeOSCLI") {
			t.Fatalf("the fake OS's child did not run the test:\n%s", out)
		}
		return
	}
	t.Setenv("RDGGEN_TEST_MAIN", "1") // the lab's supervisor is this test binary, as rdggen
	dir := t.TempDir()
	inv := filepath.Join(dir, "cluster.yaml")
	src := `name: fake
switches:
  - {name: fk1, model: SN2100, fakeos: 1.2, mgmt: 192.0.2.1}
  - {name: fk2, model: SN2100, fakeos: 1.2, mgmt: 192.0.2.2}
defaults:
  os: ubuntu-18.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - {name: a, esxi: esx-a, data: {address: 10.0.0.1/24, switch: fk1, port: 1/1}}
  - {name: b, esxi: esx-b, data: {address: 10.0.0.2/24, switch: fk2, port: 1/3}}
`
	if err := os.WriteFile(inv, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	s := &session{t: t, dir: "rdg-lab"}
	t.Cleanup(func() { _, _ = lab.Down(filepath.Join(dir, "rdg-lab")) })
	out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml", "--no-hosts")
	if !strings.Contains(out, "switch      fk1  fake lines on 127.0.0.1:") {
		t.Errorf("lab up does not show the fake switch:\n%s", out)
	}
	s.getenv = labEnv(t, "rdg-lab")
	if s.getenv(fakeos.TokenVar) == "" || s.getenv(fakeos.UserVar) != "fake" {
		t.Fatalf("the lab's env file has no fake OS login")
	}

	s.run(exitOK, "validate", "-f", "rdg-lab/lab.yaml")
	s.run(exitOK, "-f", "rdg-lab/lab.yaml", "-o", "out")
	if b, err := os.ReadFile("out/switch/fk2.fake"); err != nil || string(b) != "hostname fk2\nroce priority 3 dscp 26\nport fp3 mtu 9216\n" {
		t.Errorf("out/switch/fk2.fake: %q, %v", b, err)
	}

	args := []string{"-f", "rdg-lab/lab.yaml", "--target", "switch"}
	apply := append([]string{"apply", "--yes", "--backup-dir", "bk"}, args...)
	out = s.run(exitOK, apply...)
	if !strings.Contains(out, "switch: 2 changed, 0 up to date, 0 failed; 6 fake line(s) set") {
		t.Errorf("apply:\n%s", out)
	}
	if bk, _ := filepath.Glob("bk/fk1-*" + fakeos.BackupExt); len(bk) != 1 {
		t.Errorf("backups of fk1: %v", bk)
	}
	out = s.run(exitOK, apply...)
	if !strings.Contains(out, "switch: 2 switch(es) up to date, nothing changed; 0 fake line(s) set") {
		t.Errorf("second apply:\n%s", out)
	}
	check := append([]string{"check"}, args...)
	out = s.run(exitOK, check...)
	if !strings.Contains(out, "rdggen check: all 4 check(s) passed") {
		t.Errorf("check:\n%s", out)
	}
	s.run(exitOK, "lab", "fault", "mtu", "fk1:fp1", "1500")
	out = s.run(exitInvalid, check...)
	if !strings.Contains(out, "fk1: lines: FAILED") {
		t.Errorf("check after the fault:\n%s", out)
	}

	_, help, _ := rdggen(t, "help", "apply")
	_, checkHelp, _ := rdggen(t, "help", "check")
	if !strings.Contains(help, "fake switches over their line protocol ("+fakeos.TokenVar+")") || !strings.Contains(help, "--fakeos-timeout") ||
		!strings.Contains(checkHelp, "   Fake OS, over its line protocol (SHOW only):\n    lines ") {
		t.Errorf("the help lacks the fake OS:\n%s\n%s", help, checkHelp)
	}
	env := s.getenv
	s.getenv = func(k string) string {
		if k == fakeos.TokenVar {
			return ""
		}
		return env(k)
	}
	out = s.run(exitUsage, apply...)
	if !strings.Contains(out, "the fake switches (fk1, fk2) need a token: set "+fakeos.TokenVar) || !strings.Contains(out, "nothing was contacted") {
		t.Errorf("apply without the token:\n%s", out)
	}
	s.run(exitOK, "lab", "down")
}
