package horovod_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// The reference cluster's hostfile: each worker's address (its container
// address in bridge mode) with one slot per GPU.
func ExampleHostfile() {
	inv := inventory.Reference()
	fmt.Print(string(horovod.Hostfile(inv)))
	// Output:
	// 172.16.41.2 slots=2
	// 172.16.42.2 slots=2
	// 172.16.43.2 slots=2
	// 172.16.44.2 slots=2
	// 172.16.45.2 slots=2
	// 172.16.46.2 slots=2
	// 172.16.47.2 slots=2
	// 172.16.48.2 slots=2
}

// The NCCL environment every rank gets.
func ExampleEnv() {
	for _, e := range horovod.Env(inventory.Reference()) {
		fmt.Printf("%s=%s\n", e.Name, e.Value)
	}
	// Output:
	// NCCL_IB_HCA=mlx5_0
	// NCCL_IB_GID_INDEX=3
	// NCCL_IB_TC=106
	// NCCL_SOCKET_IFNAME=eth0
	// NCCL_DEBUG=INFO
}
