package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The CLI against hostile or careless arguments: each case is a command line
// that did harm or made no sense, and the usage error it now gets. Nothing
// is written and nothing is contacted.
func TestHostileArguments(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(inv, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "one.yaml")
	ref := string(inventory.ReferenceYAML)
	if err := os.WriteFile(one, []byte(ref[:strings.Index(ref, "  - name: clx-mld-42")]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"run's command empty", []string{"run", "-f", inv, "--", ""}, exitUsage, "the job's command after -- is empty (an unset variable?)"},
		{"bench --save is a file", []string{"bench", "-f", inv, "--save", inv}, exitUsage, "--save " + inv + " is a file: name a directory"},
		{"bench on one host", []string{"bench", "-f", one, "--dry-run"}, exitUsage, "has one host: the bench measures between hosts"},
		{"-f from an unset variable", []string{"-f", "", "-o", filepath.Join(dir, "o1")}, exitUsage, "-f is empty (an unset variable?); name the inventory file"},
		{"validate -f empty", []string{"validate", "-f", ""}, exitUsage, "-f is empty"},
		{"apply -f empty", []string{"apply", "-f", "", "--dry-run"}, exitUsage, "apply needs -f cluster.yaml: it changes real machines"},
		{"apply without -f", []string{"apply", "--dry-run"}, exitUsage, "apply needs -f cluster.yaml"},
		{"run -f empty", []string{"run", "-f", ""}, exitUsage, "run needs -f cluster.yaml"},
		{"negative vCenter timeout", []string{"apply", "-f", inv, "--vcenter-timeout", "-1s"}, exitUsage, "--vcenter-timeout -1s: must be more than 0"},
		{"zero vCenter timeout", []string{"apply", "-f", inv, "--vcenter-timeout", "0"}, exitUsage, "--vcenter-timeout 0s: must be more than 0"},
		{"zero switch timeout", []string{"apply", "-f", inv, "--switch-timeout", "0s"}, exitUsage, "--switch-timeout 0s: must be more than 0"},
		{"zero switch batch", []string{"apply", "-f", inv, "--switch-batch", "0"}, exitUsage, "--switch-batch 0: must be at least 1"},
		{"zero worker timeout", []string{"apply", "-f", inv, "--worker-timeout", "0s"}, exitUsage, "--worker-timeout 0s: must be more than 0"},
		{"VM port too large", []string{"apply", "-f", inv, "--hosts-ssh-port", "70000"}, exitUsage, "--hosts-ssh-port 70000: a TCP port is 1–65535"},
		{"VM port zero", []string{"apply", "-f", inv, "--hosts-ssh-port", "0"}, exitUsage, "--hosts-ssh-port 0: a TCP port is 1–65535"},
		{"switch port zero", []string{"apply", "-f", inv, "--switch-ssh-port", "0"}, exitUsage, "--switch-ssh-port 0: a TCP port is 1–65535"},
		{"run with port zero", []string{"run", "-f", inv, "--hosts-ssh-port", "0"}, exitUsage, "--hosts-ssh-port 0: a TCP port is 1–65535"},
		{"run's command without --", []string{"run", "-f", inv, "python", "train.py"}, exitUsage,
			`unexpected argument "python": put the job's command after --, e.g. rdggen run -f cluster.yaml -- python train.py`},
		{"run without known_hosts: nothing contacted", []string{"run", "-f", inv, "--known-hosts", filepath.Join(dir, "kh")}, exitUsage, "cannot read known_hosts " + filepath.Join(dir, "kh")},
		{"run with a zero SSH timeout", []string{"run", "-f", inv, "--ssh-timeout", "0"}, exitUsage, "--ssh-timeout 0s: must be more than 0"},
		{"bench without known_hosts", []string{"bench", "-f", inv, "--known-hosts", filepath.Join(dir, "kh")}, exitUsage, "cannot read known_hosts " + filepath.Join(dir, "kh")},
		{"apply --target from an unset variable", []string{"apply", "-f", inv, "--target", ""}, exitUsage, "--target is empty (an unset variable?)"},
		{"-o from an unset variable", []string{"-o", ""}, exitUsage, "-o is empty (an unset variable?)"},
		{"-o the current directory", []string{"-o", "."}, exitUsage, "the output directory . is the current directory or holds it"},
		{"-o a parent of the current directory", []string{"-o", ".."}, exitUsage, "the output directory .. is the current directory or holds it"},
		{"missing identity file", []string{"apply", "--yes", "-f", inv, "--target", "hosts", "--identity", filepath.Join(dir, "nope")}, exitUsage, "--identity: open " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"missing known_hosts, once", []string{"apply", "--yes", "-f", inv, "--target", "hosts", "--known-hosts", filepath.Join(dir, "kh")}, exitUsage, "cannot read known_hosts " + filepath.Join(dir, "kh")},
		{"unknown flag with an escape", []string{"validate", "--bo\x1b[31mgus"}, exitUsage, `unknown flag: --bo\x1b[31mgus`},
		{"help for a command", []string{"help", "bogus"}, exitUsage, `unknown command "bogus"`},
		{"output is the inventory", []string{"-f", inv, "-o", inv}, exitUsage, "-o " + inv + " is the inventory itself; -o names the directory"},
		{"output holds the inventory", []string{"-f", inv, "-o", dir}, exitUsage, "the output directory " + dir + " holds the inventory " + inv + ", and rdggen replaces that directory as a whole"},
		{"output is the inventory's parent, relative", []string{"-f", inv, "-o", filepath.Join(dir, "sub", "..")}, exitUsage, "holds the inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := rdggen(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr:\n%s\nwant %q", code, tc.code, stderr, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(inv); err != nil || string(b) != string(inventory.ReferenceYAML) {
		t.Error("the inventory was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "o1")); err == nil {
		t.Error("-f '' wrote the reference cluster")
	}
}

// An http:// vCenter is refused before any connection, unless asked for.
func TestVCenterPlainHTTP(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(inv, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := rdggen(t, "apply", "-f", inv, "--target", "esxi", "--dry-run", "--vcenter", "http://127.0.0.1:1/sdk")
	if code != exitFailed || !strings.Contains(stderr, "--vcenter: http://127.0.0.1:1/sdk is plain http: the vCenter password would cross the network unencrypted; use https, or pass --vcenter-allow-http") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	code, _, stderr = rdggenEnv(t, map[string]string{"GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"},
		"apply", "-f", inv, "--target", "esxi", "--dry-run", "--vcenter", "http://127.0.0.1:1/sdk", "--vcenter-allow-http", "--vcenter-timeout", "2s")
	if code != exitFailed || strings.Contains(stderr, "plain http") || !strings.Contains(stderr, "127.0.0.1:1") ||
		!strings.HasSuffix(stderr, "rdggen: apply --dry-run could not plan: esxi; nothing was changed\n") {
		t.Errorf("with --vcenter-allow-http: exit %d: %s", code, stderr)
	}
}

// An inventory path with a newline or escape codes reaches generated files
// only escaped: no header gains a line, and the terminal gets no escape.
func TestHostileInventoryPath(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "c\ntouch PWNED #\x1b[2J.yaml")
	if err := os.WriteFile(inv, inventory.ReferenceYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := rdggen(t, "-f", inv, "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\x1b") {
		t.Errorf("an escape reached the terminal: %q", stdout)
	}
	for p, content := range readTree(t, out) {
		for _, line := range strings.Split(content, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "touch PWNED") || strings.Contains(line, "\x1b") {
				t.Errorf("%s: the path became a line of its own: %q", p, line)
			}
		}
	}
}

func TestHelpPerCommand(t *testing.T) {
	for cmd, want := range map[string]string{"apply": "Usage: rdggen apply", "run": "Usage: rdggen run", "validate": "Usage: rdggen validate", "example": "Usage: rdggen example", "check": "Usage: rdggen check"} {
		code, stdout, _ := rdggen(t, "help", cmd)
		if code != exitOK || !strings.HasPrefix(stdout, want) {
			t.Errorf("rdggen help %s: exit %d\n%s", cmd, code, stdout)
		}
	}
	if _, stdout, _ := rdggen(t, "example", "--help"); strings.Contains(stdout, "Flags:") {
		t.Errorf("example has no flags, but its help says Flags:\n%s", stdout)
	}
}
