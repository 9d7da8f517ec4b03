package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
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
	if !slices.Contains(extra, "--dry-run") {
		args = append(args, "--yes")
	}
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

// 8 namespace hosts: containers unreachable before; after one apply every
// container reaches every other and the receiver sees the sender's own
// container address; a second apply changes nothing; an nvidia runtime entry
// survives; the firewall rules are what lets the traffic through, and refuse
// strangers also where FORWARD's policy is ACCEPT; a Docker restart that puts
// its MASQUERADE rule back on top is undone by the firewall unit's script and
// by the next apply.
func TestApplyHostsAllPairs(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 8, OS: func(i int) string {
		if i < 4 {
			return "ubuntu-16.04" // persistent routes in an if-up.d hook
		}
		return "ubuntu-20.04" // netplan
	}, ForwardAccept: func(i int) bool { return i >= 6 }})
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
		t.Fatalf("after the apply %d pairs connect with their own source address, these do not: %v", len(ok), failed)
	}
	t.Logf("all %d container pairs connect, each receiver seeing the sender's container address", len(ok))

	// A stranger on the data network is refused, also by the hosts whose
	// FORWARD policy is ACCEPT (ns-07, ns-08) and by the others.
	// (The three tries at once: each refused one waits out its timeout.)
	outsider, _ := c.Outsider()
	var wg sync.WaitGroup
	for _, h := range []*netnstest.Host{c.Hosts[0], c.Hosts[6], c.Hosts[7]} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if seen, err := c.SourceFrom(ctx, outsider, h); err == nil {
				t.Errorf("%s's container accepted a connection from outside the cluster (%s)", h.Name, seen)
			}
		}()
	}
	wg.Wait()

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
	if _, err := c.Source(ctx, c.Hosts[0], victim); err == nil {
		t.Fatalf("%s's container answers without the firewall rules", victim.Name)
	}
	code, out, _ = applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "hosts: 1 changed, 7 up to date, 0 failed") ||
		!strings.Contains(out, "replaced as one block (was 0 rule(s))") {
		t.Fatalf("repair apply: exit %d", code)
	}
	if seen, err := c.Source(ctx, c.Hosts[0], victim); err != nil || seen != c.Hosts[0].Container {
		t.Fatalf("%s's container after the repair: saw %s, %v", victim.Name, seen, err)
	}

	// Docker restarts on ns-03 and puts its MASQUERADE rule above rdggen's
	// exemption: ns-03's containers' connections leave as ns-03's data
	// address, which the other hosts refuse. What systemd runs after
	// docker.service (the unit's ExecStart) fixes it.
	h3 := c.Hosts[2]
	restart := exec.Command("ip", "netns", "exec", h3.NS, "env", "RDGGEN_ROOT="+h3.Root, "sh", "-c", c.DockerRestartCommand())
	if out, err := restart.CombinedOutput(); err != nil {
		t.Fatalf("docker restart on %s: %v %s", h3.Name, err, out)
	}
	if nat, _ := c.Exec(h3.NS, "iptables", "-t", "nat", "-S", "POSTROUTING"); !strings.HasPrefix(nat, "-P POSTROUTING ACCEPT\n-A POSTROUTING -s 172.16.3.0/24 ! -o docker0 -j MASQUERADE\n") {
		t.Fatalf("the fake Docker restart did not put MASQUERADE first:\n%s", nat)
	}
	if seen, err := c.Source(ctx, h3, c.Hosts[0]); err == nil {
		t.Fatalf("after Docker's restart a masqueraded connection got through (the receiver saw %s)", seen)
	}
	unit, err := os.ReadFile(h3.File("/etc/systemd/system/rdggen-firewall.service"))
	if err != nil {
		t.Fatal(err)
	}
	execStart := ""
	for _, l := range strings.Split(string(unit), "\n") {
		if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = v
		}
	}
	if execStart != "/bin/sh /etc/rdggen/firewall.sh" {
		t.Fatalf("unit's ExecStart: %q", execStart)
	}
	// The unit's command, with the script where the root prefix put it.
	if out, err := c.Exec(h3.NS, "/bin/sh", h3.File("/etc/rdggen/firewall.sh")); err != nil {
		t.Fatalf("firewall.sh: %v %s", err, out)
	}
	if seen, err := c.Source(ctx, h3, c.Hosts[0]); err != nil || seen != h3.Container {
		t.Fatalf("after the firewall unit the receiver saw %s (%v), want %s", seen, err, h3.Container)
	}
	// And without the unit, apply notices the order and repairs it.
	if out, err := exec.Command("ip", "netns", "exec", h3.NS, "env", "RDGGEN_ROOT="+h3.Root, "sh", "-c", c.DockerRestartCommand()).CombinedOutput(); err != nil {
		t.Fatalf("docker restart on %s: %v %s", h3.Name, err, out)
	}
	code, out, _ = applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "hosts: 1 changed, 7 up to date, 0 failed") ||
		!strings.Contains(out, `iptables nat chain POSTROUTING: jump to RDGGEN-POSTROUTING as its first rule, once (was rule 2, after "-A POSTROUTING -s 172.16.3.0/24 ! -o docker0 -j MASQUERADE")`) {
		t.Fatalf("apply after a docker restart: exit %d", code)
	}
	if ok, failed := c.Reachability(ctx); len(failed) != 0 || len(ok) != 8*7 {
		t.Fatalf("after the repair: %v", failed)
	}
}

// One host's failure does not stop the others, and the run says which.
func TestApplyHostsFailures(t *testing.T) {
	t.Parallel()
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
	if !strings.Contains(errOut, "rdggen: apply failed for: hosts (2 of 4 host(s) failed: ns-02, ns-03)") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr lacks the failed hosts: %s", errOut)
	}
	if b, _ := os.ReadFile(c.Hosts[1].File("/etc/docker/daemon.json")); string(b) != broken {
		t.Errorf("the unparsable daemon.json was changed:\n%s", b)
	}
	if m, _ := filepath.Glob(c.Hosts[1].File("/etc/*/*.rdggen*")); len(m) > 0 {
		t.Errorf("files written on the failed host: %v", m)
	}
	for _, p := range [][2]*netnstest.Host{{c.Hosts[0], c.Hosts[3]}, {c.Hosts[3], c.Hosts[0]}} {
		if seen, err := c.Source(ctx, p[0], p[1]); err != nil || seen != p[0].Container {
			t.Errorf("%s -> %s: saw %s, %v", p[0].Name, p[1].Name, seen, err)
		}
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

// A jumbo-frame data network: one apply gives every host's data interface
// the data MTU (live and in its persistent form) and docker0's daemon.json
// the same; the second apply changes nothing.
func TestApplyHostsMTU(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3, DataMTU: 9000, OS: func(i int) string {
		if i == 0 {
			return "ubuntu-16.04"
		}
		return "ubuntu-20.04"
	}})
	if _, err := c.Exec(c.Hosts[0].NS, "ping", "-c", "1", "-W", "1", "-M", "do", "-s", "8972", c.Hosts[1].Data.Addr().String()); err == nil {
		t.Fatal("a 9000-byte frame crossed before the apply")
	}
	// ns-03's own netplan file names its data interface under another ID.
	own := "network:\n  version: 2\n  ethernets:\n    vf0:\n      match: {name: data0}\n      set-name: data0\n      addresses: [" + c.Hosts[2].Data.String() + "]\n"
	writeHostFile(t, c.Hosts[2], "/etc/netplan/50-cloud-init.yaml", own)
	code, out, _ := applyHosts(t, c)
	if code != exitOK || !strings.Contains(out, "~ link data0: mtu 1500 -> 9000") {
		t.Fatalf("apply: exit %d", code)
	}
	for _, h := range c.Hosts {
		link, _ := c.Exec(h.NS, "ip", "-o", "link", "show", "dev", "data0")
		if !strings.Contains(link, " mtu 9000 ") {
			t.Errorf("%s: %s", h.Name, link)
		}
		b, _ := os.ReadFile(h.File("/etc/docker/daemon.json"))
		if !strings.Contains(string(b), `"mtu": 9000`) {
			t.Errorf("%s daemon.json:\n%s", h.Name, b)
		}
	}
	if b, _ := os.ReadFile(c.Hosts[0].File("/etc/network/if-up.d/rdggen-routes")); !strings.Contains(string(b), "ip link set dev data0 mtu 9000 ||") {
		t.Errorf("ifupdown hook:\n%s", b)
	}
	if b, _ := os.ReadFile(c.Hosts[1].File("/etc/netplan/60-rdggen.yaml")); !strings.Contains(string(b), "    data0:\n      mtu: 9000\n") {
		t.Errorf("netplan:\n%s", b)
	}
	if !strings.Contains(out, "+ /etc/netplan/60-rdggen.yaml (routes and MTU under netplan ID vf0, set-name in /etc/netplan/50-cloud-init.yaml)") {
		t.Errorf("the plan does not say which netplan ID it used")
	}
	if b, _ := os.ReadFile(c.Hosts[2].File("/etc/netplan/60-rdggen.yaml")); !strings.Contains(string(b), "    vf0:\n      mtu: 9000\n") {
		t.Errorf("netplan of ns-03:\n%s", b)
	} else {
		if _, err := exec.LookPath("netplan"); err != nil {
			netnstest.Unavailable(t, "netplan not found (install netplan.io)")
		}
		// What the real netplan makes of ns-03's two files: one definition.
		if out, err := exec.Command("netplan", "generate", "--root-dir", c.Hosts[2].Root).CombinedOutput(); err != nil {
			t.Fatalf("netplan generate: %v\n%s", err, out)
		}
		nets, _ := filepath.Glob(c.Hosts[2].File("/run/systemd/network/*.network"))
		var text string
		for _, n := range nets {
			b, _ := os.ReadFile(n)
			text += string(b)
		}
		if len(nets) != 1 || !strings.Contains(text, "MTUBytes=9000") || !strings.Contains(text, "Destination=172.16.1.0/24") {
			t.Errorf("netplan generate on ns-03: %v\n%s", nets, text)
		}
	}
	if code, out, _ := applyHosts(t, c); code != exitOK || !strings.Contains(out, "hosts: nothing to do: 3 up to date") {
		t.Fatalf("second apply: exit %d", code)
	}
	// A full 9000-byte frame now crosses the data network (the "switch"
	// carries 9216): an 8972-byte ICMP payload with don't-fragment set.
	if out, err := c.Exec(c.Hosts[0].NS, "ping", "-c", "1", "-W", "2", "-M", "do", "-s", "8972", c.Hosts[1].Data.Addr().String()); err != nil {
		t.Errorf("9000-byte frame from ns-01 to ns-02: %v\n%s", err, out)
	}
}

// GPUDirect RDMA's module on 3 namespace VMs: ns-01 has nvidia-peermem
// installed but not loaded, ns-02 has it loaded, ns-03 has no NVIDIA driver.
// apply plans the load on ns-01 only (with --module-load, a stand-in for
// modprobe that loads it as the kernel shows it, in /sys/module), says on
// ns-03 that the module is missing and what to install, without failing,
// and writes the modules-load.d file on ns-01 and ns-02 only (on ns-03
// systemd-modules-load would fail at every boot); a second apply changes
// nothing. Once ns-03 has the module, apply writes its file too. A module
// that refuses to load ("Invalid argument", the driver built before
// MLNX_OFED) fails its host with modprobe's own message and the fix.
func TestApplyHostsPeermem(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	unloaded := healthyGuest(1)
	unloaded.Peermem = false
	stageGuest(t, c.Hosts[0], inv.Horovod.HCA, unloaded)
	stageGuest(t, c.Hosts[1], inv.Horovod.HCA, healthyGuest(1))
	stageGuest(t, c.Hosts[2], inv.Horovod.HCA, guest{GPUs: 1, NoDriver: true})
	if err := os.RemoveAll(c.Hosts[2].File("/lib/modules")); err != nil {
		t.Fatal(err)
	}
	load := `mkdir -p "$RDGGEN_ROOT/sys/module/nvidia_peermem" && echo 535.183.06 >"$RDGGEN_ROOT/sys/module/nvidia_peermem/version"`

	code, out, _ := applyHosts(t, c, "--dry-run", "--module-load", load)
	if code != exitOK || strings.Count(out, "~ kernel module nvidia_peermem: load (modprobe nvidia-peermem), for GPUDirect RDMA") != 1 ||
		strings.Count(out, "+ /etc/modules-load.d/60-rdggen-nvidia-peermem.conf") != 2 ||
		!strings.Contains(out, "! nvidia-peermem is not installed (NVIDIA driver < 470, or none yet): GPUDirect RDMA needs it. Install the NVIDIA driver ≥ 470 (it ships nvidia-peermem)") {
		t.Fatalf("dry run: exit %d", code)
	}
	if i, j := strings.Index(out, "ns-01 "), strings.Index(out, "~ kernel module nvidia_peermem"); i < 0 || j < i || strings.Index(out, "ns-02 ") < j {
		t.Errorf("the load is not ns-01's")
	}

	// The module refuses: ns-01 fails with modprobe's message and the fix;
	// the others are applied.
	refuse := `echo "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument" >&2; exit 1`
	code, out, _ = applyHosts(t, c, "--module-load", refuse)
	if code != exitFailed || !strings.Contains(out, "peermem failed (exit 1): modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument; "+
		"the NVIDIA driver was built without MLNX_OFED's peer-memory API (installed before MLNX_OFED?): reinstall the NVIDIA driver after MLNX_OFED, then rdggen apply --target hosts") ||
		!strings.Contains(out, "hosts: 2 changed, 0 up to date, 1 failed (ns-01)") {
		t.Fatalf("refused load: exit %d", code)
	}

	code, out, _ = applyHosts(t, c, "--module-load", load)
	if code != exitOK || !strings.Contains(out, "~ kernel module nvidia_peermem: load") {
		t.Fatalf("apply: exit %d", code)
	}
	for _, h := range c.Hosts[:2] {
		b, err := os.ReadFile(h.File("/etc/modules-load.d/60-rdggen-nvidia-peermem.conf"))
		if err != nil || !strings.HasSuffix(string(b), "\nnvidia-peermem\n") {
			t.Errorf("%s: modules-load.d file: %v %q", h.Name, err, b)
		}
	}
	if _, err := os.Stat(c.Hosts[2].File("/etc/modules-load.d/60-rdggen-nvidia-peermem.conf")); !os.IsNotExist(err) {
		t.Errorf("ns-03 has no nvidia-peermem, yet a modules-load.d file: %v", err)
	}
	if _, err := os.Stat(c.Hosts[0].File("/sys/module/nvidia_peermem/version")); err != nil {
		t.Errorf("ns-01: the module was not loaded: %v", err)
	}
	if code, out, _ := applyHosts(t, c, "--module-load", load); code != exitOK || !strings.Contains(out, "hosts: nothing to do: 3 up to date") {
		t.Errorf("second apply: exit %d", code)
	}

	// The driver installed on ns-03: its file, and the module loaded.
	stageGuest(t, c.Hosts[2], inv.Horovod.HCA, unloaded)
	code, out, _ = applyHosts(t, c, "--module-load", load)
	if code != exitOK || strings.Count(out, "+ /etc/modules-load.d/60-rdggen-nvidia-peermem.conf") != 1 || strings.Contains(out, "nvidia-peermem is not installed") {
		t.Errorf("apply after the driver: exit %d", code)
	}
	if _, err := os.Stat(c.Hosts[2].File("/etc/modules-load.d/60-rdggen-nvidia-peermem.conf")); err != nil {
		t.Errorf("ns-03: %v", err)
	}
}
