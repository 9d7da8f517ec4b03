package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// BenchmarkCheckWorkers is `rdggen check --target workers` on 3, 6, 12 and
// 24 namespace hosts, each with a real dockerd running the worker (set up
// by apply --target hosts,workers, not timed), every host checked at once
// (--parallel n): the ring's n logins and the rule check, and with
// --all-pairs the n(n-1) logins. Reported: logins per check (the result
// lines), SSH sessions per host per check (the hosts' sshd logs) and the
// wall time per check (ns/op). What must hold: logins grow as n, the time
// about as n (time(24)/time(12) ≤ 2.5). Needs root, sshd, Docker, Open MPI;
// run with
//
//	go test ./cmd/rdggen -run '^$' -bench CheckWorkers -benchtime 3x -timeout 0
func BenchmarkCheckWorkers(b *testing.B) {
	prog := netnstest.BuildMPIProgram(b)
	image := netnstest.WorkerImage(b, prog)
	for _, n := range []int{3, 6, 12, 24} {
		c := netnstest.New(b, netnstest.Options{Hosts: n, Docker: true, Image: testImage})
		c.ImportImage(testImage, image)
		for _, target := range []string{"hosts", "workers"} {
			if code, out := benchRdggen(c, "apply", "--target", target, "--yes", "--parallel", strconv.Itoa(n),
				"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand()); code != exitOK {
				b.Fatalf("%d hosts: apply --target %s: exit %d\n%s", n, target, code, out)
			}
		}
		for _, mode := range []string{"ring", "all-pairs"} {
			if mode == "all-pairs" && n > 12 {
				continue // n² logins: the comparison needs no more
			}
			b.Run(fmt.Sprintf("hosts=%d/%s", n, mode), func(b *testing.B) {
				args := []string{"check", "--target", "workers", "--parallel", strconv.Itoa(n)}
				if mode == "all-pairs" {
					args = append(args, "--all-pairs")
				}
				s0 := sessions(c)
				logins := 0
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					_, out := benchRdggen(c, args...)
					b.StopTimer()
					// memlock may fail on a machine that caps locked memory
					// (see checkWorkersReadiness); everything else must pass.
					for _, l := range strings.Split(out, "\n") {
						if strings.Contains(l, "FAILED") && !strings.Contains(l, ": memlock: ") || strings.Contains(l, "COULD NOT TELL") {
							b.Fatalf("%d hosts: %s\n%s", n, l, out)
						}
					}
					logins += strings.Count(out, ": source-address to ")
					if !strings.Contains(out, fmt.Sprintf("%d of %d pairs covered by the rule check", n*(n-1), n*(n-1))) {
						b.Fatalf("%d hosts: not every pair covered:\n%s", n, out)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(logins)/float64(b.N), "logins/op")
				b.ReportMetric(float64(sessions(c)-s0)/float64(b.N)/float64(n), "sessions/host/op")
			})
		}
	}
}

// benchRdggen runs rdggen in-process against c with its connection flags;
// the exit status and stdout and stderr together.
func benchRdggen(c *netnstest.Cluster, args ...string) (int, string) {
	args = append(args, "-f", c.InventoryPath, "--ssh-user", "root", "--identity", c.Identity, "--known-hosts", c.KnownHosts,
		"--host-root", c.RootTemplate(), "--keys", filepath.Join(c.Dir, "keys"))
	var out bytes.Buffer
	code := run(context.Background(), args, &out, &out, func(string) string { return "" })
	return code, out.String()
}

// sessions counts the SSH sessions the hosts' sshd logged.
func sessions(c *netnstest.Cluster) int {
	total := 0
	for _, h := range c.Hosts {
		total += h.Sessions()
	}
	return total
}
