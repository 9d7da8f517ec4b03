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
		"router bgp 4200000002 vrf default",
		"router bgp 4200000002 vrf default router-id 10.255.0.4 force",
		"router bgp 4200000002 vrf default maximum-paths 32",
		"router bgp 4200000002 vrf default bestpath as-path multipath-relax force",
		"router bgp 4200000002 vrf default neighbor 10.254.10.5 remote-as 4200000000",
		"router bgp 4200000002 vrf default network 172.16.22.0 /24",
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
