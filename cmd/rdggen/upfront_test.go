package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// upfrontFixture is the reference inventory with the switch's mgmt at a
// closed port of loopback and vcenter there too, an existing known_hosts
// file, and no ssh-agent: nothing it names can be reached.
func upfrontFixture(t *testing.T) (dir, inv, kh string) {
	t.Helper()
	t.Setenv("SSH_AUTH_SOCK", "")
	dir = t.TempDir()
	yaml := strings.Replace(string(inventory.ReferenceYAML), "    # mgmt: 10.0.0.2 ", "    mgmt: 127.0.0.1:1", 1)
	yaml = strings.Replace(yaml, "# vcenter: https://vcenter.example/sdk", "vcenter: https://127.0.0.1:1/sdk", 1)
	inv = filepath.Join(dir, "cluster.yaml")
	kh = filepath.Join(dir, "known_hosts")
	for p, b := range map[string]string{inv: yaml, kh: ""} {
		if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, inv, kh
}

// Credentials and keys are checked once, before anything is contacted: a
// missing one is one line (not one per host and target) and exit 2.
func TestCredentialsUpFront(t *testing.T) {
	dir, inv, kh := upfrontFixture(t)
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys")
	vc := map[string]string{"GOVC_PASSWORD": "p"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want []string // each once
		not  string
	}{
		{"no SSH credentials for 8 VMs and 2 targets", nil, []string{"--target", "hosts,workers", "--keys", keys},
			exitUsage, []string{"rdggen: SSH to the VMs (targets hosts, workers): no SSH credentials: start ssh-agent with a key (SSH_AUTH_SOCK), pass an identity file (--identity), or set RDGGEN_SSH_PASSWORD\n",
				"rdggen: nothing was contacted\n"}, "clx-mld-41"},
		{"no SSH credentials and a key directory anyone can write: both, once", nil, []string{"--target", "hosts,workers", "--keys", open},
			exitUsage, []string{"rdggen: SSH to the VMs (targets hosts, workers): no SSH credentials", "is writable by its group and everyone (mode 0777)"}, "clx-mld-41"},
		{"no SSH credentials for the switch", nil, []string{"--target", "switch"},
			exitUsage, []string{"rdggen: SSH to the switches (swx-mld-1-2): no SSH credentials: start ssh-agent with a key (SSH_AUTH_SOCK), pass an identity file (--identity), or set RDGGEN_SWITCH_PASSWORD\n"}, "127.0.0.1:1"},
		{"no vCenter user", vc, []string{"--target", "esxi"},
			exitUsage, []string{"rdggen: vCenter 127.0.0.1:1 (from inventory vcenter): no user name to log in with: set $GOVC_USERNAME\n"}, "connection refused"},
		{"no vCenter credentials at all", nil, []string{"--target", "esxi"},
			exitUsage, []string{"no user name and no password to log in with: set $GOVC_USERNAME and $GOVC_PASSWORD\n"}, "connection refused"},
		{"vCenter of the inventory unreachable", map[string]string{"GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"}, []string{"--target", "esxi"},
			exitFailed, []string{"connect: connection refused; the address is the inventory's vcenter: check it, or set $GOVC_URL (or --vcenter) to reach vCenter elsewhere\n"}, ""},
		{"vCenter of GOVC_URL unreachable", map[string]string{"GOVC_URL": "https://127.0.0.1:2/sdk", "GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"}, []string{"--target", "esxi"},
			exitFailed, []string{"127.0.0.1:2: connect: connection refused; the address is $GOVC_URL's (it overrides the inventory's vcenter): check it, or unset it to use the inventory's\n"}, ""},
		{"--keys from an unset variable", map[string]string{envSSHPassword: "pw"}, []string{"--target", "workers", "--keys", ""},
			exitUsage, []string{"rdggen: --keys is empty (an unset variable?); name the worker key directory, or leave --keys out for the default"}, "apply generates them"},
		{"key directory anyone can write", map[string]string{envSSHPassword: "pw"}, []string{"--target", "workers", "--keys", open},
			exitUsage, []string{"rdggen: --keys: the cluster's worker keys are not in " + open + " yet, and apply cannot make them: " + open + ": is writable by its group and everyone (mode 0777)"}, "apply generates them"},
		{"key directory that cannot be made", map[string]string{envSSHPassword: "pw"}, []string{"--target", "workers", "--keys", filepath.Join(kh, "keys")},
			exitUsage, []string{kh + ": is not a directory, so the worker keys cannot be made in " + filepath.Join(kh, "keys")}, "apply generates them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"apply", "--dry-run", "-f", inv, "--known-hosts", kh}, tc.args...)
			code, stdout, stderr := rdggenEnv(t, tc.env, args...)
			all := stdout + stderr
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, all)
			}
			for _, w := range tc.want {
				if n := strings.Count(all, w); n != 1 {
					t.Errorf("%q printed %d times, want once:\n%s", w, n, all)
				}
			}
			if tc.not != "" && strings.Contains(all, tc.not) {
				t.Errorf("%q was reached or named:\n%s", tc.not, all)
			}
		})
	}
	if _, err := os.Stat(keys); err == nil {
		t.Error("a refused apply made the key directory")
	}
}

// The inventory rdggen example prints has no switch mgmt address and no
// vcenter: a dry run says both before it contacts anything, once each,
// exit 2 (it used to find them only by trying: a failed switch, then a
// failed esxi target).
func TestNoAddressesUpFront(t *testing.T) {
	_, _, kh := upfrontFixture(t)
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(inv, inventory.ReferenceYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := rdggenEnv(t, map[string]string{"GOVC_USERNAME": "u", "GOVC_PASSWORD": "p", envSwitchPassword: "pw"},
		"apply", "--dry-run", "-f", inv, "--known-hosts", kh, "--target", "switch,esxi")
	all := stdout + stderr
	for _, w := range []string{
		"rdggen: no switch has a mgmt address: set switches[].mgmt to each switch's management address (host or host:port), or leave switch out of --target (e.g. --target esxi,hosts,workers)\n",
		"rdggen: no vCenter to connect to: set GOVC_URL (or --vcenter, or the inventory's vcenter)\n",
		"rdggen: nothing was contacted\n",
	} {
		if n := strings.Count(all, w); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", w, n, all)
		}
	}
	if code != exitUsage || strings.Contains(all, "cannot plan") {
		t.Errorf("exit %d, want %d, before any plan:\n%s", code, exitUsage, all)
	}
}

// `-o` is a directory for generating and a format elsewhere: neither is
// taken for the other.
func TestOutputFlagMeaning(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-o", "json"}, exitUsage, "rdggen: -o json: that is an output format, and generating writes files into -o DIR; for a directory of that name write -o ./json; -o json is the format of rdggen validate, apply, check and bench"},
		{[]string{"generate", "-o", "YAML"}, exitUsage, "for a directory of that name write -o ./YAML"},
		{[]string{"-o", "jsonpath={.hosts}"}, exitUsage, "that is an output format"},
		{[]string{"-o", "wide"}, exitUsage, "that is an output format"},
		{[]string{"validate", "-o", "out"}, exitUsage, `rdggen: -o "out": validate's -o is the output format: text or json; the output directory -o DIR belongs to generating (rdggen -f cluster.yaml -o DIR)`},
		{[]string{"apply", "-f", "x.yaml", "-o", "out"}, exitUsage, `rdggen: -o "out": apply's -o is the output format: text or json; the output directory`},
		{[]string{"check", "-f", "x.yaml", "-o", "yaml"}, exitUsage, `rdggen: -o "yaml": check's -o is the output format: text or json`},
		{[]string{"-o", "json", "validate"}, exitUsage, `rdggen: unexpected argument "validate": the command comes first (rdggen validate [flags])`},
		{[]string{"-o", "x", "bench"}, exitUsage, `rdggen: unexpected argument "bench": the command comes first (rdggen bench [flags])`},
		{[]string{"-o", "./json", "-q"}, exitOK, ""},
		{[]string{"generate", "-o", "out", "-q"}, exitOK, ""},
	} {
		code, _, stderr := rdggen(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("rdggen %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "json out" {
		t.Errorf("the directory holds %v, want only json (from -o ./json) and out", names)
	}
	if _, err := os.Stat(filepath.Join(dir, "json", "switch", "swx-mld-1-2.cfg")); err != nil {
		t.Errorf("-o ./json: %v", err)
	}
}

// `generate` is the default command by name; its help is its own (usage,
// what it writes, its flags), the main help lists every command.
func TestGenerateCommand(t *testing.T) {
	_, main, _ := rdggen(t, "--help")
	if !strings.Contains(main, "(generate is the default command)") || !strings.Contains(main, "rdggen apply -f cluster.yaml") {
		t.Errorf("rdggen --help:\n%s", main)
	}
	if _, help, _ := rdggen(t, "help"); help != main {
		t.Errorf("rdggen help differs from rdggen --help:\n%s", help)
	}
	for _, args := range [][]string{{"help", "generate"}, {"generate", "--help"}} {
		code, stdout, stderr := rdggen(t, args...)
		if code != exitOK || stdout == main || !strings.HasPrefix(stdout, "Usage: rdggen [generate] [-f cluster.yaml] [-o DIR]") ||
			!strings.Contains(stdout, "--output DIR") || strings.Contains(stdout, "rdggen apply -f") {
			t.Errorf("rdggen %s: exit %d, %s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	if code, _, stderr := rdggen(t, "frobnicate"); code != exitUsage || !strings.Contains(stderr, "commands: generate, the default, validate") {
		t.Errorf("unknown command: exit %d: %s", code, stderr)
	}
}

// The commands are one list: every command the help shows runs by its
// name, has its own help, is named when an unknown command is answered,
// and gets the hint when it is written after a flag.
func TestCommandsOneList(t *testing.T) {
	_, help, _ := rdggen(t, "--help")
	_, _, unknown := rdggen(t, "frobnicate")
	if len(commands()) < 10 {
		t.Fatalf("%d commands", len(commands()))
	}
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		if !strings.Contains(help, "\n  rdggen "+c.name+" ") && !strings.Contains(help, "\n  rdggen ["+c.name+"]") {
			t.Errorf("rdggen --help does not show %s:\n%s", c.name, help)
		}
		if !strings.Contains(unknown, " "+c.name+",") && !strings.Contains(unknown, " "+c.name+")") {
			t.Errorf("an unknown command is not told of %s: %s", c.name, unknown)
		}
		if code, stdout, _ := rdggen(t, c.name, "--help"); code != exitOK || !strings.HasPrefix(stdout, "Usage:") || !strings.Contains(stdout, "rdggen ") {
			t.Errorf("rdggen %s --help: exit %d\n%s", c.name, code, stdout)
		}
		want := fmt.Sprintf("rdggen: unexpected argument %q: the command comes first (rdggen %s [flags])", c.name, c.name)
		if code, _, stderr := rdggen(t, "-q", c.name); code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("rdggen -q %s: exit %d, %s", c.name, code, stderr)
		}
	}
}

// check's exit status and worker keys, as its help says: no keys in --keys
// yet is exit 1 (the workers could not tell, and nothing was contacted for
// them), keys that cannot be trusted are a usage error (2) before anything
// is contacted, as are missing credentials.
func TestCheckWorkerKeysExit(t *testing.T) {
	dir, inv, kh := upfrontFixture(t)
	trusted := filepath.Join(dir, "keys")
	k, err := horovod.GenerateWorkerKeys()
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.SaveWorkerKeys(trusted, k); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Rename(trusted, open); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	pw := map[string]string{envSSHPassword: "pw"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		keys string
		code int
		want string
	}{
		{"no keys yet", pw, filepath.Join(dir, "none"), exitInvalid,
			"workers: connect: COULD NOT TELL: no worker keys in " + filepath.Join(dir, "none") + " (--keys): the workers are checked against the cluster's keys, which rdggen apply --target workers makes"},
		{"keys anyone can replace", pw, open, exitUsage, "is writable by its group and everyone (mode 0777)"},
		{"no SSH credentials", nil, filepath.Join(dir, "none"), exitUsage, "rdggen: nothing was contacted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := rdggenEnv(t, tc.env, "check", "-f", inv, "--known-hosts", kh, "--target", "workers", "--keys", tc.keys)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
	_, help, _ := rdggen(t, "check", "--help")
	help = strings.Join(strings.Fields(help), " ")
	for _, want := range []string{"1 a check failed or could not tell (or the inventory is invalid; no worker keys in --keys yet is this too: the workers could not tell, the other targets are checked)",
		"2 usage error (also: missing credentials or known_hosts, worker keys that cannot be trusted or read; these are checked before anything is contacted)"} {
		if !strings.Contains(help, want) {
			t.Errorf("check --help lacks %q", want)
		}
	}
}
