package onyxapply

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// inv returns a valid inventory with one switch per (name, model, onyx).
func loadInv(t testing.TB, switches ...[3]string) *inventory.Inventory {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: t\nswitches:\n")
	for _, s := range switches {
		b.WriteString("  - {name: " + s[0] + ", model: " + s[1] + ", onyx: " + s[2] + ", ports: all}\n") // the guide's whole-switch form
	}
	b.WriteString(`docker: {pool: 172.16.0.0/16, prefix: 24}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - {name: h1, esxi: e1, data: {address: 10.0.0.1/24, switch: ` + switches[0][0] + `, port: 1/1}}
`)
	inv, err := inventory.Load("t.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

type rig struct {
	inv  *inventory.Inventory
	sims []*onyxsim.Server
	opts Options
	out  *bytes.Buffer
}

// newRig starts one simulator per switch (with the switch's hostname and
// port count), points the inventory at them and trusts their host keys.
func newRig(t testing.TB, inv *inventory.Inventory, simOpts ...onyxsim.Options) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{inv: inv, out: &bytes.Buffer{}}
	var kh []string
	for i := range inv.Switches {
		sw := &inv.Switches[i]
		o := onyxsim.Options{}
		if i < len(simOpts) {
			o = simOpts[i]
		}
		if o.Hostname == "" {
			o.Hostname = sw.Name
		}
		o.Ports = sw.Ports
		if o.Version == "" {
			o.Version = sw.ONYX.String()
		}
		sim := onyxsim.Start(t, o)
		sw.Mgmt = sim.Addr
		r.sims = append(r.sims, sim)
		kh = append(kh, sim.KnownHostsLine())
	}
	khFile := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(khFile, []byte(strings.Join(kh, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.opts = Options{
		User: "admin", Password: "admin", KnownHosts: khFile,
		BackupDir: filepath.Join(dir, "backup"), Parallel: 4,
		CommandTimeout: 10 * time.Second, Out: r.out,
		Now: func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) },
	}
	return r
}

func (r *rig) run(t testing.TB) ([]*Result, error) {
	t.Helper()
	r.out.Reset()
	for _, s := range r.sims {
		s.ResetLog()
	}
	return pushAll(context.Background(), r.inv, r.opts)
}

// pushAll applies inv to the switches o selects as pkg/apply does: each
// switch a unit of Prepare, all driven by driver.ReadPlanPush (read and plan
// every switch, print the plans, ask o.Gate once, push). The results are in
// inventory order; err names the switches that failed.
func pushAll(ctx context.Context, inv *inventory.Inventory, o Options) ([]*Result, error) {
	o.defaults()
	sws := o.switches(inv)
	names := make([]string, len(sws))
	for i, sw := range sws {
		names[i] = sw.Name
	}
	units := driver.ReadPlanPush(ctx, names, driver.Run{ReadPhase: driver.Phrasef("reading the running-config of %d switch(es)"),
		PushPhase: driver.Phrasef("changing %d switch(es)"), Parallel: o.Parallel, DryRun: o.DryRun, Gate: o.Gate, Track: o.Track, Out: o.Out},
		func(i int) *Prepared { return Prepare(ctx, inv, sws[i], o) })
	res := make([]*Result, len(units))
	var failed []string
	for i, u := range units {
		if res[i] = u.Finish(); res[i].Err != nil {
			failed = append(failed, names[i])
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("%d of %d switch(es) failed: %s", len(failed), len(units), strings.Join(failed, ", "))
	}
	return res, nil
}

var generatedAt = regexp.MustCompile(`(?m)^## Generated at .*\n`)

// statements of a running-config as sorted command strings.
func statements(text string) []string {
	var out []string
	for _, s := range onyx.Parse(text) {
		out = append(out, s.Command())
	}
	sort.Strings(out)
	return out
}

func TestCleanSwitchThenIdempotent(t *testing.T) {
	r := newRig(t, loadInv(t, [3]string{"swx-mld-1-2", "SN2700", "3.6.8190"}))
	sim := r.sims[0]
	before := sim.RunningConfig()

	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	want := []string{
		"interface ethernet 1/1 description h1@e1/vmnic4", // h1's port: its VM@ESXi host/PF
		"traffic pool roce type lossless",
		"traffic pool roce memory percent 50.00",
		"traffic pool roce map switch-priority 3",
		"interface ethernet 1/1-1/32 qos trust L3",
		"interface ethernet 1/1-1/32 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/1-1/32 traffic-class 6 dcb ets strict",
		"dcb priority-flow-control enable force",
		"dcb priority-flow-control priority 3 enable",
		"interface ethernet 1/1-1/32 dcb priority-flow-control mode on force",
		"lldp",
	}
	if d := cmp.Diff(want, sim.Received()); d != "" {
		t.Errorf("commands received by the switch (-want +got):\n%s", d)
	}
	if res[0].Sent != len(want) || !res[0].Saved || sim.Saves() != 1 {
		t.Errorf("sent %d, saved %v, switch saves %d", res[0].Sent, res[0].Saved, sim.Saves())
	}
	// The switch's own rendering: merged ranges and 50.00.
	running := sim.RunningConfig()
	for _, line := range []string{
		"\n   traffic pool roce memory percent 50.00\n",
		"\n   interface ethernet 1/1-1/32 qos trust L3\n",
		"\n   interface ethernet 1/1-1/32 dcb priority-flow-control mode on force\n",
	} {
		if !strings.Contains(running, line) {
			t.Errorf("running-config lacks %q:\n%s", line, running)
		}
	}
	if sim.Saved() != running {
		t.Error("the saved config is not the running one")
	}
	// Backup: the config before the change, mode 0600.
	st, err := os.Stat(res[0].Backup)
	if err != nil || st.Mode().Perm() != 0o600 || filepath.Base(res[0].Backup) != "swx-mld-1-2-20240506T070809Z.cfg" {
		t.Fatalf("backup %q: %v %v", res[0].Backup, st, err)
	}
	backup, _ := os.ReadFile(res[0].Backup)
	if got := generatedAt.ReplaceAllString(string(backup), ""); got != generatedAt.ReplaceAllString("\n"+before, "") {
		t.Errorf("backup is not the running-config before the change:\n%s", got)
	}
	if !strings.Contains(r.out.String(), "swx-mld-1-2 ("+sim.Addr+"): 11 command(s) to send:\n  interface ethernet 1/1 description h1@e1/vmnic4\n  traffic pool roce type lossless\n") {
		t.Errorf("plan output:\n%s", r.out)
	}

	// Second apply: nothing sent, nothing saved, says so.
	res, err = r.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(sim.Received()); got != 0 || res[0].Sent != 0 || sim.Saves() != 0 || res[0].Backup != "" {
		t.Errorf("second apply: switch received %d command(s) %q, sent %d, saves %d, backup %q",
			got, sim.Received(), res[0].Sent, sim.Saves(), res[0].Backup)
	}
	if !strings.Contains(r.out.String(), "up to date, nothing to send") {
		t.Errorf("output:\n%s", r.out)
	}
	t.Logf("commands sent by the second apply: %d", len(sim.Received()))
}

// unrelated is configuration that rdggen does not own.
var unrelated = []string{
	"interface ethernet 1/1-1/16 mtu 9216 force",
	"interface ethernet 1/3 description uplink to spine",
	"interface ethernet 1/20 shutdown",
	"vlan 10-20",
	"vlan 10 name storage",
	"interface ethernet 1/9 switchport mode trunk",
	"interface ethernet 1/10 switchport access vlan 12",
	"interface ethernet 1/1-1/32 traffic-class 0 congestion-control red minimum-absolute 10 maximum-absolute 20",
	"interface ethernet 1/2 traffic-class 1 dcb ets wrr 30",
	"dcb priority-flow-control priority 4 enable",
	"traffic pool bulk type lossy",
	"traffic pool bulk memory percent 10",
	"traffic pool bulk map switch-priority 1",
	"username monitor password 0 s3cret",
	"snmp-server community public ro",
	"ntp server 192.0.2.1",
	"ip route 198.51.100.0/24 192.0.2.254",
	"license install LK2-TEST",
	"ldap bind-password Zx9-bind",
}

func TestUnrelatedConfigUntouched(t *testing.T) {
	r := newRig(t, loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}), onyxsim.Options{Seed: unrelated})
	sim := r.sims[0]
	before := statements(sim.RunningConfig())
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	for _, c := range sim.Received() {
		if c == "interface ethernet 1/1 description h1@e1/vmnic4" {
			continue // rdggen's own description of h1's port (1/3's, the user's, stays)
		}
		for _, w := range []string{"mtu", "description", "shutdown", "vlan", "switchport", "traffic-class 0", "traffic-class 1 ", "priority 4", "bulk", "username", "snmp", "ntp", "ip route", "license", "ldap"} {
			if strings.Contains(c, w) {
				t.Errorf("sent %q, which touches unrelated config (%s)", c, w)
			}
		}
	}
	// After = before + exactly the desired statements.
	after := statements(sim.RunningConfig())
	var desired []string
	for _, s := range onyx.Desired(r.inv, r.inv.Switches[0]) {
		desired = append(desired, s.Command())
	}
	wantAfter := append(append([]string(nil), before...), desired...)
	sort.Strings(wantAfter)
	wantAfter = dedupe(wantAfter)
	if d := cmp.Diff(wantAfter, after); d != "" {
		t.Errorf("running-config after = before + desired (-want +got):\n%s", d)
	}
	if len(before) != 75 { // 74 seeded (ranges expanded) + the hostname
		t.Fatalf("%d unrelated statements, want 75; did the seed apply?", len(before))
	}
	// And the passwords stayed hidden.
	if strings.Contains(sim.RunningConfig(), "s3cret") || strings.Contains(sim.RunningConfig(), "Zx9-bind") {
		t.Error("simulator shows a secret")
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Errorf("second apply sent %q (%v)", sim.Received(), err)
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func TestConflictingValuesCorrected(t *testing.T) {
	inv := loadInv(t, [3]string{"s1", "SN2100", "3.6.8190"})
	seed := []string{
		"traffic pool roce type lossy",
		"traffic pool roce memory percent 30",
		"traffic pool roce map switch-priority 3",
		"interface ethernet 1/7 qos rewrite dscp",
		"interface ethernet 1/1-1/6 qos trust L3",
		"interface ethernet 1/8-1/16 qos trust L3",
		"interface ethernet 1/5 qos trust both",
		"interface ethernet 1/1-1/16 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/2-1/3 traffic-class 3 congestion-control red minimum-absolute 100 maximum-absolute 1000",
		"interface ethernet 1/1-1/16 traffic-class 6 dcb ets wrr 20",
		"dcb priority-flow-control enable force",
		"dcb priority-flow-control priority 3 enable",
		"interface ethernet 1/1-1/15 dcb priority-flow-control mode on force",
		"lldp",
		"hostname old-name",
	}
	r := newRig(t, inv, onyxsim.Options{Seed: seed})
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	want := []string{
		"interface ethernet 1/1 description h1@e1/vmnic4", // h1's port: its VM@ESXi host/PF
		"traffic pool roce type lossless",
		"traffic pool roce memory percent 50.00",
		"interface ethernet 1/7 no qos rewrite dscp",
		"interface ethernet 1/5 qos trust L3",
		"interface ethernet 1/7 qos trust L3",
		"interface ethernet 1/2-1/3 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/1-1/16 traffic-class 6 dcb ets strict",
		"interface ethernet 1/16 dcb priority-flow-control mode on force",
		"hostname s1",
	}
	if d := cmp.Diff(want, sim.Received()); d != "" {
		t.Errorf("corrections (-want +got):\n%s\n%s", d, r.out)
	}
	running := sim.RunningConfig()
	for _, line := range []string{
		"   traffic pool roce type lossless\n",
		"   traffic pool roce memory percent 50.00\n",
		"   interface ethernet 1/1-1/16 qos trust L3\n",
		"   interface ethernet 1/1-1/16 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500\n",
		"   interface ethernet 1/1-1/16 dcb priority-flow-control mode on force\n",
		"## Hostname: s1\n",
	} {
		if !strings.Contains(running, line) {
			t.Errorf("running-config lacks %q:\n%s", line, running)
		}
	}
	if strings.Contains(running, "qos rewrite dscp") || strings.Contains(running, "wrr") || strings.Contains(running, "red") {
		t.Errorf("a conflicting value survived:\n%s", running)
	}
	t.Logf("output:\n%s", r.out)
	if !strings.Contains(r.out.String(), "# replaces: interface ethernet 1/5 qos trust both") {
		t.Errorf("plan does not say what it replaces:\n%s", r.out)
	}
}

func TestDeviceErrorMidPush(t *testing.T) {
	r := newRig(t, loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}),
		onyxsim.Options{Faults: []onyxsim.Fault{{N: 5, Message: "Interface ethernet 1/1-1/32: resource busy"}}}) // after h1's description and the 3 pool lines
	sim := r.sims[0]
	res, err := r.run(t)
	if err == nil {
		t.Fatal("no error")
	}
	var pe *PushError
	if !errors.As(res[0].Err, &pe) {
		t.Fatalf("err = %v", res[0].Err)
	}
	if pe.Index != 5 || pe.Total != 11 || pe.Command != "interface ethernet 1/1-1/32 qos trust L3" ||
		pe.Device.Message != "% Interface ethernet 1/1-1/32: resource busy" {
		t.Errorf("push error = %+v %+v", pe, pe.Device)
	}
	if sim.Saves() != 0 || res[0].Saved {
		t.Error("saved after a refused command")
	}
	if got := len(sim.Received()); got != 5 || res[0].Sent != 5 {
		t.Errorf("switch received %d command(s), result says %d; want 5 (stop at the first error)", got, res[0].Sent)
	}
	// The time it took varies with the machine's load ("after 0.0s", "0.1s").
	out := regexp.MustCompile(`FAILED after \d+\.\ds:`).ReplaceAllString(r.out.String(), "FAILED after Ns:")
	for _, s := range []string{
		`s1: FAILED after Ns: command 5 of 11 refused: "interface ethernet 1/1-1/32 qos trust L3": % Interface ethernet 1/1-1/32: resource busy; stopped there, not saved`,
		"the running-config before rdggen is in " + res[0].Backup,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if _, err := os.Stat(res[0].Backup); err != nil {
		t.Errorf("backup: %v", err)
	}
	// Fixed fault: the next run sends the rest and saves.
	sim.SetFaults()
	res, err = r.run(t)
	if err != nil || res[0].Sent != 7 || !res[0].Saved {
		t.Errorf("rerun: sent %d saved %v err %v\n%s", res[0].Sent, res[0].Saved, err, r.out)
	}
}

func TestChangedHostKeyRefused(t *testing.T) {
	r := newRig(t, loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}))
	sim := r.sims[0]
	other, err := ssh.NewPublicKey(ed25519.PublicKey(make([]byte, 32))) // ed25519 all zeros: not the server's key
	if err != nil {
		t.Fatal(err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(sim.Addr)}, other)
	if err := os.WriteFile(r.opts.KnownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := r.run(t)
	var hk *sshconn.HostKeyError
	if err == nil || !errors.As(res[0].Err, &hk) {
		t.Fatalf("err = %v / %v", err, res[0].Err)
	}
	if sim.Sessions() != 0 || len(sim.Received()) != 0 {
		t.Errorf("a session was opened (%d) or commands sent (%q)", sim.Sessions(), sim.Received())
	}
	if !strings.Contains(r.out.String(), "host key does not match known_hosts") {
		t.Errorf("output:\n%s", r.out)
	}
	if _, err := os.Stat(r.opts.BackupDir); !os.IsNotExist(err) {
		t.Error("backup dir created although nothing was read")
	}
}

func TestNoMgmtAndDryRun(t *testing.T) {
	inv := loadInv(t, [3]string{"s1", "SN2700", "3.6.8190"}, [3]string{"s2", "SN2100", "3.6.8190"})
	r := newRig(t, inv)
	inv.Switches[1].Mgmt = ""
	r.opts.DryRun = true
	res, err := r.run(t)
	if err == nil || res[1].Err == nil || !strings.Contains(res[1].Err.Error(), "no mgmt address in the inventory") {
		t.Fatalf("err = %v, s2: %v", err, res[1].Err)
	}
	if len(r.sims[0].Received()) != 0 || r.sims[0].Saves() != 0 || res[0].Backup != "" || len(res[0].Plan.Changes) != 11 {
		t.Errorf("dry run: received %q, backup %q, plan %d", r.sims[0].Received(), res[0].Backup, len(res[0].Plan.Changes))
	}
	if !strings.Contains(r.out.String(), "s1 ("+r.sims[0].Addr+"): 11 command(s) to send:") {
		t.Errorf("output:\n%s", r.out)
	}
}

func TestParallelAndRoCETemplate(t *testing.T) {
	inv := loadInv(t,
		[3]string{"a", "SN2700", "3.6.8190"},
		[3]string{"b", "SN3700", "3.10.4006"},
		[3]string{"c", "SN2100", "3.9.2400"})
	r := newRig(t, inv)
	r.opts.Parallel = 2
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if got := r.sims[1].Received(); !cmp.Equal(got, []string{"roce lossless", "lldp"}) {
		t.Errorf("roce switch received %q", got)
	}
	for i, x := range res {
		if !x.Saved || r.sims[i].Saves() != 1 {
			t.Errorf("%s not saved", x.Switch)
		}
	}
	// The simulator prints bare `roce`; parsing normalises it.
	if !strings.Contains(r.sims[1].RunningConfig(), "\n   roce\n") {
		t.Errorf("roce switch:\n%s", r.sims[1].RunningConfig())
	}
	res, err = r.run(t)
	for i := range res {
		if err != nil || res[i].Sent != 0 || len(r.sims[i].Received()) != 0 {
			t.Errorf("second apply on %s: sent %d (%v)", res[i].Switch, res[i].Sent, err)
		}
	}
}

// A jumbo-frame data network: one apply gives every port MTU 9216 (a port
// that already has more keeps it), the second sends nothing.
func TestJumboMTU(t *testing.T) {
	inv := loadInv(t, [3]string{"sw1", "SN2100", "3.6.8190"})
	for i := range inv.Hosts {
		inv.Hosts[i].DataMTU = 9000
	}
	r := newRig(t, inv, onyxsim.Options{Seed: []string{"interface ethernet 1/5 mtu 9216 force", "interface ethernet 1/16 mtu 9200 force"}})
	sim := r.sims[0]
	if _, err := r.run(t); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	sent := strings.Join(sim.Received(), "\n")
	if !strings.Contains(sent, "interface ethernet 1/1-1/4 mtu 9216 force\n") || strings.Contains(sent, "1/5 mtu") {
		t.Errorf("sent:\n%s", sent)
	}
	running := sim.RunningConfig()
	for _, p := range []string{"1/1", "1/5", "1/16"} {
		if !strings.Contains(strings.Join(statements(running), "\n"), "interface ethernet "+p+" mtu 9216 force") {
			t.Errorf("port %s has no MTU 9216:\n%s", p, running)
		}
	}
	if _, err := r.run(t); err != nil || len(sim.Received()) != 0 {
		t.Fatalf("second apply sent %q (%v)", sim.Received(), err)
	}
}
