package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// TestLabInterrupted sends SIGINT (Ctrl-C) to `rdggen lab up` of the golden
// ONYX fabric (testdata/golden/fabric-onyx) while it waits for its
// supervisor (as root: once the supervisor builds its namespace hosts). lab
// up stops: it exits 3 saying it was interrupted and what it removed, its
// supervisor is gone, and nothing of the lab is left: no process, namespace,
// interface, route or iptables rule, no hosts' directory, and in the lab
// directory (there before, with a file of the user's) only that file.
func TestLabInterrupted(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		netnstest.Require(t)
		netnstest.RequireDocker(t)
	}
	_, labDir := labGolden(t, "fabric-onyx")
	tmp := filepath.Dir(labDir)
	if err := os.Mkdir(labDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(labDir, "notes.txt"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := machineBefore(t, labDir)
	// As a user in a shell in tmp: lab up with the default --dir.
	cmd := exec.Command(os.Args[0], "lab", "up", "-f", "cluster.yaml")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "RDGGEN_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	var pid int
	for deadline := time.Now().Add(60 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(labDir, lab.FilePID))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatalf("lab up recorded no supervisor\n%s%s", stdout.String(), stderr.String())
	}
	slot := 0
	if os.Geteuid() == 0 {
		for deadline := time.Now().Add(60 * time.Second); slot == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if s := netnstest.SlotsOf(pid); len(s) > 0 {
				slot = s[0]
			}
		}
		if slot == 0 {
			t.Fatal("the supervisor took no netnstest slot: it builds no namespace hosts")
		}
	}
	if _, err := os.Stat(filepath.Join(labDir, lab.FileState)); err == nil {
		t.Fatal("the lab was ready before SIGINT: the test proves nothing")
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Generous: the supervisor finishes the stage under way (a namespace
	// host's dockerd, the worker image's import) before it tears down.
	select {
	case <-exited:
	case <-time.After(90 * time.Second):
		t.Fatalf("lab up still runs 90 s after SIGINT\n%s%s", stdout.String(), stderr.String())
	}
	t.Logf("lab up exited %.1f s after SIGINT (the supervisor held netnstest slot %d):\n%s%s", time.Since(sent).Seconds(), slot, stdout.String(), stderr.String())
	out, errs := stdout.String(), stderr.String()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || strings.Contains(out, "lab up in ") ||
		!strings.Contains(errs, "rdggen: interrupted: lab up stopped before the lab was ready; what it had started and made is removed (above), nothing of the lab runs") ||
		!strings.Contains(out, fmt.Sprintf("removed process %d (rdggen lab serve)\n", pid)) {
		t.Fatalf("lab up after SIGINT: exit %d\n%s%s", code, out, errs)
	}
	if alivePID(pid) {
		t.Errorf("the supervisor %d still runs", pid)
	}
	if got := names(labDir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("the lab directory holds %q, want only what was there before [notes.txt]", got)
	}
	for _, m := range regexp.MustCompile(`(?m)^removed directory (/tmp/rdglab\S+) `).FindAllStringSubmatch(out, -1) {
		if _, err := os.Lstat(m[1]); !os.IsNotExist(err) {
			t.Errorf("%s remains: %v", m[1], err)
		}
	}
	if diff := cmp.Diff(before, filterSlot(machineRaw(t, labDir, pid), slot)); diff != "" && !slotRetaken(t, slot) {
		t.Errorf("left behind (-before +after):\n%s", diff)
	}
}

// A lab directory below a directory another user owns and anyone can
// write (nobody's, mode 0777) is refused by lab up before anything is
// made or started, the message naming that directory, its owner and mode,
// and the rule. A lab made while that directory was safe, whose directory
// the other user then swaps for their own (mv, mkdir, a vcenter-ca.pem of
// theirs), is not removed through the swapped path by lab down: lab down
// stops its supervisor (found by its command line, the user's own),
// touches neither directory, exits 3 and says where the lab's files went.
func TestLabRefusesOpenParent(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Error("CI: a directory of another user needs root (chown)")
		}
		t.Skip("needs root: a directory of another user (chown)")
	}
	t.Setenv("RDGGEN_TEST_MAIN", "1") // the supervisor is this test binary, as rdggen
	inv := labInventory(t, "cumulus: 5.9.1", "swp")
	// Below /tmp, as the other tests' directories, but reachable by nobody
	// (t.TempDir's parent is mode 0700).
	base, err := os.MkdirTemp("", "rdglab-parent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(base, "ww")
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	open := func() {
		t.Helper()
		if err := os.Chown(parent, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(parent, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	closed := func() {
		t.Helper()
		if err := os.Chown(parent, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(parent, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(parent, "sub")
	open()
	code, out, errs := rdggen(t, "lab", "up", "-f", inv, "--dir", dir, "--no-hosts")
	if code != exitFailed || out != "" ||
		!strings.Contains(errs, "rdggen: lab up: lab directory "+dir+" refused: "+parent+", above "+dir+", belongs to uid 65534 (mode 0777), neither root nor the user running rdggen (uid 0): ") ||
		!strings.Contains(errs, "unless sticky like /tmp (OpenSSH's rule for ~/.ssh and the directories above it)") {
		t.Errorf("lab up below nobody's open directory: exit %d\n%s%s", code, out, errs)
	}
	if got := names(parent); len(got) != 0 {
		t.Errorf("lab up made %q in %s", got, parent)
	}
	if procs := labProcesses(dir); len(procs) != 0 {
		t.Errorf("started: %q", procs)
	}

	// A lab made while parent was root's (as an rdggen before this rule
	// made one below an open one); then parent opens and nobody swaps.
	closed()
	moved := filepath.Join(parent, "sub.root")
	t.Cleanup(func() { closed(); _, _ = lab.Down(dir); _, _ = lab.Down(moved) })
	if code, out, errs := rdggen(t, "lab", "up", "-f", inv, "--dir", dir, "--no-hosts"); code != exitOK {
		t.Fatalf("lab up below a safe directory: exit %d\n%s%s", code, out, errs)
	}
	st, err := lab.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if alivePID(st.PID) {
			_ = syscall.Kill(-st.PID, syscall.SIGKILL)
		}
	})
	open()
	swap := exec.Command("sh", "-c", "mv sub sub.root && mkdir sub && echo attacker > sub/vcenter-ca.pem")
	swap.Dir = parent
	swap.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if b, err := swap.CombinedOutput(); err != nil {
		t.Fatalf("the swap as nobody: %v\n%s", err, b)
	}
	labFiles := names(moved)
	code, out, errs = rdggen(t, "lab", "down", "--dir", dir)
	if code != exitFailed ||
		!strings.Contains(out, fmt.Sprintf("removed process %d (rdggen lab serve --dir %s, found by its command line", st.PID, dir)) ||
		!strings.Contains(errs, "rdggen: lab down: lab directory "+dir+" belongs to uid 65534") ||
		!strings.Contains(errs, "the lab's supervisor was stopped all the same, but no file was removed: its directory was "+moved+" when it stopped") {
		t.Errorf("lab down of the swapped directory: exit %d\n%s%s", code, out, errs)
	}
	if alivePID(st.PID) {
		t.Errorf("the supervisor %d still runs", st.PID)
	}
	if procs := labProcesses(dir, st.PID); len(procs) != 0 {
		t.Errorf("processes of the lab remain: %q", procs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, lab.FileVCenterCA)); err != nil || string(b) != "attacker\n" || !slices.Equal(names(dir), []string{lab.FileVCenterCA}) {
		t.Errorf("the other user's directory was changed: %q, %q, %v", names(dir), b, err)
	}
	if got := names(moved); !slices.Equal(got, labFiles) {
		t.Errorf("the moved lab directory held %q, now %q", labFiles, got)
	}
}
