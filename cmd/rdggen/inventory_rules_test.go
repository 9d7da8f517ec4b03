package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// rdggenEnv is rdggen with an environment.
func rdggenEnv(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

// writeInventory writes the reference inventory with old replaced by new.
func writeInventory(t *testing.T, old, new string) string {
	t.Helper()
	src := string(inventory.ReferenceYAML)
	if !strings.Contains(src, old) {
		t.Fatalf("%q is not in the reference inventory", old)
	}
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(src, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every command that loads an inventory shows its warnings on stderr, and
// a warning never makes it fail; validate's JSON document carries them.
func TestInventoryWarningsShown(t *testing.T) {
	inv := writeInventory(t, "  # gateway: 31.31.31.254", "  gateway: 31.31.31.200")
	want := "rdggen: warning: " + inv + ":33:12: docker.gateway: 31.31.31.200 is not used with routing: hosts (the default)"

	code, stdout, stderr := rdggen(t, "-f", inv, "-o", filepath.Join(t.TempDir(), "out"))
	if code != exitOK || !strings.Contains(stderr, want) || !strings.Contains(stdout, "8 hosts, 1 switch(es)") {
		t.Errorf("generate: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = rdggen(t, "validate", "-f", inv)
	if code != exitOK || !strings.Contains(stderr, want) || !strings.Contains(stdout, "valid: 8 hosts") {
		t.Errorf("validate: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = rdggen(t, "validate", "-o", "json", "-f", inv)
	var doc struct { // the fields of validateDocument this test reads
		Valid    bool              `json:"valid"`
		Warnings []validateFinding `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != exitOK || !doc.Valid || len(doc.Warnings) != 1 {
		t.Fatalf("validate -o json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if w := doc.Warnings[0]; w.Path != "docker.gateway" || w.Line != 33 || w.Column != 12 || !strings.HasPrefix(w.Rule, "31.31.31.200 is not used with routing: hosts") {
		t.Errorf("the document's warning: %+v", w)
	}
	for _, args := range [][]string{{"apply", "--dry-run", "--target", "esxi"}, {"check", "--target", "esxi"}} {
		_, _, stderr := rdggen(t, append(args, "-f", inv)...)
		if !strings.Contains(stderr, want) || strings.Contains(stderr, "problem(s)") {
			t.Errorf("%s: no warning, or the inventory was refused:\n%s", args[0], stderr)
		}
	}
}

// A vCenter URL follows one grammar wherever it is written: the flag is
// refused before anything is contacted when its scheme is not http(s) or
// it carries credentials; GOVC_URL is read by the same grammar; an http://
// vCenter in the inventory is a finding, unless --vcenter-allow-http is
// given to the command.
func TestVCenterURLEverywhere(t *testing.T) {
	ref := writeInventory(t, "name: clx-mld", "name: clx-mld")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"apply", "--dry-run", "--target", "esxi", "--vcenter", "ftp://x"}, exitUsage,
			`rdggen: --vcenter: "ftp://x": a vCenter URL is https:// (or http://), not ftp://` + "\n"},
		{[]string{"check", "--target", "esxi", "--vcenter", "ftp://x"}, exitUsage, `not ftp://`},
		{[]string{"apply", "--dry-run", "--target", "esxi", "--vcenter", "https://root:s3cret@vc.example/sdk"}, exitUsage,
			"rdggen: --vcenter: must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead (a command line shows in the process list and the shell's history)\n"},
		{[]string{"check", "--target", "esxi", "--vcenter", "https://root:s3cret@vc.example/sdk"}, exitUsage, "must not carry credentials"},
	} {
		code, _, stderr := rdggen(t, append(tc.args, "-f", ref)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "s3cret") {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
	code, _, stderr := rdggenEnv(t, map[string]string{"GOVC_URL": "ftp://vc.example"}, "apply", "--dry-run", "--target", "esxi", "-f", ref)
	if code != exitFailed || !strings.Contains(stderr, `GOVC_URL: "ftp://vc.example": a vCenter URL is https:// (or http://), not ftp://`) {
		t.Errorf("GOVC_URL ftp://: exit %d\n%s", code, stderr)
	}

	plain := writeInventory(t, "# vcenter: https://vcenter.example/sdk", "vcenter: http://127.0.0.1:1/sdk")
	finding := plain + ":23:10: vcenter: http://127.0.0.1:1/sdk is plain http: vCenter's login would send the password unencrypted; use https://, or pass --vcenter-allow-http"
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"validate"}, exitInvalid},
		{[]string{"-o", out}, exitInvalid},
		{[]string{"apply", "--dry-run", "--target", "esxi"}, exitInvalid},
		{[]string{"check", "--target", "esxi"}, exitInvalid},
	} {
		code, _, stderr := rdggen(t, append(tc.args, "-f", plain)...)
		if code != tc.code || !strings.Contains(stderr, finding) {
			t.Errorf("%v: exit %d, want %d and\n%s\ngot:\n%s", tc.args, code, tc.code, finding, stderr)
		}
	}
	for _, args := range [][]string{{"validate"}, {"-o", out}} {
		if code, _, stderr := rdggen(t, append(args, "--vcenter-allow-http", "-f", plain)...); code != exitOK {
			t.Errorf("%v --vcenter-allow-http: exit %d\n%s", args, code, stderr)
		}
	}
	// apply and check with the flag (and credentials) load the inventory
	// and reach for vCenter (nothing listens on port 1).
	for _, tc := range []struct {
		args []string
		code int // apply: the target failed; check: not ready
	}{{[]string{"apply", "--dry-run"}, exitFailed}, {[]string{"check"}, exitInvalid}} {
		code, stdout, stderr := rdggenEnv(t, map[string]string{"GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"},
			append(tc.args, "--target", "esxi", "--vcenter-allow-http", "--vcenter-timeout", "2s", "-f", plain)...)
		text := stdout + stderr
		if code != tc.code || strings.Contains(text, "problem(s)") || strings.Contains(text, "plain http") || !strings.Contains(text, "127.0.0.1:1") {
			t.Errorf("%v --vcenter-allow-http: exit %d\n%s", tc.args, code, text)
		}
	}
}
