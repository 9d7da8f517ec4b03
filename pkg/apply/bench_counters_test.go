package apply

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// The bench's switch counters on the golden mixed fabric, after apply:
// every data port and uplink of the ONYX switches over SSH (pause and
// ECN), then of the Cumulus ones through NVUE (pause only, ECN -1), each
// named as pkg/bench names the fabric's uplinks, so a fabric cause can
// say what rose on them.
func TestBenchCountersMixedFabric(t *testing.T) {
	inv, err := inventory.LoadFile("../../testdata/golden/fabric-mixed/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	known := []string{""}
	o := SwitchOptions{Common: Common{Parallel: 4}, SSH: SSH{Password: "admin", KnownHosts: kh}, BackupDir: filepath.Join(t.TempDir(), "bk")}
	onyxs, cums := map[string]*onyxsim.Server{}, map[string]*nvuesim.Server{}
	for i, sw := range inv.Switches {
		if sw.OS() == inventory.OSCumulus {
			s := nvuesim.Start(t, nvuesim.Options{Version: sw.Cumulus.String(), Hostname: sw.Name, Ports: sw.Ports})
			inv.Switches[i].Mgmt = s.Addr
			o.NVUE = NVUE{Password: "cumulus", Fingerprint: s.Fingerprint()}
			cums[sw.Name] = s
			continue
		}
		s := onyxsim.Start(t, onyxsim.Options{Hostname: sw.Name, Version: sw.ONYX.String(), Ports: sw.Ports})
		inv.Switches[i].Mgmt = s.Addr
		known = append(known, s.KnownHostsLine())
		onyxs[sw.Name] = s
	}
	if err := os.WriteFile(kh, []byte(strings.Join(known, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Switches(context.Background(), inv, o); err != nil {
		t.Fatalf("apply: %v", err)
	}
	onyxs["spine2"].SetPauseCounters(1, 3, 4000, 1000) // spine2 1/1, towards leaf1
	onyxs["spine2"].SetECNMarked(1, 12)
	cums["leaf1"].SetPauseCounters("swp32", 3, 0, 700) // leaf1's uplink to spine2
	r := o.begin("bench")
	got, err := benchCounters(inv, o, r)(context.Background())
	r.end()
	if err != nil {
		t.Fatal(err)
	}
	want := "[{spine2 Eth1/1 5000 12} {spine2 Eth1/2 0 0} " +
		"{leaf2 Eth1/1 0 0} {leaf2 Eth1/2 0 0} {leaf2 Eth1/31 0 0} {leaf2 Eth1/32 0 0} " +
		"{spine1 swp1 0 -1} {spine1 swp2 0 -1} " +
		"{leaf1 swp1 0 -1} {leaf1 swp2 0 -1} {leaf1 swp31 0 -1} {leaf1 swp32 700 -1}]"
	if fmt.Sprint(got) != want {
		t.Errorf("counters\n%v\nwant\n%s", got, want)
	}
	read := map[string]bool{}
	for _, c := range got {
		read[c.Port] = true
	}
	for _, u := range bench.FabricUplinks(inv) {
		if !read[u.Port] || !read[u.SpinePort] {
			t.Errorf("uplink %s ↔ %s not read", u.Port, u.SpinePort)
		}
	}
	for _, hp := range bench.HostPorts(inv) {
		if !read[hp.Port] {
			t.Errorf("host port %s not read", hp.Port)
		}
	}
}
