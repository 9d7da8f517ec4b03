package apply_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
)

// ApplyAll plans the switch (the ONYX simulator) and ESXi (vCenter's
// simulator) together and asks once with both targets' machines: a no
// changes nothing on either; a yes pushes both; a second run plans
// nothing and asks nothing.
func TestApplyAllAsksOnce(t *testing.T) {
	inv, sim, sw := switchEnv(t)
	vc, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	ctx := context.Background()
	client, logout, err := apply.ConnectVCenter(ctx, apply.VCenter{URL: vc.URL.String(), Username: vcsimtest.Username, Password: vcsimtest.Password, CACerts: vc.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(logout)
	// Each target's own Confirm is replaced by ApplyAll's one question.
	never := func(context.Context, []applyplan.Machine) bool {
		t.Error("a target's own Confirm was asked")
		return false
	}
	sw.Confirm = never
	esxi := apply.ESXiOptions{Common: apply.Common{Parallel: 4, Confirm: never}, Client: client}
	targets := []apply.Target{sw, esxi}

	var mu sync.Mutex
	var asked [][]applyplan.Machine
	answer := false
	confirm := func(_ context.Context, planned []applyplan.Machine) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, planned)
		return answer
	}
	count := func(planned []applyplan.Machine) map[applyplan.TargetName]int {
		n := map[applyplan.TargetName]int{}
		for _, m := range planned {
			n[m.Target]++
		}
		return n
	}

	res := apply.ApplyAll(ctx, inv, targets, confirm)
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want once", len(asked))
	}
	if n := count(asked[0]); n[applyplan.TargetSwitch] != 1 || n[applyplan.TargetESXi] != len(inv.ESXiHosts())+len(inv.Hosts) {
		t.Errorf("the question saw %v machines, want 1 switch and %d ESXi hosts and VMs", n, len(inv.ESXiHosts())+len(inv.Hosts))
	}
	if len(sim.Received()) != 0 {
		t.Errorf("declined, yet the switch received %q", sim.Received())
	}
	for _, r := range res {
		if r.Err != nil || r.Result == nil {
			t.Fatalf("%s: %v", r.Target, r.Err)
		}
		for _, m := range r.Result.Machines {
			if m.Status != applyplan.Planned {
				t.Errorf("declined: %s %s is %s", r.Target, m.Name, m.Status)
			}
		}
	}

	answer = true
	res = apply.ApplyAll(ctx, inv, targets, confirm)
	if len(asked) != 2 || res[0].Target != applyplan.TargetSwitch || res[1].Target != applyplan.TargetESXi {
		t.Fatalf("asked %d times, results %+v", len(asked), res)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Target, r.Err)
		}
		for _, m := range r.Result.Machines {
			if m.Status != applyplan.Changed {
				t.Errorf("agreed: %s %s is %s", r.Target, m.Name, m.Status)
			}
		}
	}
	if len(sim.Received()) != 10 {
		t.Errorf("the switch received %d commands, want 10", len(sim.Received()))
	}

	res = apply.ApplyAll(ctx, inv, targets, confirm)
	if len(asked) != 2 {
		t.Errorf("second run: asked again (%d questions in all) with nothing to change", len(asked))
	}
	for _, r := range res {
		for _, m := range r.Result.Machines {
			if m.Status != applyplan.UpToDate {
				t.Errorf("second run: %s %s is %s", r.Target, m.Name, m.Status)
			}
		}
	}
}
