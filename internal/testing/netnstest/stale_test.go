package netnstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(slotDir, 0o700); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(slotDir, strconv.Itoa(s)+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(dead.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
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
