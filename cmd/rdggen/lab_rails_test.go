package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// labGolden copies testdata/golden/NAME/inventory.yaml to a temporary
// directory as cluster.yaml and returns a session whose commands run as
// processes there (session.cwd: the test may run in parallel) and the
// lab's directory in it, rdg-lab, as an absolute path (taken down at
// cleanup).
func labGolden(t *testing.T, name string) (*session, string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", name, "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.WriteFile(filepath.Join(tmp, "cluster.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	labDir := filepath.Join(tmp, "rdg-lab")
	t.Cleanup(func() { _, _ = lab.Down(labDir) })
	return &session{t: t, dir: "rdg-lab", cwd: tmp}, labDir
}

// TestLabPortGroup: an inventory with a port group of its own
// (testdata/golden/a100-host: nic.portgroup roce-pg) is rehearsed as it
// is: the lab's ESXi hosts have the port group on the vSwitch of their PF,
// so the dry run plans each VF on it, the apply attaches it there and
// check passes (vcsim has only "VM Network": without the lab's port group
// every VM fails with `port group "roce-pg" is not on ESXi host`).
func TestLabPortGroup(t *testing.T) {
	t.Parallel()
	s, labDir := labGolden(t, "a100-host")
	s.run(exitOK, "lab", "up", "-f", "cluster.yaml", "--no-hosts")
	s.env = labEnvVars(t, labDir)
	args := []string{"-f", "rdg-lab/lab.yaml", "--target", "esxi"}
	out := s.run(exitOK, append([]string{"apply", "--dry-run"}, args...)...)
	if n := strings.Count(out, `add SR-IOV adapter: VF of ConnectX-6 Dx vmnic6 (0000:d8:00.0), port group "roce-pg"`); n != 4 || strings.Contains(out, "is not on ESXi host") {
		t.Errorf("the dry run plans %d VF(s) on roce-pg, want 4:\n%s", n, out)
	}
	out = s.run(exitOK, append([]string{"apply", "--yes", "--backup-dir", "bk"}, args...)...)
	if !strings.Contains(out, "esxi: 4 VM(s) and 4 host(s) changed") {
		t.Errorf("apply:\n%s", out)
	}
	s.run(exitOK, "lab", "power-on")
	out = s.run(exitOK, append([]string{"check"}, args...)...)
	if !strings.Contains(out, "gpu4: devices VF of vmnic6: passed") {
		t.Errorf("check:\n%s", out)
	}
	s.run(exitOK, "lab", "down")
}

// TestLabRails rehearses a multi-rail inventory in one lab
// (testdata/golden/rails-firstboot: 2 VMs of 2 rails, rail r on leaf r,
// one spine, Cumulus), as root with sshd, dockerd, FRR and lldpd: each
// ESXi host has the PCI tree of a rail-optimized server (a PCIe switch per
// rail's PF with its GPUs), so apply pairs the GPUs with the rails and
// check --target esxi passes, each VF on its GPUs' PCIe switch; each
// namespace host has one interface per rail (ens224, rail1), each on its
// rail's leaf port, so apply --target hosts sets up every rail and check
// --target hosts passes every rail's link, routing, gateway and sysctls
// from the rail's own interface. What check --target hosts does not pass
// is exactly what lab up lists as unanswered. The switches check clean.
// lab down leaves nothing behind.
func TestLabRails(t *testing.T) {
	t.Parallel()
	netnstest.Require(t)
	netnstest.RequireDocker(t)
	fabricnet.Require(t)
	s, labDir := labGolden(t, "rails-firstboot")
	before := machineBefore(t, labDir)
	out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml")
	unanswered := hostsUnanswered(t, out)
	if !strings.Contains(out, "host        node2  198.19.") || !strings.Contains(out, "fabric      FRR") {
		t.Fatalf("lab up:\n%s", out)
	}
	if !slices.Contains(unanswered, "nccl-topology") {
		t.Errorf("lab up does not list nccl-topology: %q", unanswered)
	}
	st, err := lab.ReadState(labDir)
	if err != nil {
		t.Fatal(err)
	}
	slot := slotOf(st.Namespaces[0])
	// Each host's rails in its namespace: rail 0 is data_interface, rail
	// 1 rail1 (the inventory's default), each with the rail's address.
	for i, want := range [][]string{{"ens224 10.20.0.11/24", "rail1 10.20.1.11/24"}, {"ens224 10.20.0.12/24", "rail1 10.20.1.12/24"}} {
		ns := fmt.Sprintf("rdg%dh%d", slot, i+1)
		b, err := exec.Command("ip", "-n", ns, "-4", "-o", "addr", "show").Output()
		if err != nil {
			t.Fatalf("%s: %v", ns, err)
		}
		for _, w := range want {
			f := strings.Fields(w)
			if !regexp.MustCompile(`\b` + f[0] + `\s+inet ` + regexp.QuoteMeta(f[1]) + `\b`).Match(b) {
				t.Errorf("%s lacks %s:\n%s", ns, w, b)
			}
		}
	}
	s.env = labEnvVars(t, labDir)
	args := []string{"-f", "rdg-lab/lab.yaml", "--parallel", "4"}
	out = s.run(exitOK, append([]string{"apply", "--target", "esxi,switch,hosts", "--yes", "--backup-dir", "bk"}, args...)...)
	for _, want := range []string{
		"GPU–rail pairing: rail 1 (vmnic5 0000:a3:00.0): GPUs 0000:22:00.0, 0000:23:00.0 (chosen) — same PCIe switch 0000:a1:00.0",
		"add SR-IOV adapter for rail 1: VF of ConnectX-7 vmnic5 (0000:a3:00.0)",
		"+ rail 1: rule 1001: from 10.20.1.12 lookup 101",
		"esxi: 2 VM(s) and 2 host(s) changed", "switch: 3 changed", "hosts: 2 changed, 0 up to date, 0 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("apply lacks %q:\n%s", want, out)
		}
	}
	s.run(exitOK, "lab", "power-on")
	// BGP converges within seconds of the switches' apply: until then a
	// rail's gateway may not answer.
	var hostsOut string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		_, out, _ = rdggen2(s, append([]string{"check", "--target", "esxi,switch,hosts"}, args...)...)
		hostsOut = out
		if regexp.MustCompile(`switch: \d+ passed, 0 failed, 0 could not tell`).MatchString(out) &&
			strings.Count(out, ": rail-gateway rail ") == 4 && !regexp.MustCompile(`rail-\S+ [^\n]*: (FAILED|COULD NOT TELL)`).MatchString(out) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("check: the switches and the rails not clean within 90 s:\n%s", out)
		}
	}
	if !regexp.MustCompile(`esxi: \d+ passed, 0 failed, 0 could not tell`).MatchString(hostsOut) ||
		!strings.Contains(hostsOut, "node2: numa VF of vmnic5: passed (rail 1 (vmnic5 0000:a3:00.0): GPUs 0000:22:00.0, 0000:23:00.0 (given) — same PCIe switch 0000:a1:00.0)") {
		t.Errorf("check esxi:\n%s", hostsOut)
	}
	for _, h := range []string{"node1", "node2"} {
		for _, want := range []string{"rail-link rail 0 ens224", "rail-routing rail 0 ens224", "rail-gateway rail 0 ens224",
			"rail-link rail 1 rail1", "rail-routing rail 1 rail1", "rail-gateway rail 1 rail1", "rail-sysctl"} {
			if !strings.Contains(hostsOut, h+": "+want+": passed") {
				t.Errorf("check hosts: no %s: %s: passed", h, want)
			}
		}
	}
	// What the hosts do not pass is what lab up listed.
	wantUnanswered(t, unanswered, hostsOut)
	t.Log(lastLines(hostsOut, 5))
	s.run(exitOK, "lab", "down")
	if diff := cmp.Diff(before, filterSlot(machineRaw(t, labDir, st.PID), slot)); diff != "" && !slotRetaken(t, slot) {
		t.Errorf("the lab left something behind (-before +after):\n%s", diff)
	}
}

// hostsUnanswered is the list of checks lab up's output says check
// --target hosts cannot pass on the namespace hosts.
func hostsUnanswered(t *testing.T, labUp string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^not simulated: check --target hosts: ([a-z0-9, -]+) \(failed or could not tell\): `).FindStringSubmatch(labUp)
	if m == nil {
		t.Fatalf("lab up lists no checks the hosts cannot pass:\n%s", labUp)
	}
	return strings.Split(m[1], ", ")
}

// wantUnanswered fails t unless the checks that did not pass in check
// output (FAILED or COULD NOT TELL, by check name, any host) are exactly
// listed: lab up names what the namespace hosts cannot answer, and nothing
// else fails there.
func wantUnanswered(t *testing.T, listed []string, check string) {
	t.Helper()
	var notPassed []string
	for _, m := range regexp.MustCompile(`(?m)^(?:\[hosts\] )?[a-z0-9-]+: (\S+)[^\n]*: (FAILED|COULD NOT TELL)`).FindAllStringSubmatch(check, -1) {
		if !slices.Contains(notPassed, m[1]) {
			notPassed = append(notPassed, m[1])
		}
	}
	slices.Sort(notPassed)
	want := slices.Clone(listed)
	slices.Sort(want)
	if diff := cmp.Diff(want, notPassed); diff != "" {
		t.Errorf("check --target hosts: what did not pass is not what lab up lists (-listed +check):\n%s\n%s", diff, check)
	}
}
