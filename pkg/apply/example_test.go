package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// Plan the reference cluster's switch (here the ONYX simulator) and read
// the typed plan: a dry run sends nothing.
func ExampleSwitches() {
	sim, err := onyxsim.New(onyxsim.Options{Hostname: "swx-mld-1-2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sim.Close()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	kh := filepath.Join(dir, "known_hosts")
	_ = os.WriteFile(kh, []byte(sim.KnownHostsLine()+"\n"), 0o600)

	inv := inventory.Reference()
	inv.Switches[0].Mgmt = sim.Addr
	res, err := apply.Switches(context.Background(), inv, apply.SwitchOptions{
		Common: apply.Common{DryRun: true},
		SSH:    apply.SSH{User: "admin", Password: "admin", KnownHosts: kh},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	m := res.Machines[0]
	fmt.Println(m.Name, m.Status, len(m.Changes), "changes")
	for _, c := range m.Changes[:2] {
		fmt.Println(c.Op, c.Item, "->", c.To)
	}
	// Output:
	// swx-mld-1-2 planned 18 changes
	// add interface ethernet 1/1 description -> clx-mld-41@esx-41.example/vmnic4
	// add interface ethernet 1/2 description -> clx-mld-42@esx-42.example/vmnic4
}

// Launch the training job in the workers, as `rdggen run` does, and tell a
// job that failed (a status) from one that could not start (an error).
// Not run here: it needs the cluster's VMs.
func ExampleRun() {
	inv := inventory.Reference()
	res, err := apply.Run(context.Background(), inv, apply.RunOptions{
		Launcher: apply.LauncherTorchrun,
		Command:  []string{"/work/train.py", "--epochs", "3"},
		SSH:      apply.SSH{User: "root", Identities: []string{"/root/.ssh/id_ed25519"}},
		Parallel: 8,
		Out:      os.Stdout, // the ranks' lines, "clx-mld-42[rank 3, local 1]: …"
		Err:      os.Stderr, // their standard error and Run's own lines
	})
	var hk *apply.HostKeyError
	var me *apply.MachinesError
	switch {
	case errors.As(err, &hk):
		fmt.Println("not launched: the host key of", hk.Addr, "is not the known one")
	case errors.As(err, &me) && me.Target == "hosts":
		for _, r := range res.NotReady {
			fmt.Println("not launched:", r.Line())
		}
	case err != nil:
		fmt.Println("not launched:", err)
	case res.Status != 0:
		fmt.Printf("the job failed on %s with status %d\n", res.FailedHost, res.Status)
	default:
		fmt.Println("done; NCCL_IB_GID_INDEX per host:", res.GIDIndexes)
	}
}
