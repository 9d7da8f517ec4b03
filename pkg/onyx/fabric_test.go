package onyx

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// An ONYX leaf of the mixed fabric: RoCE QoS and MTU on its host ports and
// uplinks only, routed /31 uplinks, loopback, and BGP with ECMP.
func TestFabricStatements(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/fabric-mixed/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	leaf := *inv.Switch("leaf2")
	if got := Ranges(Ports(inv, leaf)); !cmp.Equal(got, []string{"ethernet 1/1-1/2", "ethernet 1/31-1/32"}) {
		t.Errorf("ports %q", got)
	}
	got := strings.Join(commands(Desired(inv, leaf)), "\n") + "\n"
	for _, want := range []string{
		"interface ethernet 1/31-1/32 no switchport force",
		"interface ethernet 1/31 ip address 10.254.10.4/31 primary",
		"interface loopback 0 ip address 10.255.0.4/32 primary",
		"interface vlan 1 ip address 10.2.0.1/24 primary",
		"ip route vrf default 172.16.21.0/24 10.2.0.21",
		"protocol bgp",
		"router bgp 64602 vrf default",
		"router bgp 64602 vrf default router-id 10.255.0.4 force",
		"router bgp 64602 vrf default maximum-paths 32",
		"router bgp 64602 vrf default bestpath as-path multipath-relax force",
		"router bgp 64602 vrf default neighbor 10.254.10.5 remote-as 64600",
		"router bgp 64602 vrf default network 172.16.22.0 /24",
		"interface ethernet 1/31-1/32 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/31-1/32 dcb priority-flow-control mode on force",
		"interface ethernet 1/31-1/32 mtu 9216 force",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("leaf2 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "1/3 ") || strings.Contains(got, "1/1-1/32") {
		t.Errorf("leaf2 touches an uncabled port:\n%s", got)
	}
	// The file parses back to what rdggen wants: a switch configured from
	// it has nothing left to send.
	for _, n := range []string{"leaf2", "spine2"} {
		sw := *inv.Switch(n)
		if p := Reconcile(inv, sw, Parse(string(Config(inv, sw)))); len(p.Commands()) != 0 {
			t.Errorf("%s: its own config still plans %q", n, p.Commands())
		}
	}
	// No fabric statement on a switch without a role.
	if s := Fabric(inventory.Reference(), inventory.Reference().Switches[0]); s != nil {
		t.Errorf("reference: %v", s)
	}
}

// A user's own BGP lines on an rdggen leaf (a neighbor, its route map, a
// network) are neither removed nor rewritten; a BGP instance of another AS
// makes rdggen leave BGP alone, with a note.
func TestReconcileKeepsUserBGP(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/fabric-onyx/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	leaf := *inv.Switch("leaf1")
	user := []string{
		"route-map FROM-WAN permit 10",
		"router bgp 65101 vrf default neighbor 192.0.2.9 remote-as 65500",
		"router bgp 65101 vrf default neighbor 192.0.2.9 route-map FROM-WAN in",
		"router bgp 65101 vrf default network 198.51.100.0 /24",
	}
	current := Parse(string(Config(inv, leaf)) + strings.Join(user, "\n") + "\n")
	p := Reconcile(inv, leaf, current)
	if len(p.Commands()) != 0 {
		t.Errorf("rdggen's leaf with the user's BGP lines plans %q", p.Commands())
	}
	// From scratch but with the user's lines: only rdggen's lines, none of the user's negated.
	p = Reconcile(inv, leaf, Parse(strings.Join(user, "\n")+"\n"))
	got := strings.Join(p.Commands(), "\n")
	if !strings.Contains(got, "router bgp 65101 vrf default neighbor 10.254.0.1 remote-as 65100") {
		t.Errorf("no rdggen neighbor planned:\n%s", got)
	}
	for _, u := range user {
		if strings.Contains(got, u) {
			t.Errorf("the plan touches the user's %q:\n%s", u, got)
		}
	}
	if strings.Contains(got, "no router bgp") || strings.Contains(got, "no route-map") {
		t.Errorf("the plan removes BGP configuration:\n%s", got)
	}

	// Another AS's instance in the default VRF: no BGP line sent.
	p = Reconcile(inv, leaf, Parse("protocol bgp\nrouter bgp 64999 vrf default\nrouter bgp 64999 vrf default neighbor 192.0.2.1 remote-as 65000\n"))
	got = strings.Join(p.Commands(), "\n")
	if strings.Contains(got, "router bgp") {
		t.Errorf("BGP lines planned beside AS 64999's instance:\n%s", got)
	}
	if !strings.Contains(got, "interface ethernet 1/31 ip address 10.254.0.0/31 primary") {
		t.Errorf("the rest of the fabric is no longer planned:\n%s", got)
	}
	want := `the switch runs "router bgp 64999 vrf default", not rdggen's AS 65101 (ONYX holds one BGP instance per VRF): rdggen writes no BGP line here`
	if !strings.Contains(strings.Join(p.Warnings, "\n"), want) {
		t.Errorf("warnings lack %q:\n%s", want, strings.Join(p.Warnings, "\n"))
	}
}
