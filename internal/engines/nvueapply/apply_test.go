package nvueapply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// loadInv is a golden case's inventory with its (only) switch at addr.
func loadInv(t testing.TB, golden, addr string) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "golden", golden, "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(golden+".yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	inv.Switches[0].Mgmt = addr
	return inv
}

// rig is a simulated Cumulus switch and the options that reach it.
type rig struct {
	sim *nvuesim.Server
	o   Options
	out *bytes.Buffer
}

func newRig(t testing.TB, so nvuesim.Options) *rig {
	t.Helper()
	sim := nvuesim.Start(t, so)
	ca, err := sim.WriteCA(t.TempDir(), "switch-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	out := &bytes.Buffer{}
	return &rig{sim: sim, out: out, o: Options{User: "cumulus", Password: "cumulus", TLS: TLS{CAFile: ca},
		BackupDir: filepath.Join(t.TempDir(), "backup"), PollInterval: 5 * time.Millisecond,
		RequestTimeout: 5 * time.Second, Out: out}}
}

func (r *rig) run(t testing.TB, inv *inventory.Inventory) (*Result, error) {
	t.Helper()
	res, err := pushAll(context.Background(), inv, inv.Switches, r.o)
	if len(res) != 1 {
		t.Fatalf("pushAll returned %d results (err %v)", len(res), err)
	}
	return res[0], err
}

// pushAll applies inv to the switches sws as pkg/apply does: each switch a
// unit of Prepare, all driven by driver.ReadPlanPush (read and plan every
// switch, print the plans, ask o.Gate once, push). The results are in the
// order of sws; err names the switches that failed.
func pushAll(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch, o Options) ([]*Result, error) {
	o.defaults()
	names := make([]string, len(sws))
	for i, sw := range sws {
		names[i] = sw.Name
	}
	units := driver.ReadPlanPush(ctx, names, driver.Run{ReadPhase: driver.Phrasef("reading the applied configuration of %d Cumulus switch(es)"),
		PushPhase: driver.Phrasef("changing %d Cumulus switch(es)"), Parallel: o.Parallel, DryRun: o.DryRun, Gate: o.Gate, Track: o.Track, Out: o.Out},
		func(i int) *Prepared { return Prepare(ctx, inv, sws[i], o) })
	res := make([]*Result, len(units))
	var failed []string
	for i, u := range units {
		if res[i] = u.Finish(); res[i].Err != nil {
			failed = append(failed, names[i])
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("%d of %d Cumulus switch(es) failed: %s", len(failed), len(units), strings.Join(failed, ", "))
	}
	return res, nil
}

// configPatches counts the PATCH requests that change configuration (not
// a revision's state).
func configPatches(sim *nvuesim.Server) int {
	n := 0
	for _, q := range sim.Requests() {
		if q.Method == "PATCH" && !strings.HasPrefix(q.Path, "/revision") {
			n++
		}
	}
	return n
}

// leaf is the value at a dotted path of t.
func leaf(t Tree, path ...string) any {
	v, _ := cumulus.Lookup(t, path)
	return v
}

func TestFirstRunThenNoOp(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	res, err := r.run(t, inv)
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, r.out)
	}
	if !res.Applied || !res.Confirmed || !res.Saved || res.Patches != 1 || configPatches(r.sim) != 1 {
		t.Fatalf("first run: applied %v confirmed %v saved %v patches %d (simulator saw %d)\n%s",
			res.Applied, res.Confirmed, res.Saved, res.Patches, configPatches(r.sim), r.out)
	}
	applied := r.sim.Applied()
	if leaf(applied, "qos", "roce", "mode") != "lossless" || leaf(applied, "system", "hostname") != "swx-mld-1-2" ||
		leaf(applied, "interface", "swp8", "link", "mtu") != int64(9216) {
		t.Errorf("applied configuration lacks the intent: %v", applied)
	}
	// 5.9.1 saves on apply: the startup configuration is the applied one.
	if diff := cmp.Diff(applied, r.sim.Startup()); diff != "" {
		t.Errorf("startup differs from applied (-applied +startup):\n%s", diff)
	}
	if r.sim.Count("PATCH", "/revision") != 2 { // apply (with confirm), its confirmation; no save
		t.Errorf("revision PATCHes: %d, want 2 (apply, confirm): %v", r.sim.Count("PATCH", "/revision"), r.sim.Requests())
	}
	if st := r.sim.RevisionState(res.Revision); st != "applied_and_saved" {
		t.Errorf("revision state %q", st)
	}
	if !strings.Contains(r.out.String(), "qos.roce.mode: (unset) → lossless") || !strings.Contains(r.out.String(), "interface.swp1.link.mtu: (unset) → 9216") {
		t.Errorf("plan lines:\n%s", r.out)
	}
	backup, err := os.ReadFile(res.Backup)
	if err != nil || !strings.HasPrefix(string(backup), "{") {
		t.Errorf("backup %q: %v %q", res.Backup, err, backup)
	}
	if fi, err := os.Stat(res.Backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode: %v %v", fi.Mode(), err)
	}

	r.sim.ResetRequests()
	r.out.Reset()
	res, err = r.run(t, inv)
	if err != nil || !res.Plan.Empty() || res.Applied || res.Backup != "" {
		t.Fatalf("second run: err %v, plan %v\n%s", err, res.Plan.Changes, r.out)
	}
	for _, q := range r.sim.Requests() {
		if q.Method != "GET" {
			t.Errorf("second run sent %s %s", q.Method, q.Path)
		}
	}
	if !strings.Contains(r.out.String(), "up to date, nothing to send") {
		t.Errorf("second run output:\n%s", r.out)
	}
}

// userConfig is configuration of the switch's owner that rdggen must keep.
func userConfig() Tree {
	return Tree{
		"interface": Tree{
			"swp1":  Tree{"link": Tree{"description": "to clx-mld-41", "mtu": int64(1500)}},
			"swp20": Tree{"type": "swp", "link": Tree{"description": "uplink", "state": Tree{"up": Tree{}}}},
			"eth0":  Tree{"ip": Tree{"address": Tree{"10.10.0.2/24": Tree{}}}},
		},
		"system": Tree{"hostname": "old-name", "message": Tree{"pre-login": "authorised use only"}},
		"vrf": Tree{"default": Tree{"router": Tree{"static": Tree{
			"10.99.0.0/16":   Tree{"via": Tree{"31.31.31.100": Tree{"type": "ipv4-address"}}},
			"172.16.99.0/24": Tree{"via": Tree{"31.31.31.100": Tree{"type": "ipv4-address"}}},
		}}}},
	}
}

func TestKeepsUserConfig(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: userConfig()})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	if _, err := r.run(t, inv); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	applied := r.sim.Applied()
	for path, want := range map[string]any{
		"interface.swp1.link.description":  "to clx-mld-41",
		"interface.swp20.link.description": "uplink",
		"system.message.pre-login":         "authorised use only",
		"interface.swp1.link.mtu":          int64(9216), // rdggen's: changed
		"system.hostname":                  "swx-mld-1-2",
	} {
		if got := leaf(applied, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if _, ok := cumulus.Lookup(applied, []string{"interface", "eth0", "ip", "address", "10.10.0.2/24"}); !ok {
		t.Error("eth0's address is gone")
	}
	for _, dst := range []string{"10.99.0.0/16", "172.16.99.0/24"} {
		if _, ok := cumulus.Lookup(applied, []string{"vrf", "default", "router", "static", dst}); !ok {
			t.Errorf("the user's route %s is gone", dst)
		}
	}
	if !strings.Contains(r.out.String(), "interface.swp1.link.mtu: 1500 → 9216") || !strings.Contains(r.out.String(), "system.hostname: old-name → swx-mld-1-2") {
		t.Errorf("plan:\n%s", r.out)
	}
}

func TestLossyBecomesLossless(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: Tree{"qos": Tree{"roce": Tree{"enable": "on", "mode": "lossy"}}}})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	plan := r.o
	plan.DryRun = true
	res, err := pushAll(context.Background(), inv, inv.Switches, plan)
	if err != nil || configPatches(r.sim) != 0 || r.sim.Count("POST", "") != 0 {
		t.Fatalf("dry run: %v, %d PATCH, %d POST", err, configPatches(r.sim), r.sim.Count("POST", ""))
	}
	if !strings.Contains(r.out.String(), "qos.roce.mode: lossy → lossless\n") {
		t.Fatalf("dry-run plan:\n%s", r.out)
	}
	if res[0].Backup != "" {
		t.Errorf("a dry run wrote a backup: %s", res[0].Backup)
	}
	if _, err := r.run(t, inv); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if m := leaf(r.sim.Applied(), "qos", "roce", "mode"); m != "lossless" {
		t.Errorf("mode after apply: %v", m)
	}
	rs, err := Check(context.Background(), inv, inv.Switches, r.o)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rs {
		if x.Check == CheckRoCE && x.Status != "passed" {
			t.Errorf("after apply: %s", x.Line())
		}
	}
}

func TestApplyFailsMidway(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: userConfig()})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	before := r.sim.Applied()
	r.sim.FailApply("switchd failed to restart")
	res, err := r.run(t, inv)
	if err == nil || res.Err == nil || res.Applied || !strings.Contains(res.Err.Error(), "ignore_fail") ||
		!strings.Contains(res.Err.Error(), "switchd failed to restart") {
		t.Fatalf("want an apply_fail error, got %v (applied %v)", res.Err, res.Applied)
	}
	if diff := cmp.Diff(before, r.sim.Applied()); diff != "" {
		t.Errorf("a failed apply changed the switch:\n%s", diff)
	}
	if st := r.sim.RevisionState(res.Revision); st != "ignore_fail" {
		t.Errorf("revision state %q", st)
	}
	if res.Backup == "" {
		t.Error("no backup before the change")
	}
	if !strings.Contains(r.out.String(), "FAILED") {
		t.Errorf("output:\n%s", r.out)
	}
	// The next run finds the same plan and makes it.
	if _, err := r.run(t, inv); err != nil {
		t.Fatalf("second run: %v", err)
	}
}

func TestRefusedPatchChangesNothing(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	r.o.Intent = func(inv *inventory.Inventory, sw inventory.Switch) Tree {
		t := cumulus.Intent(inv, sw)
		t["interface"].(Tree)["swp1"].(Tree)["link"].(Tree)["mtu"] = 99999 // outside 552-9216
		return t
	}
	res, err := r.run(t, inv)
	var api *APIError
	if err == nil || !errors.As(res.Err, &api) || api.Status != 400 || !strings.Contains(res.Err.Error(), "552-9216") {
		t.Fatalf("want a 400 naming the MTU range, got %v", res.Err)
	}
	if len(r.sim.Revisions()) != 0 {
		t.Errorf("the refused revision was not discarded: %v", r.sim.Revisions())
	}
	if len(r.sim.Applied()) != 0 {
		t.Errorf("applied: %v", r.sim.Applied())
	}
}

// TestInterruptedApplyRollsBack: an apply whose answer is lost with the
// management path (the switch applied it, then dropped every request for
// 2 s) is read back once the switch answers, not guessed: here the 1 s
// window ran out meanwhile, and rdggen reports the rollback it read.
func TestInterruptedApplyRollsBack(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: userConfig()})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	before := r.sim.Applied()
	r.sim.CutOffApply(2 * time.Second)
	r.o.ConfirmTimeout = time.Second
	r.o.RequestTimeout = time.Second
	res, err := r.run(t, inv)
	if err == nil || res.Applied || !strings.Contains(res.Err.Error(), "state confirm_fail: it was not confirmed in time and was rolled back") ||
		!strings.Contains(res.Err.Error(), "(the answer to the apply was lost: ") {
		t.Fatalf("want the rollback read back, got %v", res.Err)
	}
	if st := r.sim.RevisionState(res.Revision); st != "confirm_fail" {
		t.Fatalf("revision state: %q", st)
	}
	if diff := cmp.Diff(before, r.sim.Applied()); diff != "" {
		t.Errorf("not rolled back:\n%s", diff)
	}
	if diff := cmp.Diff(before, r.sim.Startup()); diff != "" {
		t.Errorf("an unconfirmed apply was saved:\n%s", diff)
	}
	// The switch answers again: a new run applies the plan.
	r.o.ConfirmTimeout = time.Minute
	if _, err := r.run(t, inv); err != nil {
		t.Fatalf("run after the rollback: %v", err)
	}
}

func TestBefore59Saves(t *testing.T) {
	r := newRig(t, nvuesim.Options{Version: "5.8.0"})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	r.o.Version = func(inventory.Switch) inventory.Version { return inventory.MustVersion("5.8.0") }
	res, err := r.run(t, inv)
	if err != nil || !res.Saved || !res.SavedExplicitly {
		t.Fatalf("%v saved %v (explicitly %v)\n%s", err, res.Saved, res.SavedExplicitly, r.out)
	}
	if st := r.sim.RevisionState(res.Revision); st != "applied_and_saved" {
		t.Errorf("revision state %q, want applied_and_saved", st)
	}
	if diff := cmp.Diff(r.sim.Applied(), r.sim.Startup()); diff != "" {
		t.Errorf("not saved:\n%s", diff)
	}
}

func TestRoutingModes(t *testing.T) {
	r := newRig(t, nvuesim.Options{Applied: userConfig()})
	routed := loadInv(t, "cumulus-routed", r.sim.Addr)
	perHost := loadInv(t, "cumulus", r.sim.Addr)
	static := []string{"vrf", "default", "router", "static"}
	gw := routed.GatewayPrefix().String()

	if _, err := r.run(t, routed); err != nil {
		t.Fatalf("routed: %v\n%s", err, r.out)
	}
	applied := r.sim.Applied()
	for _, h := range routed.Hosts {
		via, _ := cumulus.Lookup(applied, append(append([]string(nil), static...), h.Subnet.String(), "via", h.Data.Address.Addr().String()))
		if via == nil {
			t.Errorf("no route for %s via %s", h.Subnet, h.Data.Address.Addr())
		}
	}
	if _, ok := cumulus.Lookup(applied, []string{"interface", "vlan1", "ip", "address", gw}); !ok {
		t.Errorf("no gateway %s on vlan1", gw)
	}

	// To per-host routing: rdggen's routes and gateway go, the user's stay.
	r.out.Reset()
	if _, err := r.run(t, perHost); err != nil {
		t.Fatalf("per-host: %v\n%s", err, r.out)
	}
	applied = r.sim.Applied()
	routes, _ := cumulus.Lookup(applied, static)
	if diff := cmp.Diff([]string{"10.99.0.0/16", "172.16.99.0/24"}, sortedKeys(routes.(map[string]any))); diff != "" {
		t.Errorf("routes left (-want +got):\n%s\n%s", diff, r.out)
	}
	if _, ok := cumulus.Lookup(applied, []string{"interface", "vlan1", "ip", "address", gw}); ok {
		t.Errorf("gateway %s still on vlan1", gw)
	}
	if !strings.Contains(r.out.String(), "vrf.default.router.static[172.16.41.0/24]: (set) → (unset)") &&
		!strings.Contains(r.out.String(), "vrf.default.router.static[172.16.41.0/24]: ") {
		t.Errorf("plan does not name the removed route:\n%s", r.out)
	}
	// And a second per-host run is a no-op.
	r.sim.ResetRequests()
	if res, err := r.run(t, perHost); err != nil || !res.Plan.Empty() || configPatches(r.sim) != 0 {
		t.Errorf("second per-host run: %v %v", err, res.Plan.Changes)
	}
	// Back to switch routing.
	if _, err := r.run(t, routed); err != nil {
		t.Fatalf("back to routed: %v", err)
	}
	if _, ok := cumulus.Lookup(r.sim.Applied(), []string{"interface", "vlan1", "ip", "address", gw}); !ok {
		t.Error("gateway not restored")
	}
}

func TestTLSVerification(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	pinned := r.o
	pinned.TLS = TLS{Fingerprint: strings.ToUpper(r.sim.Fingerprint()[:2]) + ":" + r.sim.Fingerprint()[2:]}
	pinned.DryRun = true
	if res, err := pushAll(context.Background(), inv, inv.Switches, pinned); err != nil || res[0].Plan.Empty() {
		t.Fatalf("pinned: %v", err)
	}
	wrong := pinned
	wrong.TLS = TLS{Fingerprint: strings.Repeat("ab", 32)}
	res, _ := pushAll(context.Background(), inv, inv.Switches, wrong)
	var pin *PinError
	if !errors.As(res[0].Err, &pin) {
		t.Errorf("wrong pin: %v", res[0].Err)
	}
	system := pinned
	system.TLS = TLS{}
	res, _ = pushAll(context.Background(), inv, inv.Switches, system)
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "--nvue-fingerprint; rdggen never skips the check") {
		t.Errorf("no CA: %v", res[0].Err)
	}
	if r.sim.Count("GET", "") != 3 { // the pinned run's applied, system and revision reads only
		t.Errorf("requests: %v", r.sim.Requests())
	}
	bad := pinned
	bad.Password = "wrong"
	res, _ = pushAll(context.Background(), inv, inv.Switches, bad)
	if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "401") {
		t.Errorf("bad password: %v", res[0].Err)
	}
}

// TestApplyWhileAnotherAwaitsConfirm: a revision of someone else waits in
// its confirm window; rdggen reads the revisions first, plans nothing over
// the provisional configuration and changes nothing.
func TestApplyWhileAnotherAwaitsConfirm(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	c, err := NewClient(ClientConfig{Addr: r.sim.Addr, User: "cumulus", Password: "cumulus", TLS: r.o.TLS})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other, _ := c.CreateRevision(ctx)
	if err := c.Patch(ctx, []string{"system"}, other, Tree{"hostname": "someone"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetState(ctx, other, Tree{"state": "apply", "auto-prompt": Tree{"ays": "ays_yes", "confirm": "confirm_yes"}, "state-controls": Tree{"confirm": 60}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.run(t, inv)
	if err == nil || res.Err == nil || !strings.Contains(res.Err.Error(), "revision "+other+" is applied but awaits its confirmation") ||
		strings.Contains(r.out.String(), "up to date") {
		t.Fatalf("want the waiting revision reported, got %v\n%s", res.Err, r.out)
	}
	if n := r.sim.Count("POST", ""); n != 1 { // the other client's only
		t.Errorf("rdggen made %d revision(s) over a provisional configuration", n)
	}
	if revs := r.sim.Revisions(); len(revs) != 1 || revs[0] != other {
		t.Errorf("rdggen's refused revision was not discarded: %v", revs)
	}
	if h := leaf(r.sim.Applied(), "system", "hostname"); h != "someone" {
		t.Errorf("hostname %v", h)
	}
}

// TestSwitchReleaseTooOld: a switch that reports a release without NVUE
// `qos roce` is refused before anything is sent, whatever the inventory
// says; another supported release is only a warning.
func TestSwitchReleaseTooOld(t *testing.T) {
	r := newRig(t, nvuesim.Options{Version: "4.4.0"})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	res, err := r.run(t, inv)
	if err == nil || res.Err == nil || !strings.Contains(res.Err.Error(), `Cumulus Linux before 5.0.0 has no NVUE `+"`qos roce`") {
		t.Fatalf("want a refusal naming the release, got %v\n%s", res.Err, r.out)
	}
	if n := configPatches(r.sim); n != 0 {
		t.Errorf("%d PATCH requests to a 4.4.0 switch", n)
	}
	r2 := newRig(t, nvuesim.Options{Version: "5.6.0"})
	res, err = r2.run(t, loadInv(t, "cumulus", r2.sim.Addr))
	if err != nil || !strings.Contains(strings.Join(res.Plan.Warnings, "\n"), "the switch reports") {
		t.Errorf("5.6.0 switch, inventory 5.9.1: err %v, warnings %q", err, res.Plan.Warnings)
	}
}
