package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// A 2 spines × 2 leaves × 2 hosts Cumulus fabric end to end: the switches
// are nvuesim servers whose applied configuration FRR (zebra, staticd,
// bgpd) and lldpd run in network namespaces (fabricnet), the hosts are
// netnstest namespace hosts (real sshd and dockerd) cabled to their leaf
// ports. `apply` of the switches (one plan, in parallel), of the hosts and
// of the workers brings every BGP session up, each leaf routes the other
// leaf's container subnets over both spines, every container reaches
// every other with its own address, a real Open MPI job started by `rdggen
// run` runs with ranks on both leaves, and the check passes.
func TestFabricEndToEnd(t *testing.T) {
	t.Parallel()
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 4, Docker: true, Image: testImage})
	c.ImportImage(testImage, netnstest.WorkerImage(t, prog, netnstest.BenchFiles(t, "perftest-deepops-roce-gbits.txt", "nccltests-deepops-roce-2x100g.txt")...))
	f := fabricnet.New(t, fabricnet.Spec{
		Switches: []fabricnet.Switch{{Name: "spine1", OS: fabricnet.Cumulus}, {Name: "spine2", OS: fabricnet.Cumulus},
			{Name: "leaf1", OS: fabricnet.Cumulus}, {Name: "leaf2", OS: fabricnet.Cumulus}},
		Links: []fabricnet.Link{
			{A: fabricnet.End{Switch: "leaf1", Port: "swp31"}, B: fabricnet.End{Switch: "spine1", Port: "swp1"}},
			{A: fabricnet.End{Switch: "leaf1", Port: "swp32"}, B: fabricnet.End{Switch: "spine2", Port: "swp1"}},
			{A: fabricnet.End{Switch: "leaf2", Port: "swp31"}, B: fabricnet.End{Switch: "spine1", Port: "swp2"}},
			{A: fabricnet.End{Switch: "leaf2", Port: "swp32"}, B: fabricnet.End{Switch: "spine2", Port: "swp2"}},
		},
	}, fabricnet.Options{Slot: c.Slot})

	// The cluster's inventory made a fabric: the same hosts (mgmt, OS,
	// container subnets), each on its leaf with an address of the leaf's
	// subnet 10.1.L.0/24 (host N at 10.1.L.N).
	src, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "  - {name: sw, model: SN2700, onyx: 3.6.8190}\n",
		`  - {name: spine1, model: SN3700, cumulus: 5.9.1, role: spine}
  - {name: spine2, model: SN3700, cumulus: 5.9.1, role: spine}
  - {name: leaf1, model: SN3700, cumulus: 5.9.1, role: leaf}
  - {name: leaf2, model: SN3700, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf1, port: swp31, peer: spine1, peer_port: swp1}
    - {switch: leaf1, port: swp32, peer: spine2, peer_port: swp1}
    - {switch: leaf2, port: swp31, peer: spine1, peer_port: swp2}
    - {switch: leaf2, port: swp32, peer: spine2, peer_port: swp2}
`, 1)
	dataRe := regexp.MustCompile(`data: \{address: [0-9./]+, port: 1/([0-9]+)\}`)
	text = dataRe.ReplaceAllStringFunc(text, func(m string) string {
		var n int
		fmt.Sscanf(dataRe.FindStringSubmatch(m)[1], "%d", &n)
		leaf := (n-1)/2 + 1
		// The last octet is the host number, as in the cluster: the
		// container subnet 172.16.N.0/24 follows from it.
		return fmt.Sprintf("data: {address: 10.1.%d.%d/24, switch: leaf%d, port: swp%d}", leaf, n, leaf, (n-1)%2+1)
	})
	file := filepath.Join(t.TempDir(), "fabric.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.LoadFile(file)
	if err != nil {
		t.Fatalf("the fabric inventory: %v\n%s", err, text)
	}
	sims := map[string]*nvuesim.Server{}
	for i, sw := range inv.Switches {
		s := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports})
		sims[sw.Name] = s
		f.FollowNVUE(sw.Name, s)
		inv.Switches[i].Mgmt = s.Addr
	}
	for i, h := range c.Hosts {
		ih := &inv.Hosts[i]
		if ih.Subnet != h.Subnet {
			t.Fatalf("%s: container subnet %s in the fabric inventory, %s in the cluster", h.Name, ih.Subnet, h.Subnet)
		}
		leaf := inv.LeafOf(ih)
		f.AttachHost(h, leaf.Name, leaf.PortName(ih.Data.Port), ih.Data.Address, leaf.Fabric.Gateway)
	}
	f.PlanSpeeds(inv) // every cable comes up at the inventory's speed

	ctx := context.Background()
	o := apply.SwitchOptions{
		Common:    apply.Common{Parallel: 4},
		NVUE:      apply.NVUE{Password: "cumulus", Fingerprint: sims["spine1"].Fingerprint()},
		BackupDir: filepath.Join(t.TempDir(), "bk"),
	}
	var out bytes.Buffer
	o.Out = &out
	res, err := apply.Switches(ctx, inv, o)
	if err != nil {
		t.Fatalf("apply --target switch: %v\n%s", err, out.String())
	}
	t.Log(res.Summary)
	for _, m := range res.Machines {
		if m.Status != applyplan.Changed {
			t.Errorf("%s: %s", m.Name, m.Status)
		}
		f.Sync(m.Name)
	}
	rdggen := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		start := time.Now()
		code := run(ctx, args, &out, &errb, func(string) string { return "" })
		t.Logf("rdggen %s → exit %d in %.1fs\n%s%s", args[0]+" "+args[1]+" "+args[2]+" "+args[3], code, time.Since(start).Seconds(), lastLines(out.String(), 6), errb.String())
		if code != exitOK {
			t.Fatalf("rdggen %s: exit %d\n%s", strings.Join(args, " "), code, out.String())
		}
		return out.String()
	}
	login := []string{"-f", file, "--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts, "--host-root", c.RootTemplate()}
	docker := []string{"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand(), "--keys", filepath.Join(c.Dir, "keys")}
	rdggen(append(append([]string{"apply", "--yes", "--target", "hosts"}, login...), docker...)...)
	for _, h := range c.Hosts {
		rs, err := c.HostRoutes(h)
		t.Logf("%s's routes on data0: %q %v", h.Name, rs, err)
	}
	rdggen(append(append([]string{"apply", "--yes", "--target", "workers"}, login...), docker...)...)

	established := func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, sw := range inv.Switches {
			s, err := f.BGPSummary(sw.Name)
			if err != nil {
				return false, err.Error()
			}
			fmt.Fprintf(&b, "%s:\n%s", sw.Name, s)
			ok = ok && s.Established() && len(s.Peers) == 2
		}
		return ok, b.String()
	}
	deadline := time.Now().Add(90 * time.Second)
	for ok, detail := established(); !ok; ok, detail = established() {
		if time.Now().After(deadline) {
			t.Fatalf("BGP not Established everywhere:\n%s", detail)
		}
		time.Sleep(250 * time.Millisecond)
	}
	_, summaries := established()
	t.Logf("show bgp summary:\n%s", summaries)
	for leaf, other := range map[string]string{"leaf1": "leaf2", "leaf2": "leaf1"} {
		for _, h := range inv.HostsOnSwitch(other) {
			deadline := time.Now().Add(60 * time.Second)
			for {
				r, ok, err := f.Route(leaf, h.Subnet)
				if err == nil && ok && len(r.NextHops) == 2 {
					t.Logf("%s: %s proto %s nexthops %v", leaf, r.Dst, r.Protocol, r.NextHops)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s has no route to %s over both spines: %v %v %v", leaf, h.Subnet, r, ok, err)
				}
				time.Sleep(250 * time.Millisecond)
			}
		}
	}

	// From each worker on leaf1 to each on leaf2 and back: ssh on the
	// worker port, the receiver's sshd logs the sender's container address.
	for _, a := range c.Hosts {
		for _, b := range c.Hosts {
			if inv.Hosts[a.Index].Data.Switch == inv.Hosts[b.Index].Data.Switch {
				continue
			}
			out, err := a.Docker("exec", horovod.WorkerName, "ssh", b.Container.String(), "echo", "from-"+a.Name)
			if err != nil || strings.TrimSpace(out) != "from-"+a.Name {
				t.Errorf("%s -> %s: %v %s", a.Name, b.Name, err, out)
			}
			if log, _ := b.Docker("logs", horovod.WorkerName); !strings.Contains(log, "Accepted publickey for root from "+a.Container.String()+" ") {
				t.Errorf("%s's sshd did not see %s's container address:\n%s", b.Name, a.Name, log)
			}
		}
	}

	// rdggen run: a real MPI job over the four workers, from ns-01's; each
	// host has a RoCE v2 GID of its fabric data address (staged: no RDMA here).
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(inv.Hosts[i].Data.Address.Addr(), 3))
	}
	mout := rdggen(append(append([]string{"run"}, login...), "--mpirun", "--", "/usr/local/bin/allreduce")...)
	t.Logf("rdggen run --mpirun across leaves:\n%s", mout)
	for r, h := range inv.Hosts {
		want := fmt.Sprintf("%s[%d]: rank %d of 4: alltoall ok, allreduce 10\n", h.Name, r, r)
		if !strings.Contains(mout, want) {
			t.Errorf("rdggen run's output lacks %q", want)
		}
		t.Logf("rank %d on %s (%s, container %s)", r, h.Name, h.Data.Switch, c.Hosts[r].Container)
	}
	// The workers on leaf2 saw the launcher's own container address.
	for _, h := range c.Hosts[2:] {
		if log, _ := h.Docker("logs", horovod.WorkerName); !strings.Contains(log, "Accepted publickey for root from "+c.Hosts[0].Container.String()+" ") {
			t.Errorf("%s's worker sshd did not log a login from %s:\n%s", h.Name, c.Hosts[0].Container, log)
		}
	}

	// rdggen bench --only rdma: the ring across leaves (every pair through
	// a spine), judged per leaf pair, the switches' counters read through
	// NVUE on the host ports and the uplinks. The workers' ib_write_bw is
	// netnstest's replay (no RDMA here): a real TCP connection from the
	// client's worker to the server's across the fabric, then the recorded
	// DeepOps report (92.40 Gb/s).
	withMgmt := text
	for _, sw := range inv.Switches {
		withMgmt = strings.Replace(withMgmt, "{name: "+sw.Name+", ", fmt.Sprintf("{name: %s, mgmt: %q, ", sw.Name, sw.Mgmt), 1)
	}
	benchFile := filepath.Join(t.TempDir(), "fabric-mgmt.yaml")
	if err := os.WriteFile(benchFile, []byte(withMgmt), 0o600); err != nil {
		t.Fatal(err)
	}
	var bout, berr bytes.Buffer
	benchArgs := append(append([]string{"bench", "-f", benchFile}, login[2:]...), "--only", "rdma", "--perftest-seconds", "1", "-o", "json",
		"--nvue-fingerprint", sims["spine1"].Fingerprint())
	for _, s := range sims {
		s.ResetRequests()
	}
	code := run(ctx, benchArgs, &bout, &berr, func(k string) string {
		if k == envNVUEPassword {
			return "cumulus"
		}
		return ""
	})
	t.Logf("rdggen bench --only rdma → exit %d\n%s", code, berr.String())
	// The recorded report ran at RDMA MTU 4096 and this cluster's data_mtu
	// is 1500 (RoCE MTU 1024): its rdma-mtu verdicts fail, and only they
	// (exit 1).
	var doc bench.Document
	if err := json.Unmarshal(bout.Bytes(), &doc); err != nil || code != exitInvalid || doc.OK || len(doc.Inputs) != 1 {
		t.Fatalf("bench: exit %d, %v\n%s", code, err, bout.String())
	}
	leafPairs := map[string]*bench.LeafPair{}
	for _, v := range doc.Inputs[0].Verdicts {
		if v.Status != bench.StatusPass && (v.Check != bench.CheckRDMAMTU || v.Found != "MTU 4096 B in the perftest header") {
			t.Errorf("bench: %s", v.Line())
		}
		if v.Check == bench.CheckRDMALeafPair {
			leafPairs[v.Subject] = v.LeafPair
		}
		if v.Check == bench.CheckRDMABandwidth {
			t.Logf("bench pair %s: %s", v.Subject, v.Found)
		}
	}
	for _, lp := range []string{"leaf1 → leaf2", "leaf2 → leaf1"} {
		if p := leafPairs[lp]; p == nil || p.Pairs != 2 || p.Slow != 0 || p.MinGbps == nil || *p.MinGbps != 92.40 {
			t.Errorf("bench %s: %+v", lp, p)
		}
	}
	if len(leafPairs) != 2 || strings.Contains(berr.String(), "switch counters:") {
		t.Errorf("bench: leaf pairs %v; stderr\n%s", leafPairs, berr.String())
	}
	for i, h := range c.Hosts {
		log, _ := h.Docker("exec", horovod.WorkerName, "cat", "/tmp/rdgtest-replay.log")
		peer := c.Hosts[[]int{2, 3, 1, 0}[i]] // the ring ns-01 → ns-03 → ns-02 → ns-04 → ns-01
		if strings.Count(log, "ib_write_bw ") != 2 || !strings.Contains(log, " -p 18515 "+peer.Container.String()+" ") {
			t.Errorf("%s's worker ran (want a client towards %s's worker %s):\n%s", h.Name, peer.Name, peer.Container, log)
		}
	}
	for sw, ports := range map[string][]string{"leaf1": {"swp1", "swp2", "swp31", "swp32"}, "spine2": {"swp1", "swp2"}} {
		for _, p := range ports {
			if n := sims[sw].Count("GET", "/interface/"+p+"/counters/qos/pfc-stats"); n != 2 {
				t.Errorf("%s %s: pause counters read %d times, want before and after", sw, p, n)
			}
		}
	}

	var bad []readiness.Result
	deadline = time.Now().Add(60 * time.Second)
	for {
		rs, err := apply.CheckSwitches(ctx, inv, o)
		bad = bad[:0]
		for _, r := range rs {
			if r.Status != readiness.Passed {
				bad = append(bad, r)
			}
		}
		if err == nil && len(bad) == 0 {
			break
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for _, r := range bad {
				b.WriteString(r.Line() + "\n")
			}
			t.Fatalf("check of the fabric: %v\n%s", err, b.String())
		}
		time.Sleep(time.Second)
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
