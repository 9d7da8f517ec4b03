package dockernet_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// The daemon.json keys rdggen sets on the reference cluster's first VM:
// docker0's address (bip), the containers' range (fixed-cidr), MTU and DNS.
func ExampleDaemonJSON() {
	inv := inventory.Reference()
	fmt.Print(string(dockernet.DaemonJSON(inv, &inv.Hosts[0])))
	// Output:
	// {
	//   "bip": "172.16.41.1/24",
	//   "fixed-cidr": "172.16.41.0/24",
	//   "mtu": 1500,
	//   "dns": ["8.8.8.8", "8.8.4.4"]
	// }
}

// Merge rdggen's keys into a daemon.json that has others: they are kept.
func ExampleMerge() {
	inv := inventory.Reference()
	merged, err := dockernet.Merge([]byte(`{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}`), dockernet.DaemonJSON(inv, &inv.Hosts[0]))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dockernet.Keys(merged))
	// Output: [runtimes bip fixed-cidr mtu dns]
}

// The route from one host to another host's container subnet.
func ExampleRouteTo() {
	inv := inventory.Reference()
	dst, via := dockernet.RouteTo(&inv.Hosts[1])
	fmt.Println(dst, "via", via)
	// Output: 172.16.42.0/24 via 31.31.31.42
}
