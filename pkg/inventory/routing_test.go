package inventory

import (
	"net/netip"
	"strings"
	"testing"
)

func TestRoutingDefaults(t *testing.T) {
	inv, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Docker
	if d.Routing != RoutingHosts || d.SwitchRouted() || inv.GatewaySwitch() != nil {
		t.Errorf("default routing: %q", d.Routing)
	}
	// The gateway is derived in both modes (apply recognises a former one by it).
	if d.Gateway != netip.MustParseAddr("10.0.0.254") || inv.GatewayPrefix() != netip.MustParsePrefix("10.0.0.254/24") {
		t.Errorf("gateway %s, prefix %s", d.Gateway, inv.GatewayPrefix())
	}
	src := strings.Replace(baseYAML, "  mtu: 1500", "  mtu: 1500\n  routing: switch\n  gateway: 10.0.0.100", 1)
	inv, err = Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !inv.Docker.SwitchRouted() || inv.Docker.Gateway != netip.MustParseAddr("10.0.0.100") || inv.GatewaySwitch().Name != "sw1" {
		t.Errorf("routing %q, gateway %s", inv.Docker.Routing, inv.Docker.Gateway)
	}
	for n, want := range map[string]string{"10.0.0.0/24": "10.0.0.254", "10.0.0.0/30": "10.0.0.2", "10.8.0.0/13": "10.15.255.254"} {
		if a, ok := DefaultGateway(netip.MustParsePrefix(n)); !ok || a.String() != want {
			t.Errorf("DefaultGateway(%s) = %s, %v; want %s", n, a, ok, want)
		}
	}
	if _, ok := DefaultGateway(netip.MustParsePrefix("10.0.0.0/31")); ok {
		t.Error("a /31 has no gateway to spare")
	}
}

// Each routing rule, with the finding's line:col, field path and message.
func TestRoutingRules(t *testing.T) {
	const sw = "  mtu: 1500\n  routing: switch"
	cases := []struct {
		name     string
		old, new string // replacement applied to baseYAML
		line     int
		token    string
		path     string
		rule     string
	}{
		{"unknown mode", "  mtu: 1500", "  mtu: 1500\n  routing: bgp", 6, "bgp", "docker.routing", `"bgp" is neither "hosts"`},
		{"gateway not an address", "  mtu: 1500", "  mtu: 1500\n  gateway: sw1", 6, "sw1", "docker.gateway", `"sw1" is not an IPv4 address like 31.31.31.254`},
		{"gateway with a prefix", "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.0.9/24", 6, "10.0.0.9/24", "docker.gateway", "is not an IPv4 address"},
		{"gateway off the data network", "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.1.254", 6, "10.0.1.254", "docker.gateway", "10.0.1.254 is not on the data network 10.0.0.0/24"},
		{"gateway is the broadcast", "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.0.255", 6, "10.0.0.255", "docker.gateway", "the network or broadcast address of 10.0.0.0/24"},
		{"gateway is a host's", "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.0.2", 6, "10.0.0.2", "docker.gateway", "10.0.0.2 is hosts[1]'s (b) data address"},
		{"gateway is a mgmt address", "    esxi: esx-b", "    esxi: esx-b\n    mgmt: 10.0.0.9", 6, "10.0.0.9", "docker.gateway", "hosts[1]'s (b) management address"},
		{"default gateway taken", "10.0.0.2/24", "10.0.0.254/24", 6, "switch", "docker.routing",
			"the switch's gateway address defaults to 10.0.0.254, the last host address of the data network 10.0.0.0/24, but that is hosts[1]'s (b) data address: set docker.gateway"},
		{"two switches", "switches:\n", "switches:\n  - {name: sw2, model: SN2700, onyx: 3.6.8190}\n", 7, "switch", "docker.routing",
			"the hosts are cabled to 2 switches (hosts per switch: sw1 1, sw2 1): cable every data port to one switch, or use routing: hosts"},
		{"pool holds the data network", "  mtu: 1500", "  mtu: 1500\n  pool: 10.0.0.0/8", 7, "switch", "docker.routing", "the pool 10.0.0.0/8 overlaps the data network 10.0.0.0/24"},
		{"pool holds a DNS server", "  mtu: 1500", "  mtu: 1500\n  dns: [172.16.200.53]", 7, "switch", "docker.routing", "the pool 172.16.0.0/16 contains 172.16.200.53 (docker.dns[0])"},
		{"no room for a gateway", "10.0.0.1/24", "10.0.0.0/31", 6, "switch", "docker.routing", "the data network 10.0.0.0/31 has no address to spare"},
		// The gateway differs from every address the inventory names.
		{"gateway is a DNS server", "  mtu: 1500", "  mtu: 1500\n  dns: [10.0.0.53]\n  gateway: 10.0.0.53", 7, "10.0.0.53", "docker.gateway",
			"10.0.0.53 is the address of docker.dns[0]: the switch needs an address of its own on the data network"},
		{"default gateway is a DNS server", "  mtu: 1500", "  mtu: 1500\n  dns: [8.8.8.8, 10.0.0.254]", 7, "switch", "docker.routing",
			"the switch's gateway address defaults to 10.0.0.254, the last host address of the data network 10.0.0.0/24, but that is the address of docker.dns[1]: set docker.gateway"},
		{"default gateway is vCenter's", "name: mini\n", "name: mini\nvcenter: https://10.0.0.254/sdk\n", 7, "switch", "docker.routing",
			"the switch's gateway address defaults to 10.0.0.254, the last host address of the data network 10.0.0.0/24, but that is the address of vcenter: set docker.gateway"},
		{"gateway is a DNS server in hosts mode", "  mtu: 1500", "  mtu: 1500\n  dns: [10.0.0.53]\n  gateway: 10.0.0.53", 7, "10.0.0.53", "docker.gateway",
			"10.0.0.53 is the address of docker.dns[0]"},
		// A /31 with one host has a free address: docker.gateway can name it.
		{"a /31 with an address to spare", "10.0.0.1/24", "10.0.0.1/31", 6, "switch", "docker.routing",
			"routing: switch needs an address for the switch on the data network 10.0.0.0/31, and docker.gateway defaults to the last host address of a /30 or larger network, which a /31 does not have: set docker.gateway to a free address (10.0.0.0 is free), or widen the data network"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(baseYAML, "  mtu: 1500", sw, 1)
			switch c.name {
			case "unknown mode", "gateway not an address", "gateway with a prefix", "gateway off the data network", "gateway is the broadcast", "gateway is a host's":
				src = baseYAML // the gateway is checked in either mode
			case "gateway is a mgmt address":
				src = strings.Replace(baseYAML, "  mtu: 1500", "  mtu: 1500\n  gateway: 10.0.0.9", 1)
			case "two switches":
				src = strings.Replace(src, "port: 1/2}", "port: 1/2, switch: sw2}", 1)
				src = strings.Replace(src, "port: 1/1}", "port: 1/1, switch: sw1}", 1)
			case "no room for a gateway":
				src = strings.Replace(src, "10.0.0.2/24", "10.0.0.1/31", 1)
			case "gateway is a DNS server in hosts mode":
				src = baseYAML
			case "a /31 with an address to spare":
				src = src[:strings.Index(src, "  - name: b\n")] // one host
			}
			if !strings.Contains(src, c.old) {
				t.Fatalf("%q not in the inventory", c.old)
			}
			src = strings.Replace(src, c.old, c.new, 1)
			_, err := Load("mini.yaml", []byte(src))
			rep, ok := err.(*Report)
			if !ok {
				t.Fatalf("no report: %v\n%s", err, src)
			}
			want := pos(t, src, c.line, c.token)
			for _, f := range rep.Findings {
				if f.Path == c.path && strings.Contains(f.Rule, c.rule) {
					if f.Pos != want {
						t.Errorf("finding at %v, want %v: %s", f.Pos, want, f)
					}
					return
				}
			}
			t.Errorf("no finding %s: %q; got:\n%v", c.path, c.rule, rep)
		})
	}
}

// In per-host mode a gateway address that cannot be derived is no finding:
// nothing uses it.
func TestRoutingHostsModeNeedsNoGateway(t *testing.T) {
	src := strings.Replace(baseYAML, "10.0.0.2/24", "10.0.0.254/24", 1)
	inv, err := Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if inv.Docker.Gateway.IsValid() {
		t.Errorf("gateway %s is a host's address", inv.Docker.Gateway)
	}
}

// A /31 data network with one host is valid in routing: switch once
// docker.gateway names its free address, as the finding says.
func TestSlash31GatewayWhenSet(t *testing.T) {
	src := strings.Replace(baseYAML, "10.0.0.1/24", "10.0.0.1/31", 1)
	src = src[:strings.Index(src, "  - name: b\n")]
	src = strings.Replace(src, "  mtu: 1500", "  mtu: 1500\n  routing: switch\n  gateway: 10.0.0.0", 1)
	inv, err := Load("mini.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if inv.GatewayPrefix() != netip.MustParsePrefix("10.0.0.0/31") {
		t.Errorf("gateway %s", inv.GatewayPrefix())
	}
}
