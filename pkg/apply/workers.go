package apply

import (
	"context"
	"fmt"
	"time"

	"github.com/rdggen/rdggen/internal/engines/workerapply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// WorkersOptions say how to reach the VMs and which keys the workers get.
type WorkersOptions struct {
	Common
	SSH SSH
	// Keys are the cluster's worker keys (LoadWorkerKeys, or
	// horovod.GenerateWorkerKeys then SaveWorkerKeys).
	Keys horovod.WorkerKeys
	// Root prefixes the SSH files' paths on the VMs, as in HostsOptions.
	Root string
	// ReadyTimeout bounds the wait for a started worker's sshd (default 1 min).
	ReadyTimeout time.Duration
	// AllPairs, for CheckWorkers only: every worker logs in to every other
	// (n(n-1) logins, for small clusters) instead of along a ring (n logins)
	// with the rule check covering the other pairs.
	AllPairs bool
	// SaveKeys, when set, says that Keys are new (horovod.GenerateWorkerKeys)
	// and belong in this directory: Workers writes them there
	// (SaveWorkerKeys) once Confirm agrees, before any worker changes, and
	// says so in its text; a dry run or a declined confirmation writes
	// nothing. A failure to write them changes nothing and is the error.
	SaveKeys string
}

func (o WorkersOptions) engine(r *run) workerapply.Options {
	return workerapply.Options{Dial: o.SSH.remote().Dialer(), Keys: o.Keys, Root: o.Root, ReadyTimeout: o.ReadyTimeout,
		Parallel: o.parallel(), DryRun: o.DryRun, Out: r.track.Writer(), Track: r.track, Gate: o.Confirm, AllPairs: o.AllPairs}
}

// Workers brings the Horovod worker container on every VM to what the
// inventory asks (run.sh's docker run line, the cluster's SSH files), and
// waits until each worker's sshd answers with the cluster's host key. Run
// it after Hosts: the workers live on its Docker. The error wraps
// ErrMachines when VMs failed.
func Workers(ctx context.Context, inv *inventory.Inventory, o WorkersOptions) (*Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetWorkers)
	var saveErr error
	if dir := o.SaveKeys; dir != "" {
		out := r.track.Writer()
		fmt.Fprintf(out, "the cluster's worker keys are not in %s yet: apply generates them there (this plan shows freshly made ones)\n", dir)
		outer, k := o.Confirm, o.Keys
		o.Confirm = func(ctx context.Context, planned []applyplan.Machine) bool {
			if !outer.Pass(ctx, planned) {
				return false
			}
			if saveErr = SaveWorkerKeys(dir, k); saveErr != nil {
				return false
			}
			fmt.Fprintf(out, "generated the cluster's worker keys in %s (MPI key %s, worker host key %s); keep them: new keys change every worker's files\n",
				dir, Fingerprint(k.ClientPublic), Fingerprint(k.HostPublic))
			return true
		}
	}
	rep, err := workerapply.Run(ctx, inv, o.engine(r))
	res, err := r.sshReport(rep, err, r.end())
	if saveErr != nil {
		return res, saveErr
	}
	return res, err
}

// CheckWorkers checks every worker, changing nothing: its container and
// sshd, the NCCL interfaces and RDMA settings inside it, logins between the
// workers along a ring (each worker a source and a receiver once; every
// pair with AllPairs), which must see the sender's own address, and the
// rule check: each host's NAT exemption, routes and accept rules judged for
// every peer's worker, which covers the pairs not logged in. Each host
// costs one SSH round trip; the schedule is printed at the end.
func CheckWorkers(ctx context.Context, inv *inventory.Inventory, o WorkersOptions) ([]readiness.Result, error) {
	if inv == nil {
		return nil, ErrNoInventory
	}
	r := o.begin(applyplan.TargetWorkers)
	defer r.end()
	return workerapply.Check(ctx, inv, o.engine(r))
}

// DefaultKeyDir is where the cluster's worker keys live by default:
// $XDG_CONFIG_HOME/rdggen/<cluster>, else ~/.config/rdggen/<cluster>.
func DefaultKeyDir(cluster string, getenv func(string) string) (string, error) {
	return workerapply.DefaultKeyDir(cluster, getenv)
}

// LoadWorkerKeys reads the keys in dir; found is false when there are none.
// Keys that someone else could have chosen are refused, by OpenSSH's rules
// (sshd's StrictModes): a key readable by group or others, a key or a
// directory from dir up to / owned by anyone but the current user or root,
// or writable by group or others (a directory above dir may be when it is
// sticky, as /tmp is). The error names the path and the rule.
func LoadWorkerKeys(dir string) (k horovod.WorkerKeys, found bool, err error) {
	return workerapply.LoadKeys(dir)
}

// CanSaveWorkerKeys reports whether SaveWorkerKeys can make the keys in dir
// (it, or the nearest existing directory above it, can be written by the
// current user and passes LoadWorkerKeys' rules), without writing anything.
func CanSaveWorkerKeys(dir string) error { return workerapply.CanSaveKeys(dir) }

// SaveWorkerKeys writes k into dir (created 0700, keys 0600); it refuses a
// dir that LoadWorkerKeys' rules refuse.
func SaveWorkerKeys(dir string, k horovod.WorkerKeys) error { return workerapply.SaveKeys(dir, k) }

// Fingerprint is an SSH public key's SHA256 fingerprint, as ssh-keygen -l
// prints it.
func Fingerprint(public []byte) string { return workerapply.Fingerprint(public) }
