package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/fabricnet"
)

// TestLabFabric brings a lab up for the golden 2 × 2 Cumulus fabric
// (testdata/golden/fabric-cumulus): FRR and lldpd run behind each switch,
// cabled by fabric.links. Apply to vCenter and the switches, and the
// switches check clean: 0 failed, 0 could not tell. Each fabric fault is
// then named by exactly one cause line, cause first (a swapped pair of
// cables too: the first swapped port of leaf1; a pair swapped between two
// leaves by the two cables' lines, with no finding standing alone), and `lab fault repair`
// brings the fabric back to clean. lab down leaves nothing of the lab behind.
func TestLabFabric(t *testing.T) {
	t.Parallel()
	fabricnet.Require(t)
	// The commands run in the inventory's directory, as processes.
	s, labDir := labGolden(t, "fabric-cumulus")
	before := machineState(t, labDir)
	out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml", "--no-hosts")
	for _, want := range []string{"switch      leaf2  Cumulus NVUE API", "fabric      FRR (zebra, staticd, bfdd, bgpd) and lldpd behind every switch",
		"not simulated: the switches' PFC and ECN counters"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab up lacks %q:\n%s", want, out)
		}
	}
	st, err := lab.ReadState(labDir)
	if err != nil || len(st.Namespaces) != 8 {
		t.Fatalf("state %+v, %v (want the 4 switches' and the 4 VMs' namespaces)", st, err)
	}
	s.env = labEnvVars(t, labDir)
	args := []string{"-f", "rdg-lab/lab.yaml", "--parallel", "4"}
	out = s.run(exitOK, append([]string{"apply", "--target", "esxi,switch", "--yes", "--backup-dir", "bk"}, args...)...)
	if !strings.Contains(out, "switch: 4 changed, 0 up to date, 0 failed") {
		t.Errorf("apply:\n%s", out)
	}
	check := append([]string{"check", "--target", "switch"}, args...)
	waitCheck := func(what string, ok func(string) bool) string { return waitSwitchCheck(s, check, what, ok) }
	clean := switchesClean
	out = waitCheck("clean after apply", clean)
	t.Log(lastLines(out, 2))

	causeLine := regexp.MustCompile(`(?m)^rdggen check: probable cause of \d+ more finding\(s\): (\S+): (\S+) (\S+): FAILED`)
	notReady := regexp.MustCompile(`(?m)^rdggen check: not ready: (.*)$`)
	for _, tc := range []struct {
		fault []string
		// causes are the findings check names as causes ("machine check
		// subject"); first is the first name of its not ready line.
		causes []string
		first  string
		// renewed are the bgpd processes and the ports (fabricState's
		// keys) repair makes anew; it leaves every other alone.
		renewed []string
	}{
		{[]string{"link-speed", "leaf1:swp1s0", "100"}, nil, "leaf1 link swp1s0", nil},
		{[]string{"link-down", "leaf2:swp63"}, []string{"leaf2 link swp63"}, "leaf2 link swp63 (20 follow from it)", nil},
		{[]string{"stop-bgp", "leaf2"}, []string{"leaf2 bgp swp63"}, "leaf2 bgp swp63 (25 follow from it)", []string{"leaf2 bgpd"}},
		// Two cables swapped at leaf1: one fault, one cause.
		{[]string{"miswire", "leaf1:swp63", "leaf1:swp64"}, []string{"leaf1 lldp swp63"}, "leaf1 lldp swp63 (7 follow from it)",
			[]string{"leaf1 swp63", "leaf1 swp64", "spine1 swp1", "spine2 swp1"}},
		// Two cables swapped between leaf1 and leaf2: every finding
		// follows from one of the two cables' LLDP findings (the routes
		// with a next hop over a miswired uplink too), none stands alone.
		{[]string{"miswire", "leaf1:swp63", "leaf2:swp64"}, []string{"spine1 lldp swp1", "spine2 lldp swp2"}, "spine1 lldp swp1 (33 follow from it); spine2 lldp swp2 (1 follows from it); then: ",
			[]string{"leaf1 swp63", "leaf2 swp64", "spine1 swp1", "spine2 swp2"}},
	} {
		healthy := fabricState(t, st.Namespaces)
		s.run(exitOK, append([]string{"lab", "fault"}, tc.fault...)...)
		out := waitCheck(strings.Join(tc.fault, " "), func(out string) bool {
			m := notReady.FindStringSubmatch(out)
			return m != nil && strings.HasPrefix(m[1], tc.first)
		})
		var causes []string
		for _, m := range causeLine.FindAllStringSubmatch(out, -1) {
			causes = append(causes, m[1]+" "+m[2]+" "+m[3])
		}
		if diff := cmp.Diff(tc.causes, causes); diff != "" {
			t.Errorf("%s: the cause lines (-want +got):\n%s\n%s", tc.fault, diff, out)
		}
		if tc.causes == nil && strings.Contains(notReady.FindString(out), ";") {
			t.Errorf("%s: more than one finding: %s", tc.fault, notReady.FindString(out))
		}
		t.Logf("%s:\n%s", strings.Join(tc.fault, " "), strings.Join(append(causeLine.FindAllString(out, -1), notReady.FindString(out)), "\n"))
		s.run(exitOK, "lab", "fault", "repair")
		repaired := fabricState(t, st.Namespaces)
		for k, v := range healthy {
			if renewed := slices.Contains(tc.renewed, k); renewed == (repaired[k] == v) || repaired[k] == "" {
				t.Errorf("%s: repair: %s was %s, is %q (want it renewed: %v)", tc.fault, k, v, repaired[k], renewed)
			}
		}
		waitCheck("clean after repairing "+strings.Join(tc.fault, " "), clean)
	}
	code, errs := s.exec("lab", "fault", "link-speed", "leaf9:swp1", "100")
	if code != exitFailed || !strings.Contains(errs, `link-speed: "leaf9:swp1": want SWITCH:PORT, a switch of the inventory`) {
		t.Errorf("a fault on no switch: exit %d, %s", code, errs)
	}
	s.run(exitOK, "lab", "down")
	if alivePID(st.PID) {
		t.Errorf("the supervisor %d still runs after lab down", st.PID)
	}
	if diff := cmp.Diff(before, machineState(t, labDir, st.PID)); diff != "" {
		t.Errorf("the lab left something behind (-before +after):\n%s", diff)
	}
}

// fabricState reads the lab's switch namespaces (rdg<slot>f<switch>, of
// namespaces) as a repair may change them: "<switch> bgpd" is the pid of
// the switch's bgpd ("" when none runs), "<switch> <port>" the kernel's
// index of each of its ports, which a cable plugged anew changes.
func fabricState(t *testing.T, namespaces []string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, ns := range namespaces {
		_, sw, ok := strings.Cut(ns, "f")
		if !ok || !regexp.MustCompile(`^(spine|leaf)\d$`).MatchString(sw) {
			continue // a VM's stand-in
		}
		m[sw+" bgpd"] = ""
		pids, err := exec.Command("ip", "netns", "pids", ns).Output()
		if err != nil {
			t.Fatalf("ip netns pids %s: %v", ns, err)
		}
		for _, p := range strings.Fields(string(pids)) {
			if comm, _ := os.ReadFile("/proc/" + p + "/comm"); strings.TrimSpace(string(comm)) == "bgpd" {
				m[sw+" bgpd"] = p
			}
		}
		out, err := exec.Command("ip", "-n", ns, "-j", "link", "show").Output()
		var links []struct {
			Index int    `json:"ifindex"`
			Name  string `json:"ifname"`
		}
		if err := errors.Join(err, json.Unmarshal(out, &links)); err != nil {
			t.Fatalf("ip -n %s link show: %v", ns, err)
		}
		for _, l := range links {
			if strings.HasPrefix(l.Name, "swp") {
				m[sw+" "+l.Name] = strconv.Itoa(l.Index)
			}
		}
	}
	return m
}

// waitSwitchCheck runs check (a `check --target switch` command line) in
// session s until ok holds of its output (BGP converges in seconds; at
// most 90 s), and returns that output.
func waitSwitchCheck(s *session, check []string, what string, ok func(string) bool) string {
	s.t.Helper()
	var out string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		_, out, _ = rdggen2(s, check...)
		if ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("check: %s: not within 90 s:\n%s", what, out)
		}
	}
}

// switchesClean says whether check's summary has the switches all passed.
func switchesClean(out string) bool {
	return regexp.MustCompile(`switch: \d+ passed, 0 failed, 0 could not tell`).MatchString(out)
}
