package esxiapply_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
)

var (
	benchOnce sync.Once
	benchEnv  *env
	benchErr  error
)

// bench512 is one simulator with 512 VMs on 64 ESXi hosts (8 per host, GPU
// addresses in the inventory), built once for all benchmarks (~10 s).
func bench512(b *testing.B) *env {
	benchOnce.Do(func() {
		inv, err := vcsimtest.Inventory(64, 8)
		if err != nil {
			benchErr = err
			return
		}
		// Shared by the sub-benchmarks; the process ends it.
		benchEnv, _, benchErr = setupEnv(inv, vcsimtest.Options{})
		if benchErr == nil {
			benchEnv.counter.Watch(devList)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchEnv
}

// devList marks the retrieves of host PCI device lists.
const devList = "hardware.pciDevice"

// cpuTime is the process's user+system CPU time: client and simulator
// together, a steadier measure than wall time on a shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runApply runs one apply with the record of the last (as the CLI does;
// full: as `apply --full`), its client side labelled side=client and
// run=measured (the applies measureApply times) or run=setup for the CPU
// profile (go test -cpuprofile, then go tool pprof -tagfocus run=measured
// -tags), the simulator's server goroutines unlabelled.
func runApply(b *testing.B, e *env, full bool, run string) *esxiapply.Result {
	var res *esxiapply.Result
	var err error
	pprof.Do(context.Background(), pprof.Labels("side", "client", "run", run), func(ctx context.Context) {
		res, err = esxiapply.Apply(ctx, e.sess.Client, e.inv, esxiapply.Options{Parallel: parallel, Out: io.Discard, Record: e.record, Full: full})
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := res.Err(); err != nil {
		b.Fatal(err)
	}
	e.record = res.Record
	return res
}

// BenchmarkApply512 measures one apply of 512 VMs: "first" from the pristine
// state (reset between iterations, untimed; the reset changes every VM's
// change version, as a reconfiguration does), "noop" when everything
// already matches and the last apply's record proves every VM unchanged
// (the CLI's default), "noop-full" the same with Options.Full (`apply
// --full`: every VM read whole, as before the record). Every apply carries
// the record of the one before. Every SOAP call of the real client is
// counted by an http.RoundTripper around its transport (the module
// parameters included: they go through the simulator's
// HostKernelModuleSystem like any call). Metrics: SOAP round trips per VM
// and per ESXi host, reconfigure and retrieve calls per apply (retrieves
// include the task polls; devlists are the retrieves of host PCI device
// lists among them), the VMs the record proved unchanged, the response
// bytes the client read, and the CPU time of client and simulator together
// per apply (the client's alone: go test -cpuprofile, then go tool pprof
// -tags, label side=client). The log of each run lists the last apply's
// SOAP calls and its response bytes per object type and property path, in
// KiB (vcsimtest.Counter.PropertyBytes): where a no-op's bytes go.
func BenchmarkApply512(b *testing.B) {
	e := bench512(b)
	b.Run("first", func(b *testing.B) {
		measureApply(b, e, false, func() { e.sim.Reset() }, func(res *esxiapply.Result) {
			if res.VMsChanged != len(e.inv.Hosts) {
				b.Fatalf("first apply changed %d VMs", res.VMsChanged)
			}
		})
	})
	noop := func(res *esxiapply.Result) {
		if res.VMsChanged != 0 || res.HostsChanged != 0 {
			b.Fatalf("no-op apply changed %d VMs and %d hosts", res.VMsChanged, res.HostsChanged)
		}
	}
	b.Run("noop", func(b *testing.B) {
		runApply(b, e, false, "setup") // make sure everything matches
		runApply(b, e, false, "setup") // and is recorded
		measureApply(b, e, false, nil, func(res *esxiapply.Result) {
			noop(res)
			if res.VMsProven != len(e.inv.Hosts) {
				b.Fatalf("no-op apply proved %d VMs unchanged, want all %d", res.VMsProven, len(e.inv.Hosts))
			}
		})
	})
	b.Run("noop-full", func(b *testing.B) {
		runApply(b, e, false, "setup")
		measureApply(b, e, true, nil, func(res *esxiapply.Result) {
			noop(res)
			if res.VMsProven != 0 {
				b.Fatalf("--full apply proved %d VMs unchanged", res.VMsProven)
			}
		})
	})
}

// measureApply runs b.N applies (reset before each, untimed, when not nil),
// checks each result and reports the metrics of BenchmarkApply512.
func measureApply(b *testing.B, e *env, full bool, reset func(), check func(*esxiapply.Result)) {
	n := float64(len(e.inv.Hosts))
	nESXi := float64(len(e.inv.ESXiHosts()))
	var calls, reconf, retr, devs, proven int
	var cpu time.Duration
	var bytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if reset != nil {
			reset()
		}
		e.counter.Reset()
		if i == b.N-1 {
			e.counter.KeepBodies()
		}
		c0 := cpuTime()
		b.StartTimer()
		res := runApply(b, e, full, "measured")
		b.StopTimer()
		cpu += cpuTime() - c0
		check(res)
		calls += e.counter.Total()
		bytes += e.counter.Bytes()
		reconf += e.counter.Count("ReconfigVM_Task")
		retr += e.counter.Count("RetrievePropertiesEx") + e.counter.Count("ContinueRetrievePropertiesEx")
		devs += e.counter.Matched(devList)
		proven += res.VMsProven
		if i == b.N-1 {
			b.Logf("N=%d, SOAP calls of the last apply: %s", b.N, e.counter)
			b.Logf("response bytes of the last apply by property: %s", propertyBytes(e.counter.PropertyBytes()))
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(calls)/float64(b.N)/n, "soap/VM")
	b.ReportMetric(float64(calls)/float64(b.N)/nESXi, "soap/esxi")
	b.ReportMetric(float64(calls)/float64(b.N), "soap/op")
	b.ReportMetric(float64(bytes)/float64(b.N)/1024, "resp-KiB/op")
	b.ReportMetric(float64(reconf)/float64(b.N), "reconfigs/op")
	b.ReportMetric(float64(retr)/float64(b.N), "retrieves/op")
	b.ReportMetric(float64(devs)/float64(b.N), "devlists/op")
	b.ReportMetric(float64(proven)/float64(b.N), "proven/op")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// propertyBytes lists the entries of a vcsimtest.Counter's PropertyBytes,
// largest first, in KiB.
func propertyBytes(m map[string]int) string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Compare(m[b], m[a]) })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, float64(m[k])/1024))
	}
	return strings.Join(parts, ", ")
}
