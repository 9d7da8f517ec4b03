package readiness_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/readiness"
)

// Results of `rdggen check`, as a person reads them, and their tally.
func ExampleResult_Line() {
	rs := []readiness.Result{
		readiness.Result{Target: readiness.TargetHosts, Machine: "clx-mld-41", Check: "gid", Subject: "mlx5_0 port 1", Status: readiness.Passed, Found: "index 3: RoCE v2 31.31.31.41 on enp1f0"},
		readiness.Result{Target: readiness.TargetSwitch, Machine: "swx-mld-1-2", Check: "pfc", Subject: "Eth1/3", Status: readiness.Failed, Found: "oper Disabled", Expected: "oper Enabled", Fix: "interface ethernet 1/3 dcb priority-flow-control mode on force"},
	}
	var t readiness.Tally
	for _, r := range rs {
		fmt.Println(r.Line())
		t.Add(r)
	}
	fmt.Println(t, t.OK())
	// Output:
	// clx-mld-41: gid mlx5_0 port 1: passed (index 3: RoCE v2 31.31.31.41 on enp1f0)
	// swx-mld-1-2: pfc Eth1/3: FAILED: found oper Disabled; expected oper Enabled; fix: interface ethernet 1/3 dcb priority-flow-control mode on force
	// 1 passed, 1 failed, 0 could not tell false
}
