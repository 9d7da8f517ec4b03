package horovod

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func torchrunInventory(t *testing.T, extra string) *inventory.Inventory {
	t.Helper()
	src := `name: pt
switches:
  - {name: sw1, model: SN2100, onyx: 3.6.8190}
horovod: {launcher: torchrun` + extra + `}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}, {model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic2, vfs: 2}
hosts:
  - {name: a, esxi: e1, data: {address: 10.1.0.11/24, port: 1/1}}
  - {name: b, esxi: e2, data_interface: ens5, gpus: [{model: V100-PCIE-16GB, memory_gb: 16}], data: {address: 10.1.0.12/24, port: 1/2}}
  - {name: c, esxi: e3, data: {address: 10.1.0.13/24, port: 1/3}}
`
	inv, err := inventory.Load("pt.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// Each node's line: its GPU count as processes, its place as node rank,
// the first worker's container address and the default port.
func TestTorchrunArgs(t *testing.T) {
	inv := torchrunInventory(t, "")
	got, err := TorchrunArgs(inv, 1, []string{"train.py", "--lr", "0.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"torchrun", "--nnodes=3", "--nproc_per_node=1", "--node_rank=1", "--rdzv_backend=static",
		"--master_addr=172.16.11.2", "--master_port=29400", "--rdzv_id=pt", "--role=default", "--max_restarts=0",
		"--redirects=1", "--tee=1", "train.py", "--lr", "0.1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("TorchrunArgs (-want +got):\n%s", d)
	}
	if n := TorchrunWorldSize(inv); n != 5 {
		t.Errorf("world size %d, want 5", n)
	}
	for node, want := range []int{0, 2, 3} {
		if r := TorchrunFirstRank(inv, node); r != want {
			t.Errorf("node %d's first rank %d, want %d", node, r, want)
		}
	}
	inv = torchrunInventory(t, ", nproc_per_node: 4, rdzv_port: 29500, rdzv_id: job-7")
	if got, err = TorchrunArgs(inv, 2, nil); err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, " "); !strings.Contains(s, "--nproc_per_node=4 --node_rank=2 ") || !strings.Contains(s, "--master_port=29500 --rdzv_id=job-7 ") {
		t.Errorf("with nproc_per_node, rdzv_port and rdzv_id: %s", s)
	}
	if n := TorchrunFirstRank(inv, 2); n != 8 {
		t.Errorf("node 2's first rank %d, want 8", n)
	}
}

// The environment is the Horovod path's with this node's own socket
// interface (for Gloo too) and GID index; in host mode the host's data
// interface and the first host's data address.
func TestTorchrunEnv(t *testing.T) {
	inv := torchrunInventory(t, ", network: host")
	want := []EnvVar{{"NCCL_IB_HCA", "mlx5_0"}, {"NCCL_IB_TC", "106"}, {"NCCL_SOCKET_IFNAME", "ens5"}, {"NCCL_NET_GDR_LEVEL", "PHB"},
		{"NCCL_DEBUG", "INFO"}, {"GLOO_SOCKET_IFNAME", "ens5"}, {"NCCL_IB_GID_INDEX", "5"}}
	if d := cmp.Diff(want, TorchrunEnv(inv, 1, 5)); d != "" {
		t.Errorf("TorchrunEnv (-want +got):\n%s", d)
	}
	if a, err := RendezvousAddress(inv); err != nil || a.String() != "10.1.0.11:29400" {
		t.Errorf("host mode rendezvous at %s (%v)", a, err)
	}
	if e := TorchrunEnv(torchrunInventory(t, ""), 1, 3); e[2].Value != "eth0" || e[5].Value != "eth0" {
		t.Errorf("bridge mode: %v", e)
	}
}

// A Go caller's inventory without hosts, or a node that is not a host, is
// an error, not a panic.
func TestTorchrunNoHosts(t *testing.T) {
	inv := torchrunInventory(t, "")
	if _, err := TorchrunArgs(inv, 3, nil); err == nil || err.Error() != "horovod: torchrun node 3: the inventory has hosts 0 to 2" {
		t.Errorf("node 3 of 3 hosts: %v", err)
	}
	if _, err := TorchrunArgs(inv, -1, nil); err == nil {
		t.Error("node -1: no error")
	}
	inv.Hosts = nil
	if a, err := RendezvousAddress(inv); !errors.Is(err, ErrNoHosts) || a.IsValid() {
		t.Errorf("RendezvousAddress without hosts: %v, %v", a, err)
	}
	if args, err := TorchrunArgs(inv, 0, []string{"train.py"}); !errors.Is(err, ErrNoHosts) || args != nil {
		t.Errorf("TorchrunArgs without hosts: %q, %v", args, err)
	}
}
