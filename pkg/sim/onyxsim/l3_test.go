package onyxsim

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// The L3 statements are held and printed as running-config shows them:
// under "L3 configuration", routing first, then the interface, its primary
// address, redirects (with the `no` in front) and MTU, then the static
// routes by prefix, each with `vrf default` also when typed without.
func TestL3RenderLikeONYX(t *testing.T) {
	s := Start(t, Options{Seed: []string{
		"ip route 172.16.10.0/24 31.31.31.10",
		"ip routing",
		"interface vlan 1",
		"interface vlan 1 mtu 9000",
		"no interface vlan 1 ip icmp redirect",
		"interface vlan 1 ip address 31.31.31.254 /24 primary",
		"ip route vrf default 172.16.9.0 255.255.255.0 31.31.31.9",
		"ip route vrf mgmt 0.0.0.0/0 10.0.0.1",
	}})
	got := s.RunningConfig()
	want := "##\n## L3 configuration\n##\n" +
		"   ip routing vrf default\n" +
		"   interface vlan 1\n" +
		"   interface vlan 1 ip address 31.31.31.254/24 primary\n" +
		"no interface vlan 1 ip icmp redirect\n" +
		"   interface vlan 1 mtu 9000\n" +
		"   ip route vrf default 172.16.9.0/24 31.31.31.9\n" +
		"   ip route vrf default 172.16.10.0/24 31.31.31.10\n\n"
	if !strings.Contains(got, want) {
		t.Errorf("running-config lacks\n%s\nin\n%s", want, got)
	}
	if !strings.Contains(got, "   ip route vrf mgmt 0.0.0.0/0 10.0.0.1\n") {
		t.Errorf("the mgmt VRF's route is gone:\n%s", got)
	}
	l := s.L3State(1)
	if !l.Routing || l.Redirects || l.MTU != 9000 || len(l.Addresses) != 1 || l.Addresses[0] != netip.MustParsePrefix("31.31.31.254/24") || len(l.Routes) != 2 ||
		l.Routes[0].Dst != netip.MustParsePrefix("172.16.9.0/24") {
		t.Errorf("L3State: %+v", l)
	}
	// Back to the defaults: nothing of it is shown.
	if err := s.Configure("interface vlan 1 ip icmp redirect", "interface vlan 1 mtu 1500", "interface vlan 1 no ip address",
		"no ip route vrf default 172.16.9.0/24 31.31.31.9", "no ip route 172.16.10.0 /24 31.31.31.10", "no interface vlan 1", "no ip routing vrf default"); err != nil {
		t.Fatal(err)
	}
	if got := s.RunningConfig(); strings.Contains(got, "L3 configuration") {
		t.Errorf("L3 left after removing it all:\n%s", got)
	}
}

func TestL3CommandErrors(t *testing.T) {
	c := newConfig("sw", 32, "3.6.8190")
	for _, cmd := range []string{"interface vlan 1", "interface vlan 1 ip address 10.0.0.1/24 primary", "ip route 10.1.0.0/16 10.0.0.9"} {
		o := c.configCommand(cmd, false)
		if o.err != "" {
			t.Fatalf("%q: %s", cmd, o.err)
		}
		o.apply()
	}
	for cmd, want := range map[string]string{
		"interface vlan 2 ip address 10.0.2.1/24 primary": "Interface vlan 2 does not exist",
		"interface vlan 5": "VLAN 5 does not exist",
		"interface vlan 1 ip address 10.0.0.2/24 primary": "Primary address 10.0.0.1/24 cannot be modified",
		"interface vlan 1 ip address 10.0.0.0/24 primary": "Invalid IP address 10.0.0.0/24: the network or broadcast address",
		"interface vlan 1 ip address 10.0.0.300/24":       "Invalid IP address",
		"interface vlan 1 mtu 20000":                      "MTU 20000 is out of range",
		"interface vlan 1 ip icmp":                        `Unrecognized command "ip".`,
		"ip route 10.2.0.1/16 10.0.0.9":                   "Invalid prefix 10.2.0.1/16: host bits are set",
		"ip route 10.2.0.0/16 banana":                     "Invalid next hop banana",
		"ip route 10.2.0.0/16 0.0.0.0":                    "Invalid next hop 0.0.0.0",
		"ip route 10.2.0.0 255.0.255.0 10.0.0.9":          "Invalid network mask 255.0.255.0",
		"ip route 10.2.0.0/16":                            "Incomplete command",
		"no ip route 10.3.0.0/16 10.0.0.9":                "Static route 10.3.0.0/16 10.0.0.9 does not exist",
		"ip routing vrf blue":                             "VRF blue does not exist",
		"no interface vlan 7":                             "Interface vlan 7 does not exist",
	} {
		if got := c.configCommand(cmd, false).err; !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
	// The same primary again is accepted (nothing changes); a second
	// address without `primary` is a secondary.
	for _, cmd := range []string{"interface vlan 1 ip address 10.0.0.1/24 primary", "interface vlan 1 ip address 10.9.0.1/24"} {
		o := c.configCommand(cmd, false)
		if o.err != "" {
			t.Fatalf("%q: %s", cmd, o.err)
		}
		o.apply()
	}
	if r := c.render(time.Date(2018, 3, 10, 9, 38, 38, 0, time.UTC)); !strings.Contains(r, "   interface vlan 1 ip address 10.0.0.1/24 primary\n   interface vlan 1 ip address 10.9.0.1/24\n") {
		t.Errorf("addresses:\n%s", r)
	}
	// With prefix modes on, `interface vlan 1` enters its context.
	if o := c.configCommand("interface vlan 1", true); o.enter != "interface vlan 1" {
		t.Errorf("enter: %q", o.enter)
	}
}
