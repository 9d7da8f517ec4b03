package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The lab tests' "nothing left behind" looks only at this test's lab: a
// `lab serve` of another directory (another test's or person's lab on this
// machine) that starts before and ends meanwhile is not taken for a leftover,
// and one of this lab's directory is.
func TestLabProcessesOnlyOwn(t *testing.T) {
	mine := filepath.Join(t.TempDir(), "rdg-lab")
	other := filepath.Join(t.TempDir(), "rdg-lab")
	// A stand-in for another lab's supervisor: its command line names
	// `lab serve --dir OTHER` (sh runs the script, and keeps its arguments).
	decoy := func(dir string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", "sleep 60; :", "sh", "lab", "serve", "--dir", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		// Until sh's child has become sleep, it is a second sh (and before
		// sh forks it, there is one process too): wait for the sleep.
		pid := cmd.Process.Pid
		asleep := func() bool {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
			for _, c := range strings.Fields(string(b)) {
				if cl, _ := os.ReadFile("/proc/" + c + "/cmdline"); string(cl) == "sleep\x0060\x00" {
					return true
				}
			}
			return false
		}
		for deadline := time.Now().Add(10 * time.Second); !(asleep() && len(labProcesses(dir)) == 1) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		return cmd
	}
	stop := func(cmd *exec.Cmd) { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	theirs := decoy(other)
	if procs := labProcesses(other); len(procs) != 1 || !strings.Contains(procs[0], "lab serve --dir "+other) {
		t.Fatalf("the other lab's processes: %q", procs)
	}
	before := machineState(t, mine)
	stop(theirs)
	if diff := cmp.Diff(before, machineState(t, mine)); diff != "" {
		t.Errorf("another lab's supervisor ending is taken for this lab's leftover (-before +after):\n%s", diff)
	}
	own := decoy(mine)
	if procs := labProcesses(mine); len(procs) != 1 {
		t.Errorf("this lab's supervisor is not seen: %q", procs)
	}
	stop(own)
	// What a supervisor started is seen by its session, without naming
	// the directory.
	lead := exec.Command("sh", "-c", "sleep 60; :")
	lead.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := lead.Start(); err != nil {
		t.Fatal(err)
	}
	defer stop(lead)
	// (Until sh's child has become sleep, it is a second sh.)
	want := []string{"sh -c sleep 60; :", "sleep 60"}
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(labProcesses(mine, lead.Process.Pid), want) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if procs := labProcesses(mine, lead.Process.Pid); !slices.Equal(procs, want) {
		t.Errorf("the session's processes: %q", procs)
	}
	if procs := labProcesses(mine); len(procs) != 0 {
		t.Errorf("a stopped supervisor is still listed: %q", procs)
	}
}
