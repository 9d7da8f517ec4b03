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
// awaited while it is; the total time is the slowest target's, not the sum.
func TestApplyAllTargetsHungVCenter(t *testing.T) {
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
	const bound = 6 * time.Second
	args := []string{"apply", "--yes", "-o", "json", "-f", file, "--target", "switch,esxi,hosts",
		"--switch-ssh-port", port, "--backup-dir", filepath.Join(dir, "bk"),
		"--ssh-user", "root", "--identity", c.Identity, "--known-hosts", kh,
		"--host-root", c.RootTemplate(), "--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand(),
		"--vcenter-timeout", bound.String()}
	env := map[string]string{envSwitchPassword: "admin", "GOVC_URL": "https://" + vc + "/sdk", "GOVC_USERNAME": "u", "GOVC_PASSWORD": "p"}
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	wall := time.Since(start)
	text := errb.String()
	t.Logf("exit %d in %.2fs\n%s", code, wall.Seconds(), text)
	var doc applyplan.Document
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, out.String())
	}
	secs := map[applyplan.TargetName]float64{}
	var sum, slowest float64
	for _, tg := range doc.Targets {
		secs[tg.Name] = tg.Seconds
		sum += tg.Seconds
		slowest = max(slowest, tg.Seconds)
	}
	t.Logf("targets: switch %.2fs, hosts %.2fs, esxi %.2fs; sum %.2fs, wall %.2fs", secs["switch"], secs["hosts"], secs["esxi"], sum, wall.Seconds())

	if code != exitFailed {
		t.Errorf("exit %d, want %d (esxi failed)", code, exitFailed)
	}
	if !strings.Contains(text, "rdggen: apply esxi: vCenter "+vc+": ") || !strings.Contains(text, "no answer within 6s; --vcenter-timeout sets that bound") {
		t.Errorf("the vCenter error does not name --vcenter-timeout:\n%s", text)
	}
	if !strings.Contains(text, "[esxi] connecting to vCenter; waiting for vCenter "+vc+" to answer the login (bound: --vcenter-timeout 6s) (") {
		t.Errorf("no line says what esxi waits for:\n%s", text)
	}
	for _, want := range []string{"switch: 1 changed, 0 up to date, 0 failed; 10 command(s) sent", "hosts: 4 changed, 0 up to date, 0 failed"} {
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
	if secs["esxi"] < bound.Seconds() || slowest != secs["esxi"] {
		t.Errorf("esxi took %.2fs, want the vCenter bound %s and the slowest", secs["esxi"], bound)
	}
	// Concurrent: the wall time is the slowest target's plus a little, and
	// less than the sum by about the other targets' time.
	if others := secs["switch"] + secs["hosts"]; wall.Seconds() > slowest+1 || wall.Seconds() > sum-others/2 {
		t.Errorf("wall %.2fs for targets of %.2fs (slowest) and %.2fs (sum): not concurrent", wall.Seconds(), slowest, sum)
	}
}

// Ctrl-C while an SSH handshake and a vCenter login hang: apply returns
// within a second and says what it changed (nothing) and left.
func TestApplyInterruptedDuringHandshake(t *testing.T) {
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
	if took > time.Second {
		t.Errorf("apply took %.2fs to stop after the interrupt, want under 1s", took.Seconds())
	}
	if code != exitFailed || !strings.Contains(errb.String(), "rdggen: interrupted: changed: none; not changed: none;") {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
}
