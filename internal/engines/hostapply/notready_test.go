package hostapply

import (
	"testing"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// TestNotReadySummary: a VM that could not be reached is not reported as a
// VM without a RoCE v2 GID, and each host is named once.
func TestNotReadySummary(t *testing.T) {
	bad := []readiness.Result{
		readiness.Result{Target: readiness.TargetHosts, Machine: "vm-01", Check: driver.CheckConnect, Subject: "", Status: readiness.Unknown, Found: "dial tcp 192.0.2.1:22: connection refused"},
		readiness.Result{Target: readiness.TargetHosts, Machine: "vm-03", Check: CheckGID, Subject: "mlx5_0 port 1", Status: readiness.Failed, Found: "none", Expected: "RoCE v2", Fix: "fix"},
		readiness.Result{Target: readiness.TargetHosts, Machine: "vm-03", Check: CheckPortState, Subject: "mlx5_0 port 1", Status: readiness.Failed, Found: "DOWN", Expected: "ACTIVE", Fix: "fix"},
		readiness.Result{Target: readiness.TargetHosts, Machine: "vm-02", Check: driver.CheckConnect, Subject: "", Status: readiness.Unknown, Found: "timeout"},
	}
	for _, c := range []struct {
		in   []readiness.Result
		want string
	}{
		{bad, "no usable RoCE v2 GID on vm-03; not read over SSH: vm-01, vm-02"},
		{bad[:1], "not read over SSH: vm-01"},
		{bad[1:3], "no usable RoCE v2 GID on vm-03"},
	} {
		if got := NotReadySummary(c.in); got != c.want {
			t.Errorf("NotReadySummary = %q, want %q", got, c.want)
		}
	}
}

// TestBAR1GB: the bar1_gb a guest's BAR1 is suggested as passes
// validation (a power of two, at least 1 GB).
func TestBAR1GB(t *testing.T) {
	for mb, want := range map[int]int{256: 1, 1024: 1, 1025: 2, 16384: 16, 32768: 32, 49152: 64, 65536: 64} {
		if got := bar1GB(mb); got != want {
			t.Errorf("bar1GB(%d MiB) = %d GB, want %d", mb, got, want)
		}
	}
}
