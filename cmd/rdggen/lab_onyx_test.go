package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/fabricnet"
)

// TestLabFabricONYX is TestLabFabric's first steps on ONYX: the golden 2 × 2
// ONYX fabric (testdata/golden/fabric-onyx) in a lab, FRR and lldpd behind
// each switch following the ONYX simulator's running-config (FollowONYX).
// After apply --target switch the switches check clean (0 failed, 0 could
// not tell); a stopped bgpd on leaf2 is named as the one probable cause,
// first in the not-ready line, with the BFD sessions of leaf2 and of the
// spines towards it among the findings that follow from it; a link taken
// down is one cause too, the BFD sessions at both ends of its cable
// following; and `lab fault repair` brings the fabric back to clean. lab down leaves nothing of the lab behind.
func TestLabFabricONYX(t *testing.T) {
	t.Parallel()
	fabricnet.Require(t)
	s, labDir := labGolden(t, "fabric-onyx")
	before := machineState(t, labDir) // this lab's processes, by their absolute --dir
	out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml", "--no-hosts")
	if !strings.Contains(out, "switch      leaf2  ONYX CLI over SSH") || !strings.Contains(out, "fabric      FRR (zebra, staticd, bfdd, bgpd) and lldpd behind every switch") {
		t.Fatalf("lab up:\n%s", out)
	}
	st, err := lab.ReadState(labDir)
	if err != nil {
		t.Fatal(err)
	}
	s.env = labEnvVars(t, labDir)
	args := []string{"-f", "rdg-lab/lab.yaml", "--parallel", "4"}
	out = s.run(exitOK, append([]string{"apply", "--target", "switch", "--yes", "--backup-dir", "bk"}, args...)...)
	if !strings.Contains(out, "switch: 4 changed, 0 up to date, 0 failed") {
		t.Errorf("apply:\n%s", out)
	}
	check := append([]string{"check", "--target", "switch"}, args...)
	waitCheck := func(what string, ok func(string) bool) string { return waitSwitchCheck(s, check, what, ok) }
	clean := switchesClean
	t.Log(lastLines(waitCheck("clean after apply", clean), 2))
	causeLine := regexp.MustCompile(`(?m)^rdggen check: probable cause of \d+ more finding\(s\): (\S+): (\S+) (\S+): FAILED`)
	notReady := regexp.MustCompile(`(?m)^rdggen check: not ready: (.*)$`)
	for _, tc := range []struct {
		fault []string
		// cause is the one finding check names as the cause ("machine
		// check subject"); bfd the BFD findings that follow from it.
		cause string
		bfd   []string
	}{
		// leaf2's bgpd registers its BFD sessions: they go with it, and
		// the spines' sessions to leaf2 go down.
		{[]string{"stop-bgp", "leaf2"}, "leaf2 bgp 10.254.0.5",
			[]string{"leaf2 bfd 10.254.0.5", "leaf2 bfd 10.254.0.7", "spine1 bfd 10.254.0.4", "spine2 bfd 10.254.0.6"}},
		// The cable leaf2 1/31 ↔ spine1 1/2, named at its far end (the
		// lab's ONYX view shows no admin state): both ends' BFD sessions go down.
		{[]string{"link-down", "leaf2:1/31"}, "spine1 link Eth1/2",
			[]string{"leaf2 bfd 10.254.0.5", "spine1 bfd 10.254.0.4"}},
	} {
		what := strings.Join(tc.fault, " ")
		s.run(exitOK, append([]string{"lab", "fault"}, tc.fault...)...)
		out := waitCheck(what, func(out string) bool {
			m := notReady.FindStringSubmatch(out)
			if m == nil || !strings.HasPrefix(m[1], tc.cause+" (") {
				return false
			}
			for _, b := range tc.bfd { // BFD detects within 3 × 300 ms; BGP may lag it
				if !strings.Contains(m[1], "; "+b) && !strings.Contains(m[1], "then: "+b) {
					return false
				}
			}
			return true
		})
		var causes []string
		for _, m := range causeLine.FindAllStringSubmatch(out, -1) {
			causes = append(causes, m[1]+" "+m[2]+" "+m[3])
		}
		// One fault, one cause line: the BFD findings follow from it.
		if len(causes) != 1 || causes[0] != tc.cause {
			t.Errorf("%s: the cause lines %q, want one (%q)\n%s", what, causes, tc.cause, out)
		}
		for _, b := range tc.bfd {
			f := strings.Fields(b)
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f[0]+": bfd "+f[2]+": FAILED: found ")).MatchString(out) {
				t.Errorf("%s: no failed %s:\n%s", what, b, out)
			}
		}
		t.Logf("%s:\n%s", what, strings.Join(append(causeLine.FindAllString(out, -1), notReady.FindString(out)), "\n"))
		s.run(exitOK, "lab", "fault", "repair")
		waitCheck("clean after repairing "+what, clean)
	}
	s.run(exitOK, "lab", "down")
	if alivePID(st.PID) {
		t.Errorf("the supervisor %d still runs after lab down", st.PID)
	}
	if diff := cmp.Diff(before, machineState(t, labDir, st.PID)); diff != "" {
		t.Errorf("the lab left something behind (-before +after):\n%s", diff)
	}
}
