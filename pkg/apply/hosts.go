package apply

import (
	"context"

	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// Docker restart and validation modes of HostsOptions.
const (
	// ModeAuto: validate with dockerd --validate (or as nobody on dockerd
	// < 23); restart with systemd or init.d.
	ModeAuto = hostapply.ModeAuto
	// ModeNone: skip the step.
	ModeNone = hostapply.ModeNone
)

// HostsOptions say how to reach the VMs (each host's mgmt address) and what
// to do.
type HostsOptions struct {
	Common
	SSH SSH
	// Root, when not "", is prepended to every file path rdggen reads or
	// writes on the VMs ("{host}" is the host's name): staging and tests.
	// Live state (sysctl, routes, iptables) is unaffected, and ModeAuto
	// restarts and validations are off.
	Root string
	// DockerValidate and DockerRestart: ModeAuto (default), ModeNone, or a
	// shell command run as root (validate gets the staged daemon.json as $1).
	DockerValidate, DockerRestart string
	// ModuleLoad loads nvidia-peermem where it is installed but not loaded:
	// ModeAuto (default: modprobe), ModeNone, or a shell command run as root
	// with the module's name as $1.
	ModuleLoad string
}

func (o HostsOptions) engine(r *run) hostapply.Options {
	return hostapply.Options{Dial: o.SSH.remote().Dialer(), Root: o.Root, DockerValidate: o.DockerValidate, DockerRestart: o.DockerRestart, ModuleLoad: o.ModuleLoad,
		Parallel: o.parallel(), DryRun: o.DryRun, Out: r.track.Writer(), Track: r.track, Gate: o.Confirm}
}

// Hosts brings every VM's Docker networking (daemon.json merged, docker0's
// bip and fixed-cidr), forwarding, firewall and address-translation
// chains, routes (live and persistent), data MTU, in-VM RoCE settings and
// GPUDirect RDMA's nvidia-peermem (loaded, and at boot) to what the
// inventory asks: one SSH round trip to read, one to change and
// verify. The error wraps ErrMachines when VMs failed.
func Hosts(ctx context.Context, inv *inventory.Inventory, o HostsOptions) (*Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetHosts)
	rep, err := hostapply.Run(ctx, inv, o.engine(r))
	return r.sshReport(rep, err, r.end())
}

// CheckHosts checks every VM, changing nothing: the RDMA device, its port,
// the RoCE v2 GID of the data address, the RDMA MTU, the guest's readiness
// for GPUDirect RDMA (EFI, GPUs and their BAR1, the NVIDIA driver,
// nvidia-peermem, the verbs device, Docker's NVIDIA runtime), and
// everything Hosts manages.
func CheckHosts(ctx context.Context, inv *inventory.Inventory, o HostsOptions) ([]readiness.Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetHosts)
	defer r.end()
	return hostapply.Check(ctx, inv, o.engine(r))
}

// NotReadySummary names the hosts of GIDIndexes' bad results in one
// clause, the unreadable ones apart: "no usable RoCE v2 GID on vm-03; not
// read over SSH: vm-01".
func NotReadySummary(bad []readiness.Result) string { return hostapply.NotReadySummary(bad) }

// GIDIndexes reads every VM's RDMA device and GID table, as CheckHosts
// does, and returns per host (inventory order) the index of the RoCE v2 GID
// of its data address: the NCCL_IB_GID_INDEX a job must use there
// (horovod.LaunchArgs takes them). Hosts whose device, port or GID is not
// usable have -1, and their failed results are in bad; launch only when bad
// is empty. DryRun, Confirm and the Docker modes are ignored.
func GIDIndexes(ctx context.Context, inv *inventory.Inventory, o HostsOptions) (gids []int, bad []readiness.Result) {
	r := o.begin(applyplan.TargetHosts)
	defer r.end()
	return hostapply.GIDIndexes(ctx, inv, o.engine(r))
}
