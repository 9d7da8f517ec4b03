package onyxapply

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// checkInv is an inventory with one switch and the given hosts' data ports
// on it: hosts h1 … hN on ESXi hosts e1 … eN, except that h3 shares e2 (and
// so the port) with h2. dataMTU 0 leaves the default (1500).
func checkInv(t testing.TB, model, version string, dataMTU int, ports ...string) *inventory.Inventory {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "name: t\nswitches:\n  - {name: s1, model: %s, onyx: %s, ports: all}\n", model, version)
	b.WriteString(`docker: {pool: 172.16.0.0/16, prefix: 24}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
`)
	if dataMTU != 0 {
		fmt.Fprintf(&b, "  data_mtu: %d\n", dataMTU)
	}
	b.WriteString("hosts:\n")
	for i, p := range ports {
		esxi := i + 1
		if i == 2 {
			esxi = 2
		}
		fmt.Fprintf(&b, "  - {name: h%d, esxi: e%d, data: {address: 10.0.0.%d/24, switch: s1, port: %s}}\n", i+1, esxi, i+1, p)
	}
	inv, err := inventory.Load("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func (r *rig) check(t testing.TB) ([]readiness.Result, error) {
	t.Helper()
	for _, s := range r.sims {
		s.ResetLog()
	}
	r.out.Reset()
	return Check(context.Background(), r.inv, r.opts)
}

// readOnly fails the test unless the switch got only show commands and
// the login's own lines: no configuration command, no config mode, no save.
func readOnly(t *testing.T, sim *onyxsim.Server) {
	t.Helper()
	if got := sim.Received(); len(got) != 0 || sim.Saves() != 0 {
		t.Errorf("check sent configuration %q, saves %d", got, sim.Saves())
	}
	for _, l := range sim.Typed() {
		if !strings.HasPrefix(l, "show ") && l != "enable" && l != "no cli session paging enable" && l != "exit" {
			t.Errorf("check typed %q", l)
		}
	}
}

// names lists "check subject" per result.
func names(rs []readiness.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, strings.TrimSpace(r.Check+" "+r.Subject))
	}
	return out
}

func notPassed(rs []readiness.Result) []readiness.Result {
	var out []readiness.Result
	for _, r := range rs {
		if r.Status != readiness.Passed {
			out = append(out, r)
		}
	}
	return out
}

func find(t *testing.T, rs []readiness.Result, check, subject string) readiness.Result {
	t.Helper()
	for _, r := range rs {
		if r.Check == check && r.Subject == subject {
			return r
		}
	}
	t.Fatalf("no %s %s in %q", check, subject, names(rs))
	return readiness.Result{}
}

// After `rdggen apply`, every check passes on every data port (1/1, 1/3
// shared by two VMs, 1/16), with the values the switch shows (1/16's speed
// as it prints it, at the planned 100 Gb/s); the check sends nothing but
// show commands.
func TestCheckHealthyAfterApply(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 9000, "1/16", "1/3", "1/3", "1/1"))
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	sim.SetPauseCounters(3, 3, 12, 5)
	sim.SetECNMarked(3, 42)
	sim.SetLink(16, true, "100G")
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, sim)
	if r.out.Len() != 0 {
		t.Errorf("check wrote %q", r.out)
	}
	want := []string{"config"}
	for _, p := range []string{"Eth1/1", "Eth1/3", "Eth1/16"} {
		for _, c := range PortChecks {
			want = append(want, c+" "+p)
		}
	}
	if d := cmp.Diff(want, names(rs)); d != "" {
		t.Errorf("checks (-want +got):\n%s", d)
	}
	if bad := notPassed(rs); len(bad) != 0 {
		t.Errorf("not passed: %+v", bad)
	}
	for _, w := range []readiness.Result{
		readiness.Result{Target: "switch", Machine: "s1", Check: "config", Subject: "", Status: readiness.Passed, Found: "the running-config has all 90 of the inventory's statements"}, // 87 and the 3 cabled ports' descriptions
		readiness.Result{Target: "switch", Machine: "s1", Check: "link", Subject: "Eth1/3", Status: readiness.Passed, Found: "up, 100 Gbps"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "link", Subject: "Eth1/16", Status: readiness.Passed, Found: "up, 100G"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "mtu", Subject: "Eth1/3", Status: readiness.Passed, Found: "9216 bytes"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "pfc", Subject: "Eth1/3", Status: readiness.Passed, Found: "PFC enabled, priority 3 enabled, Eth1/3 PFC admin on, oper Enabled"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "pause-counters", Subject: "Eth1/3", Status: readiness.Passed, Found: "priority 3: rx 12, tx 5 pause packets"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "pause-counters", Subject: "Eth1/1", Status: readiness.Passed, Found: "priority 3: rx 0, tx 0 pause packets"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "ecn", Subject: "Eth1/3", Status: readiness.Passed, Found: "traffic class 3: ECN, absolute 150-1500 KB, 42 packets marked"},
	} {
		if got := find(t, rs, w.Check, w.Subject); got != w {
			t.Errorf("got  %+v\nwant %+v", got, w)
		}
	}
	// One read of all ports and of PFC, two per data port, on top of the
	// running-config.
	var shows int
	for _, l := range sim.Typed() {
		if strings.HasPrefix(l, "show ") {
			shows++
		}
	}
	if shows != 1+2+2*3 {
		t.Errorf("%d show commands: %q", shows, sim.Typed())
	}
}

// PFC turned off on one port by hand (onyx_pfc_interface's disable form):
// exactly two failures, both on that port and both naming the command that
// fixes it; `rdggen apply` then makes every check pass again.
func TestCheckPFCOffOnOnePort(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2700", "3.6.8190", 0, "1/1", "1/3", "1/3", "1/5"))
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	if err := sim.Configure("interface ethernet 1/3 no dcb priority-flow-control mode force"); err != nil {
		t.Fatal(err)
	}
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, sim)
	const fix = "interface ethernet 1/3 dcb priority-flow-control mode on force"
	want := []readiness.Result{
		readiness.Result{Target: "switch", Machine: "s1", Check: "config", Subject: "interface ethernet 1/3 dcb priority-flow-control mode", Status: readiness.Failed, Found: "not set", Expected: fix, Fix: "rdggen apply --target switch, or in config mode: " + fix},

		readiness.Result{Target: "switch", Machine: "s1", Check: "pfc", Subject: "Eth1/3", Status: readiness.Failed, Found: "PFC enabled, priority 3 enabled, Eth1/3 PFC admin Auto, oper Disabled", Expected: "PFC enabled, priority 3 enabled, Eth1/3 PFC oper Enabled", Fix: fix},
	}
	if d := cmp.Diff(want, notPassed(rs)); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	t.Logf("%s", notPassed(rs)[1].Line())
	if _, err := r.run(t); err != nil || !slices.Equal(sim.Received(), []string{fix}) {
		t.Fatalf("apply sent %q: %v", sim.Received(), err)
	}
	if rs, err = r.check(t); err != nil || len(notPassed(rs)) != 0 {
		t.Errorf("after apply: %+v %v", notPassed(rs), err)
	}
}

// A port whose link went down, and one shut down: `link` fails on each
// with what fixes it; their other checks still pass.
func TestCheckLinkDown(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 0, "1/1", "1/2"))
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	sim.SetLink(2, false, "")
	if err := sim.Configure("interface ethernet 1/1 shutdown"); err != nil {
		t.Fatal(err)
	}
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, sim)
	want := []readiness.Result{
		readiness.Result{Target: "switch", Machine: "s1", Check: "link", Subject: "Eth1/1", Status: readiness.Failed, Found: "admin state Disabled, operational state Down", Expected: "enabled and up", Fix: "interface ethernet 1/1 no shutdown"},

		readiness.Result{Target: "switch", Machine: "s1", Check: "link", Subject: "Eth1/2", Status: readiness.Failed, Found: "admin state Enabled, operational state Down", Expected: "up", Fix: "check the cable and the far end, h2 (e2 vmnic4); the switch side is enabled"},
	}
	if d := cmp.Diff(want, notPassed(rs)); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	// The fix is a command the switch takes.
	if err := sim.Configure(want[0].Fix); err != nil {
		t.Fatal(err)
	}
	sim.SetLink(2, true, "")
	if rs, _ := r.check(t); len(notPassed(rs)) != 0 {
		t.Errorf("after the fixes: %+v", notPassed(rs))
	}
}

// A switch nobody configured, on an ONYX without the PFC counters command:
// the plan's ten commands fail `config`, PFC and ECN fail with the
// commands pkg/onyx generates, the MTU (1500, no jumbo frames) passes, and
// the pause counters are unknown. Every fix is taken by the switch.
func TestCheckUnconfiguredSwitch(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2700", "3.6.8190", 0, "1/7"),
		onyxsim.Options{NoShow: []string{"show interfaces ethernet 1/7 counters pfc"}})
	sim := r.sims[0]
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, sim)
	var config, other []readiness.Result
	for _, x := range rs {
		if x.Check == CheckConfig {
			config = append(config, x)
		} else {
			other = append(other, x)
		}
	}
	// The port's description (Interface Ethernet configuration comes
	// first), then the RoCE lines.
	if len(config) != 11 || config[0] != (readiness.Result{Target: "switch", Machine: "s1", Check: "config", Subject: "interface ethernet 1/7 description", Status: readiness.Failed, Found: "not set", Expected: "interface ethernet 1/7 description h1@e1/vmnic4", Fix: "rdggen apply --target switch, or in config mode: interface ethernet 1/7 description h1@e1/vmnic4"}) ||
		config[1] != (readiness.Result{Target: "switch", Machine: "s1", Check: "config", Subject: "traffic pool roce type", Status: readiness.Failed, Found: "not set", Expected: "traffic pool roce type lossless", Fix: "rdggen apply --target switch, or in config mode: traffic pool roce type lossless"}) {
		t.Errorf("config: %d results, first %+v, %+v", len(config), config[0], config[1])
	}
	want := []readiness.Result{
		readiness.Result{Target: "switch", Machine: "s1", Check: "link", Subject: "Eth1/7", Status: readiness.Passed, Found: "up, 100 Gbps"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "mtu", Subject: "Eth1/7", Status: readiness.Passed, Found: "1500 bytes"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "pfc", Subject: "Eth1/7", Status: readiness.Failed, Found: "PFC disabled globally, priority 3 not enabled (enabled: -), Eth1/7 PFC admin Auto, oper Disabled", Expected: "PFC enabled, priority 3 enabled, Eth1/7 PFC oper Enabled", Fix: "dcb priority-flow-control enable force; dcb priority-flow-control priority 3 enable; interface ethernet 1/7 dcb priority-flow-control mode on force"},

		readiness.Result{Target: "switch", Machine: "s1", Check: "pause-counters", Subject: "Eth1/7", Status: readiness.Unknown, Found: `device refused "show interfaces ethernet 1/7 counters pfc prio 3": % Unrecognized command "pfc". Type "?" for help.`},

		readiness.Result{Target: "switch", Machine: "s1", Check: "ecn", Subject: "Eth1/7", Status: readiness.Failed, Found: "traffic class 3: none", Expected: "traffic class 3: ECN, absolute 150-1500 KB", Fix: "interface ethernet 1/7 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500"},
	}
	if d := cmp.Diff(want, other); d != "" {
		t.Errorf("port checks (-want +got):\n%s", d)
	}
	for _, x := range []readiness.Result{want[2], want[4]} {
		if err := sim.Configure(strings.Split(x.Fix, "; ")...); err != nil {
			t.Errorf("fix of %s: %v", x.Check, err)
		}
	}
	rs, _ = r.check(t)
	for _, c := range []string{CheckPFC, CheckECN} {
		if x := find(t, rs, c, "Eth1/7"); x.Status != readiness.Passed {
			t.Errorf("after the fix: %+v", x)
		}
	}
}

// Jumbo frames wanted, a port left at 1500 and another with other ECN
// thresholds: `mtu` and `ecn` fail with the exact commands.
func TestCheckMTUAndECNDrift(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 9000, "1/1", "1/2"))
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	if err := sim.Configure("interface ethernet 1/1 mtu 1500 force",
		"interface ethernet 1/2 traffic-class 3 congestion-control ecn minimum-absolute 500 maximum-absolute 1550"); err != nil {
		t.Fatal(err)
	}
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, sim)
	var got []readiness.Result
	for _, x := range notPassed(rs) {
		if x.Check != CheckConfig {
			got = append(got, x)
		}
	}
	want := []readiness.Result{
		readiness.Result{Target: "switch", Machine: "s1", Check: "mtu", Subject: "Eth1/1", Status: readiness.Failed, Found: "1500 bytes", Expected: "at least 9216 bytes (data_mtu 9000)", Fix: "interface ethernet 1/1 mtu 9216 force"},
		readiness.Result{Target: "switch", Machine: "s1", Check: "ecn", Subject: "Eth1/2", Status: readiness.Failed, Found: "traffic class 3: ECN, absolute 500-1550 KB", Expected: "traffic class 3: ECN, absolute 150-1500 KB", Fix: "interface ethernet 1/2 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("failures (-want +got):\n%s", d)
	}
	if c := names(notPassed(rs)); !slices.Contains(c, "config interface ethernet 1/1 mtu") ||
		!slices.Contains(c, "config interface ethernet 1/2 traffic-class 3 congestion-control") || len(c) != 4 {
		t.Errorf("not passed: %q", c)
	}
}

// The `roce lossless` template (ONYX 3.10): before apply PFC and ECN name
// `roce lossless` as the fix, after it every check passes.
func TestCheckRoCETemplate(t *testing.T) {
	r := newRig(t, checkInv(t, "SN3700", "3.10.4006", 0, "1/2"))
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	readOnly(t, r.sims[0])
	for _, c := range []string{CheckPFC, CheckECN} {
		if x := find(t, rs, c, "Eth1/2"); x.Status != readiness.Failed || x.Fix != "roce lossless" {
			t.Errorf("%s: %+v", c, x)
		}
	}
	if _, err := r.run(t); err != nil {
		t.Fatalf("apply: %v\n%s", err, r.out)
	}
	if rs, err = r.check(t); err != nil || len(notPassed(rs)) != 0 {
		t.Errorf("after apply: %+v %v", notPassed(rs), err)
	}
}

// A switch that cannot be reached is one Unknown `connect` result and the
// error names it; the other switch is checked in full.
func TestCheckUnreachable(t *testing.T) {
	inv := checkInv(t, "SN2100", "3.6.8190", 0, "1/1")
	inv.Switches = append(inv.Switches, inventory.Switch{Name: "s2", Model: "SN2100", Ports: 16, ONYX: inv.Switches[0].ONYX})
	r := newRig(t, inv)
	r.sims[1].Close()
	inv.Switches = append(inv.Switches, inventory.Switch{Name: "s3", Model: "SN2100", Ports: 16, ONYX: inv.Switches[0].ONYX})
	d := progress.NewDisplay(io.Discard, false, 0)
	defer d.Close()
	r.opts.Track, r.opts.Parallel = d.Track("switch"), 3
	rs, err := r.check(t)
	if err == nil || !strings.Contains(err.Error(), "2 of 3 switch(es) could not be checked: s2: ") ||
		!strings.Contains(err.Error(), "s3: no mgmt address in the inventory") {
		t.Fatalf("err = %v", err)
	}
	s2 := find(t, rs, CheckConnect, "")
	if s2.Machine != "s2" || s2.Status != readiness.Unknown || !strings.Contains(s2.Found, "refused") {
		t.Errorf("s2: %+v", s2)
	}
	if last := rs[len(rs)-1]; last.Machine != "s3" || last.Check != CheckConnect || last.Status != readiness.Unknown {
		t.Errorf("s3: %+v", last)
	}
	var s1 []string
	for _, x := range rs {
		if x.Machine == "s1" && !slices.Contains(s1, x.Check) {
			s1 = append(s1, x.Check)
		}
	}
	if len(s1) != 1+len(PortChecks) {
		t.Errorf("s1 checks: %q", s1)
	}
	readOnly(t, r.sims[0])
}

// A running-config the switch refuses to show: `config` is unknown with
// the switch's message, and the live checks of the ports still run.
func TestCheckRunningConfigRefused(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 0, "1/4"), onyxsim.Options{NoShow: []string{"show running-config"}})
	rs, err := r.check(t)
	if err != nil {
		t.Fatal(err)
	}
	want := readiness.Result{Target: "switch", Machine: "s1", Check: "config", Subject: "", Status: readiness.Unknown, Found: `show running-config: device refused "show running-config": % Unrecognized command "running-config". Type "?" for help.`}

	if rs[0] != want {
		t.Errorf("got  %+v\nwant %+v", rs[0], want)
	}
	if got := names(rs[1:]); len(got) != len(PortChecks) || find(t, rs, CheckLink, "Eth1/4").Status != readiness.Passed {
		t.Errorf("port checks: %q", got)
	}
}

// A show command the switch never answers: that check is unknown with the
// timeout and its flag, nothing more is sent, and the error names the
// switch.
func TestCheckSessionLost(t *testing.T) {
	r := newRig(t, checkInv(t, "SN2100", "3.6.8190", 0, "1/4"), onyxsim.Options{Hang: []string{"show dcb priority-flow-control"}})
	r.opts.CommandTimeout = 200 * time.Millisecond
	r.opts.CommandTimeoutFlag = "--switch-timeout"
	rs, err := r.check(t)
	if err == nil || !strings.HasPrefix(err.Error(), "1 of 1 switch(es) could not be checked: s1: the session failed: ") {
		t.Fatalf("err = %v", err)
	}
	if x := find(t, rs, CheckConfig, "lldp"); x.Status != readiness.Failed {
		t.Errorf("config: %+v", x)
	}
	if x := find(t, rs, CheckLink, "Eth1/4"); x.Status != readiness.Passed {
		t.Errorf("link: %+v", x)
	}
	pfc := find(t, rs, CheckPFC, "Eth1/4")
	if pfc.Status != readiness.Unknown || !strings.Contains(pfc.Found, "timed out waiting for the prompt") || !strings.Contains(pfc.Found, "--switch-timeout") {
		t.Errorf("pfc: %+v", pfc)
	}
	for _, c := range []string{CheckPauseCounters, CheckECN} {
		if x := find(t, rs, c, "Eth1/4"); x.Status != readiness.Unknown || !strings.Contains(x.Found, "not sent: the session failed earlier") {
			t.Errorf("%s: %+v", c, x)
		}
	}
	if typed := r.sims[0].Typed(); typed[len(typed)-1] != "show dcb priority-flow-control | json-print" {
		t.Errorf("sent after the hang: %q", typed)
	}
}
