package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/internal/ownfs"
	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Rewrite points vcenter and the switches' mgmt at the stand-ins, adds
// the keys where the user left them out, keeps every comment, and the
// result loads with the new addresses.
func TestRewrite(t *testing.T) {
	src := []byte(`# my cluster
name: c1
switches:
  - {name: leaf1, model: SN2700, onyx: 3.6.8190}   # rack 1
  - name: leaf2
    model: SN3700
    cumulus: 5.9.1
    mgmt: 10.0.0.2  # the real one
vcenter: https://vc.example/sdk  # production!
docker: {version: "20.10", pool: 172.16.0.0/16, prefix: 24}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus: [{model: A100-PCIE-40GB, memory_gb: 40}]
  nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 8}
hosts:
  - {name: h1, esxi: e1, data: {address: 10.10.0.1/24, switch: leaf1, port: 1/1}}
  - {name: h2, esxi: e2, data: {address: 10.10.0.2/24, switch: leaf2, port: swp1}}
`)
	out, err := Rewrite(src, "https://127.0.0.1:4443/sdk", map[string]string{"leaf1": "127.0.0.1:2201", "leaf2": "127.0.0.1:8765"}, "cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# my cluster", "# rack 1", "# rdggen lab: cluster.yaml with every management address pointing at its stand-in"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "vc.example") || strings.Contains(s, "10.0.0.2") {
		t.Errorf("a production address remains:\n%s", s)
	}
	inv, err := inventory.Load("lab.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	if inv.VCenter != "https://127.0.0.1:4443/sdk" || inv.Switches[0].Mgmt != "127.0.0.1:2201" || inv.Switches[1].Mgmt != "127.0.0.1:8765" {
		t.Errorf("vcenter %q, mgmt %q %q", inv.VCenter, inv.Switches[0].Mgmt, inv.Switches[1].Mgmt)
	}
	if _, err := Rewrite([]byte("- a list\n"), "u", nil, "x.yaml"); err == nil {
		t.Error("a YAML list was rewritten")
	}
}

// Down never signals a PID that is not this lab's supervisor (a recycled
// PID, another program), and a directory without a lab is left alone.
func TestDownForeignPID(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FilePID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if isSupervisor(os.Getpid(), dir) {
		t.Fatal("the test process taken for a supervisor")
	}
	gone, err := Down(dir) // would kill this test if it signalled the PID
	if err != nil || len(gone) != 2 || gone[0] != "file "+filepath.Join(dir, FilePID) {
		t.Fatalf("%q, %v", gone, err)
	}
	if gone, err := Down(filepath.Join(dir, "none")); err != nil || len(gone) != 0 {
		t.Errorf("no lab: %q, %v", gone, err)
	}
	if _, err := Fault(dir, []string{"hide-gpu", "vm1"}); err == nil || !strings.Contains(err.Error(), "start one with rdggen lab up") {
		t.Errorf("fault without a lab: %v", err)
	}
	if _, err := Fault(dir, []string{"hide-gpu", "a\nstop"}); err == nil {
		t.Error("a line break went to the control socket")
	}
}

// Down removes files only from a lab's directory (its lock or PID file):
// in another directory, files that happen to have a lab file's name (an
// env, a known_hosts) are not the lab's and stay.
func TestDownOnlyALabsDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{FileEnv, FileKnownHosts, FileInventory} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gone, err := Down(dir)
	if err != nil || len(gone) != 0 {
		t.Errorf("%q, %v", gone, err)
	}
	for _, f := range []string{FileEnv, FileKnownHosts, FileInventory} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "mine\n" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
}

// The lock admits one holder: a second lock of the directory fails at
// once with ErrBusy, and succeeds once the first is released; a lock file
// that is a symbolic link is refused (nothing is created where it points).
func TestLock(t *testing.T) {
	dir := t.TempDir()
	a, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(dir); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "one lab per directory") {
		t.Errorf("second lock: %v", err)
	}
	a.Close()
	b, err := lock(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	b.Close()
	other := t.TempDir()
	if err := os.Symlink(filepath.Join(other, "x"), filepath.Join(other, FileLock)); err != nil {
		t.Fatal(err)
	}
	if _, err := lock(other); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("a link as the lock: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(other, "x")); !os.IsNotExist(err) {
		t.Errorf("created through the link: %v", err)
	}
}

// A named pipe at lab.pid, lab.json or hosts.dirs (nothing a lab writes)
// holds neither lab status nor lab down: each is read without waiting
// (userfile.Read), taken for absent, and removed like the lab's files.
func TestReadsWaitOnNoPipe(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{FilePID, FileState, FileHostsDirs} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		st   *Status
		gone []string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		st, err := ReadStatus(dir)
		if err != nil {
			done <- result{err: err}
			return
		}
		gone, err := Down(dir)
		done <- result{st, gone, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.st.PID != 0 || r.st.State != nil || len(r.gone) != 4 {
			t.Errorf("status %+v, down %q, %v", r.st, r.gone, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lab status or lab down waits on a named pipe")
	}
}

// lab status lists every name of the lab that the directory holds, its
// directories and its lock included, in the order lab down removes them.
func TestReadStatusFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{FileInventory, FileLog, FileLock} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{DirConfig, DirCache, DirTemp} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	st, err := ReadStatus(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"lab.yaml", "serve.log", "config", "cache", "tmp", "lab.lock"}
	if !slices.Equal(st.Files, want) {
		t.Errorf("files %q, want %q", st.Files, want)
	}
}

// A harness that stops a build (Fatal, as netnstest.Require does when a
// prerequisite is missing) ends it through hostsTB.stopped: what the build
// registered is torn down, the whole message goes to the log under the
// part's name, and the reason lab up prints is its first line without the
// CI and harness prefixes. Another panic is not swallowed.
func TestHostsTBStopped(t *testing.T) {
	var log strings.Builder
	tb := &hostsTB{dir: t.TempDir(), log: &log}
	tornDown := false
	build := func() (reason string) {
		defer tb.stopped("namespace hosts", "netnstest: ", func(why string) { reason = why })
		tb.Cleanup(func() { tornDown = true })
		tb.Fatal("CI=true, but netnstest: no sshd (install openssh-server)\nsecond line")
		return "not stopped"
	}
	if got, want := build(), "no sshd (install openssh-server) (the rest in serve.log)"; got != want {
		t.Errorf("reason %q, want %q", got, want)
	}
	if !tornDown {
		t.Error("the build's cleanup did not run")
	}
	if want := "namespace hosts: CI=true, but netnstest: no sshd (install openssh-server)\nsecond line\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	defer func() {
		if r := recover(); r != "a bug" {
			t.Errorf("recovered %v, want the other panic to go on", r)
		}
	}()
	func() {
		defer tb.stopped("fabric", "fabricnet: ", func(string) { t.Error("a panic that is no tbStop gave a reason") })
		panic("a bug")
	}()
}

// stop-bgp says what starts bgpd again in the lab, the repair fault with
// the lab's directory quoted for the shell, and that check's fix is a real
// switch's; it no longer says bgpd stays stopped until lab down, which
// repair disproves.
func TestStopBGPMessage(t *testing.T) {
	got := stopBGPMessage("leaf2", "/tmp/my lab")
	want := "leaf2: bgpd stopped (FRR's BGP daemon, as a crash would stop it); check's fix names a real switch's way to start it, " +
		"which the lab's simulated switch does not take: here `rdggen lab fault repair --dir '/tmp/my lab'` starts it again"
	if got != want {
		t.Errorf("stop-bgp says:\n %s\nwant\n %s", got, want)
	}
}

// fakeSupervisor is an executable that stands in for `rdggen lab serve`:
// a shell script that never becomes ready, so Up waits on it; its command
// line names `lab serve --dir DIR` as the real one's does, and it starts a
// child (sleep) in its session, as the real one starts daemons.
func fakeSupervisor(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rdggen")
	if err := exefile.Write(p, []byte("#!/bin/sh\nsleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Up whose context ends while it waits for the supervisor stops it (its
// whole process group), removes what it made (the files; the directory
// and the directories above it that it made) and says so in an
// *Interrupted; a directory that was there before stays, with what it
// held. A context ended before Up starts makes nothing.
func TestUpInterrupted(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(inv, []byte("name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := fakeSupervisor(t)
	base := t.TempDir()
	kept := filepath.Join(base, "kept")
	if err := os.Mkdir(kept, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kept, "notes.txt"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		left      []string // what the directory holds after (nil: gone)
	}{
		{"made", filepath.Join(base, "new", "deeper", "rdg-lab"), nil},
		{"there before", kept, []string{"notes.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				st  *State
				err error
			}
			done := make(chan result, 1)
			go func() {
				st, err := Up(ctx, UpOptions{Inventory: inv, Dir: tc.dir, Exe: exe, Timeout: 5 * time.Minute})
				done <- result{st, err}
			}()
			pid := 0
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !(pid > 0 && isSupervisor(pid, tc.dir)); time.Sleep(5 * time.Millisecond) {
				pid = readPID(tc.dir)
			}
			if !isSupervisor(pid, tc.dir) {
				t.Fatalf("no supervisor started (pid %d)", pid)
			}
			// Its child (sleep) shares the supervisor's session.
			var child int
			for deadline := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
				if f := strings.Fields(string(b)); len(f) > 0 {
					child, _ = strconv.Atoi(f[0])
				}
			}
			cancel()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatal("Up did not return after its context ended")
			}
			var ie *Interrupted
			if r.st != nil || !errors.As(r.err, &ie) || !errors.Is(r.err, context.Canceled) || ie.Err != nil {
				t.Fatalf("Up: %+v, %v", r.st, r.err)
			}
			if len(ie.Removed) == 0 || ie.Removed[0] != fmt.Sprintf("process %d (rdggen lab serve)", pid) {
				t.Errorf("removed %q", ie.Removed)
			}
			if alive(pid) || (child > 0 && alive(child)) {
				t.Errorf("still running: supervisor %d (%v), its child %d (%v)", pid, alive(pid), child, child > 0 && alive(child))
			}
			entries, err := os.ReadDir(tc.dir)
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			if tc.left == nil {
				if !os.IsNotExist(err) {
					t.Errorf("%s remains: %q, %v", tc.dir, left, err)
				}
				if _, err := os.Lstat(filepath.Join(base, "new")); !os.IsNotExist(err) {
					t.Errorf("the directories Up made above it remain: %v", err)
				}
				if !slices.Contains(ie.Removed, "directory "+filepath.Join(base, "new")) {
					t.Errorf("removed %q: lacks %s", ie.Removed, filepath.Join(base, "new"))
				}
			} else if !slices.Equal(left, tc.left) {
				t.Errorf("%s holds %q, want %q", tc.dir, left, tc.left)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(base, "never")
	if _, err := Up(ctx, UpOptions{Inventory: inv, Dir: dir, Exe: exe}); !errors.Is(err, context.Canceled) {
		t.Errorf("Up with an ended context: %v", err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("Up with an ended context made %s: %v", dir, err)
	}
}

// Up refuses, before it makes or starts anything, a directory below one
// that another user owns or that its group or others can write without
// the sticky bit (ownfs.CheckAncestors), naming that directory, its owner
// and mode, and the rule; below a sticky one (as /tmp) it goes on.
func TestUpRefusesOpenParent(t *testing.T) {
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(inv, []byte("name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	parent := filepath.Join(t.TempDir(), "ww")
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o777); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("is writable by its group or others and not sticky (mode 0777, owner uid %d)", os.Geteuid())
	if os.Geteuid() == 0 {
		if err := os.Chown(parent, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		want = "belongs to uid 65534 (mode 0777), neither root nor the user running rdggen (uid 0)"
	} else if os.Getenv("CI") == "true" {
		t.Error("CI: a parent of another user needs root (chown)")
	}
	dir := filepath.Join(parent, "sub", "rdg-lab")
	_, err := Up(context.Background(), UpOptions{Inventory: inv, Dir: dir, Exe: "/nonexistent"})
	if err == nil || !strings.Contains(err.Error(), "lab directory "+dir+" refused: "+parent+", above "+dir+", "+want) ||
		!strings.Contains(err.Error(), ownfs.AncestorRule) {
		t.Errorf("Up: %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("made %v in %s", entries, parent)
	}
	if gone, err := Down(dir); len(gone) != 0 || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Down: %q, %v", gone, err)
	}
}
