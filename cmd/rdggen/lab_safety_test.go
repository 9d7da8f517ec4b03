package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/lab"
)

// labUp runs `rdggen lab up` as its own process (the test binary as
// rdggen), as a user in another terminal does.
func labUp(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"lab", "up"}, args...)...)
	cmd.Env = append(os.Environ(), "RDGGEN_TEST_MAIN=1")
	return cmd
}

// Several `rdggen lab up` in one directory at once, and a `lab down`
// among them: one lab per directory. Each lab up either brings the lab up
// or exits 3 saying another lab up or down holds the directory's lock,
// having started nothing; in the end one supervisor runs (the one lab.json
// names) and every other one a winner started is gone. The second round
// starts over the first round's running lab, which a winner replaces.
// After `lab down` no process of the directory remains.
func TestLabConcurrentUp(t *testing.T) {
	inv := labInventory(t, "cumulus: 5.9.1", "swp")
	dir := filepath.Join(filepath.Dir(inv), "rdg-lab")
	var all []int // every supervisor a lab up said it started
	t.Cleanup(func() {
		_, _ = lab.Down(dir)
		for _, p := range labProcesses(dir, all...) {
			t.Errorf("left running: %s", p)
		}
	})
	pidRE := regexp.MustCompile(`lab up in ` + regexp.QuoteMeta(dir) + ` \(pid (\d+)\)`)
	const busy = "another rdggen lab up or lab down is under way in " + "%s"
	round := func(t *testing.T, ups int) (pids []int) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		type result struct {
			code        int
			out, stderr string
		}
		results := make([]result, ups)
		var wg sync.WaitGroup
		for i := range ups {
			cmd := labUp(ctx, "-f", inv, "--dir", dir, "--no-hosts")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = cmd.Wait()
				results[i] = result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
			}()
		}
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatal("the lab ups did not end within 4 minutes")
		}
		losers := 0
		for i, r := range results {
			switch m := pidRE.FindStringSubmatch(r.out); {
			case r.code == exitOK && m != nil:
				pid, _ := strconv.Atoi(m[1])
				pids = append(pids, pid)
			case r.code == exitFailed && strings.Contains(r.stderr, "rdggen: lab up: "+fmt.Sprintf(busy, dir)) && r.out == "":
				losers++
			default:
				t.Errorf("lab up %d: exit %d\n%s%s", i, r.code, r.out, r.stderr)
			}
		}
		all = append(all, pids...)
		t.Logf("%d lab up(s) brought the lab up, %d lost the race for the lock", len(pids), losers)
		if len(pids) == 0 {
			t.Fatal("no lab up succeeded")
		}
		st, err := lab.ReadState(dir)
		if err != nil {
			t.Fatal(err)
		}
		var running []int
		for _, pid := range all {
			if alivePID(pid) {
				running = append(running, pid)
			}
		}
		if len(running) != 1 || running[0] != st.PID {
			t.Errorf("supervisors running: %v of %v; lab.json names %d", running, all, st.PID)
		}
		procs := labProcesses(dir, all...)
		if len(procs) != 1 || !strings.Contains(procs[0], "lab serve --dir "+dir) {
			t.Errorf("processes of the lab: %q", procs)
		}
		return pids
	}
	first := round(t, 4)
	second := round(t, 3)
	if slices.Contains(second, first[len(first)-1]) || alivePID(first[len(first)-1]) {
		t.Errorf("the first round's lab (pid %d) was not replaced: %v", first[len(first)-1], second)
	}
	// A lab down while a lab up holds the lock is refused, and changes nothing.
	lk, err := os.Open(filepath.Join(dir, lab.FileLock))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lk.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	st, _ := lab.ReadState(dir)
	code, out, errs := rdggen(t, "lab", "down", "--dir", dir)
	lk.Close()
	if code != exitFailed || !strings.Contains(errs, "rdggen: lab down: "+fmt.Sprintf(busy, dir)) || out != "" || !alivePID(st.PID) {
		t.Errorf("lab down during a lab up: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = rdggen(t, "lab", "down", "--dir", dir)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("removed process %d (rdggen lab serve)", st.PID)) {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	if procs := labProcesses(dir, all...); len(procs) != 0 {
		t.Errorf("processes outlive lab down: %q", procs)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains: %v", dir, err)
	}
}

// plantLinks puts, at each lab file name in dir, a symbolic link to victim
// (and at tmp/cache, one to victimDir), as someone who could write dir
// would.
func plantLinks(t *testing.T, dir, victim, victimDir string) {
	t.Helper()
	for _, name := range []string{lab.FileEnv, lab.FileLog, lab.FileInventory, lab.FileKnownHosts, "nvue-ca.pem", lab.FileVCenterCA, lab.FileHostsDirs} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{lab.DirTemp, lab.DirCache} {
		if err := os.Symlink(victimDir, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// victims are a file and a directory outside the lab that planted links
// point at; intact checks that nothing was written to, replaced in or
// removed from them.
func victims(t *testing.T) (file, dir string, intact func()) {
	t.Helper()
	base := t.TempDir()
	file = filepath.Join(base, "victim")
	if err := os.WriteFile(file, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(base, "victim.d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, dir, func() {
		t.Helper()
		fi, err := os.Lstat(file)
		b, _ := os.ReadFile(file)
		if err != nil || fi.Mode() != 0o644 || string(b) != "precious\n" {
			t.Errorf("the file outside the lab was changed: %v %v %q", fi.Mode(), err, b)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{"keep"}) {
			t.Errorf("the directory outside the lab holds %q, want [keep]", names)
		}
	}
}

// names lists dir's entries (with their link targets), sorted.
func names(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		n := e.Name()
		if target, err := os.Readlink(filepath.Join(dir, n)); err == nil {
			n += " -> " + target
		}
		out = append(out, n)
	}
	return out
}

// `lab up` into a directory that is not the user's own (another user's, or
// one its group or others can write) is refused before anything is written
// or started: the links planted there are not written through, and the
// directory holds what it held. (docs/lab.md promises a lab directory of
// mode 0700 and files of mode 0600.)
func TestLabRefusesDirOfOthers(t *testing.T) {
	t.Setenv("RDGGEN_TEST_MAIN", "1")
	inv := labInventory(t, "cumulus: 5.9.1", "swp")
	cases := []struct {
		name  string
		spoil func(dir string) error
		want  string
	}{
		{"writable by others", func(dir string) error { return os.Chmod(dir, 0o777) }, " is writable by its group or others (mode 0777)"},
		{"writable by its group", func(dir string) error { return os.Chmod(dir, 0o770) }, " is writable by its group or others (mode 0770)"},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name  string
			spoil func(dir string) error
			want  string
		}{"another user's, mode 0777", func(dir string) error {
			if err := os.Chmod(dir, 0o777); err != nil {
				return err
			}
			return os.Chown(dir, 65534, 65534)
		}, " belongs to uid 65534, not to the user running rdggen (uid 0)"})
	} else if os.Getenv("CI") == "true" {
		t.Error("CI: the case of another user's directory needs root (chown)")
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			victim, victimDir, intact := victims(t)
			dir := filepath.Join(t.TempDir(), "rdg-lab")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			plantLinks(t, dir, victim, victimDir)
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _, _ = lab.Down(dir) })
			was := names(dir)
			code, out, errs := rdggen(t, "lab", "up", "-f", inv, "--dir", dir, "--no-hosts")
			if code != exitFailed || !strings.Contains(errs, "rdggen: lab up: lab directory "+dir+tc.want) {
				t.Errorf("lab up: exit %d\n%s%s", code, out, errs)
			}
			intact()
			if got := names(dir); !slices.Equal(got, was) {
				t.Errorf("the directory held %q, now %q", was, got)
			}
			if procs := labProcesses(dir); len(procs) != 0 {
				t.Errorf("started: %q", procs)
			}
			// lab down does not take it for a lab either.
			code, out, errs = rdggen(t, "lab", "down", "--dir", dir)
			if code != exitFailed || !strings.Contains(errs, "lab directory "+dir+tc.want) {
				t.Errorf("lab down: exit %d\n%s%s", code, out, errs)
			}
			intact()
			if got := names(dir); !slices.Equal(got, was) {
				t.Errorf("lab down: the directory held %q, now %q", was, got)
			}
		})
	}
}

// In a directory of the user's own, `lab up` writes no file through a link
// found there. In a directory that is not a lab's (no lab.lock), a file or
// link with a lab file's name is refused, left as it is; in a lab's
// directory (one a killed lab up left: lab.lock) whatever it finds at the
// lab's names is removed, never followed, and each file is created anew
// (mode 0600); lab down then removes the lab's files and nothing outside.
func TestLabPlantedLinks(t *testing.T) {
	t.Setenv("RDGGEN_TEST_MAIN", "1")
	inv := labInventory(t, "cumulus: 5.9.1", "swp")

	victim, victimDir, intact := victims(t)
	dir := filepath.Join(t.TempDir(), "mine")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, lab.FileEnv)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	was := names(dir)
	t.Cleanup(func() { _, _ = lab.Down(dir) })
	code, out, errs := rdggen(t, "lab", "up", "-f", inv, "--dir", dir, "--no-hosts")
	if code != exitFailed || !strings.Contains(errs, "rdggen: lab up: "+dir+" holds env, a lab file's name, and no lab ran there (no lab.lock)") {
		t.Errorf("lab up into a directory with an env of its own: exit %d\n%s%s", code, out, errs)
	}
	intact()
	if got := names(dir); !slices.Equal(got, was) {
		t.Errorf("the directory held %q, now %q", was, got)
	}

	dir = filepath.Join(t.TempDir(), "rdg-lab")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, lab.FileLock), nil, 0o600); err != nil { // a lab up killed before it started anything
		t.Fatal(err)
	}
	plantLinks(t, dir, victim, victimDir)
	t.Cleanup(func() { _, _ = lab.Down(dir) })
	code, out, errs = rdggen(t, "lab", "up", "-f", inv, "--dir", dir, "--no-hosts")
	if code != exitOK {
		t.Fatalf("lab up over planted links: exit %d\n%s%s", code, out, errs)
	}
	intact()
	st, err := lab.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{lab.FileEnv, lab.FileLog, lab.FileInventory, lab.FileKnownHosts, "nvue-ca.pem", lab.FileVCenterCA, lab.FilePID, lab.FileState} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want a regular file of mode 0600", name, fi.Mode(), err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, lab.DirTemp)); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want a directory of mode 0700", lab.DirTemp, fi.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, lab.FileEnv)); !bytes.Contains(b, []byte("export "+envNVUEPassword+"=")) {
		t.Errorf("env:\n%s", b)
	}
	code, out, errs = rdggen(t, "lab", "down", "--dir", dir)
	if code != exitOK {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	intact()
	if alivePID(st.PID) {
		t.Errorf("the supervisor %d runs on", st.PID)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains (%q): %v", dir, names(dir), err)
	}
}
