package netnstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A slot whose owner died without its cleanup (go test's -timeout kills
// the process) is cleared by the next run that takes any slot: its
// namespaces deleted and the daemons in them ended, not left running until
// its own number is taken again.
func TestStaleSlotCleared(t *testing.T) {
	Require(t)
	const s = 250
	ns := "rdg" + strconv.Itoa(s) + "h1"
	pidFile := recordSlot(t, s, deadPID(t))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	daemon := exec.Command("ip", "netns", "exec", ns, "sleep", "300")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { _ = daemon.Wait(); close(ended) }()
	t.Cleanup(func() { _ = daemon.Process.Kill() })

	if got := TakeSlot(t); got == s {
		t.Fatalf("took the stale slot %d itself; want another, with %d cleared on the way", got, s)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Errorf("the process in the stale slot's namespace %s still runs", ns)
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == ns {
			t.Errorf("the stale slot's namespace %s remains", ns)
		}
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the stale slot's pid file remains: %v", err)
	}
}

// RemoveSlotsOf clears the slots whose record names the dead process, and
// decides under the slot lock: a slot that another process takes while
// RemoveSlotsOf waits for the lock (takeSlot hands out a dead owner's slot
// again) names that process by then and is left alone, its files with it.
// A live process's slots are refused.
func TestRemoveSlotsOfTakenMeanwhile(t *testing.T) {
	Require(t)
	const s = 249
	dead := deadPID(t)
	pidFile := recordSlot(t, s, dead)
	record := func(pid int) { t.Helper(); recordSlot(t, s, pid) }
	t.Cleanup(func() { _ = os.Remove(pidFile) })
	var also []int
	collect := func(slot int) { also = append(also, slot) }

	// Another process holds the lock (as takeSlot does) and takes the
	// slot, now recorded as its own, before it lets go.
	lock, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	record(dead)
	type result struct {
		slots []int
		err   error
	}
	done := make(chan result, 1)
	go func() {
		slots, err := RemoveSlotsOf(dead, collect)
		done <- result{slots, err}
	}()
	time.Sleep(200 * time.Millisecond)
	record(os.Getpid())
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil || len(r.slots) != 0 || len(also) != 0 {
		t.Errorf("slot %d taken meanwhile: cleared %v (also %v), %v; want none", s, r.slots, also, r.err)
	}
	if b, _ := os.ReadFile(pidFile); string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("the record of the slot taken meanwhile is %q", b)
	}

	record(dead)
	if slots, err := RemoveSlotsOf(dead, collect); err != nil || len(slots) != 1 || slots[0] != s || len(also) != 1 || also[0] != s {
		t.Errorf("dead owner's slot: cleared %v (also %v), %v; want [%d]", slots, also, err, s)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the dead owner's record remains: %v", err)
	}
	record(os.Getpid())
	if _, err := RemoveSlotsOf(os.Getpid(), collect); err == nil || len(also) != 1 {
		t.Errorf("a live process's slots: %v, also %v; want an error and nothing removed", err, also)
	}
}

// deadPID is the PID of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	return dead.Process.Pid
}

// recordSlot writes slot s's record naming pid, as takeSlot does, and
// returns its path.
func recordSlot(t *testing.T, s, pid int) string {
	t.Helper()
	if err := os.MkdirAll(slotDir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(slotDir, strconv.Itoa(s)+".pid")
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A killed owner that is not reaped yet (a zombie still answers kill(pid,
// 0)) is gone: its slot is cleared, as a lab's supervisor killed with
// SIGKILL whose parent has yet to reap it.
func TestRemoveSlotsOfZombie(t *testing.T) {
	Require(t)
	const s = 248
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := recordSlot(t, s, owner.Process.Pid)
	t.Cleanup(func() { _ = os.Remove(pidFile) })
	if Running(owner.Process.Pid) {
		if _, err := RemoveSlotsOf(owner.Process.Pid, nil); err == nil {
			t.Error("a running owner's slots were not refused")
		}
	} else {
		t.Fatal("the owner does not run")
	}
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200 && Running(owner.Process.Pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	defer func() { _ = owner.Wait() }() // reaped at the end: a zombie until then
	if slots, err := RemoveSlotsOf(owner.Process.Pid, nil); err != nil || len(slots) != 1 || slots[0] != s {
		t.Errorf("the zombie owner's slot: cleared %v, %v; want [%d]", slots, err, s)
	}
}
