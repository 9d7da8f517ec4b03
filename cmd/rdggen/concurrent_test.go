package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// hungServer accepts TCP connections on loopback and never answers: a
// vCenter or switch that is up but stuck.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// The whole apply at once against the simulators: the switch (onyxsim), 4
// namespace hosts over real sshd, and a vCenter that accepts the connection
// and never answers. The switch and the hosts are changed while vCenter is
// awaited; vCenter's failure names --vcenter-timeout; a line says what is
// awaited while it is; the targets run at the same time.
func TestApplyAllTargetsHungVCenter(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 4})
	sw := onyxsim.Start(t, onyxsim.Options{Hostname: "sw"})
	dir := t.TempDir()
	b, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(string(b), "onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: 127.0.0.1}", 1)
	file := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(dir, "known_hosts")
	hosts, _ := os.ReadFile(c.KnownHosts)
	if err := os.WriteFile(kh, append(hosts, []byte("\n"+sw.KnownHostsLine()+"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(sw.Addr, ":")
	vc := hungServer(t)
	// A quiet target gets its waiting line once it has been quiet for
	// progress.Quiet (5 s), at the display's next one-second tick: a bound of
	// 7 s leaves a tick before vCenter's time is up (with 6 s the last tick
	// raced the timeout).
	const bound = 7 * time.Second
	args := []string{"apply", "--yes", "-o", "json", "-f", file, "--target", "switch,esxi,hosts",
		"--switch-ssh-port", port, "--backup-dir", filepath.Join(dir, "bk"),
		"--ssh-user", "root", "--identity", c.Identity, "--known-hosts", kh,
		"--host-root", c.RootTemplate(), "--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand(),
		"--vcenter-timeout", bound.String()}
	env := map[string]string{envSwitchPassword: "admin", "GOVC_URL": "https://" + vc + "/sdk", "GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"}
	var out bytes.Buffer
	start := time.Now()
	lines := &timedLines{start: start}
	code := run(context.Background(), args, &out, lines, func(k string) string { return env[k] })
	wall := time.Since(start)
	text := lines.buf.String()
	t.Logf("exit %d in %.2fs\n%s", code, wall.Seconds(), text)
	var doc applyplan.Document
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, out.String())
	}
	secs := map[applyplan.TargetName]float64{}
	for _, tg := range doc.Targets {
		secs[tg.Name] = tg.Seconds
	}
	t.Logf("targets: switch %.2fs, hosts %.2fs, esxi %.2fs; wall %.2fs", secs["switch"], secs["hosts"], secs["esxi"], wall.Seconds())

	if code != exitFailed {
		t.Errorf("exit %d, want %d (esxi failed)", code, exitFailed)
	}
	if !strings.Contains(text, "rdggen: apply esxi: vCenter "+vc+": ") || !strings.Contains(text, "no answer within "+bound.String()+"; --vcenter-timeout sets that bound") {
		t.Errorf("the vCenter error does not name --vcenter-timeout:\n%s", text)
	}
	if !strings.Contains(text, "[esxi] connecting to vCenter; waiting for vCenter "+vc+" to answer the login (bound: --vcenter-timeout "+bound.String()+") (") {
		t.Errorf("no line says what esxi waits for:\n%s", text)
	}
	for _, want := range []string{"switch: 1 changed, 0 up to date, 0 failed; 14 command(s) sent", "hosts: 4 changed, 0 up to date, 0 failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q", want)
		}
	}
	changed := 0
	for _, m := range doc.Machines {
		if m.Status == applyplan.Changed {
			changed++
		}
	}
	if changed != 5 {
		t.Errorf("%d machines changed, want the switch and 4 hosts", changed)
	}
	if secs["esxi"] < bound.Seconds() || secs["esxi"] < secs["switch"] {
		t.Errorf("esxi took %.2fs, want at least the vCenter bound %s", secs["esxi"], bound)
	}
	// Concurrent: the hosts target ran while esxi waited for vCenter. Each
	// target's span is known from a line on stderr and its reported seconds;
	// the two spans overlap. Run one after the other, one
	// would start after the other ended. (Wall-clock bounds over the
	// slowest target failed on a loaded CI machine, wall 7.99 s, where
	// loading and planning before the targets take seconds.)
	// esxi prints its first line as it starts; hosts its summary line as
	// it ends.
	esxiStart, hostsEnd := lines.first("[esxi] "), lines.first("hosts: ")
	if esxiStart < 0 || hostsEnd < 0 {
		t.Fatalf("no [esxi] line or hosts summary:\n%s", text)
	}
	hostsStart := hostsEnd - secs["hosts"]
	overlap := min(esxiStart+secs["esxi"], hostsEnd) - max(esxiStart, hostsStart)
	t.Logf("esxi from %.2fs for %.2fs, hosts from %.2fs for %.2fs: overlap %.2fs", esxiStart, secs["esxi"], hostsStart, secs["hosts"], overlap)
	if overlap < 0.5 {
		t.Errorf("esxi (from %.2fs, %.2fs) and hosts (from %.2fs, %.2fs) did not run at the same time", esxiStart, secs["esxi"], hostsStart, secs["hosts"])
	}
}

// timedLines is an io.Writer that notes when each line arrived, in seconds
// since start.
type timedLines struct {
	mu    sync.Mutex
	start time.Time
	buf   bytes.Buffer
	part  string
	at    []float64
	lines []string
}

func (w *timedLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part += string(p)
	for {
		line, rest, ok := strings.Cut(w.part, "\n")
		if !ok {
			break
		}
		w.lines = append(w.lines, line)
		w.at = append(w.at, time.Since(w.start).Seconds())
		w.part = rest
	}
	return len(p), nil
}

// first is when the first line with prefix arrived, or -1.
func (w *timedLines) first(prefix string) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, l := range w.lines {
		if strings.HasPrefix(l, prefix) {
			return w.at[i]
		}
	}
	return -1
}

// Ctrl-C while an SSH handshake and a vCenter login hang: apply returns
// at once (under 3 s even on a loaded machine) and says what it changed (nothing) and left.
func TestApplyInterruptedDuringHandshake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	swAddr := hungServer(t)
	vc := hungServer(t)
	host, port, _ := strings.Cut(swAddr, ":")
	file := filepath.Join(dir, "cluster.yaml")
	f := newFabric(t)
	b, _ := os.ReadFile(f.file)
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "mgmt: 127.0.0.1", "mgmt: "+host, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "--yes", "-f", file, "--target", "switch,esxi", "--switch-ssh-port", port, "--known-hosts", kh}
	env := map[string]string{envSwitchPassword: "admin", "GOVC_URL": "https://" + vc + "/sdk", "GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int)
	go func() { done <- run(ctx, args, &out, &errb, func(k string) string { return env[k] }) }()
	time.Sleep(1500 * time.Millisecond)
	cancel()
	stopped := time.Now()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("apply did not stop within 10s of the interrupt")
	}
	took := time.Since(stopped)
	t.Logf("stopped %.3fs after the interrupt; exit %d\n%s%s", took.Seconds(), code, out.String(), errb.String())
	// Well under a second on an idle machine; the bound leaves room for a
	// loaded one (CI) and stays far below the handshakes' own timeouts,
	// which a stop that waited for them would take.
	if took > 3*time.Second {
		t.Errorf("apply took %.2fs to stop after the interrupt, want under 3s", took.Seconds())
	}
	if code != exitFailed || !strings.Contains(errb.String(), "rdggen: interrupted: changed: none; not changed: none;") {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
}
