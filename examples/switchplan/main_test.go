package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// From another module: an inventory built in Go, a switch plan against the
// ONYX simulator, read as typed changes; nothing is sent to the switch.
func TestPlanAgainstSimulator(t *testing.T) {
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "leaf1", Ports: 16, Version: "3.9.3210"})
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(sim.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := lab(sim.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ssh := apply.SSH{Password: "admin", KnownHosts: kh}
	ms, err := plan(context.Background(), inv, ssh)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Name != "leaf1" || ms[0].Status != applyplan.Planned || len(sim.Received()) != 0 {
		t.Fatalf("plan %+v; the switch received %q", ms, sim.Received())
	}
	items := map[string]applyplan.Change{}
	for _, c := range ms[0].Changes {
		items[c.Item] = c
	}
	// ONYX 3.9 takes the one-command RoCE template.
	if c, ok := items["roce"]; !ok || c.Op != applyplan.Add {
		t.Errorf("no roce change in %+v", ms[0].Changes)
	}
	var out bytes.Buffer
	printPlan(&out, ms)
	if !strings.HasPrefix(out.String(), "leaf1 ("+sim.Addr+"): planned\n") {
		t.Errorf("table:\n%s", out.String())
	}

	rs, err := check(context.Background(), inv, ssh)
	var tally readiness.Tally
	tally.Add(rs...)
	if err != nil || tally.OK() || tally.Failed == 0 {
		t.Errorf("an unconfigured switch checks %s (%v)", tally, err)
	}
}
