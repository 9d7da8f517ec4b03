package onyx

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShowCommands(t *testing.T) {
	p := Ethernet(1, 3)
	for got, want := range map[string]string{
		ShowInterfacesCommand(Iface{}):              "show interfaces ethernet | json-print",
		ShowInterfacesCommand(p):                    "show interfaces ethernet 1/3 | json-print",
		ShowPFCCommand:                              "show dcb priority-flow-control | json-print",
		ShowCongestionCommand(p):                    "show interfaces ethernet 1/3 congestion-control | json-print",
		ShowPFCCountersCommand(p, 3):                "show interfaces ethernet 1/3 counters pfc prio 3",
		p.ShortName():                               "Eth1/3",
		Iface{"port-channel", "5"}.ShortName():      "Po5",
		Iface{"mlag-port-channel", "9"}.ShortName(): "Mpo9",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// The shapes of `show interfaces ethernet | json-print`: before 3.6.6000 a
// list of objects named by "header" (mellanox.onyx fixture
// onyx_interfaces_show.cfg, VLAN interfaces mixed in); from 3.6.6000 an
// object of port → list (onyx_interface.py); and a list of such objects.
func TestParseInterfaces(t *testing.T) {
	old := `show interfaces ethernet | json-print
[
    {
        "header": "Eth1/1",
        "Admin state": "Enabled",
        "Operational state": "Down",
        "Actual speed": "40 Gbps",
        "MTU": "1500 bytes(Maximum packet size 1522 bytes)",
        "Flow-control": "receive off send off",
        "Rx": {"packets": "0"}
    },
    {"header": "Vlan 10", "Admin state": "Enabled", "MTU": "1500 bytes", "Operational state": "Up"}
]`
	newer := `{
  "Eth1/3": [
    {"Admin state": "Enabled", "Operational state": "Up", "Actual speed": "100 Gbps"},
    {"MTU": "9216 bytes(Maximum packet size 9238 bytes)", "Flow-control": "receive off send off"}
  ],
  "Eth1/4": [{"Admin state": "Disabled", "Operational state": "Down", "Actual speed": "Unknown", "MTU": "1500 bytes(Maximum packet size 1522 bytes)"}]
}`
	listOfMaps := `[{"Eth1/7": [{"Admin state": "Enabled", "Operational state": "Up", "Actual speed": "25 Gbps", "MTU": "9000 bytes(Maximum packet size 9022 bytes)"}]}]`
	for _, c := range []struct {
		name, out string
		want      map[string]PortStatus
	}{
		{"before 3.6.6000", old, map[string]PortStatus{
			"Eth1/1":  {Name: "Eth1/1", Admin: "Enabled", Oper: "Down", Speed: "40 Gbps", MTU: 1500, FlowControl: "receive off send off"},
			"Vlan 10": {Name: "Vlan 10", Admin: "Enabled", Oper: "Up", MTU: 1500},
		}},
		{"from 3.6.6000", newer, map[string]PortStatus{
			"Eth1/3": {Name: "Eth1/3", Admin: "Enabled", Oper: "Up", Speed: "100 Gbps", MTU: 9216, FlowControl: "receive off send off"},
			"Eth1/4": {Name: "Eth1/4", Admin: "Disabled", Oper: "Down", Speed: "Unknown", MTU: 1500},
		}},
		{"list of objects", listOfMaps, map[string]PortStatus{
			"Eth1/7": {Name: "Eth1/7", Admin: "Enabled", Oper: "Up", Speed: "25 Gbps", MTU: 9000},
		}},
	} {
		got, err := ParseInterfaces(c.out)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	p := PortStatus{Admin: "Enabled", Oper: "Up"}
	if !p.AdminUp() || !p.OperUp() || (PortStatus{Admin: "Disabled", Oper: "Down"}).OperUp() {
		t.Error("AdminUp/OperUp")
	}
	for _, bad := range []string{"", "% Unrecognized command \"json-print\".", `"a string"`, "[{"} {
		if _, err := ParseInterfaces(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSpeedGbps(t *testing.T) {
	for in, want := range map[string]float64{
		"100 Gbps": 100, "40 Gbps": 40, "25G": 25, "10 Mbps": 0.01, "Unknown": 0, "": 0, "1 Tbps": 1000, "2.5 Gbps": 2.5,
	} {
		if got := (PortStatus{Speed: in}).SpeedGbps(); got != want {
			t.Errorf("%q: %v, want %v", in, got, want)
		}
	}
}

// `show dcb priority-flow-control | json-print`: the dss-sdk client's
// two-element list, the three-element list onyx_pfc_interface.py indexes
// ([2]), and the "Table 2" layout before 3.6.6000.
func TestParsePFC(t *testing.T) {
	two := `[
  {"PFC": "enabled", "Priority Enabled List": "3 4", "Priority Disabled List": "0 1 2 5 6 7"},
  {"Eth1/1": [{"PFC admin": "on", "PFC oper": "Enabled"}],
   "Eth1/2": [{"PFC admin": "Auto", "PFC oper": "Disabled"}],
   "Po1": [{"PFC admin": "on", "PFC oper": "Enabled"}]}
]`
	three := `[{"PFC": "disabled", "Priority Enabled List": "", "Priority Disabled List": "0 1 2 3 4 5 6 7"}, {}, {"Eth1/1/2": [{"PFC admin": "Auto", "PFC oper": "Disabled"}]}]`
	table2 := `{"PFC": "enabled", "Priority Enabled List": "3", "Table 2": {"Mpo2": [{"PFC admin": "on", "PFC oper": "Enabled"}]}}`
	for _, c := range []struct {
		name, out string
		want      PFCStatus
	}{
		{"two elements", two, PFCStatus{Global: "enabled", Priorities: []int{3, 4}, Ports: map[string]PortPFC{
			"Eth1/1": {"on", "Enabled"}, "Eth1/2": {"Auto", "Disabled"}, "Po1": {"on", "Enabled"}}}},
		{"three elements", three, PFCStatus{Global: "disabled", Ports: map[string]PortPFC{"Eth1/1/2": {"Auto", "Disabled"}}}},
		{"Table 2", table2, PFCStatus{Global: "enabled", Priorities: []int{3}, Ports: map[string]PortPFC{"Mpo2": {"on", "Enabled"}}}},
	} {
		got, err := ParsePFC(c.out)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, d)
		}
	}
	st, _ := ParsePFC(two)
	if !st.Enabled() || !st.PriorityEnabled(3) || st.PriorityEnabled(5) || !st.Ports["Eth1/1"].OperEnabled() || st.Ports["Eth1/2"].OperEnabled() {
		t.Errorf("predicates: %+v", st)
	}
	if _, err := ParsePFC(`[{"x": "y"}]`); err == nil {
		t.Error("no PFC data: no error")
	}
}

// `show interfaces ethernet 1/1 congestion-control | json-print`, the shape
// of fixture onyx_show_interface_congestion_control.cfg.
func TestParseCongestion(t *testing.T) {
	out := `[
  {"Interface ethernet": "1/1", "ECN marked packets": "42"},
  {"header": "TC-0", "Mode": "none"},
  {"header": "TC-1", "Mode": "none"},
  {"header": "TC-2", "Mode": "RED", "Threshold mode": "relative", "Minimum threshold": "9%", "Maximum threshold": "90%", "RED dropped packets": "0"},
  {"header": "TC-3", "Mode": "ECN", "Threshold mode": "absolute", "Minimum threshold": "500 KB", "Maximum threshold": "1550 KB", "RED dropped packets": "0"},
  {"header": "TC-4", "Mode": "none"}
]`
	c, err := ParseCongestion(out)
	if err != nil {
		t.Fatal(err)
	}
	if c.Interface != "1/1" || c.ECNMarked != 42 || len(c.TCs) != 5 {
		t.Fatalf("%+v", c)
	}
	for tc, want := range map[int]TCCongestion{
		0: {TC: 0, Mode: "none"},
		2: {TC: 2, Mode: "RED", ThresholdMode: "relative", Min: 9, Max: 90},
		3: {TC: 3, Mode: "ECN", ThresholdMode: "absolute", Min: 500, Max: 1550},
	} {
		got, ok := c.TC(tc)
		if !ok || got != want {
			t.Errorf("TC %d: %+v %v, want %+v", tc, got, ok, want)
		}
	}
	if tc3, _ := c.TC(3); !tc3.ECN() || tc3.String() != "ECN, absolute 500-1550 KB" {
		t.Errorf("TC 3: ECN %v, %q", tc3.ECN(), tc3.String())
	}
	if tc2, _ := c.TC(2); tc2.ECN() || tc2.String() != "RED, relative 9-90%" {
		t.Errorf("TC 2: %q", tc2.String())
	}
	if _, ok := c.TC(7); ok {
		t.Error("TC 7 found in a list that ends at TC 4")
	}
	// Without headers the position names the class (index n+1).
	c, err = ParseCongestion(`[{"Interface ethernet": "1/2"}, {"Mode": "none"}, {"Mode": "ECN", "Threshold mode": "absolute", "Minimum threshold": "150 KB", "Maximum threshold": "1500 KB"}]`)
	if tc1, ok := c.TC(1); err != nil || !ok || !tc1.ECN() || tc1.Min != 150 || tc1.Max != 1500 || c.ECNMarked != -1 {
		t.Errorf("positional: %+v %v", c, err)
	}
	if _, err := ParseCongestion(`{"Eth1/1": []}`); err == nil {
		t.Error("object: no error")
	}
}

// The text of `show interfaces ethernet 1/1 counters pfc prio 3`; its layout
// is not public beyond `(\d+)\s*pause packets`, so both headed and bare
// (`| include "pause packets"`, as Intel's library filters it) forms read.
func TestParsePauseCounters(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      PauseCounters
	}{
		{"headed", "PFC 3\n\nRx\n  12                   pause packets\n  340                  pause duration (usec)\n\nTx\n  5                    pause packets\n", PauseCounters{Rx: 12, Tx: 5}},
		{"tx first", "Tx:\n  7 pause packets\nRx:\n  9 pause packets\n", PauseCounters{Rx: 9, Tx: 7}},
		{"filtered", "  0                    pause packets\n  3                    pause packets", PauseCounters{Rx: 0, Tx: 3}},
		{"one count", "1234 Pause Packets", PauseCounters{Rx: 1234, Tx: -1}},
	} {
		got, err := ParsePauseCounters(c.out)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
	if s := (PauseCounters{Rx: 12, Tx: 5}).String(); s != "rx 12, tx 5 pause packets" {
		t.Errorf("String: %q", s)
	}
	if _, err := ParsePauseCounters("% Unrecognized command \"pfc\".\nType \"?\" for help."); err == nil || !strings.Contains(err.Error(), "pause packets") {
		t.Errorf("no counts: %v", err)
	}
}
