package onyxsim

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A leaf's routed-fabric statements are held and printed in the L3
// section: routed ports (with the port's settings), their addresses, the
// loopback, then BGP in the flat `router bgp ASN vrf default …` form.
func TestFabricRender(t *testing.T) {
	s := Start(t, Options{Hostname: "leaf1", Seed: []string{
		"ip routing vrf default",
		"interface ethernet 1/31-1/32 no switchport force",
		"interface ethernet 1/31 ip address 10.0.1.0/31 primary",
		"interface ethernet 1/32 ip address 10.0.2.0/31",
		"interface loopback 0 ip address 10.10.10.1/32",
		"router bgp 65101 vrf default",
		"router bgp 65101 vrf default router-id 10.10.10.1 force",
		"router bgp 65101 vrf default maximum-paths 32",
		"router bgp 65101 vrf default bestpath as-path multipath-relax force",
		"router bgp 65101 vrf default neighbor 10.0.1.1 remote-as 65199",
		"router bgp 65101 vrf default network 10.10.10.1 /32",
	}})
	got := s.RunningConfig()
	for _, want := range []string{
		"   interface ethernet 1/31-1/32 no switchport force\n",
		"##\n## L3 configuration\n##\n" +
			"   ip routing vrf default\n" +
			"   interface ethernet 1/31 ip address 10.0.1.0/31 primary\n" +
			"   interface ethernet 1/32 ip address 10.0.2.0/31 primary\n" +
			"   interface loopback 0\n" +
			"   interface loopback 0 ip address 10.10.10.1/32\n" +
			"   router bgp 65101 vrf default\n" +
			"   router bgp 65101 vrf default router-id 10.10.10.1 force\n" +
			"   router bgp 65101 vrf default maximum-paths 32\n" +
			"   router bgp 65101 vrf default bestpath as-path multipath-relax force\n" +
			"   router bgp 65101 vrf default neighbor 10.0.1.1 remote-as 65199\n" +
			"   router bgp 65101 vrf default network 10.10.10.1 /32\n\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("running-config lacks\n%s\nin\n%s", want, got)
		}
	}
	if err := s.Configure("router bgp 65101 no network 10.10.10.1 /32", "router bgp 65101 vrf default no neighbor 10.0.1.1 remote-as 65199"); err != nil {
		t.Fatal(err)
	}
	if got := s.RunningConfig(); strings.Contains(got, "network") || strings.Contains(got, "neighbor") {
		t.Errorf("network or neighbor left after onyx_bgp's `no` forms:\n%s", got)
	}
	if err := s.Configure("no router bgp 65101"); err != nil {
		t.Fatal(err)
	}
	if got := s.RunningConfig(); strings.Contains(got, "router bgp") {
		t.Errorf("BGP left after `no router bgp`:\n%s", got)
	}
}

func TestFabricCommandErrors(t *testing.T) {
	c := newConfig("sw", 32, "3.6.8190")
	for cmd, want := range map[string]string{
		"interface ethernet 1/5 ip address 10.0.0.0/31 primary":      "is a switchport",
		"router bgp 65101 vrf default neighbor 10.0.0.1 remote-as 1": "does not exist",
		"router bgp 65101 vrf red":                                   "VRF red does not exist",
		"router bgp x vrf default":                                   "Invalid AS number",
		"interface loopback 0 ip address 10.0.0.1":                   "Invalid IP address",
	} {
		if o := c.configCommand(cmd, false); !strings.Contains(o.err, want) {
			t.Errorf("%q: error %q, want one with %q", cmd, o.err, want)
		}
	}
	c.configCommand("router bgp 65101 vrf default", false).apply()
	if o := c.configCommand("router bgp 65102 vrf default", false); !strings.Contains(o.err, "already running with AS number 65101") {
		t.Errorf("a second ASN: %q", o.err)
	}
	if o := c.configCommand("router bgp 65101 vrf default network 10.0.0.1 /24", false); !strings.Contains(o.err, "Invalid network") {
		t.Errorf("a network with host bits: %q", o.err)
	}
}

// OnChange runs after each change, from a session or Configure.
func TestOnChange(t *testing.T) {
	s := Start(t, Options{})
	var n atomic.Int32
	s.OnChange(func() { n.Add(1) })
	if err := s.Configure("ip routing vrf default", "interface ethernet 1/1 mtu 9216 force"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n.Load() != 2 {
		t.Errorf("OnChange ran %d times, want 2", n.Load())
	}
}

// With prefix modes (a session's default), `router bgp ASN vrf default`
// enters the router's sub-mode, whose lines arrive prefixed with it.
func TestBGPSubMode(t *testing.T) {
	c := newConfig("sw", 32, "3.6.8190")
	o := c.configCommand("router bgp 65101 vrf default", true)
	if o.err != "" || o.enter != "router bgp 65101 vrf default" {
		t.Fatalf("enter: %+v", o)
	}
	o.apply()
	if o := c.configCommand("router bgp 65101 vrf default neighbor 10.0.1.1 remote-as 65199", true); o.err != "" || o.enter != "" {
		t.Errorf("a sub-mode line: %+v", o)
	}
}
