package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/horovod"
)

// A real Open MPI job between the workers of 3 namespace hosts, with the
// mpirun line of run.sh (horovod.LaunchArgs: TCP on the socket interface,
// the workers' sshd port) and the workers' SSH files (horovod.WorkerFiles,
// strict host key checking). The workers are emulated: sshd as
// horovod.WorkerCommand runs it, in each host's container namespace behind a
// Docker-like docker0 (FORWARD DROP, Docker's MASQUERADE rule), or in the host
// itself in host mode.
func TestMPIJob(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"bridge", "host"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testMPIJob(t, mode)
		})
	}
}

func testMPIJob(t *testing.T, mode string) {
	prog := netnstest.BuildMPIProgram(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 3, HorovodNetwork: mode})
	inv := c.Inventory
	hostNet := mode == "host"
	keys, err := horovod.GenerateWorkerKeys()
	if err != nil {
		t.Fatal(err)
	}
	c.StartWorkers(horovod.WorkerFiles(inv, keys), hostNet)
	argv := horovod.LaunchArgs(inv, true, []string{prog}, make([]int, len(inv.Hosts)))
	// job runs the MPI job, stopping it once its output says until (if
	// not "") or after timeout.
	job := func(timeout time.Duration, until string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		start := time.Now()
		out, err := c.MPIJobUntil(ctx, c.Hosts[0], hostNet, until, argv...)
		t.Logf("mpirun (%.1fs): %v\n%s", time.Since(start).Seconds(), err, out)
		return out, err
	}
	passes := func(out string, err error) bool {
		lines := netnstest.RankLines(out)
		if err != nil || len(lines) != 3 {
			return false
		}
		for r, l := range lines {
			if !strings.Contains(strings.Join(lines, "\n"), fmt.Sprintf("rank %d of 3: alltoall ok, allreduce 6", r)) {
				t.Errorf("rank %d's line missing: %q", r, l)
				return false
			}
		}
		return true
	}

	if mode == "bridge" {
		// Before the apply the containers cannot reach each other.
		if out, err := job(20*time.Second, ""); passes(out, err) {
			t.Fatal("the job passed before the apply")
		}
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply: exit %d", code)
	}
	if out, err := job(60*time.Second, ""); !passes(out, err) {
		t.Fatalf("the job failed after the apply")
	}
	// The launcher's SSH logins reached the other workers from its own address.
	from := c.Hosts[0].Container
	if hostNet {
		from = c.Hosts[0].Data.Addr()
	}
	for _, h := range c.Hosts[1:] {
		if log := c.WorkerLog(h); !strings.Contains(log, "Accepted publickey for root from "+from.String()+" ") {
			t.Errorf("%s's worker sshd did not log a login from %s:\n%s", h.Name, from, log)
		}
	}
	reach := c.Reachability
	if hostNet {
		reach = c.HostReachability
	}
	if ok, failed := reach(context.Background()); len(failed) != 0 || len(ok) != 6 {
		t.Fatalf("source-address check: %v", failed)
	}
	if hostNet {
		return
	}

	// The state before rdggen exempted container traffic from Docker's
	// masquerading: every host masquerades, and the firewall lets the hosts'
	// data addresses through (as it did then). The receivers see data
	// addresses, Open MPI drops those connections and the job does not
	// complete.
	for _, h := range c.Hosts {
		for _, args := range [][]string{
			{"iptables", "-I", "RDGGEN-CONTAINERS", "1", "-s", h.Data.Masked().String(), "-j", "ACCEPT"},
			{"iptables", "-t", "nat", "-D", "POSTROUTING", "-j", "RDGGEN-POSTROUTING"},
		} {
			if out, err := c.Exec(h.NS, args...); err != nil {
				t.Fatalf("%s: %v %s", h.Name, err, out)
			}
		}
	}
	if seen, err := c.Source(context.Background(), c.Hosts[1], c.Hosts[0]); err != nil || seen != c.Hosts[1].Data.Addr() {
		t.Fatalf("without the exemption the receiver saw %s (%v), want ns-02's data address", seen, err)
	}
	// A rank refuses the connection and says so; the others wait on for
	// it (mpirun did not end by itself within 60 s), so the job is stopped
	// once the refusal is printed. The bound is for a loaded machine.
	const refused = "from an IP address that is\nunexpected"
	if out, err := job(60*time.Second, refused); passes(out, err) || !strings.Contains(out, refused) {
		t.Fatal("the job passed with every host masquerading, or failed for another reason")
	}
}
