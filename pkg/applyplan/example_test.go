package applyplan_test

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Count the changes a plan would push, and on how many machines.
func ExampleCount() {
	plan := []applyplan.Machine{
		{Target: "switch", Name: "sw1", Status: applyplan.Planned, Changes: []applyplan.Change{
			{Op: applyplan.Add, Item: "lldp", Text: "lldp"},
			{Op: applyplan.Update, Item: "interface ethernet 1/1-1/32 qos trust", From: "L2", To: "L3", Text: "interface ethernet 1/1-1/32 qos trust L3"},
		}},
		{Target: "hosts", Name: "clx-mld-41", Status: applyplan.UpToDate},
	}
	changes, machines := applyplan.Count(plan)
	fmt.Println(changes, "change(s) on", machines, "machine(s)")
	// Output: 2 change(s) on 1 machine(s)
}
