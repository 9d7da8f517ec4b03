package nvueapply

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// TestVersionGuard: releases are compared as numbers, never as text: an
// inventory's `cumulus: 5` does not let a 4.4.5 switch through, and
// `cumulus: 5.1` against a 5.15.0 switch is a warning that names what
// differs.
func TestVersionGuard(t *testing.T) {
	for _, c := range []struct {
		inv, sw string
		refused bool
		warn    string // "" for none
	}{
		{"5", "4.4.5", true, ""},
		{"5.9.1", "4.4.0", true, ""},
		{"5.1", "5.15.0", false, `the switch reports "Cumulus Linux 5.15.0" (release 5.15.0), the inventory says cumulus: 5.1; they differ in the NVUE names renamed in 5.15 (system lldp, qos roce state, interface ipv4 address), whether an apply saves (from 5.9): rdggen follows the inventory's; set cumulus: 5.15.0`},
		{"5.9", "5.9.1", false, `the inventory says cumulus: 5.9; nothing rdggen writes differs between the two; set cumulus: 5.9.1`},
		{"5.9.1", "5.9.1", false, ""},
		{"5.9.1", "5.9.1.0", false, ""},
	} {
		t.Run(c.inv+"-vs-"+c.sw, func(t *testing.T) {
			r := newRig(t, nvuesim.Options{Version: c.sw})
			inv := loadInvEdit(t, "cumulus", r.sim.Addr, "cumulus: 5.9.1", "cumulus: "+c.inv)
			r.o.DryRun = !c.refused // the plan's warnings (a 5.15 switch refuses 5.1's names)
			res, err := r.run(t, inv)
			if c.refused {
				if err == nil || res.Err == nil || !strings.Contains(res.Err.Error(), `the switch reports "Cumulus Linux `+c.sw+`": Cumulus Linux before 5.0.0 has no NVUE`) {
					t.Fatalf("want a refusal, got %v\n%s", res.Err, r.out)
				}
				if n := configPatches(r.sim); n != 0 || r.sim.Count("POST", "") != 0 {
					t.Errorf("%d PATCH requests, %d POST to a %s switch", n, r.sim.Count("POST", ""), c.sw)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, r.out)
			}
			warnings := strings.Join(res.Plan.Warnings, "\n")
			switch {
			case c.warn == "" && strings.Contains(warnings, "the switch reports"):
				t.Errorf("unexpected warning: %s", warnings)
			case c.warn != "" && !strings.Contains(warnings, c.warn):
				t.Errorf("warnings:\n%s\nwant %q", warnings, c.warn)
			}
		})
	}
}
