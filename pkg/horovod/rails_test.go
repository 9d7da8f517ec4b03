package horovod

import (
	"os"
	"path"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// TestRailEnv: the golden rails case (4 rails, rail r on leaf r, two
// spines) gets every rail's HCA in rail order and NCCL_CROSS_NIC=2; the
// reference inventory (one rail) keeps NCCL_IB_HCA=mlx5_0 and no
// NCCL_CROSS_NIC.
func TestRailEnv(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/rails/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var order []string
	for _, e := range WorkerEnv(inv) {
		got[e.Name] = e.Value
		order = append(order, e.Name)
	}
	if got["NCCL_IB_HCA"] != "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" || got["NCCL_CROSS_NIC"] != "2" || got["NCCL_SOCKET_IFNAME"] != ContainerInterface {
		t.Errorf("env %v", got)
	}
	if order[0] != "NCCL_IB_HCA" || order[1] != "NCCL_CROSS_NIC" || len(order) != 5 {
		t.Errorf("order %v", order)
	}
	ref := inventory.Reference()
	if RailEnv(ref) != nil {
		t.Errorf("RailEnv(reference) = %v", RailEnv(ref))
	}
	if e := WorkerEnv(ref); e[0].Value != "mlx5_0" || len(e) != 4 {
		t.Errorf("reference env %v", e)
	}
}

// A VM with several rails mounts NCCL's topology directory read-only at
// the path NCCL loads the file from; a VM with one rail does not.
func TestTopologyMount(t *testing.T) {
	if topologyDir != path.Dir(nccltopo.DefaultPath) {
		t.Errorf("topologyDir %s, NCCL's file %s", topologyDir, nccltopo.DefaultPath)
	}
	inv, err := inventory.LoadFile("../../testdata/golden/rails/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := strings.Join(DockerRunArgs(inv), " ")
	if !strings.Contains(run, " -v /etc/rdggen/worker-ssh:/root/.ssh:ro -v /var/run/nvidia-topologyd:/var/run/nvidia-topologyd:ro -e NCCL_IB_HCA=") {
		t.Errorf("rails: %s", run)
	}
	if run := strings.Join(DockerRunArgs(inventory.Reference()), " "); strings.Contains(run, "nvidia-topologyd") {
		t.Errorf("one rail: %s", run)
	}
}

// The images rdggen knows carry NCCL older than 2.30.7, so no known image
// gets rail labels yet; an image whose NCCL has them gets
// "<hca>:1:<rail>", one whose NCCL is unknown or older does not.
func TestImageNCCL(t *testing.T) {
	for image, want := range map[string]string{
		inventory.DefaultImage:             "2.4.2",
		"horovod/horovod:0.22.1":           "2.8.4",
		"docker.io/horovod/horovod:0.25.0": "2.8.4",
		"horovod/horovod:0.28.1":           "2.9.9",
	} {
		if v, ok := ImageNCCL(image); !ok || v.String() != want {
			t.Errorf("%s: %v %v, want %s", image, v, ok, want)
		}
	}
	if v, ok := ImageNCCL("nvcr.io/nvidia/pytorch:24.01-py3"); ok {
		t.Errorf("NGC image known as %v", v)
	}
	for image, v := range imageNCCL {
		if v.AtLeast(nccltopo.RailLabels) {
			t.Errorf("%s: %v has rail labels: the golden trees would change", image, v)
		}
		if _, ok := inventory.ImageCUDA(image); !ok {
			t.Errorf("%s: NCCL known, CUDA not (inventory.ImageCUDA)", image)
		}
	}
	inv, err := inventory.LoadFile("../../testdata/golden/rails/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hca := func(v nccltopo.Version) string {
		for _, e := range railEnv(inv, v) {
			if e.Name == "NCCL_IB_HCA" {
				return e.Value
			}
		}
		return ""
	}
	for _, tc := range []struct {
		v    nccltopo.Version
		want string
	}{
		{nccltopo.Version{}, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"},
		{nccltopo.Version{Major: 2, Minor: 29, Patch: 7}, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"},
		{nccltopo.RailLabels, "=mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2,mlx5_3:1:3"},
	} {
		if got := hca(tc.v); got != tc.want {
			t.Errorf("NCCL %v: %s, want %s", tc.v, got, tc.want)
		}
	}
	inv.Horovod.Image = "horovod/horovod:0.28.1"
	if e := RailEnv(inv); e[0].Value != "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" {
		t.Errorf("0.28.1: %v", e)
	}
}
