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

// The NCCL environment every rank gets, whatever its host; the GID index
// is each host's own, read at launch (ExampleGIDEnv).
func ExampleEnv() {
	for _, e := range horovod.Env(inventory.Reference()) {
		fmt.Printf("%s=%s\n", e.Name, e.Value)
	}
	// Output:
	// NCCL_IB_HCA=mlx5_0
	// NCCL_IB_TC=106
	// NCCL_SOCKET_IFNAME=eth0
	// NCCL_NET_GDR_LEVEL=PHB
	// NCCL_DEBUG=INFO
}

// The GID index of a job: one variable when the GID tables of all hosts
// put the RoCE v2 GID of the data address at the same index, and per rank
// (two ranks per host here) when they differ.
func ExampleGIDEnv() {
	inv := inventory.Reference()
	same, _ := horovod.GIDEnv(inv, []int{3, 3, 3, 3, 3, 3, 3, 3})
	mixed, wrap := horovod.GIDEnv(inv, []int{3, 3, 5, 3, 3, 3, 3, 3})
	fmt.Println(same)
	fmt.Println(mixed, "rank wrapper:", wrap)
	// Output:
	// [{NCCL_IB_GID_INDEX 3}]
	// [{RDGGEN_GID_INDEXES 4:3 6:5 16:3}] rank wrapper: true
}
