package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Cumulus inventory generates NVUE files, and apply --target switch on it
// asks for no SSH credentials (SSH is ONYX's) but for the NVUE password,
// then goes to the NVUE engine (nothing listens at its mgmt address here).
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
	// Without the NVUE password nothing is contacted.
	code, stdout, stderr := rdggen(t, "apply", "-f", file, "--target", "switch", "--dry-run", "--known-hosts", filepath.Join(dir, "none"))
	if code != exitUsage || !strings.Contains(stderr, "needs a password: set RDGGEN_NVUE_PASSWORD") || !strings.Contains(stderr, "nothing was contacted") {
		t.Errorf("apply without the password: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// With it, the NVUE engine connects (nothing listens there: the switch
	// is unreachable, at the address it names) and never asks for SSH's
	// known_hosts.
	var sout, errb bytes.Buffer
	code = run(context.Background(), []string{"apply", "-f", file, "--target", "switch", "--dry-run", "--known-hosts", filepath.Join(dir, "none")},
		&sout, &errb, func(k string) string { return map[string]string{envNVUEPassword: "pw"}[k] })
	if code != 3 || !strings.Contains(sout.String(), "swx-mld-1-2: cannot plan: reading the applied configuration: 127.0.0.1:1: Get \"https://127.0.0.1:1/nvue_v1/?filled=false&rev=applied\"") {
		t.Errorf("apply: exit %d\nstdout:\n%s\nstderr:\n%s", code, sout.String(), errb.String())
	}
}
