package readiness

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestLineAndTally(t *testing.T) {
	rs := []Result{
		Result{Target: TargetHosts, Machine: "clx-mld-41", Check: "gid", Subject: "mlx5_0 port 1", Status: Passed, Found: "index 3: RoCE v2 31.31.31.41 on ens224"},
		Result{Target: TargetSwitch, Machine: "sw-1", Check: "pfc", Subject: "Eth1/3", Status: Failed, Found: "oper Disabled", Expected: "oper Enabled", Fix: "interface ethernet 1/3 dcb priority-flow-control mode on force"},
		Result{Target: TargetWorkers, Machine: "clx-mld-42", Check: "sshd", Subject: "", Status: Unknown, Found: "hvd-worker is not running"},
		Result{Target: TargetESXi, Machine: "esx-41", Check: "reboot", Subject: "", Status: Failed, Found: "", Expected: "", Fix: ""},
	}
	want := []string{
		"clx-mld-41: gid mlx5_0 port 1: passed (index 3: RoCE v2 31.31.31.41 on ens224)",
		"sw-1: pfc Eth1/3: FAILED: found oper Disabled; expected oper Enabled; fix: interface ethernet 1/3 dcb priority-flow-control mode on force",
		"clx-mld-42: sshd: COULD NOT TELL: hvd-worker is not running",
		"esx-41: reboot: FAILED: found (nothing); expected (nothing)",
	}
	for i, r := range rs {
		if got := r.Line(); got != want[i] {
			t.Errorf("Line() = %q\nwant     %q", got, want[i])
		}
	}
	var tally Tally
	tally.Add(rs...)
	if tally.OK() || tally.String() != "1 passed, 2 failed, 1 could not tell" {
		t.Errorf("tally %s, OK %v", tally, tally.OK())
	}
	var ok Tally
	ok.Add(rs[0])
	if !ok.OK() {
		t.Error("one passed check is not OK")
	}
}

// The JSON field names are the documented schema (docs/json.md).
func TestDocumentFields(t *testing.T) {
	d := &Document{Schema: SchemaCheck, Cluster: "c", Inventory: "c.yaml", Targets: []Target{{Name: "hosts", Tally: Tally{Passed: 1}, Seconds: 0.5}},
		Results: []Result{Result{Target: TargetHosts, Machine: "h", Check: "gid", Subject: "", Status: Passed, Found: "x"}}}
	var b bytes.Buffer
	if err := d.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	tg := m["targets"].([]any)[0].(map[string]any)
	r := m["results"].([]any)[0].(map[string]any)
	if m["schema"] != "rdggen.check/v1" || m["ok"] != false || tg["target"] != "hosts" || tg["passed"] != 1.0 || tg["unknown"] != 0.0 ||
		r["machine"] != "h" || r["check"] != "gid" || r["status"] != "passed" || r["found"] != "x" || r["subject"] != nil || r["fix"] != nil {
		t.Errorf("fields: %s", b.String())
	}
}
