package horovod

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The torchrun launch (horovod.launcher: torchrun, docs/rules.md#torchrun).
//
// PyTorch's torchrun starts one launcher per node, and each launcher starts
// that node's processes (PyTorch's torchrun documentation,
// https://pytorch.org/docs/stable/elastic/run.html). No SSH between the
// workers is involved: `rdggen run --torchrun` starts every node's launcher
// in that node's worker container at once.
//
// The rendezvous is torchrun's static one: a c10d TCP store on the first
// worker at its worker address and horovod.rdzv_port, given as
// --master_addr and --master_port, with each node's rank fixed by its place
// in the inventory (--node_rank). The dynamic c10d backend
// (--rdzv_backend=c10d) is not used: in PyTorch 1.13 (Debian bookworm's
// python3-torch) it hands the workers the host name of whichever node it
// made rank 0 as MASTER_ADDR (socket.getfqdn()), which the other containers
// cannot resolve, and no flag of 1.13 overrides it; the --local-addr flag
// that does came later (pytorch/pytorch#73656, a maintainer: "this
// currently cannot be set by the user", use the static rendezvous with
// --master_addr; pytorch/pytorch#88922). The flags are written with
// underscores, the only spelling 1.13 knows and one that every later
// release still accepts beside the dashed one.

// TorchrunLocalRole is torchrun's worker role (--role), which prefixes each
// worker's output lines under --tee ("[default0]:" for local rank 0).
const TorchrunLocalRole = "default"

// NprocPerNode is the number of processes torchrun starts in host h's
// worker: horovod.nproc_per_node, else the host's GPU count.
func NprocPerNode(inv *inventory.Inventory, h *inventory.Host) int {
	if inv.Horovod.NprocPerNode > 0 {
		return inv.Horovod.NprocPerNode
	}
	return h.Slots()
}

// TorchrunWorldSize is the job's number of processes: NprocPerNode summed
// over the hosts.
func TorchrunWorldSize(inv *inventory.Inventory) int {
	n := 0
	for i := range inv.Hosts {
		n += NprocPerNode(inv, &inv.Hosts[i])
	}
	return n
}

// TorchrunFirstRank is the global rank of node's local rank 0: torchrun's
// static rendezvous numbers ranks node after node in --node_rank order.
func TorchrunFirstRank(inv *inventory.Inventory, node int) int {
	n := 0
	for i := 0; i < node; i++ {
		n += NprocPerNode(inv, &inv.Hosts[i])
	}
	return n
}

// ErrNoHosts is the error of RendezvousAddress and TorchrunArgs for an
// inventory without hosts (one a Go caller built; validation refuses it).
var ErrNoHosts = errors.New("horovod: the inventory has no hosts (torchrun's rendezvous is the first host's worker)")

// RendezvousAddress is where every node's torchrun finds the rendezvous
// store: the first worker's address (WorkerAddress: its container address
// in bridge mode, its data address in host mode) and horovod.rdzv_port.
// It fails with ErrNoHosts when inv has no host.
func RendezvousAddress(inv *inventory.Inventory) (netip.AddrPort, error) {
	if len(inv.Hosts) == 0 {
		return netip.AddrPort{}, ErrNoHosts
	}
	return netip.AddrPortFrom(WorkerAddress(inv, &inv.Hosts[0]), uint16(inv.Horovod.RdzvPort)), nil
}

// TorchrunArgs is torchrun's argv for the node'th host (inventory index,
// which is its --node_rank), then cmd: the training script and its
// arguments. Every flag exists under this spelling in PyTorch 1.13 and
// later: --nnodes (the host count), --nproc_per_node (NprocPerNode),
// --node_rank, --rdzv_backend=static with --master_addr and --master_port
// (RendezvousAddress), --rdzv_id (horovod.rdzv_id, which also names
// torchrun's log directory), --max_restarts=0 (a failed process fails the
// job; rdggen stops the other nodes) and --redirects=1 --tee=1 (each
// process's stdout on the console with every line prefixed
// "[default<local rank>]:", and in torchrun's log directory; stderr stays
// unprefixed). Both of the last two are given, and not 3 (stdout and
// stderr): Debian bookworm's python3-torch 1.13.1 runs on Python 3.11,
// whose enum.Flag no longer iterates zero or composite members, so its
// torchrun turns the values 0 (the defaults) and 3 into None and fails
// before it starts a process ("'NoneType' object has no attribute 'get'"
// in torch/distributed/elastic/multiprocessing/api.py, Std.from_str);
// 1 works there and in every later release. It fails with ErrNoHosts
// when inv has no host, and when node is not an index of inv.Hosts.
func TorchrunArgs(inv *inventory.Inventory, node int, cmd []string) ([]string, error) {
	rdzv, err := RendezvousAddress(inv)
	if err != nil {
		return nil, err
	}
	if node < 0 || node >= len(inv.Hosts) {
		return nil, fmt.Errorf("horovod: torchrun node %d: the inventory has hosts 0 to %d", node, len(inv.Hosts)-1)
	}
	h := &inv.Hosts[node]
	args := []string{"torchrun",
		"--nnodes=" + strconv.Itoa(len(inv.Hosts)),
		"--nproc_per_node=" + strconv.Itoa(NprocPerNode(inv, h)),
		"--node_rank=" + strconv.Itoa(node),
		"--rdzv_backend=static",
		"--master_addr=" + rdzv.Addr().String(),
		"--master_port=" + strconv.Itoa(int(rdzv.Port())),
		"--rdzv_id=" + inv.Horovod.RdzvID,
		"--role=" + TorchrunLocalRole,
		"--max_restarts=0",
		"--redirects=1",
		"--tee=1"}
	return append(args, cmd...), nil
}

// TorchrunSocketInterface is the interface the node's processes use for TCP
// (NCCL's bootstrap and socket transport, Gloo's pairs): eth0 in bridge
// mode, the host's own data interface in host mode.
func TorchrunSocketInterface(inv *inventory.Inventory, h *inventory.Host) string {
	if inv.Horovod.Network == inventory.NetworkHost {
		return h.DataInterface
	}
	return ContainerInterface
}

// TorchrunEnv is the environment of the node'th host's torchrun (docker
// exec -e), which every process it starts inherits: the Horovod path's NCCL
// settings (Env: HCA, traffic class, GDR level, NCCL_DEBUG=INFO) with the
// socket interface of this node only, GLOO_SOCKET_IFNAME set to the same
// interface (Gloo otherwise binds to the address its host name resolves to,
// PyTorch's distributed documentation, "Choosing the network interface to
// use"), and NCCL_IB_GID_INDEX = gid, this host's RoCE v2 GID index as read
// from its GID table: each node has its own launcher, so no rank wrapper is
// needed when the hosts' indexes differ.
func TorchrunEnv(inv *inventory.Inventory, node, gid int) []EnvVar {
	return append(torchrunEnv(inv, node), EnvVar{GIDIndexVar, strconv.Itoa(gid)})
}

// torchrunEnv is TorchrunEnv without the GID index (run.sh reads it when it
// launches).
func torchrunEnv(inv *inventory.Inventory, node int) []EnvVar {
	ifname := TorchrunSocketInterface(inv, &inv.Hosts[node])
	var out []EnvVar
	for _, e := range Env(inv) {
		if e.Name == "NCCL_SOCKET_IFNAME" {
			e.Value = ifname
		}
		out = append(out, e)
	}
	return append(out, EnvVar{"GLOO_SOCKET_IFNAME", ifname})
}
