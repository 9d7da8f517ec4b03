package netplan_test

import (
	"fmt"
	"net/netip"

	"github.com/rdggen/rdggen/pkg/netplan"
)

// Three hosts route to each other's container subnets: one RouteList of
// the route to each host, and each host's file lists all of them but its
// own.
func ExampleFile_AppendYAML() {
	list := netplan.NewRouteList([]netplan.Route{
		{To: netip.MustParsePrefix("172.16.41.0/24"), Via: netip.MustParseAddr("31.31.31.41")},
		{To: netip.MustParsePrefix("172.16.42.0/24"), Via: netip.MustParseAddr("31.31.31.42")},
		{To: netip.MustParsePrefix("172.16.43.0/24"), Via: netip.MustParseAddr("31.31.31.43")},
	})
	f := netplan.File{Network: netplan.Config{Version: netplan.Version, Ethernets: netplan.Ethernets{
		{ID: "on", MTU: 9000, Routes: list.Except(0)}, // the first host's file; an ID YAML 1.1 reads as a boolean is quoted
	}}}
	fmt.Print(string(f.AppendYAML([]byte("# host 1\n"))))
	// Output:
	// # host 1
	// network:
	//   version: 2
	//   ethernets:
	//     "on":
	//       mtu: 9000
	//       routes:
	//         - to: 172.16.42.0/24
	//           via: 31.31.31.42
	//         - to: 172.16.43.0/24
	//           via: 31.31.31.43
}
