package railnet_test

import (
	"fmt"
	"net/netip"
	"os"

	"github.com/rdggen/rdggen/pkg/railnet"
)

// A VM with two rails, rail-optimized: rail 0 (enp1f0) on leaf 1's subnet
// for rail 0, rail 1 (found by its MAC address and named rail1) on leaf
// 2's subnet for rail 1. Each reaches the other rail's subnet through its
// own gateway.
func ExampleGuest_Netplan() {
	g, err := railnet.New(railnet.VM{Name: "gpu-node-1", Rails: []railnet.Rail{
		{Interface: "enp1f0", Address: netip.MustParsePrefix("10.0.1.11/24"), Gateway: netip.MustParseAddr("10.0.1.1"), MTU: 9000,
			Peers: []netip.Prefix{netip.MustParsePrefix("10.1.2.0/24")}},
		{Interface: "rail1", MAC: "00:50:56:aa:00:11", Address: netip.MustParsePrefix("10.1.2.11/24"), Gateway: netip.MustParseAddr("10.1.2.1"), MTU: 9000,
			Peers: []netip.Prefix{netip.MustParsePrefix("10.0.1.0/24")}},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	os.Stdout.Write(g.Netplan())
	// Output:
	// # rdggen: the 2 rails of gpu-node-1: per rail its interface, address, MTU and policy routing.
	// # Installed as /etc/netplan/61-rdggen-rails.yaml (mode 0600); `netplan apply` or the next boot sets it up.
	// # Rail r's address sends through rail r's own port: `ip rule from <address> table 100+r`
	// # (priority 1000+r), and table 100+r holds the rail's subnet on the link and every
	// # peer subnet via the rail's gateway. The main table reaches the peers through every rail,
	// # metric 100+r: the kernel resolves a RoCE peer only through the interface of its GID.
	// network:
	//   version: 2
	//   ethernets:
	//     enp1f0:
	//       addresses:
	//         - 10.0.1.11/24
	//       mtu: 9000
	//       routes:
	//         - to: 10.1.2.0/24
	//           via: 10.0.1.1
	//           metric: 100
	//         - to: 10.0.1.0/24
	//           scope: link
	//           table: 100
	//         - to: 10.1.2.0/24
	//           via: 10.0.1.1
	//           table: 100
	//       routing-policy:
	//         - from: 10.0.1.11/32
	//           table: 100
	//           priority: 1000
	//     rail1:
	//       match:
	//         macaddress: 00:50:56:aa:00:11
	//       set-name: rail1
	//       addresses:
	//         - 10.1.2.11/24
	//       mtu: 9000
	//       routes:
	//         - to: 10.0.1.0/24
	//           via: 10.1.2.1
	//           metric: 101
	//         - to: 10.1.2.0/24
	//           scope: link
	//           table: 101
	//         - to: 10.0.1.0/24
	//           via: 10.1.2.1
	//           table: 101
	//       routing-policy:
	//         - from: 10.1.2.11/32
	//           table: 101
	//           priority: 1001
}

// The kernel settings of a VM with several rails.
func ExampleSysctls() {
	for _, s := range railnet.Sysctls() {
		fmt.Println(s.Key, "=", s.Value)
	}
	// Output:
	// net.ipv4.conf.all.arp_ignore = 2
	// net.ipv4.conf.all.arp_announce = 2
	// net.ipv4.conf.all.rp_filter = 2
}
