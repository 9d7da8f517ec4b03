package esxiapply_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// cloneInventory is 64 VMs, one per ESXi host (the guide's layout), all
// cloned from one EFI template with cloud-init.
func cloneInventory(b *testing.B, n int) *inventory.Inventory {
	var s strings.Builder
	s.WriteString("name: bench\nswitches:\n  - {name: sw-0, model: SN4600C, onyx: 3.10.2000}\ndocker: {pool: 172.16.0.0/12, prefix: 24}\n")
	s.WriteString("defaults:\n  os: ubuntu-22.04\n  data_interface: enp1f0\n  gpus:\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n    - {model: V100-PCIE-16GB, memory_gb: 16}\n")
	s.WriteString("  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n  template: {name: ubuntu-gpu-efi, cpus: 16, memory_gb: 32, ssh_keys: [\"" + testKey + "\"]}\nhosts:\n")
	for i := range n {
		fmt.Fprintf(&s, "  - name: vm-%d\n    esxi: esx-%d.example\n    data: {address: 10.0.0.%d/24, port: 1/%d}\n", i, i, i+1, i+1)
	}
	inv, err := inventory.Load("bench.yaml", []byte(s.String()))
	if err != nil {
		b.Fatal(err)
	}
	return inv
}

// BenchmarkClone64 clones, configures and boots 64 VMs on the simulator
// (first apply), then applies again (no-op). Each iteration starts from a
// fresh simulator (not timed); first-s and noop-ms are the two applies' wall
// times, clone-calls and noop-soap the SOAP requests they sent.
func BenchmarkClone64(b *testing.B) {
	const n = 64
	inv := cloneInventory(b, n)
	var vms []string
	for _, h := range inv.Hosts {
		vms = append(vms, h.VM)
	}
	var first, noop time.Duration
	var firstCalls, noopCalls int
	for b.Loop() {
		b.StopTimer()
		e, closeEnv, err := setupEnv(inv, vcsimtest.Options{SkipVMs: vms, Templates: templates})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		run := func() (*esxiapply.Result, time.Duration, int) {
			e.counter.Reset()
			t0 := time.Now()
			res, err := esxiapply.Apply(context.Background(), e.sess.Client, inv, esxiapply.Options{Parallel: parallel, Out: io.Discard, Modules: e.sim.Modules})
			if err != nil {
				b.Fatal(err)
			}
			if err := res.Err(); err != nil {
				b.Fatal(err)
			}
			return res, time.Since(t0), e.counter.Total()
		}
		res, d, calls := run()
		if res.VMsChanged != n || e.sim.CloneCalls() != n {
			b.Fatalf("first apply: %s, %d clones", res.Summary(), e.sim.CloneCalls())
		}
		first += d
		firstCalls += calls
		res, d, calls = run()
		if res.VMsChanged != 0 || res.HostsChanged != 0 {
			b.Fatalf("second apply: %s", res.Summary())
		}
		noop += d
		noopCalls += calls
		b.StopTimer()
		closeEnv()
		b.StartTimer()
	}
	k := float64(b.N)
	b.ReportMetric(first.Seconds()/k, "first-s")
	b.ReportMetric(float64(noop.Milliseconds())/k, "noop-ms")
	b.ReportMetric(float64(firstCalls)/k, "first-soap")
	b.ReportMetric(float64(noopCalls)/k, "noop-soap")
}
