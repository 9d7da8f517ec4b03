package netnstest

import (
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// SwitchNS is the namespace of the cluster's "switch": its bridge br0 joins
// every host's data0 (port p<N> for host N). In the routed-pool mode
// (docker.routing: switch) the namespace also routes, as the ONYX switch
// does (SetSwitchL3).
func (c *Cluster) SwitchNS() string { return c.switchNS }

// SwitchRoute is one static route of the switch.
type SwitchRoute struct {
	// Dst is the destination prefix, e.g. 172.16.2.0/24.
	Dst netip.Prefix
	// Via is the next hop on the data network, e.g. 198.18.1.2.
	Via netip.Addr
}

// SwitchL3 is the routing state of an ONYX switch on the data VLAN's
// interface, as SetSwitchL3 gives it to the switch namespace.
type SwitchL3 struct {
	// Routing is `ip routing vrf default`: IPv4 forwarding.
	Routing bool
	// Addresses are the data VLAN interface's addresses (on br0).
	Addresses []netip.Prefix
	// Redirects: the interface sends ICMP redirects (ONYX's default; the
	// routed pool turns them off, so hosts keep sending through the switch).
	Redirects bool
	// MTU is the interface's IP MTU in bytes; 0 leaves br0's as it is.
	MTU int
	// Routes are the static routes.
	Routes []SwitchRoute
}

// SetSwitchL3 makes the switch namespace route as l says, replacing what it
// had: br0's addresses are exactly l.Addresses, forwarding and redirects
// follow l, and the static routes are exactly l.Routes (others deleted).
// A Linux namespace has no ONYX CLI, so a test reads what rdggen left on
// the ONYX simulator and hands it over here.
func (c *Cluster) SetSwitchL3(l SwitchL3) {
	c.t.Helper()
	ns := c.switchNS
	bool01 := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	for _, kv := range []string{
		"net.ipv4.conf.all.forwarding=" + bool01(l.Routing),
		"net.ipv4.conf.all.send_redirects=" + bool01(l.Redirects),
		"net.ipv4.conf.br0.send_redirects=" + bool01(l.Redirects),
	} {
		c.must("ip", "netns", "exec", ns, "sysctl", "-qw", kv)
	}
	lines := []string{"addr flush dev br0"}
	for _, a := range l.Addresses {
		lines = append(lines, "addr add "+a.String()+" dev br0")
	}
	if l.MTU > 0 {
		lines = append(lines, "link set br0 mtu "+strconv.Itoa(l.MTU))
	}
	c.batch(ns, lines...)
	// Static routes: delete the ones not wanted, then replace the wanted.
	var want []string
	for _, r := range l.Routes {
		want = append(want, r.Dst.String()+" via "+r.Via.String())
	}
	lines = nil
	for _, have := range c.switchRoutes() {
		if !slices.Contains(want, have) {
			lines = append(lines, "route del "+have)
		}
	}
	for _, w := range want {
		lines = append(lines, "route replace "+w+" dev br0")
	}
	if len(lines) > 0 {
		c.batch(ns, lines...)
	}
}

// switchRoutes lists the switch namespace's routes with a next hop, as
// "<dst> via <addr>".
func (c *Cluster) switchRoutes() []string {
	c.t.Helper()
	out, err := exec.Command("ip", "-n", c.switchNS, "-4", "route", "show").CombinedOutput()
	if err != nil {
		c.t.Fatalf("netnstest: ip route show in %s: %v\n%s", c.switchNS, err, out)
	}
	var routes []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "via" {
			routes = append(routes, f[0]+" via "+f[2])
		}
	}
	return routes
}

// SwitchRouting sets only the switch namespace's forwarding, for a test that
// shows traffic needs the switch (off) or does not (per-host routes).
func (c *Cluster) SwitchRouting(on bool) {
	c.t.Helper()
	v := "0"
	if on {
		v = "1"
	}
	c.must("ip", "netns", "exec", c.switchNS, "sysctl", "-qw", "net.ipv4.conf.all.forwarding="+v)
}

// HostRoutes returns host h's IPv4 routes with a next hop on data0, as
// "<dst> via <addr>".
func (c *Cluster) HostRoutes(h *Host) ([]string, error) {
	out, err := exec.Command("ip", "-n", h.NS, "-4", "route", "show", "dev", "data0").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: ip route: %v: %s", h.Name, err, out)
	}
	var routes []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == "via" {
			routes = append(routes, f[0]+" via "+f[2])
		}
	}
	return routes, nil
}
