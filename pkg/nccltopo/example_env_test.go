package nccltopo_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// NCCL_IB_HCA for four rails, for an image whose NCCL has rail labels, and
// NCCL_CROSS_NIC for rails joined by spines.
func ExampleIBHCA() {
	v, _ := nccltopo.ParseVersion("2.30.7-1")
	hca, _ := nccltopo.IBHCA([]string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}, v)
	cross, _ := nccltopo.CrossNIC(4, nccltopo.RailsJoined)
	for _, s := range []nccltopo.Setting{hca, cross} {
		fmt.Printf("%s=%s  # %s\n", s.Name, s.Value, s.Why)
	}
	// Output:
	// NCCL_IB_HCA==mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2,mlx5_3:1:3  # the rails' RDMA devices in rail order, exact names, port 1, each labelled with its rail (NCCL 2.30.7 ≥ 2.30.7)
	// NCCL_CROSS_NIC=2  # rails on their own leaves, joined by the spines: same NIC preferred, crossing allowed (NCCL's default)
}
