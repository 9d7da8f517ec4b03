package readiness

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestLineAndTally(t *testing.T) {
	rs := []Result{
		Pass(TargetHosts, "clx-mld-41", "gid", "mlx5_0 port 1", "index 3: RoCE v2 31.31.31.41 on ens224"),
		Fail(TargetSwitch, "sw-1", "pfc", "Eth1/3", "oper Disabled", "oper Enabled", "interface ethernet 1/3 dcb priority-flow-control mode on force"),
		Unsure(TargetWorkers, "clx-mld-42", "sshd", "", "hvd-worker is not running"),
		Fail(TargetESXi, "esx-41", "reboot", "", "", "", ""),
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
		Results: []Result{Pass(TargetHosts, "h", "gid", "", "x")}}
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
