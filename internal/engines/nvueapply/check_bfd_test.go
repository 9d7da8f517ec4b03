package nvueapply

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// The bfd check reads the BFD sessions view: a session up with the
// planned timers passes; one down, one with other timers and a missing one
// fail, each with its fix; an unreadable view is could-not-tell.
func TestCheckBFDVerdicts(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 64, Model: "SN5600"})
	inv := loadInv(t, "fabric-cumulus", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	if res, err := pushAll(context.Background(), inv, []inventory.Switch{*leaf1}, r.o); err != nil {
		t.Fatalf("%v: %v\n%s", err, res[0].Err, r.out)
	}
	check := func() []readiness.Result {
		rs, _ := Check(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
		var out []readiness.Result
		for _, x := range rs {
			if x.Check == CheckBFD {
				out = append(out, x)
			}
		}
		return out
	}
	// No session at all (the switch's bfdd does not run them).
	rs := check()
	if len(rs) != 2 || rs[0].Status != readiness.Failed || rs[0].Found != "no BFD session for swp63" ||
		!strings.HasPrefix(rs[0].Fix, "on leaf1: `nv set vrf default router bgp neighbor swp63 bfd enable on` && nv config apply") {
		t.Errorf("no sessions: %+v", rs)
	}
	r.sim.SetBFDPeers(func() map[string]any {
		return map[string]any{
			"1": map[string]any{"interface": "swp63", "peer": "fe80::1", "state": "up", "detect-multiplier": int64(3), "min-rx-interval": int64(300), "min-tx-interval": int64(300)},
			"2": map[string]any{"interface": "swp64", "peer": "fe80::2", "state": "down", "detect-multiplier": int64(3), "min-rx-interval": int64(300), "min-tx-interval": int64(300)},
		}
	})
	rs = check()
	if rs[0].Status != readiness.Passed || rs[0].Found != "up with spine1, detect-multiplier 3, 300/300 ms min rx/tx" {
		t.Errorf("swp63 up: %s", rs[0].Line())
	}
	if rs[1].Status != readiness.Failed || rs[1].Found != "down, detect-multiplier 3, 300/300 ms min rx/tx" ||
		!strings.HasPrefix(rs[1].Fix, "spine2 does not answer BFD on leaf1 swp64 ↔ spine2 swp1: check its BFD (`nv show vrf default router bfd peers` on spine2)") {
		t.Errorf("swp64 down: %s", rs[1].Line())
	}
	r.sim.SetBFDPeers(func() map[string]any {
		return map[string]any{"1": map[string]any{"interface": "swp63", "state": "up", "detect-multiplier": int64(5), "min-rx-interval": int64(1000), "min-tx-interval": int64(300)}}
	})
	if rs = check(); rs[0].Status != readiness.Failed || rs[0].Found != "up, detect-multiplier 5, 1000/300 ms min rx/tx" || rs[0].Expected != "up, detect-multiplier 3, 300 ms min rx and tx" ||
		!strings.Contains(rs[0].Fix, "`nv set vrf default router bgp neighbor swp63 bfd detect-multiplier 3`") {
		t.Errorf("other timers: %s", rs[0].Line())
	}
	// Cumulus Linux 5.15: rdggen writes no BFD, and checks none.
	inv515 := loadInvEdit(t, "fabric-cumulus", "", "cumulus: 5.9.1, role: leaf}    #", "cumulus: 5.15.0, role: leaf}    #")
	sw := inv515.Switch("leaf1")
	sw.Mgmt = r.sim.Addr
	k := &checker{sw: *sw, inv: inv515}
	k.bfd()
	if len(k.rs) != 0 {
		t.Errorf("5.15: %+v", k.rs)
	}
}

// The golden Cumulus fabric running rdggen's intent on FRR in namespaces:
// bfdd runs every planned session up at 3 × 300 ms and the bfd check
// passes; with spine1's bfdd stopped, its two sessions fail at both ends
// (down at the leaves, no session at spine1), and pass again once bfdd is
// back.
func TestCheckBFDFabric(t *testing.T) {
	fabricnet.Require(t)
	inv := loadInv(t, "fabric-cumulus", "")
	f := fabricnet.New(t, fabricnet.SpecOf(inv), fabricnet.Options{})
	var o Options
	for i, sw := range inv.Switches {
		sim := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports, Model: sw.Model,
			Applied: nvuesim.Tree(cumulus.Intent(inv, sw))})
		f.FollowNVUE(sw.Name, sim)
		inv.Switches[i].Mgmt = sim.Addr
		if i == 0 {
			// Every simulator serves httptest's one certificate.
			o = newRigOptions(t, sim)
		}
	}
	bfd := func() map[string]readiness.Result {
		rs, _ := Check(context.Background(), inv, inv.Switches, o)
		out := map[string]readiness.Result{}
		for _, r := range rs {
			if r.Check == CheckBFD {
				out[r.Machine+" "+r.Subject] = r
			}
		}
		return out
	}
	// waitBFD waits until the failed bfd results are exactly want.
	waitBFD := func(want ...string) map[string]readiness.Result {
		t.Helper()
		sort.Strings(want)
		var got map[string]readiness.Result
		// 3 minutes: bfdd's sessions come up within seconds, but a CI
		// machine tearing down other tests' namespaces can stall every
		// `ip netns exec` (and with it the simulators' views) for a while.
		deadline := time.Now().Add(3 * time.Minute)
		for {
			got = bfd()
			var failed []string
			var detail strings.Builder
			for key, r := range got {
				if r.Status != readiness.Passed {
					failed = append(failed, key)
				}
				detail.WriteString(r.Line() + "\n")
			}
			sort.Strings(failed)
			if len(got) == 8 && strings.Join(failed, ",") == strings.Join(want, ",") {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("bfd failures %q, want %q:\n%s", failed, want, detail.String())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	got := waitBFD()
	var lines []string
	for _, r := range got {
		lines = append(lines, r.Line())
		if !strings.HasSuffix(r.Found, ", detect-multiplier 3, 300/300 ms min rx/tx") {
			t.Errorf("timers: %s", r.Line())
		}
	}
	sort.Strings(lines)
	t.Logf("check with bfdd running:\n%s", strings.Join(lines, "\n"))
	peers, err := f.BFDPeers("leaf1")
	if err != nil || len(peers) != 2 {
		t.Fatalf("leaf1's bfdd: %v %v", peers, err)
	}
	t.Logf("leaf1 show bfd peers: %+v", peers)

	f.StopDaemon("spine1", "bfdd")
	got = waitBFD("leaf1 swp63", "leaf2 swp63", "spine1 swp1", "spine1 swp2")
	for _, key := range []string{"leaf1 swp63", "spine1 swp1"} {
		t.Logf("spine1's bfdd stopped: %s", got[key].Line())
	}
	if r := got["leaf1 swp63"]; !strings.HasPrefix(r.Found, "down") || !strings.HasPrefix(r.Fix, "spine1 does not answer BFD on leaf1 swp63 ↔ spine1 swp1") {
		t.Errorf("leaf1 swp63: %s", r.Line())
	}
	if r := got["spine1 swp1"]; r.Found != "no BFD session for swp1" {
		t.Errorf("spine1 swp1: %s", r.Line())
	}
	f.StartDaemon("spine1", "bfdd")
	waitBFD()
}

// newRigOptions are newRig's options for an already running simulator.
func newRigOptions(t *testing.T, sim *nvuesim.Server) Options {
	t.Helper()
	ca, err := sim.WriteCA(t.TempDir(), "switch-ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	return Options{User: "cumulus", Password: "cumulus", TLS: TLS{CAFile: ca}, Parallel: 4,
		PollInterval: 5 * time.Millisecond, RequestTimeout: 5 * time.Second}
}

// A Cumulus switch's BFD session to an ONYX peer that is down names ONYX's
// own view of its sessions for the far end (`show ip bfd neighbors`, which
// onyxapply's bfd check reads), with the session to look for.
func TestCheckBFDONYXPeer(t *testing.T) {
	r := newRig(t, nvuesim.Options{Ports: 32, Model: "SN3700"})
	inv := loadInv(t, "fabric-mixed", "")
	leaf1 := inv.Switch("leaf1")
	leaf1.Mgmt = r.sim.Addr
	r.sim.SetBFDPeers(func() map[string]any {
		return map[string]any{
			"1": map[string]any{"interface": "swp31", "peer": "fe80::1", "state": "up", "detect-multiplier": int64(3), "min-rx-interval": int64(300), "min-tx-interval": int64(300)},
			"2": map[string]any{"interface": "swp32", "state": "down", "detect-multiplier": int64(3), "min-rx-interval": int64(300), "min-tx-interval": int64(300)},
		}
	})
	rs, _ := Check(context.Background(), inv, []inventory.Switch{*leaf1}, r.o)
	var got []string
	for _, x := range rs {
		if x.Check == CheckBFD {
			got = append(got, x.Line())
		}
	}
	want := []string{
		"leaf1: bfd swp31: passed (up with spine1, detect-multiplier 3, 300/300 ms min rx/tx)",
		"leaf1: bfd 10.254.10.3: FAILED: found down, detect-multiplier 3, 300/300 ms min rx/tx; expected up, detect-multiplier 3, 300 ms min rx and tx; " +
			"fix: spine2 does not answer BFD on leaf1 swp32 ↔ spine2 1/1: check its BFD (`show ip bfd neighbors` on spine2: the session to 10.254.10.2) and the link (link and lldp checks); BGP drops the session each time BFD goes down",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bfd with an ONYX peer:\n%s", strings.Join(got, "\n"))
	}
}
