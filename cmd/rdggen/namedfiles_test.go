package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/readiness"
)

// rdggenProcess runs this test binary as rdggen (TestMain) with exactly
// env and stdin, bounded by a context of 30 s: a run that waits longer is
// killed and fails the test rather than blocking it. It returns the exit
// status, stdout and stderr.
func rdggenProcess(t *testing.T, env []string, stdin *os.File, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append([]string{"RDGGEN_TEST_MAIN=1", "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = stdin
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("rdggen %s still ran after 30 s (killed)\n%s", strings.Join(args, " "), stderr.String())
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// A named pipe (that no one writes) at each file apply, check, run and
// lab up read that the user names, by a flag or a variable (the lab's env
// file sets the variables), is refused at once before anything is
// contacted: exit 2, one line naming the flag or variable and saying it is
// a named pipe. Before, each of these hung the command in open(2), deaf to
// SIGTERM: known_hosts and the identity in the prerequisites (known_hosts
// only when the switch's SSH dial read it), --nvue-ca in the flag check,
// $RDGGEN_NVUE_CA per Cumulus switch, $GOVC_TLS_CA_CERTS in the login, and
// lab up's -f in its supervisor.
func TestNamedFIFOsRefused(t *testing.T) {
	dir := t.TempDir()
	inv := mixedInventory(t, dir)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	creds := []string{"HOME=" + dir, "SSH_AUTH_SOCK=", "RDGGEN_SWITCH_PASSWORD=pw", "RDGGEN_NVUE_PASSWORD=pw",
		"RDGGEN_SSH_PASSWORD=pw", "GOVC_USERNAME=u", "GOVC_PASSWORD=pw"}
	pipe := fifo + " is not a regular file (a named pipe)"
	khAdvice := "): host keys are always verified against a known_hosts file: point --known-hosts at yours\n"
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"--known-hosts", nil, []string{"apply", "--dry-run", "--target", "switch", "--known-hosts", fifo},
			"rdggen: --known-hosts: cannot read known_hosts " + fifo + " (" + pipe + khAdvice},
		{"$RDGGEN_KNOWN_HOSTS", []string{"RDGGEN_KNOWN_HOSTS=" + fifo}, []string{"check", "--target", "switch"},
			"rdggen: $RDGGEN_KNOWN_HOSTS: cannot read known_hosts " + fifo + " (" + pipe + khAdvice},
		{"--identity", nil, []string{"apply", "--dry-run", "--target", "switch", "--known-hosts", kh, "--identity", fifo},
			"rdggen: --identity: " + pipe + "\n"},
		{"--identity of run", nil, []string{"run", "--known-hosts", kh, "--identity", fifo},
			"rdggen: --identity: " + pipe + "\n"},
		{"--nvue-ca", nil, []string{"apply", "--dry-run", "--target", "switch", "--known-hosts", kh, "--nvue-ca", fifo},
			"rdggen: --nvue-ca: CA file: " + pipe + "\n"}, // a flag's problem: said before the inventory is read
		{"$RDGGEN_NVUE_CA", []string{"RDGGEN_NVUE_CA=" + fifo}, []string{"apply", "--dry-run", "--target", "switch", "--known-hosts", kh},
			"rdggen: $RDGGEN_NVUE_CA: CA file: " + pipe + "\n"},
		{"$GOVC_TLS_CA_CERTS", []string{"GOVC_TLS_CA_CERTS=" + fifo}, []string{"check", "--target", "esxi"},
			"rdggen: $GOVC_TLS_CA_CERTS: " + pipe + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string(nil), c.args...), "-f", inv)
			code, stdout, stderr := rdggenProcess(t, append(append([]string(nil), creds...), c.env...), nil, args...)
			prereq := !strings.HasPrefix(c.want, "rdggen: --nvue-ca") // the others are found with the prerequisites
			if code != exitUsage || !strings.Contains(stderr, c.want) || strings.HasSuffix(stderr, "rdggen: nothing was contacted\n") != prereq {
				t.Errorf("exit %d, want %d and %q\nstdout %s\nstderr %s", code, exitUsage, c.want, stdout, stderr)
			}
		})
	}
	t.Run("lab up -f", func(t *testing.T) {
		code, _, stderr := rdggenProcess(t, creds, nil, "lab", "up", "-f", fifo, "--dir", filepath.Join(dir, "lab"))
		if want := "rdggen: -f: " + pipe + ": lab up reads the inventory twice (here, and in its supervisor), so it must be a regular file; save it to one\n"; code != exitUsage || stderr != want {
			t.Errorf("exit %d, stderr %q, want %q", code, stderr, want)
		}
		if _, err := os.Lstat(filepath.Join(dir, "lab")); !os.IsNotExist(err) {
			t.Errorf("the lab directory was made: %v", err)
		}
	})
}

// The inventory may come through a pipe (-f /dev/stdin, <(cmd), a named
// pipe whose writer comes later): it is read as it comes. A device is no
// inventory: refused at once, naming -f.
func TestInventoryFromAPipe(t *testing.T) {
	dir := t.TempDir()
	inv := mixedInventory(t, dir)
	src, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	// /dev/stdin on a pipe
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(src); w.Close() }()
	code, stdout, stderr := rdggenProcess(t, nil, r, "validate", "-f", "/dev/stdin")
	r.Close()
	if code != exitOK || !strings.Contains(stdout, "/dev/stdin: valid") {
		t.Errorf("-f /dev/stdin on a pipe: exit %d\n%s%s", code, stdout, stderr)
	}
	// a named pipe written after rdggen opened it
	fifo := filepath.Join(dir, "inventory.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write(src)
			w.Close()
		}
	}()
	code, stdout, stderr = rdggenProcess(t, nil, nil, "validate", "-f", fifo)
	if code != exitOK || !strings.Contains(stdout, fifo+": valid") {
		t.Errorf("-f a FIFO written later: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = rdggenProcess(t, nil, nil, "validate", "-f", "/dev/null")
	if want := "rdggen: -f: /dev/null is not a regular file or a pipe (a device)\n"; code != exitUsage || stderr != want {
		t.Errorf("-f /dev/null: exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// bench --judge FILE and --evidence FILE take a pipe as -f does (a FIFO
// written after rdggen opened it is judged as it comes), refuse a device at
// once naming the flag or file, and a FIFO no one writes does not hold
// bench past SIGTERM. Before, both were a plain open(2): /dev/zero was read
// up to the bound, and an unwritten FIFO hung bench in open, deaf to
// SIGTERM.
func TestBenchJudgeFromPipes(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(fixtureDir + "perftest-deepops-roce-gbits.txt")
	if err != nil {
		t.Fatal(err)
	}
	ev, err := json.Marshal(readiness.Document{Schema: readiness.SchemaCheck})
	if err != nil {
		t.Fatal(err)
	}
	later := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
				w.Write(b)
				w.Close()
			}
		}()
		return p
	}
	judge, evidence := later("judge.fifo", src), later("evidence.fifo", ev)
	code, stdout, stderr := rdggenProcess(t, nil, nil, "bench", "--judge", "--evidence", evidence, judge)
	if code != exitOK || !strings.Contains(stdout, "judge.fifo: perftest report") ||
		!strings.Contains(stderr, "1 file(s) at 100 Gb/s × 1 NIC(s) per node: 2 verdict(s): 2 passed") {
		t.Errorf("FIFOs written later: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = rdggenProcess(t, nil, nil, "bench", "--judge", "/dev/zero")
	if want := "rdggen: bench: /dev/zero is not a regular file or a pipe (a device)\n"; code != exitUsage || stderr != want {
		t.Errorf("--judge /dev/zero: exit %d, stderr %q, want %q", code, stderr, want)
	}
	code, _, stderr = rdggenProcess(t, nil, nil, "bench", "--judge", "--evidence", "/dev/zero", fixtureDir+"perftest-deepops-roce-gbits.txt")
	if want := "rdggen: --evidence /dev/zero: /dev/zero is not a regular file or a pipe (a device)\n"; code != exitUsage || stderr != want {
		t.Errorf("--evidence /dev/zero: exit %d, stderr %q, want %q", code, stderr, want)
	}
	// A FIFO no one writes: SIGTERM ends bench.
	silent := filepath.Join(dir, "silent.fifo")
	if err := syscall.Mkfifo(silent, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "bench", "--judge", silent)
	cmd.Env = []string{"RDGGEN_TEST_MAIN=1", "PATH=" + os.Getenv("PATH")}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if cmd.ProcessState.ExitCode() == exitOK {
			t.Errorf("bench ended with 0 on SIGTERM\n%s", errb.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("bench still waited for the FIFO 10 s after SIGTERM (killed)\n%s", errb.String())
	}
}
