package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Every missing prerequisite in one round, before anything is contacted:
// with an ONYX and a Cumulus switch, a vCenter, no known_hosts file, no
// NVUE password, no vCenter credentials and nothing to log in to the
// switch or the VMs with, apply names all five (each once), says nothing
// was contacted and exits 2; before, it stopped at known_hosts and said the
// others one run later.
func TestPrerequisitesAtOnce(t *testing.T) {
	t.Setenv("SSH_AUTH_SOCK", "")
	dir := t.TempDir()
	inv := mixedInventory(t, dir)
	kh := filepath.Join(dir, "no-known_hosts")
	code, stdout, stderr := rdggenEnv(t, nil, "apply", "--dry-run", "-f", inv, "--known-hosts", kh, "--keys", filepath.Join(dir, "keys"))
	all := stdout + stderr
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	for _, want := range []string{
		"rdggen: --known-hosts: cannot read known_hosts " + kh + " (no such file or directory)",
		"the NVUE API of the Cumulus switches (swx-mld-1-3) needs a password: set RDGGEN_NVUE_PASSWORD",
		"rdggen: SSH to the switches (swx-mld-1-2): no SSH credentials",
		"rdggen: vCenter 127.0.0.1:3 (from inventory vcenter): no user name and no password to log in with: set $GOVC_USERNAME and $GOVC_PASSWORD",
		"rdggen: SSH to the VMs (targets hosts, workers): no SSH credentials",
		"rdggen: nothing was contacted\n",
	} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("%q printed %d times, want once", want, n)
		}
	}
	if strings.Contains(all, "connection refused") {
		t.Errorf("something was contacted")
	}
	if t.Failed() {
		t.Logf("output:\n%s", all)
	}
}

// `rdggen example` writes docker.mtu: 1500; a user who uncomments its
// data_mtu: 9000 is warned that docker0 stays at 1500 (validate exits 0),
// and without docker.mtu it follows data_mtu without a warning.
func TestExampleDataMTUWarns(t *testing.T) {
	code, example, _ := rdggen(t, "example")
	if code != exitOK || !strings.Contains(example, "\n  mtu: 1500 ") || !strings.Contains(example, "\n  # data_mtu: 9000 ") {
		t.Fatalf("example: exit %d, no docker mtu or data_mtu line", code)
	}
	dir := t.TempDir()
	jumbo := strings.Replace(example, "\n  # data_mtu: 9000 ", "\n  data_mtu: 9000   ", 1)
	p := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(p, []byte(jumbo), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := rdggen(t, "validate", "-f", p)
	want := "rdggen: warning: " + p + ":29:8: docker.mtu: 1500 is below data_mtu 9000 (hosts[0] and the others): docker0 and the bridge-mode workers stay at 1500 bytes while the data link carries 9000; leave docker.mtu out to follow data_mtu, or set it to 9000\n"
	if code != exitOK || !strings.Contains(out+errs, want) {
		t.Errorf("validate: exit %d\n%s%s\nwant the warning %q", code, out, errs, want)
	}
	derived := strings.Replace(jumbo, "\n  mtu: 1500 ", "\n  # mtu: 1500 ", 1)
	if err := os.WriteFile(p, []byte(derived), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = rdggen(t, "validate", "-f", p)
	if code != exitOK || strings.Contains(out+errs, "warning") {
		t.Errorf("docker.mtu left out: exit %d\n%s%s", code, out, errs)
	}
	if inv, err := inventory.LoadFile(p); err != nil || inv.Docker.MTU != 9000 {
		t.Errorf("docker.mtu left out: %v, docker.mtu %d, want 9000", err, inv.Docker.MTU)
	}
}

// mixedInventory is the mixed golden inventory (an ONYX and a Cumulus
// switch) with both switches' mgmt addresses and a vCenter, on ports no one
// listens on (nothing is contacted in these tests).
func mixedInventory(t *testing.T, dir string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "mixed", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(src), "    onyx: 3.6.8190 ", "    mgmt: 127.0.0.1:1\n    onyx: 3.6.8190 ", 1)
	y = strings.Replace(y, "    cumulus: 5.9.1 ", "    mgmt: 127.0.0.1:2\n    cumulus: 5.9.1 ", 1)
	y = strings.Replace(y, "# vcenter: https://vcenter.example/sdk", "vcenter: https://127.0.0.1:3/sdk", 1)
	if strings.Count(y, "127.0.0.1:") != 3 {
		t.Fatal("the mixed inventory changed shape")
	}
	inv := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(inv, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv
}
