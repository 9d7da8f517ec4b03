package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/netnstest"
)

// applyHosts runs `rdggen apply --target hosts` in-process against a
// namespace cluster, with the flags a user would pass plus the test's root
// prefix and Docker stand-ins.
func applyHosts(t *testing.T, c *netnstest.Cluster, extra ...string) (int, string, string) {
	t.Helper()
	args := []string{"apply", "--target", "hosts", "-f", c.InventoryPath,
		"--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts,
		"--host-root", c.RootTemplate(),
		"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand()}
	args = append(args, extra...)
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen %s → exit %d\n%s%s", strings.Join(extra, " "), code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

const nvidiaDaemonJSON = `{
    "runtimes": {
        "nvidia": {
            "path": "nvidia-container-runtime",
            "runtimeArgs": []
        }
    }
}
`

func writeHostFile(t *testing.T, h *netnstest.Host, path, content string) {
	t.Helper()
	p := h.File(path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The issue #5 must-show: 8 namespace hosts, containers unreachable before,
// all 56 pairs reachable after one apply, a second apply changes nothing, an
// nvidia runtime entry survives, and the firewall rules are what lets the
// traffic through.
func TestApplyHostsAllPairs(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 8, OS: func(i int) string {
		if i < 4 {
			return "ubuntu-16.04" // persistent routes in an if-up.d hook
		}
		return "ubuntu-20.04" // netplan
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nvidiaHost := c.Hosts[2]
	writeHostFile(t, nvidiaHost, "/etc/docker/daemon.json", nvidiaDaemonJSON)

	if ok, _ := c.Reachability(ctx); len(ok) != 0 {
		t.Fatalf("before the apply %d container pairs already answer: %v", len(ok), ok)
	}

	code, out, _ := applyHosts(t, c, "--dry-run")
	if code != exitOK || !strings.Contains(out, "hosts: dry run, nothing changed: 8 would change, 0 up to date, 0 failed") {
		t.Fatalf("dry run: exit %d", code)
	}
	if _, err := os.Stat(c.Hosts[0].File("/etc/docker/daemon.json")); err == nil {
		t.Fatal("the dry run wrote daemon.json")
	}
	if ok, _ := c.Reachability(ctx); len(ok) != 0 {
		t.Fatalf("after the dry run %d pairs answer", len(ok))
	}

	code, out, _ = applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "hosts: 8 changed, 0 up to date, 0 failed") {
		t.Fatalf("apply: exit %d", code)
	}
	ok, failed := c.Reachability(ctx)
	if len(failed) != 0 || len(ok) != 8*7 {
		t.Fatalf("after the apply %d pairs answer, these do not: %v", len(ok), failed)
	}
	t.Logf("all %d container pairs answer", len(ok))

	// nvidia-docker2's runtime entry is kept, the old file is backed up.
	b, err := os.ReadFile(nvidiaHost.File("/etc/docker/daemon.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dj struct {
		Runtimes map[string]struct{ Path string }
		Bip      string
	}
	if err := json.Unmarshal(b, &dj); err != nil {
		t.Fatal(err)
	}
	if dj.Runtimes["nvidia"].Path != "nvidia-container-runtime" || dj.Bip != "172.16.3.1/24" {
		t.Errorf("%s daemon.json lost nvidia or has no bip:\n%s", nvidiaHost.Name, b)
	}
	backups, _ := filepath.Glob(nvidiaHost.File("/etc/docker/daemon.json.rdggen-*.bak"))
	if len(backups) != 1 {
		t.Errorf("backups: %v", backups)
	} else if old, _ := os.ReadFile(backups[0]); string(old) != nvidiaDaemonJSON {
		t.Errorf("backup is not the old file:\n%s", old)
	}

	// Second apply: nothing to do, one round trip per host, no restart.
	code, out, _ = applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "hosts: nothing to do: 8 up to date") {
		t.Fatalf("second apply: exit %d", code)
	}
	for _, h := range c.Hosts {
		if h.Restarts() != 1 {
			t.Errorf("%s: docker restarted %d times, want 1", h.Name, h.Restarts())
		}
		// dry run 1 (probe) + apply 2 (probe, change and verify) + re-apply 1 (probe)
		if s := h.Sessions(); s != 4 {
			t.Errorf("%s: %d SSH sessions over dry run, apply and re-apply, want 4", h.Name, s)
		}
	}

	// The firewall rules matter: without rdggen's chain on one host, nothing
	// reaches its container (Docker's FORWARD policy is DROP); apply puts it back.
	victim := c.Hosts[5]
	if out, err := c.Exec(victim.NS, "iptables", "-F", "RDGGEN-CONTAINERS"); err != nil {
		t.Fatalf("flush: %v %s", err, out)
	}
	if c.Ping(ctx, c.Hosts[0], victim) {
		t.Fatalf("%s's container answers without the firewall rules", victim.Name)
	}
	code, out, _ = applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "hosts: 1 changed, 7 up to date, 0 failed") ||
		!strings.Contains(out, "replaced as one block (was 0 rule(s))") {
		t.Fatalf("repair apply: exit %d", code)
	}
	if !c.Ping(ctx, c.Hosts[0], victim) {
		t.Fatalf("%s's container does not answer after the repair", victim.Name)
	}
}

// One host's failure does not stop the others, and the run says which.
func TestApplyHostsFailures(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 4, User: func(i int) string {
		if i == 3 {
			return "rdgtest"
		}
		return ""
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	broken := "{\n  \"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\"}},\n  \"bip\": \n}\n"
	writeHostFile(t, c.Hosts[1], "/etc/docker/daemon.json", broken)
	c.StopSSHD(c.Hosts[2])

	code, out, errOut := applyHosts(t, c)
	if code != exitFailed {
		t.Fatalf("exit %d, want %d", code, exitFailed)
	}
	for _, want := range []string{
		"ns-02 (" + c.Hosts[1].Mgmt.String() + "): FAILED: /etc/docker/daemon.json: line 4 col 1: not valid JSON",
		"the file was not changed",
		"ns-03 (" + c.Hosts[2].Mgmt.String() + "): FAILED: unreachable: " + c.Hosts[2].Mgmt.String() + ":22",
		"hosts: 2 changed, 0 up to date, 2 failed (ns-02, ns-03)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "apply hosts: 2 of 4 host(s) failed: ns-02, ns-03") {
		t.Errorf("stderr lacks the failed hosts: %s", errOut)
	}
	if b, _ := os.ReadFile(c.Hosts[1].File("/etc/docker/daemon.json")); string(b) != broken {
		t.Errorf("the unparsable daemon.json was changed:\n%s", b)
	}
	if m, _ := filepath.Glob(c.Hosts[1].File("/etc/*/*.rdggen*")); len(m) > 0 {
		t.Errorf("files written on the failed host: %v", m)
	}
	if !c.Ping(ctx, c.Hosts[0], c.Hosts[3]) || !c.Ping(ctx, c.Hosts[3], c.Hosts[0]) {
		t.Error("the two healthy hosts' containers do not reach each other")
	}

	// A login user whose sudo -n is refused: the host fails with the reason.
	code, out, _ = applyHosts(t, c, "--ssh-user", "rdgtest")
	if code != exitFailed || !strings.Contains(out, "ns-04 ("+c.Hosts[3].Mgmt.String()+"): FAILED: sudo -n refused for user rdgtest (sudo: a password is required)") {
		t.Errorf("sudo refusal: exit %d", code)
	}

	// An unknown host key: refused, the others go on.
	kh := filepath.Join(t.TempDir(), "known_hosts")
	all, _ := os.ReadFile(c.KnownHosts)
	var keep []string
	for _, l := range strings.Split(string(all), "\n") {
		if !strings.HasPrefix(l, c.Hosts[0].Mgmt.String()+" ") {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(kh, []byte(strings.Join(keep, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = applyHosts(t, c, "--known-hosts", kh)
	if code != exitFailed || !strings.Contains(out, fmt.Sprintf("ns-01 (%s): FAILED: host key check failed: %s:22: host key is not in known_hosts", c.Hosts[0].Mgmt, c.Hosts[0].Mgmt)) ||
		!strings.Contains(out, "ns-04 ("+c.Hosts[3].Mgmt.String()+"): up to date") {
		t.Errorf("unknown host key: exit %d", code)
	}
}
