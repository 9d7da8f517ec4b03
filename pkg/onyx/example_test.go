package onyx_test

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// The reference cluster's switch configuration, as written to
// switch/<name>.cfg: a commented header (left out here), then the commands.
func ExampleConfig() {
	inv := inventory.Reference()
	for _, l := range strings.Split(string(onyx.Config(inv, inv.Switches[0])), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			fmt.Println(l)
		}
	}
	// Output:
	// no cli default prefix-modes enable
	//    interface ethernet 1/1 description clx-mld-41@esx-41.example/vmnic4
	//    interface ethernet 1/2 description clx-mld-42@esx-42.example/vmnic4
	//    interface ethernet 1/3 description clx-mld-43@esx-43.example/vmnic4
	//    interface ethernet 1/4 description clx-mld-44@esx-44.example/vmnic4
	//    interface ethernet 1/5 description clx-mld-45@esx-45.example/vmnic4
	//    interface ethernet 1/6 description clx-mld-46@esx-46.example/vmnic4
	//    interface ethernet 1/7 description clx-mld-47@esx-47.example/vmnic4
	//    interface ethernet 1/8 description clx-mld-48@esx-48.example/vmnic4
	//    traffic pool roce type lossless
	//    traffic pool roce memory percent 50.00
	//    traffic pool roce map switch-priority 3
	//    interface ethernet 1/1-1/8 qos trust L3
	//    interface ethernet 1/1-1/8 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500
	//    interface ethernet 1/1-1/8 traffic-class 6 dcb ets strict
	//    dcb priority-flow-control enable force
	//    dcb priority-flow-control priority 3 enable
	//    interface ethernet 1/1-1/8 dcb priority-flow-control mode on force
	//    lldp
	//    hostname swx-mld-1-2
	// cli default prefix-modes enable
}

// Parse a switch's running-config and diff it against what the inventory
// wants: the plan holds only the missing or conflicting commands.
func ExampleDiff() {
	inv := inventory.Reference()
	running := `##
## Running database "initial"
##
   interface ethernet 1/1-1/32 qos trust L3
   dcb priority-flow-control enable force
   dcb priority-flow-control priority 3 enable
   interface ethernet 1/1-1/32 dcb priority-flow-control mode on force
   lldp
`
	plan := onyx.Diff(onyx.Desired(inv, inv.Switches[0]), onyx.Parse(running))
	for _, cmd := range plan.Commands() {
		fmt.Println(cmd)
	}
	// Output:
	// interface ethernet 1/1 description clx-mld-41@esx-41.example/vmnic4
	// interface ethernet 1/2 description clx-mld-42@esx-42.example/vmnic4
	// interface ethernet 1/3 description clx-mld-43@esx-43.example/vmnic4
	// interface ethernet 1/4 description clx-mld-44@esx-44.example/vmnic4
	// interface ethernet 1/5 description clx-mld-45@esx-45.example/vmnic4
	// interface ethernet 1/6 description clx-mld-46@esx-46.example/vmnic4
	// interface ethernet 1/7 description clx-mld-47@esx-47.example/vmnic4
	// interface ethernet 1/8 description clx-mld-48@esx-48.example/vmnic4
	// traffic pool roce type lossless
	// traffic pool roce memory percent 50.00
	// traffic pool roce map switch-priority 3
	// interface ethernet 1/1-1/8 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500
	// interface ethernet 1/1-1/8 traffic-class 6 dcb ets strict
	// hostname swx-mld-1-2
}

// Read the PFC state of a switch from `show dcb priority-flow-control |
// json-print`.
func ExampleParsePFC() {
	out := `[{"PFC": "enabled", "Priority Enabled List": "3", "Priority Disabled List": "0 1 2 4 5 6 7"},
 {"Eth1/1": [{"PFC admin": "on", "PFC oper": "Enabled"}], "Eth1/2": [{"PFC admin": "Auto", "PFC oper": "Disabled"}]}]`
	st, err := onyx.ParsePFC(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Enabled(), st.PriorityEnabled(3), st.Ports["Eth1/1"].OperEnabled(), st.Ports["Eth1/2"].OperEnabled())
	// Output: true true true false
}
