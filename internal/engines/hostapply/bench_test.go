package hostapply

import (
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/transport/remote"
)

// BenchmarkApplyHosts32 applies to 32 namespace hosts (a fresh cluster per
// iteration; its construction is not timed): the first apply, which changes
// everything, and the no-op second one. Reported: wall time of each and SSH
// commands (round trips after the connection) per host, counted by the
// hosts' sshd logs. Needs root; run with
//
//	go test ./internal/engines/hostapply -run '^$' -bench ApplyHosts32 -benchtime 3x
func BenchmarkApplyHosts32(b *testing.B) {
	const n = 32
	var first, noop time.Duration
	var tripsFirst, tripsNoop float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := netnstest.New(b, netnstest.Options{Hosts: n, OS: func(i int) string {
			if i%2 == 0 {
				return "ubuntu-16.04"
			}
			return "ubuntu-20.04"
		}})
		o := Options{
			Dial:           remote.SSH{User: "root", KnownHosts: c.KnownHosts, Identities: []string{c.Identity}}.Dialer(),
			Root:           c.RootTemplate(),
			DockerRestart:  c.DockerRestartCommand(),
			DockerValidate: c.DockerValidateCommand(),
			Parallel:       benchParallel(),
			Out:            io.Discard,
		}
		b.StartTimer()
		t0 := time.Now()
		rep, err := Run(context.Background(), c.Inventory, o)
		first += time.Since(t0)
		if err != nil || rep.Changed != n {
			b.Fatalf("first apply: %v %+v", err, rep)
		}
		s1 := sessions(c)
		t0 = time.Now()
		rep, err = Run(context.Background(), c.Inventory, o)
		noop += time.Since(t0)
		if err != nil || rep.UpToDate != n {
			b.Fatalf("second apply: %v", err)
		}
		b.StopTimer()
		if ok, failed := c.Reachability(context.Background()); len(failed) != 0 {
			b.Fatalf("after the apply %d container pairs do not answer: %v", len(failed), failed)
		} else if i == 0 {
			b.Logf("all %d container pairs answer", len(ok))
		}
		tripsFirst += float64(s1) / n
		tripsNoop += float64(sessions(c)-s1) / n
		b.StartTimer()
	}
	b.ReportMetric(first.Seconds()/float64(b.N), "s-first")
	b.ReportMetric(noop.Seconds()/float64(b.N), "s-noop")
	b.ReportMetric(tripsFirst/float64(b.N), "cmds/host-first")
	b.ReportMetric(tripsNoop/float64(b.N), "cmds/host-noop")
}

func sessions(c *netnstest.Cluster) int {
	total := 0
	for _, h := range c.Hosts {
		total += h.Sessions()
	}
	return total
}

// benchParallel is --parallel for the benchmark: RDGGEN_BENCH_PARALLEL, else
// 8 (the CLI's default).
func benchParallel() int {
	if n, err := strconv.Atoi(os.Getenv("RDGGEN_BENCH_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 8
}
