package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx/onyxsim"
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
	// swx-mld-1-2 planned 10 changes
	// add traffic pool roce type -> lossless
	// add traffic pool roce memory -> percent 50.00
}
