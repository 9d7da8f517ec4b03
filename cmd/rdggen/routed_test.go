package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// The routed pool (docker.routing: switch) end to end, on 3 namespace hosts
// with real sshd and a real Open MPI job, and back to per-host routes.
//
// The switch: `rdggen apply --target switch` configures the ONYX simulator
// (pkg/sim/onyxsim) over SSH with the statements pkg/onyx generates; no
// ONYX runs here, so the test then reads what the simulator holds (its
// routing, interface vlan 1's addresses and ICMP redirects, its static
// routes) and makes the "switch" namespace route the same way
// (netnstest.SetSwitchL3). The namespace thus routes exactly as rdggen's
// ONYX commands left the switch, after each apply.
//
// In routed mode every host has one route (the pool via the switch's
// gateway address), every container reaches every other with its own
// source address, the traffic really crosses the switch (with the switch's
// forwarding off nothing gets through), and the MPI job passes. Back in
// per-host mode the switch's gateway address, routing and routes are gone,
// each host has a route per other host again and none for the pool, the
// traffic no longer needs the switch's routing, and the job passes again.
// Every second apply changes nothing.
func TestRoutedPoolEndToEnd(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, Routing: "switch"})
	sw := onyxsim.Start(t, onyxsim.Options{Hostname: "sw"})
	dir := t.TempDir()
	src, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cluster.yaml")
	writeInv := func(routing string) {
		t.Helper()
		s := strings.Replace(string(src), "onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: 127.0.0.1}", 1)
		s = strings.Replace(s, "routing: switch}", "routing: "+routing+"}", 1)
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kh := filepath.Join(dir, "known_hosts")
	hostKeys, _ := os.ReadFile(c.KnownHosts)
	if err := os.WriteFile(kh, append(hostKeys, []byte("\n"+sw.KnownHostsLine()+"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(sw.Addr, ":")
	rdggen := func(target string) (int, string) {
		t.Helper()
		args := []string{"apply", "--yes", "--target", target, "-f", file, "--switch-ssh-port", port, "--backup-dir", filepath.Join(dir, "bk"),
			"--ssh-user", "root", "--identity", c.Identity, "--known-hosts", kh, "--host-root", c.RootTemplate(),
			"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand()}
		var out, errb bytes.Buffer
		start := time.Now()
		code := run(context.Background(), args, &out, &errb, func(k string) string {
			return map[string]string{envSwitchPassword: "admin"}[k]
		})
		t.Logf("rdggen apply --target %s → exit %d in %.2fs\n%s%s", target, code, time.Since(start).Seconds(), out.String(), errb.String())
		return code, out.String()
	}
	// applySwitch applies the switch target and mirrors the simulator's
	// routing into the switch namespace.
	applySwitch := func() string {
		t.Helper()
		code, out := rdggen("switch")
		if code != exitOK {
			t.Fatalf("apply --target switch: exit %d", code)
		}
		l := sw.L3State(onyx.DataVLAN)
		ns := netnstest.SwitchL3{Routing: l.Routing, Addresses: l.Addresses, Redirects: l.Redirects}
		for _, r := range l.Routes {
			ns.Routes = append(ns.Routes, netnstest.SwitchRoute{Dst: r.Dst, Via: r.Via})
		}
		c.SetSwitchL3(ns)
		return out
	}
	applyHostsOK := func(want string) {
		t.Helper()
		if code, out := rdggen("hosts"); code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("apply --target hosts: exit %d, want %q", code, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	allPairs := func(when string) {
		t.Helper()
		ok, failed := c.Reachability(ctx)
		if len(failed) != 0 || len(ok) != 6 {
			t.Fatalf("%s: %d container pairs connect with their own source address; these do not: %v", when, len(ok), failed)
		}
	}
	keys, err := horovod.GenerateWorkerKeys()
	if err != nil {
		t.Fatal(err)
	}
	c.StartWorkers(horovod.WorkerFiles(c.Inventory, keys), false)
	argv := horovod.LaunchArgs(c.Inventory, true, []string{prog}, make([]int, len(c.Inventory.Hosts)))
	mpiJob := func(when string) {
		t.Helper()
		jctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		start := time.Now()
		out, err := c.MPIJob(jctx, c.Hosts[0], false, argv...)
		t.Logf("mpirun %s (%.1fs): %v\n%s", when, time.Since(start).Seconds(), err, out)
		lines := netnstest.RankLines(out)
		if err != nil || len(lines) != 3 {
			t.Fatalf("the MPI job failed %s", when)
		}
		for r := range 3 {
			if !strings.Contains(strings.Join(lines, "\n"), fmt.Sprintf("rank %d of 3: alltoall ok, allreduce 6", r)) {
				t.Fatalf("%s: rank %d's line missing: %q", when, r, lines)
			}
		}
	}
	poolRoute := "172.16.0.0/16 via " + c.Inventory.Docker.Gateway.String()

	// Routed mode.
	writeInv("switch")
	out := applySwitch()
	if !strings.Contains(out, "ip route vrf default 172.16.3.0/24 "+c.Hosts[2].Data.Addr().String()) {
		t.Errorf("the switch plan lacks a host's route")
	}
	applyHostsOK("hosts: 3 changed, 0 up to date, 0 failed")
	for _, h := range c.Hosts {
		if rs, err := c.HostRoutes(h); err != nil || !slices.Equal(rs, []string{poolRoute}) {
			t.Errorf("%s's routes on data0: %q (%v), want only %q", h.Name, rs, err, poolRoute)
		}
	}
	allPairs("routed pool")
	c.SwitchRouting(false)
	if ok, _ := c.Reachability(ctx); len(ok) != 0 {
		t.Fatalf("with the switch's routing off %d container pairs still connect: the traffic does not cross the switch", len(ok))
	}
	c.SwitchRouting(true)
	mpiJob("in routed-pool mode")
	if out := applySwitch(); !strings.Contains(out, "up to date, nothing to send") {
		t.Errorf("second switch apply was not empty")
	}
	applyHostsOK("hosts: nothing to do: 3 up to date")

	// Back to per-host routes.
	writeInv("hosts")
	out = applySwitch()
	if !strings.Contains(out, "no interface vlan 1") || !strings.Contains(out, "no ip route vrf default 172.16.1.0/24") {
		t.Errorf("the switch plan does not remove the gateway and routes")
	}
	if l := sw.L3State(onyx.DataVLAN); l.Routing || len(l.Addresses) != 0 || len(l.Routes) != 0 {
		t.Errorf("the switch keeps routed-pool configuration: %+v\n%s", l, sw.RunningConfig())
	}
	applyHostsOK("hosts: 3 changed, 0 up to date, 0 failed")
	for _, h := range c.Hosts {
		var want []string
		for _, o := range c.Hosts {
			if o != h {
				want = append(want, o.Subnet.String()+" via "+o.Data.Addr().String())
			}
		}
		if rs, err := c.HostRoutes(h); err != nil || !slices.Equal(rs, want) {
			t.Errorf("%s's routes on data0: %q (%v), want %q", h.Name, rs, err, want)
		}
	}
	c.SwitchRouting(false) // per-host routes go host to host: the switch need not route
	allPairs("per-host routes")
	mpiJob("back in per-host mode")
	if out := applySwitch(); !strings.Contains(out, "up to date, nothing to send") {
		t.Errorf("second switch apply was not empty")
	}
	applyHostsOK("hosts: nothing to do: 3 up to date")
}
