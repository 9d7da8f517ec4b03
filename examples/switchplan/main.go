// Command switchplan shows rdggen as a library, end to end: it describes a
// small lab in Go (no YAML), lets rdggen validate it, then plans the lossless
// RoCE configuration of its switch over SSH and prints the typed plan, or
// with -check reads the switch's readiness. It never changes the switch.
//
//	RDGGEN_SWITCH_PASSWORD=… switchplan -switch 10.0.0.2 [-known-hosts FILE] [-check]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// lab is the cluster, built in Go: two VMs with an A100 each on one SN2100.
func lab(switchAddr string) (*inventory.Inventory, error) {
	return inventory.Build("lab", &inventory.Spec{
		Name: "lab",
		Switches: []inventory.SwitchSpec{{Name: "leaf1", Model: "SN2100", ONYX: new(inventory.MustVersion("3.9.3210")),
			Mgmt: switchAddr}},
		Defaults: &inventory.HostDefaults{
			OS: new("ubuntu-20.04"), DataInterface: new("ens224"),
			GPUs: []inventory.GPUSpec{{Model: "A100-PCIE-40GB", MemoryGB: new(40)}},
			NIC:  &inventory.NICSpec{Model: "ConnectX-6", PF: "vmnic2", VFs: new(4)},
		},
		Hosts: []inventory.HostSpec{
			{Name: "gpu1", ESXi: "esx1.lab", Data: &inventory.DataSpec{Address: "10.10.10.1/24", Port: "1/1"}},
			{Name: "gpu2", ESXi: "esx2.lab", Data: &inventory.DataSpec{Address: "10.10.10.2/24", Port: "1/2"}},
		},
	})
}

// plan builds the lab and plans its switch: a dry run, nothing is sent.
func plan(ctx context.Context, inv *inventory.Inventory, ssh apply.SSH) ([]applyplan.Machine, error) {
	res, err := apply.Switches(ctx, inv, apply.SwitchOptions{Common: apply.Common{DryRun: true}, SSH: ssh})
	if res == nil {
		return nil, err
	}
	return res.Machines, err
}

// check reads the switch's readiness, changing nothing.
func check(ctx context.Context, inv *inventory.Inventory, ssh apply.SSH) ([]readiness.Result, error) {
	return apply.CheckSwitches(ctx, inv, apply.SwitchOptions{SSH: ssh})
}

// printPlan writes the typed plan as a table.
func printPlan(w io.Writer, ms []applyplan.Machine) {
	for _, m := range ms {
		fmt.Fprintf(w, "%s (%s): %s\n", m.Name, m.Address, m.Status)
		if m.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", m.Error)
		}
		for _, c := range m.Changes {
			from := c.From
			if from == "" {
				from = "-"
			}
			fmt.Fprintf(w, "  %-6s %-70s %s -> %s\n", c.Op, c.Item, from, c.To)
		}
	}
}

func main() {
	addr := flag.String("switch", "", "the switch's management address (host or host:port)")
	knownHosts := flag.String("known-hosts", "", "known_hosts file (default ~/.ssh/known_hosts)")
	user := flag.String("user", "admin", "SSH user on the switch")
	doCheck := flag.Bool("check", false, "check readiness instead of planning")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "switchplan: -switch is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	inv, err := lab(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ssh := apply.SSH{User: *user, Password: os.Getenv("RDGGEN_SWITCH_PASSWORD"), PasswordVar: "RDGGEN_SWITCH_PASSWORD",
		KnownHosts: *knownHosts, Agent: true}
	if *doCheck {
		rs, err := check(ctx, inv, ssh)
		for _, r := range rs {
			fmt.Println(r.Line())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ms, err := plan(ctx, inv, ssh)
	printPlan(os.Stdout, ms)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
