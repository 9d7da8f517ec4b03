package apply_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// switchEnv is the reference cluster with its switch on the ONYX simulator.
func switchEnv(t *testing.T) (*inventory.Inventory, *onyxsim.Server, apply.SwitchOptions) {
	t.Helper()
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2"})
	inv := inventory.Reference()
	inv.Switches[0].Mgmt = sim.Addr
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(sim.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return inv, sim, apply.SwitchOptions{SSH: apply.SSH{Password: "admin", KnownHosts: kh}, BackupDir: filepath.Join(t.TempDir(), "bk")}
}

// A dry run returns the typed plan, sends nothing, and reports its progress
// as events; a declined confirmation changes nothing; an agreed one pushes
// and a second run finds nothing to do; the check then passes.
func TestSwitches(t *testing.T) {
	inv, sim, o := switchEnv(t)
	ctx := context.Background()
	var mu sync.Mutex
	var kinds []applyplan.EventKind
	var out bytes.Buffer
	o.DryRun, o.Out = true, &out
	o.Events = func(e applyplan.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Target != "switch" {
			t.Errorf("event of target %q", e.Target)
		}
		kinds = append(kinds, e.Kind)
	}
	res, err := apply.Switches(ctx, inv, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Machines) != 1 || res.Machines[0].Status != applyplan.Planned || len(res.Machines[0].Changes) != 18 || len(sim.Received()) != 0 {
		t.Fatalf("dry run: %+v, sim received %q", res.Machines, sim.Received())
	}
	// The data ports' descriptions first (Interface Ethernet configuration
	// precedes RoCE in running-config order), then the RoCE lines.
	if c := res.Machines[0].Changes[0]; c.Op != applyplan.Add || c.Item != "interface ethernet 1/1 description" || c.To != "clx-mld-41@esx-41.example/vmnic4" {
		t.Errorf("first change %+v", c)
	}
	if c := res.Machines[0].Changes[8]; c.Op != applyplan.Add || c.Item != "traffic pool roce type" || c.To != "lossless" {
		t.Errorf("first change %+v", c)
	}
	if res.Summary != "switch: dry run: 1 switch(es) would change, 0 up to date, 0 failed; 0 commands sent" || !strings.HasSuffix(out.String(), res.Summary+"\n") {
		t.Errorf("summary %q, text:\n%s", res.Summary, out.String())
	}
	for _, k := range []applyplan.EventKind{applyplan.EventPhase, applyplan.EventBegin, applyplan.EventEnd, applyplan.EventLine, applyplan.EventFinish} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s event in %v", k, kinds)
		}
	}

	o.DryRun, o.Events, o.Out = false, nil, nil
	o.Confirm = func(ctx context.Context, planned []applyplan.Machine) bool { return false }
	if res, err = apply.Switches(ctx, inv, o); err != nil || res.Machines[0].Status != applyplan.Planned || len(sim.Received()) != 0 {
		t.Fatalf("declined: %v %+v %q", err, res.Machines, sim.Received())
	}
	o.Confirm = nil
	if res, err = apply.Switches(ctx, inv, o); err != nil || res.Machines[0].Status != applyplan.Changed || len(sim.Received()) != 18 {
		t.Fatalf("apply: %v %+v", err, res.Machines)
	}
	if res, err = apply.Switches(ctx, inv, o); err != nil || res.Machines[0].Status != applyplan.UpToDate {
		t.Fatalf("second apply: %v %+v", err, res.Machines)
	}
	rs, err := apply.CheckSwitches(ctx, inv, o)
	var tally readiness.Tally
	tally.Add(rs...)
	if err != nil || !tally.OK() || tally.Passed < 10 {
		t.Errorf("check: %v %s", err, tally)
	}
}

// A switch that cannot be reached fails its machine, and the error says
// that machines failed.
func TestSwitchesUnreachable(t *testing.T) {
	inv, sim, o := switchEnv(t)
	sim.Close()
	res, err := apply.Switches(context.Background(), inv, o)
	if !errors.Is(err, apply.ErrMachines) || len(res.Failed()) != 1 || res.Failed()[0].Error == "" {
		t.Fatalf("err %v, failed %+v", err, res.Failed())
	}
}
