// Package horovod computes the Horovod/MPI launch artifacts of a cluster: the
// hostfile, the worker `docker run` line and the horovodrun/mpirun lines with
// the RoCE and GPUDirect settings (docs/rules.md#horovod-launch; docs/rules.md#horovod-launch).
package horovod

import (
	"fmt"
	"iter"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
)

const (
	// WorkerName is the name of the worker container on every host.
	WorkerName = "hvd-worker"
	// ContainerInterface is the worker's interface on docker0 in bridge mode.
	ContainerInterface = "eth0"
	// ShmSize is the worker's /dev/shm; Docker's default 64 MB is too small for NCCL.
	ShmSize = "1g"
	// GDRLevel is NCCL_NET_GDR_LEVEL inside a VM: the largest PCI distance
	// between a GPU and the NIC at which NCCL still uses GPUDirect RDMA.
	// vSphere gives every passthrough device its own virtual PCIe root port,
	// so NCCL finds GPU and VF at distance PHB (through the host bridge),
	// beyond its default PXB, and silently stages RDMA through host memory
	// (NCCL's src/graph/paths.cc, ncclTopoCheckGdr; NCCL maintainers in
	// NVIDIA/nccl#1008, #1151, #1843 and NVIDIA/nccl-tests#86). The string
	// form, which every NCCL since 2.4 takes (old integers: 3 = PHB).
	GDRLevel = "PHB"
)

// Worker is one Horovod worker: the address other workers reach it at and
// its slot count (one per GPU).
type Worker struct {
	Host    *inventory.Host
	Address netip.Addr
	Slots   int
}

// WorkerAddress is where host h's worker is reached. In bridge mode (the
// guide's routed docker0) it is the first container address of the host's
// subnet (.2 of a /24: docker0 holds .1 and Docker's IPAM hands out the next
// free address of fixed-cidr, docs/rules.md#worker-addresses), which holds when the
// worker is the first container started after Docker; run.sh checks it. In host
// mode it is the data address.
func WorkerAddress(inv *inventory.Inventory, h *inventory.Host) netip.Addr {
	if inv.Horovod.Network == inventory.NetworkHost {
		return h.Data.Address.Addr()
	}
	return h.Bridge().Addr().Next()
}

// Workers lists every host's worker in inventory order.
func Workers(inv *inventory.Inventory) []Worker {
	out := make([]Worker, len(inv.Hosts))
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		out[i] = Worker{Host: h, Address: WorkerAddress(inv, h), Slots: h.Slots()}
	}
	return out
}

// TotalSlots is the number of ranks (-np): the sum of the hosts' GPUs.
func TotalSlots(inv *inventory.Inventory) int {
	n := 0
	for _, h := range inv.Hosts {
		n += h.Slots()
	}
	return n
}

// Hostfile is the MPI hostfile: exactly "<address> slots=<GPUs>" per line, LF
// endings, no comments or blank lines — the only form both horovodrun and
// OpenMPI accept (docs/rules.md#hostfile-and-slots).
func Hostfile(inv *inventory.Inventory) []byte {
	var b strings.Builder
	b.Grow(len(inv.Hosts) * 24)
	for _, w := range Workers(inv) {
		b.WriteString(w.Address.String())
		b.WriteString(" slots=")
		b.WriteString(strconv.Itoa(w.Slots))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// HostList is the hostfile as a -H argument: "addr:slots,addr:slots,…".
func HostList(inv *inventory.Inventory) string {
	var b strings.Builder
	for i, w := range Workers(inv) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(w.Address.String())
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(w.Slots))
	}
	return b.String()
}

// SocketInterfaces is what NCCL and MPI use for TCP (bootstrap, out-of-band):
// eth0 inside bridge-networked containers; in host mode the hosts' data
// interfaces, comma-separated when they differ (NCCL_SOCKET_IFNAME takes a list).
func SocketInterfaces(inv *inventory.Inventory) string {
	if inv.Horovod.Network != inventory.NetworkHost {
		return ContainerInterface
	}
	var names []string
	for _, h := range inv.Hosts {
		if !slices.Contains(names, h.DataInterface) {
			names = append(names, h.DataInterface)
		}
	}
	return strings.Join(names, ",")
}

// EnvVar is one environment variable passed to every rank.
type EnvVar struct{ Name, Value string }

// Env is the NCCL environment for RoCE with GPUDirect RDMA that is the same
// on every host: the HCA, the traffic class (ToS 106 = DSCP 26 << 2 |
// ECT(0)), the socket interface, the GDR level a VM needs (GDRLevel) and
// NCCL_DEBUG=INFO so the log shows "NET/IB … RoCE" and the channels'
// "/GDRDMA". The GID index is per host and read at launch (GIDEnv).
func Env(inv *inventory.Inventory) []EnvVar {
	return append(WorkerEnv(inv), EnvVar{"NCCL_DEBUG", "INFO"})
}

// WorkerEnv is the part of Env the worker container is started with (docker
// run -e), so that whatever runs in it — a job started by hand with docker
// exec too — has NCCL's RoCE and GPUDirect RDMA settings: NCCL_IB_HCA,
// NCCL_IB_TC, NCCL_SOCKET_IFNAME and NCCL_NET_GDR_LEVEL. Ranks that mpirun
// starts over SSH do not inherit it; the launch lines export Env themselves.
//
// With several rails NCCL_IB_HCA names every rail's RDMA device in rail
// order (RailEnv) and NCCL_CROSS_NIC follows it; NCCL_SOCKET_IFNAME stays
// rail 0's (the data interface, or eth0 in a bridge-networked container).
func WorkerEnv(inv *inventory.Inventory) []EnvVar {
	env := []EnvVar{
		{"NCCL_IB_HCA", inv.Horovod.HCA},
		{"NCCL_IB_TC", strconv.Itoa(inv.RoCE.ToS())},
		{"NCCL_SOCKET_IFNAME", SocketInterfaces(inv)},
		{"NCCL_NET_GDR_LEVEL", GDRLevel},
	}
	if inv.MultiRail() {
		rail := RailEnv(inv)
		env = append(append(rail, env[1:2]...), env[2:]...)
	}
	return env
}

// RailEnv is NCCL's rail settings for an inventory of several rails:
// NCCL_IB_HCA with every rail's RDMA device (inventory.Horovod.RailHCA) in
// rail order, exact names, port 1, each entry labelled with its rail when
// horovod.image is an image rdggen knows to carry NCCL 2.30.7 or later
// (nccltopo.IBHCA, ImageNCCL; an image it does not know gets no labels,
// which every NCCL reads), and NCCL_CROSS_NIC from the cabling
// (nccltopo.CrossNIC): 1 when every rail ends on one switch, 2 when spines
// join the rails' leaves, 0 when nothing joins them. Nil for an inventory
// of one rail.
func RailEnv(inv *inventory.Inventory) []EnvVar {
	v, _ := ImageNCCL(inv.Horovod.Image)
	return railEnv(inv, v)
}

// railEnv is RailEnv for an image whose NCCL is v (the zero Version: not
// known).
func railEnv(inv *inventory.Inventory, v nccltopo.Version) []EnvVar {
	n := inv.RailCount()
	if n < 2 {
		return nil
	}
	hcas := make([]string, n)
	for r := range hcas {
		hcas[r] = inv.Horovod.RailHCA(r)
	}
	var out []EnvVar
	if s, err := nccltopo.IBHCA(hcas, v); err == nil {
		out = append(out, EnvVar{s.Name, s.Value})
	} else {
		out = append(out, EnvVar{"NCCL_IB_HCA", inv.Horovod.HCA})
	}
	f := nccltopo.RailsSeparate
	switch {
	case inv.RailsOnOneSwitch():
		f = nccltopo.OneSwitch
	case inv.RailsJoined():
		f = nccltopo.RailsJoined
	}
	if s, err := nccltopo.CrossNIC(n, f); err == nil && s.Value != "" {
		out = append(out, EnvVar{s.Name, s.Value})
	}
	return out
}

// BenchmarkScript is where run.sh expects tf_cnn_benchmarks inside the worker
// image, overridable with $TF_CNN_BENCHMARKS.
const BenchmarkScript = "/examples/benchmarks/scripts/tf_cnn_benchmarks/tf_cnn_benchmarks.py"

// BenchmarkArgs is the guide's VGG16 benchmark from tensorflow/benchmarks'
// tf_cnn_benchmarks: one GPU per rank with Horovod doing the all-reduce.
func BenchmarkArgs() []string {
	return []string{"python", "${TF_CNN_BENCHMARKS}", "--model=vgg16", "--batch_size=64",
		"--variable_update=horovod", "--horovod_device=gpu", "--num_gpus=1", "--num_batches=100"}
}

// HorovodrunArgs is run.sh's launch line, run in the first worker: horovodrun
// with every slot (-H "${HOSTS}"), the workers' ssh port and, in host mode,
// the data interfaces, then the VGG16 benchmark (or run.sh's arguments) as
// "${CMD[@]}", behind "${RANK_WRAP[@]}": run.sh reads the hosts' GID indexes
// at launch and wraps each rank in RankWrapper when they differ. horovodrun
// forwards the launching environment (Env, the GID index) to all ranks.
func HorovodrunArgs(inv *inventory.Inventory) []string {
	return horovodrun(inv, "${HOSTS}", []string{"${RANK_WRAP[@]}", "${CMD[@]}"})
}

// MpirunArgs is the mpirun line equivalent to HorovodrunArgs (Horovod's
// docs/mpi.rst): slot mapping, TCP for MPI itself on the socket interface,
// the ssh port for the container sshd, each Env variable exported with -x,
// and run.sh's GID export "${GID_X[@]}" (-x NCCL_IB_GID_INDEX=N, or the
// ranks' indexes for RankWrapper).
func MpirunArgs(inv *inventory.Inventory) []string {
	return mpirun(inv, "${HOSTS}", []string{"${GID_X[@]}"}, []string{"${RANK_WRAP[@]}", "${CMD[@]}"})
}

// LaunchArgs is the line `rdggen run` starts in the first worker: horovodrun,
// or mpirun when useMpirun is set, over every worker (HostList, literal) with
// cmd as the program of each rank. An empty cmd means the VGG16 benchmark at
// BenchmarkScript. gids are the hosts' GID indexes as read from their GID
// tables, in inventory order (len(inv.Hosts) of them; it panics otherwise):
// mpirun exports GIDEnv with -x, and when the indexes differ every rank runs
// behind RankWrapper. horovodrun takes GIDEnv from its own environment
// (LaunchEnv).
func LaunchArgs(inv *inventory.Inventory, useMpirun bool, cmd []string, gids []int) []string {
	if len(cmd) == 0 {
		cmd = BenchmarkArgs()
		cmd[1] = BenchmarkScript
	}
	vars, wrap := GIDEnv(inv, gids)
	if wrap {
		cmd = append(RankWrapper(), cmd...)
	}
	if useMpirun {
		var x []string
		for _, e := range vars {
			x = append(x, "-x", e.Name+"="+e.Value)
		}
		return mpirun(inv, HostList(inv), x, cmd)
	}
	return horovodrun(inv, HostList(inv), cmd)
}

// LaunchEnv is the environment LaunchArgs' launcher starts with (docker exec
// -e): for horovodrun, which hands its environment to every rank, Env and
// GIDEnv; for mpirun nothing, its line exports them with -x.
func LaunchEnv(inv *inventory.Inventory, useMpirun bool, gids []int) []EnvVar {
	if useMpirun {
		return nil
	}
	vars, _ := GIDEnv(inv, gids)
	return append(Env(inv), vars...)
}

func horovodrun(inv *inventory.Inventory, hosts string, cmd []string) []string {
	args := []string{"horovodrun", "-np", strconv.Itoa(TotalSlots(inv)), "-H", hosts,
		"-p", strconv.Itoa(inv.Horovod.SSHPort)}
	if inv.Horovod.Network == inventory.NetworkHost {
		args = append(args, "--network-interfaces", SocketInterfaces(inv))
	}
	return append(args, cmd...)
}

// mpirun is the mpirun line with gidX (the GID index's -x options) before
// the rank command cmd.
func mpirun(inv *inventory.Inventory, hosts string, gidX, cmd []string) []string {
	ifs := SocketInterfaces(inv)
	args := []string{"mpirun", "--allow-run-as-root", "--tag-output",
		"-np", strconv.Itoa(TotalSlots(inv)), "-H", hosts,
		"-bind-to", "none", "-map-by", "slot",
		"-mca", "pml", "ob1", "-mca", "btl", "^openib",
		"-mca", "btl_tcp_if_include", ifs, "-mca", "oob_tcp_if_include", ifs,
		"-mca", "plm_rsh_args", fmt.Sprintf("-p %d", inv.Horovod.SSHPort)}
	for _, e := range Env(inv) {
		args = append(args, "-x", e.Name+"="+e.Value)
	}
	args = append(args, gidX...)
	args = append(args, "-x", "LD_LIBRARY_PATH", "-x", "PATH")
	return append(args, cmd...)
}

// RankHosts maps each rank of a launch to its host, in the order mpirun's
// `-map-by slot` and horovodrun place them: the first host's slots first.
func RankHosts(inv *inventory.Inventory) []*inventory.Host {
	var out []*inventory.Host
	for i := range inv.Hosts {
		for s := 0; s < inv.Hosts[i].Slots(); s++ {
			out = append(out, &inv.Hosts[i])
		}
	}
	return out
}

// Artifacts returns horovod/hostfile and horovod/run.sh. It collects Stream.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

// Stream yields Artifacts' files one at a time, each made when the loop
// asks for it: horovod/hostfile (Hostfile, 0644), then horovod/run.sh
// (RunScript, 0755). Both are cluster-wide, one line per host or rank.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		if !yield(artifact.File{Path: "horovod/hostfile", Mode: 0o644, Data: Hostfile(inv)}) {
			return
		}
		yield(artifact.File{Path: "horovod/run.sh", Mode: 0o755, Data: RunScript(inv)})
	}
}
