package apply_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vmware/govmomi/vim25"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
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

	res := apply.ApplyAll(ctx, inv, targets, apply.AllOptions{Confirm: confirm})
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
	res = apply.ApplyAll(ctx, inv, targets, apply.AllOptions{Confirm: confirm})
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
	if len(sim.Received()) != 18 {
		t.Errorf("the switch received %d commands, want 18 (8 port descriptions, 10 RoCE lines)", len(sim.Received()))
	}

	res = apply.ApplyAll(ctx, inv, targets, apply.AllOptions{Confirm: confirm})
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

// What rdggen apply and check need from ApplyAll and CheckAll, a caller
// gets: the waits of the one question as events of each target, each
// target's result as it ends (Ended), the vCenter login as the ESXi target
// starts (Connect), its record kept per vCenter (RecordDir), and the
// checks of several targets at once.
func TestApplyAllEventsAndConnect(t *testing.T) {
	inv, _, sw := switchEnv(t)
	vc, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vc.Close)
	ctx := context.Background()
	logins, logouts := 0, 0
	v := apply.VCenter{URL: vc.URL.String(), Username: vcsimtest.Username, Password: vcsimtest.Password, CACerts: vc.CAFile}
	records := t.TempDir()
	esxi := apply.ESXiOptions{Common: apply.Common{Parallel: 4}, RecordDir: records, Modules: vc.Modules,
		Connect: func(ctx context.Context) (*vim25.Client, func(), error) {
			logins++
			c, logout, err := v.Connector()(ctx)
			return c, func() { logouts++; logout() }, err
		}}
	var mu sync.Mutex
	var events []string
	var ended []string
	o := apply.AllOptions{
		Confirm: func(context.Context, []applyplan.Machine) bool { return true },
		Events: func(e applyplan.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Kind == applyplan.EventWait || e.Kind == applyplan.EventWaited || e.What == "planned" {
				events = append(events, e.Target+" "+string(e.Kind)+" "+e.What)
			}
		},
		Ended: func(i int, r apply.TargetResult) {
			mu.Lock()
			defer mu.Unlock()
			ended = append(ended, fmt.Sprintf("%d %s %v", i, r.Target, r.Err))
		},
	}
	res := apply.ApplyAll(ctx, inv, []apply.Target{sw, esxi}, o)
	for _, r := range res {
		if r.Err != nil || r.Result == nil || r.Seconds <= 0 {
			t.Fatalf("%s: %v %+v", r.Target, r.Err, r)
		}
	}
	slices.Sort(ended)
	if fmt.Sprint(ended) != "[0 switch <nil> 1 esxi <nil>]" || logins != 1 || logouts != 1 {
		t.Errorf("ended %v, %d login(s), %d logout(s)", ended, logins, logouts)
	}
	for _, target := range []string{"switch", "esxi"} {
		var mine []string
		for _, e := range events {
			if strings.HasPrefix(e, target+" ") {
				mine = append(mine, strings.TrimPrefix(e, target+" "))
			}
		}
		if len(mine) != 3 || mine[0] != "phase planned" || !strings.HasPrefix(mine[1], "wait ") || !strings.HasSuffix(mine[1], "the confirmation") || mine[2] != "waited "+strings.TrimPrefix(mine[1], "wait ") {
			t.Errorf("%s's events at the question: %q", target, mine)
		}
	}
	files, _ := filepath.Glob(filepath.Join(records, "esxi-*.json"))
	if len(files) != 1 {
		t.Errorf("records %v, want one for the one vCenter", files)
	}

	// The switch is ready; the ESXi hosts wait for their reboot (a
	// failed check each), but every check ran.
	res = apply.CheckAll(ctx, inv, []apply.Target{sw, esxi}, apply.AllOptions{})
	var tally [2]readiness.Tally
	for i, r := range res {
		tally[i].Add(r.Checks...)
		if r.Err != nil || tally[i].Passed == 0 || tally[i].Unknown != 0 {
			t.Errorf("check %s: %v %s", r.Target, r.Err, tally[i])
		}
	}
	if !tally[0].OK() || logins != 2 {
		t.Errorf("switch %s, %d login(s)", tally[0], logins)
	}
}
