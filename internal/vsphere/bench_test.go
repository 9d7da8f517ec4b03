package vsphere_test

import (
	"context"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/internal/vsphere"
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

func runApply(b *testing.B, e *env) *vsphere.Result {
	res, err := vsphere.Apply(context.Background(), e.sess.Client, e.inv, vsphere.Options{Parallel: parallel, Out: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	if err := res.Err(); err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkApply512 measures one apply of 512 VMs: "first" from the pristine
// state (reset between iterations, untimed), "noop" when everything already
// matches. Every SOAP call of the real client is counted by an
// http.RoundTripper around its transport (the module parameters included:
// they go through the simulator's HostKernelModuleSystem like any call).
// Metrics: SOAP round trips per VM and per ESXi host, reconfigure and
// retrieve calls per apply (retrieves include the task polls; devlists are
// the retrieves of host PCI device lists among them), the response bytes
// the client read, and the CPU time of client and simulator together per
// apply.
func BenchmarkApply512(b *testing.B) {
	e := bench512(b)
	n := float64(len(e.inv.Hosts))
	nESXi := float64(len(e.inv.ESXiHosts()))
	b.Run("first", func(b *testing.B) {
		var calls, reconf, retr, devs int
		var cpu time.Duration
		var bytes int64
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			e.sim.Reset()
			e.counter.Reset()
			c0 := cpuTime()
			b.StartTimer()
			res := runApply(b, e)
			b.StopTimer()
			cpu += cpuTime() - c0
			if res.VMsChanged != len(e.inv.Hosts) {
				b.Fatalf("first apply changed %d VMs", res.VMsChanged)
			}
			calls += e.counter.Total()
			bytes += e.counter.Bytes()
			reconf += e.counter.Count("ReconfigVM_Task")
			retr += e.counter.Count("RetrievePropertiesEx") + e.counter.Count("ContinueRetrievePropertiesEx")
			devs += e.counter.Matched(devList)
			if i == b.N-1 {
				b.Logf("N=%d, SOAP calls of the last apply: %s", b.N, e.counter)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(calls)/float64(b.N)/n, "soap/VM")
		b.ReportMetric(float64(calls)/float64(b.N)/nESXi, "soap/esxi")
		b.ReportMetric(float64(bytes)/float64(b.N)/1024, "resp-KiB/op")
		b.ReportMetric(float64(reconf)/float64(b.N), "reconfigs/op")
		b.ReportMetric(float64(retr)/float64(b.N), "retrieves/op")
		b.ReportMetric(float64(devs)/float64(b.N), "devlists/op")
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	})
	b.Run("noop", func(b *testing.B) {
		runApply(b, e) // make sure everything matches
		var calls, reconf, retr, devs int
		var cpu time.Duration
		var bytes int64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			e.counter.Reset()
			c0 := cpuTime()
			b.StartTimer()
			res := runApply(b, e)
			b.StopTimer()
			cpu += cpuTime() - c0
			if res.VMsChanged != 0 {
				b.Fatalf("no-op apply changed %d VMs", res.VMsChanged)
			}
			calls += e.counter.Total()
			bytes += e.counter.Bytes()
			reconf += e.counter.Count("ReconfigVM_Task")
			retr += e.counter.Count("RetrievePropertiesEx") + e.counter.Count("ContinueRetrievePropertiesEx")
			devs += e.counter.Matched(devList)
			if i == b.N-1 {
				b.Logf("N=%d, SOAP calls of the last apply: %s", b.N, e.counter)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(calls)/float64(b.N)/n, "soap/VM")
		b.ReportMetric(float64(calls)/float64(b.N)/nESXi, "soap/esxi")
		b.ReportMetric(float64(bytes)/float64(b.N)/1024, "resp-KiB/op")
		b.ReportMetric(float64(reconf)/float64(b.N), "reconfigs/op")
		b.ReportMetric(float64(retr)/float64(b.N), "retrieves/op")
		b.ReportMetric(float64(devs)/float64(b.N), "devlists/op")
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	})
}
