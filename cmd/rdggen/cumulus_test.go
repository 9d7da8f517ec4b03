package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Cumulus inventory generates NVUE files, and apply --target switch on it
// asks for no SSH credentials (SSH is ONYX's) and stops with the engine's
// clear error instead of sending ONYX commands; nothing listens at its mgmt
// address, so a connection attempt would also fail, but differently.
func TestCumulusGenerateAndApplyRefused(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/cumulus/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.yaml")
	yaml := strings.Replace(string(src), "    # mgmt: 10.0.0.2 ", "    mgmt: 127.0.0.1:1 #", 1)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := rdggen(t, "-f", file, "-o", out); code != 0 {
		t.Fatalf("generate: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{"switch/swx-mld-1-2.yaml", "switch/swx-mld-1-2.sh"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "switch/swx-mld-1-2.cfg")); err == nil {
		t.Error("an ONYX .cfg for a Cumulus switch")
	}
	code, stdout, stderr := rdggen(t, "apply", "-f", file, "--target", "switch", "--dry-run", "--known-hosts", filepath.Join(dir, "none"))
	if code != 3 || !strings.Contains(stdout, "swx-mld-1-2: cannot plan: switch swx-mld-1-2 runs Cumulus Linux 5.9.1: apply and check of a Cumulus Linux switch are not yet supported here") {
		t.Errorf("apply: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
