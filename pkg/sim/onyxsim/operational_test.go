package onyxsim

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/onyx"
)

// The BGP summary, the LLDP neighbors and the ports' links come from the
// Operational hooks, printed in the forms pkg/onyx parses; without hooks
// the switch has no session and no neighbor.
func TestOperational(t *testing.T) {
	s := Start(t, Options{Ports: 32, Seed: []string{
		"interface ethernet 1/31-1/32 mtu 9216 force",
		"ip routing vrf default",
		"protocol bgp",
		"router bgp 65101 vrf default",
		"router bgp 65101 vrf default router-id 10.10.10.3 force",
		"router bgp 65101 vrf default neighbor 10.0.0.0 remote-as 65100",
		"router bgp 65101 vrf default neighbor 10.0.0.2 remote-as 65100",
	}})
	// Without hooks: the header from running-config, no session; no
	// neighbor; the ports as PortState says.
	vrfs, err := onyx.ParseBGPSummary(answer(t, s, "show ip bgp summary"))
	if err != nil || len(vrfs) != 1 || vrfs[0].VRF != "default" || vrfs[0].RouterID != "10.10.10.3" || vrfs[0].LocalAS != 65101 || len(vrfs[0].Neighbors) != 0 {
		t.Errorf("no hook: %+v %v", vrfs, err)
	}
	if nb, err := onyx.ParseLLDPRemote(answer(t, s, onyx.ShowLLDPRemoteCommand)); err != nil || len(nb) != 0 {
		t.Errorf("no hook: LLDP %+v %v", nb, err)
	}

	bgpUp := true
	s.SetOperational(Operational{
		BGP: func() (BGP, bool) {
			return BGP{Peers: []BGPPeer{
				{Neighbor: "10.0.0.2", RemoteAS: 65100, State: "Active"},
				{Neighbor: "10.0.0.0", RemoteAS: 65100, State: "Established", MsgRcvd: 40, MsgSent: 41, Uptime: 26*time.Hour + 3*time.Minute + 4*time.Second, PfxRcd: 5},
			}}, bgpUp
		},
		LLDP: func() map[string][]LLDPNeighbor {
			return map[string][]LLDPNeighbor{"1/31": {{SystemName: "spine1", PortID: "Eth1/1", ChassisID: "7c:fe:90:00:00:01"}}, "1/32": {{SystemName: "spine2", PortID: "swp1"}}}
		},
		Links: func() map[string]Link {
			return map[string]Link{"1/31": {Up: true, MTU: 9216}, "1/32": {Up: false, MTU: 1500}}
		},
	})
	text := answer(t, s, "show ip bgp summary")
	if !strings.Contains(text, "1:02:03:04    ESTABLISHED/5\n") {
		t.Errorf("the established row:\n%s", text)
	}
	vrfs, err = onyx.ParseBGPSummary(text)
	if err != nil || len(vrfs) != 1 {
		t.Fatalf("%+v %v", vrfs, err)
	}
	up, _ := vrfs[0].Neighbor(netip.MustParseAddr("10.0.0.0"))
	down, _ := vrfs[0].Neighbor(netip.MustParseAddr("10.0.0.2"))
	if !up.Established() || up.PfxRcd != 5 || up.AS != 65100 || up.UpDown != "1:02:03:04" || down.State != "ACTIVE" || down.Established() {
		t.Errorf("sessions: %+v %+v", up, down)
	}
	js, err := onyx.ParseBGPSummary(answer(t, s, "show ip bgp summary | json-print"))
	if err != nil || len(js) != 1 || len(js[0].Neighbors) != 2 || !js[0].Neighbors[0].Established() {
		t.Errorf("json: %+v %v", js, err)
	}
	bgpUp = false // the BGP process does not answer: no session
	if vrfs, err := onyx.ParseBGPSummary(answer(t, s, "show ip bgp summary")); err != nil || len(vrfs[0].Neighbors) != 0 {
		t.Errorf("BGP down: %+v %v", vrfs, err)
	}

	for _, cmd := range []string{onyx.ShowLLDPRemoteCommand, "show lldp interfaces ethernet remote"} {
		nb, err := onyx.ParseLLDPRemote(answer(t, s, cmd))
		if err != nil || len(nb) != 2 || nb["Eth1/31"][0] != (onyx.LLDPRemote{Port: "Eth1/31", SystemName: "spine1", PortID: "Eth1/1", PortIDSubtype: "Interface Name (5)", ChassisID: "7c:fe:90:00:00:01"}) ||
			nb["Eth1/32"][0].PortID != "swp1" || nb["Eth1/32"][0].ChassisID != "" {
			t.Errorf("%q: %+v %v", cmd, nb, err)
		}
	}

	ports, err := onyx.ParseInterfaces(answer(t, s, "show interfaces ethernet | json-print"))
	if err != nil {
		t.Fatal(err)
	}
	if p := ports["Eth1/31"]; !p.OperUp() || p.MTU != 9216 {
		t.Errorf("1/31: %+v", p)
	}
	if p := ports["Eth1/32"]; p.OperUp() || p.MTU != 1500 {
		t.Errorf("1/32: %+v", p)
	}
	if p := ports["Eth1/1"]; !p.OperUp() || p.MTU != 1500 { // not in Links: PortState
		t.Errorf("1/1: %+v", p)
	}

	// No `router bgp`: an error line, which a check cannot read as a summary.
	s2 := Start(t, Options{})
	if out := answer(t, s2, "show ip bgp summary"); !strings.HasPrefix(out, "% ") {
		t.Errorf("no router bgp: %q", out)
	}
}

// `show ip bfd neighbors` prints the Operational BFD hook's sessions in the
// form pkg/onyx parses, by neighbor, each state in capitals (bfdd's
// "shutdown" as ADMIN-DOWN) on its ONYX port; without a hook, or when the
// BFD process does not answer, the table has no session.
func TestOperationalBFD(t *testing.T) {
	s := Start(t, Options{Ports: 32})
	read := func() []onyx.BFDSession {
		t.Helper()
		out := answer(t, s, onyx.ShowBFDNeighborsCommand)
		ss, err := onyx.ParseBFDNeighbors(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return ss
	}
	if ss := read(); len(ss) != 0 {
		t.Errorf("no hook: %+v", ss)
	}
	bfdUp := true
	s.SetOperational(Operational{BFD: func() ([]BFDPeer, bool) {
		return []BFDPeer{
			{Neighbor: "10.0.0.2", Port: "1/32", State: "down", Multiplier: 3, MinRx: 300, TransmitRate: 300},
			{Neighbor: "10.0.0.0", Port: "1/31", State: "up", Multiplier: 4, MinRx: 200, TransmitRate: 250},
			{Neighbor: "10.0.0.4", State: "shutdown", Multiplier: 3, MinRx: 300, TransmitRate: 300},
		}, bfdUp
	}})
	var got []string
	for _, x := range read() {
		got = append(got, fmt.Sprintf("%s %s %s %s %d/%d/%d", x.VRF, x.Neighbor, x.Interface, x.State, x.Multiplier, x.MinRx, x.TransmitRate))
	}
	want := []string{"default 10.0.0.0 Eth1/31 UP 4/200/250", "default 10.0.0.2 Eth1/32 DOWN 3/300/300", "default 10.0.0.4  ADMIN-DOWN 3/300/300"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("sessions:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	bfdUp = false
	if ss := read(); len(ss) != 0 {
		t.Errorf("bfdd not answering: %+v", ss)
	}
}
