package onyxapply

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// routedPool is a routed-pool inventory of n hosts (n a multiple of 64) on
// one SN4600C: n/64 VMs per ESXi host, one port per ESXi host, so the switch
// gets one static route per host.
func routedPool(tb testing.TB, n int) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	per := max(n/64, 1)
	fmt.Fprintf(&b, `name: pool
switches:
  - {name: leaf1, model: SN4600C, onyx: 3.6.8190}
docker: {pool: 10.0.0.0/8, prefix: 24, routing: switch}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: %d}
hosts:
`, max(8, per))
	for i := range n {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/19, switch: leaf1, port: 1/%d}}\n",
			i+1, i/per+1, off>>8, off&255, i/per+1)
	}
	inv, err := inventory.Load("pool.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// 4,096 hosts in routed-pool mode: 4,096 routes go in blocks of 256, the
// 14 other commands one by one; the switch counts the round trips itself
// (prompts at which it had to wait for input). The second apply reads,
// finds nothing and sends nothing.
func TestRouted4096RoundTrips(t *testing.T) {
	r := newRig(t, routedPool(t, 4096))
	sim := r.sims[0]
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	routes := 0
	for _, c := range res[0].Plan.Changes {
		if strings.HasPrefix(c.Command, "ip route ") {
			routes++
		}
	}
	if routes != 4096 || res[0].Sent != len(res[0].Plan.Changes) || len(sim.Received()) != res[0].Sent || !res[0].Saved {
		t.Fatalf("routes %d, sent %d of %d, switch received %d, saved %v", routes, res[0].Sent, len(res[0].Plan.Changes), len(sim.Received()), res[0].Saved)
	}
	writes := 0
	for i := 0; i < len(res[0].Plan.Changes); i = blockEnd(res[0].Plan.Changes, i, DefaultBatch) {
		writes++
	}
	if others := res[0].Sent - routes; writes > others+4096/DefaultBatch+1 {
		t.Errorf("%d writes for %d other commands and %d routes", writes, others, routes)
	}
	// login: paging off; enable, show running-config, configure terminal,
	// the plan's writes (and an `exit` after `interface vlan 1`, which
	// enters its sub-mode), show running-config, configuration write.
	want := 1 + 3 + writes + 1 + 2
	if res[0].RoundTrips != want || res[0].RoundTrips > 50 {
		t.Errorf("client round trips %d, want %d (≤ 50)", res[0].RoundTrips, want)
	}
	// The switch's own count: one more, the first prompt before any input.
	if w := sim.Waits(); w != want+1 {
		t.Errorf("switch waited for input %d times, want %d", w, want+1)
	}
	if n := len(sim.Routes()); n != 4096 {
		t.Errorf("switch routes %d prefixes", n)
	}
	t.Logf("first: %d commands (%d routes), %d client round trips, %d switch waits", res[0].Sent, routes, res[0].RoundTrips, sim.Waits())

	res, err = r.run(t)
	if err != nil || res[0].Sent != 0 || len(sim.Received()) != 0 {
		t.Fatalf("second apply: sent %d, received %d, err %v", res[0].Sent, len(sim.Received()), err)
	}
	if res[0].RoundTrips != 3 {
		t.Errorf("no-op round trips %d, want 3 (paging off, enable, show running-config)", res[0].RoundTrips)
	}
}

// A refused route in the middle of a block: the block's other lines were
// sent with it and the switch ran them; the error names the refused one,
// the block, how many after it took effect and every other refused one;
// the push stops after the block and saves nothing. The next run sends what
// is left.
func TestRefusedRouteInBlock(t *testing.T) {
	inv := routedPool(t, 640)
	// The 14 other commands come first: command 14+100 is the 100th route,
	// in the first block (routes 1-256); the 150th is refused as well.
	r := newRig(t, inv)
	sim := r.sims[0]
	res, err := r.run(t)
	if err != nil {
		t.Fatal(err)
	}
	// Start over from a switch without the routes, with two faults.
	r2 := newRig(t, routedPool(t, 640))
	cmds := res[0].Plan.Commands()
	first := -1
	for i, c := range cmds {
		if strings.HasPrefix(c, "ip route ") && first < 0 {
			first = i
		}
	}
	bad1, bad2 := cmds[first+99], cmds[first+149]
	r2.sims[0].SetFaults(onyxsim.Fault{Command: bad1, Message: "Route table full"}, onyxsim.Fault{Command: bad2})
	res2, err := r2.run(t)
	if err == nil {
		t.Fatal("no error")
	}
	var pe *PushError
	if !errors.As(res2[0].Err, &pe) {
		t.Fatalf("err = %v", res2[0].Err)
	}
	blockEnd := first + DefaultBatch
	if pe.Index != first+100 || pe.Command != bad1 || pe.From != first+1 || pe.Sent != blockEnd ||
		fmt.Sprint(pe.Refused) != fmt.Sprint([]int{first + 100, first + 150}) {
		t.Errorf("push error: index %d command %q from %d sent %d refused %v", pe.Index, pe.Command, pe.From, pe.Sent, pe.Refused)
	}
	sim2 := r2.sims[0]
	if got := len(sim2.Received()); got != blockEnd || res2[0].Sent != blockEnd || sim2.Saves() != 0 {
		t.Errorf("switch received %d, result sent %d, saves %d; want %d, %d, 0", got, res2[0].Sent, sim2.Saves(), blockEnd, blockEnd)
	}
	if n := len(sim2.Routes()); n != DefaultBatch-2 {
		t.Errorf("switch routes %d prefixes, want the block's %d minus the 2 refused", n, DefaultBatch)
	}
	msg := fmt.Sprintf(`command %d of %d refused: %q: %% Route table full; stopped after its block (commands %d-%d of %d, sent in one write): 155 of the 156 after it took effect, refused as well: %d; not saved (%d command(s) are applied but unsaved`,
		first+100, len(cmds), bad1, first+1, blockEnd, len(cmds), first+150, blockEnd-2)
	if !strings.Contains(r2.out.String(), msg) {
		t.Errorf("output lacks\n%s\n%s", msg, r2.out)
	}
	sim2.SetFaults()
	res2, err = r2.run(t)
	if err != nil || res2[0].Sent != len(cmds)-blockEnd+2 || !res2[0].Saved {
		t.Errorf("rerun: sent %d (want %d), saved %v, err %v", res2[0].Sent, len(cmds)-blockEnd+2, res2[0].Saved, err)
	}
	if statementsOf(sim2.RunningConfig()) != statementsOf(sim.RunningConfig()) {
		t.Error("after the rerun the switch differs from one configured in one go")
	}
}

func statementsOf(running string) string { return strings.Join(statements(running), "\n") }

// onyxFabric is an ONYX fabric of 2 SN2700 spines and leaves leaves, each
// leaf with one host on 1/1 and an uplink to each spine on 1/31, 1/32 (the
// spines' downlinks on 1/1 …).
func onyxFabric(tb testing.TB, leaves int) *inventory.Inventory {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name: fab\nswitches:\n  - {name: spine1, model: SN2700, onyx: 3.10.4006, role: spine}\n  - {name: spine2, model: SN2700, onyx: 3.10.4006, role: spine}\n")
	for l := range leaves {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN2700, onyx: 3.10.4006, role: leaf}\n", l+1)
	}
	b.WriteString("fabric:\n  links:\n")
	for l := range leaves {
		fmt.Fprintf(&b, "    - {switch: leaf%d, port: 1/31, peer: spine1, peer_port: 1/%d}\n", l+1, l+1)
		fmt.Fprintf(&b, "    - {switch: leaf%d, port: 1/32, peer: spine2, peer_port: 1/%d}\n", l+1, l+1)
	}
	b.WriteString(`docker: {pool: 172.16.0.0/12, prefix: 24}
defaults:
  os: ubuntu-22.04
  data_interface: enp1f0
  data_mtu: 9000
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`)
	for l := range leaves {
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 10.%d.0.%d/24, switch: leaf%d, port: 1/1}}\n", l+1, l+1, l+1, l+11, l+1)
	}
	inv, err := inventory.Load("fab.yaml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return inv
}

// A spine's first apply on a 32-leaf fabric: 144 commands, of which its
// 32 port descriptions, its 33 addresses (32 ports, the loopback), its 32
// BGP neighbors with its network and their 32 `fall-over bfd` are
// independent entries, pasted in four blocks as static routes are; the
// template, the ports' modes, `ip routing`, the loopback, the BGP instance,
// its instance-wide settings and the three BFD timers go one by one: 18
// writes, and 25 round trips where one write per command took 151 (the
// switch's count: 26 waits for input). The switch's running-config is then
// the plan's; the second apply sends nothing.
func TestSpineFirstApplyRoundTrips(t *testing.T) {
	inv := onyxFabric(t, 32)
	r := newRig(t, inv)
	r.opts.Select = func(sw inventory.Switch) bool { return sw.Name == "spine1" }
	sim := r.sims[0]
	res, err := r.run(t)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	p := res[0].Plan.Changes
	writes := 0
	for i := 0; i < len(p); i = blockEnd(p, i, DefaultBatch) {
		writes++
	}
	t.Logf("spine1: %d commands in %d writes, %d round trips (the switch waited %d times)", len(p), writes, res[0].RoundTrips, sim.Waits())
	if len(p) != 144 || res[0].Sent != len(p) || len(sim.Received()) != len(p) || !res[0].Saved {
		t.Fatalf("%d commands, sent %d, the switch received %d, saved %v", len(p), res[0].Sent, len(sim.Received()), res[0].Saved)
	}
	// login: paging off; enable, show running-config, configure terminal,
	// the plan's writes and an `exit` after `interface loopback 0` (it
	// enters its sub-mode), show running-config, configuration write.
	if want := 1 + 3 + 18 + 1 + 2; writes != 18 || res[0].RoundTrips != want || sim.Waits() != want+1 {
		t.Errorf("%d writes, %d round trips, the switch waited %d times; want 18 writes, %d round trips, %d waits", writes, res[0].RoundTrips, sim.Waits(), want, want+1)
	}
	if res, err := r.run(t); err != nil || !res[0].Plan.Empty() {
		t.Errorf("second apply: %v %v", err, res[0].Plan.Changes)
	}
}

// A refused port address in its block: the block's other addresses took
// effect, the push stops after the block (no BGP line is sent) and saves
// nothing; the error names the block.
func TestRefusedAddressInBlock(t *testing.T) {
	inv := onyxFabric(t, 8)
	r := newRig(t, inv)
	r.opts.Select = func(sw inventory.Switch) bool { return sw.Name == "spine1" }
	sim := r.sims[0]
	bad := "interface ethernet 1/3 ip address 10.254.0.9/31 primary"
	sim.SetFaults(onyxsim.Fault{Command: bad, Message: "Address overlaps"})
	res, err := r.run(t)
	var pe *PushError
	if err == nil || !errors.As(res[0].Err, &pe) {
		t.Fatalf("err %v, result %v", err, res[0].Err)
	}
	cmds := res[0].Plan.Commands()
	if pe.Command != bad || cmds[pe.From-1] != "interface ethernet 1/1 ip address 10.254.0.1/31 primary" ||
		cmds[pe.Sent-1] != "interface loopback 0 ip address 10.10.10.1/32 primary" || fmt.Sprint(pe.Refused) != fmt.Sprint([]int{pe.Index}) {
		t.Errorf("push error: %v (block %d-%d)", pe, pe.From, pe.Sent)
	}
	for _, c := range sim.Received() {
		if strings.HasPrefix(c, "router bgp") {
			t.Errorf("sent after the refused block: %q", c)
		}
	}
	if sim.Saves() != 0 || !strings.Contains(pe.Error(), "stopped after its block (commands ") {
		t.Errorf("saves %d; %v", sim.Saves(), pe)
	}
}

// Consecutive routes go in one write, and so do consecutive port
// descriptions (each independent of the others); every other command goes
// alone, and a block never mixes kinds.
func TestBlockEnd(t *testing.T) {
	kinds := []onyx.Kind{onyx.KindDescription, onyx.KindDescription, onyx.KindDescription, onyx.KindModuleType, onyx.KindRoute, onyx.KindRoute, onyx.KindDescription, onyx.KindTrust}
	changes := make([]onyx.Change, len(kinds))
	for i, k := range kinds {
		changes[i].Kind = k
	}
	var blocks []string
	for i := 0; i < len(changes); {
		j := blockEnd(changes, i, 2)
		blocks = append(blocks, fmt.Sprintf("%d-%d", i, j))
		i = j
	}
	if got := strings.Join(blocks, " "); got != "0-2 2-3 3-4 4-6 6-7 7-8" {
		t.Errorf("blocks of at most 2: %s", got)
	}
	if blockEnd(changes, 0, 1) != 1 {
		t.Error("batch 1: a block of more than one")
	}
}
