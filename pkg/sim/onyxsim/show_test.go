package onyxsim

import (
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/onyx"
)

// answer is what the switch prints for a show command, as any session would
// get it.
func answer(t *testing.T, s *Server, line string) string {
	t.Helper()
	out, ok := (&cli{srv: s}).show(line)
	if !ok {
		t.Fatalf("%q is not a show command the simulator answers", line)
	}
	return out
}

// The show commands answer from the configuration and the live port state,
// in the shapes pkg/onyx parses.
func TestShowFromState(t *testing.T) {
	s := Start(t, Options{Ports: 16, Seed: []string{
		"interface ethernet 1/1-1/16 mtu 9216 force",
		"interface ethernet 1/2 shutdown",
		"interface ethernet 1/1-1/16 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/5 traffic-class 1 congestion-control red minimum-relative 9 maximum-relative 90",
		"dcb priority-flow-control enable force",
		"dcb priority-flow-control priority 3 enable",
		"interface ethernet 1/1-1/4 dcb priority-flow-control mode on force",
	}})
	s.SetLink(4, false, "")
	s.SetLink(5, true, "25 Gbps")
	s.SetPauseCounters(1, 3, 12, 5)
	s.SetECNMarked(1, 42)

	ports, err := onyx.ParseInterfaces(answer(t, s, "show interfaces ethernet | json-print"))
	if err != nil || len(ports) != 16 {
		t.Fatalf("%d ports, %v", len(ports), err)
	}
	for name, want := range map[string]onyx.PortStatus{
		"Eth1/1": {Name: "Eth1/1", Admin: "Enabled", Oper: "Up", Speed: "100 Gbps", MTU: 9216, FlowControl: "receive off send off"},
		"Eth1/2": {Name: "Eth1/2", Admin: "Disabled", Oper: "Down", Speed: "100 Gbps", MTU: 9216, FlowControl: "receive off send off"},
		"Eth1/4": {Name: "Eth1/4", Admin: "Enabled", Oper: "Down", Speed: "100 Gbps", MTU: 9216, FlowControl: "receive off send off"},
		"Eth1/5": {Name: "Eth1/5", Admin: "Enabled", Oper: "Up", Speed: "25 Gbps", MTU: 9216, FlowControl: "receive off send off"},
	} {
		if ports[name] != want {
			t.Errorf("%s: %+v, want %+v", name, ports[name], want)
		}
	}
	one := answer(t, s, "show interfaces ethernet 1/5 | json-print")
	if p, err := onyx.ParseInterfaces(one); err != nil || len(p) != 1 || p["Eth1/5"].Speed != "25 Gbps" ||
		!strings.Contains(one, `"MTU": "9216 bytes(Maximum packet size 9238 bytes)"`) {
		t.Errorf("one port: %v\n%s", err, one)
	}

	pfc, err := onyx.ParsePFC(answer(t, s, "show dcb priority-flow-control | json-print"))
	if err != nil || !pfc.Enabled() || len(pfc.Priorities) != 1 || pfc.Priorities[0] != 3 || len(pfc.Ports) != 16 {
		t.Fatalf("pfc %+v %v", pfc, err)
	}
	if p := pfc.Ports["Eth1/3"]; p.Admin != "on" || !p.OperEnabled() {
		t.Errorf("1/3: %+v", p)
	}
	if p := pfc.Ports["Eth1/6"]; p.Admin != "Auto" || p.OperEnabled() {
		t.Errorf("1/6: %+v", p)
	}
	if txt := answer(t, s, "show dcb priority-flow-control"); !strings.Contains(txt, "PFC: enabled\nPriority Enabled List: 3\n") ||
		!strings.Contains(txt, "Eth1/3           on               Enabled\n") {
		t.Errorf("text:\n%s", txt)
	}

	cc, err := onyx.ParseCongestion(answer(t, s, "show interfaces ethernet 1/1 congestion-control | json-print"))
	tc3, ok := cc.TC(3)
	if err != nil || !ok || cc.ECNMarked != 42 || tc3.String() != "ECN, absolute 150-1500 KB" || len(cc.TCs) != 8 {
		t.Errorf("1/1 congestion: %+v %v", cc, err)
	}
	cc, _ = onyx.ParseCongestion(answer(t, s, "show interfaces ethernet 1/5 congestion-control | json-print"))
	if tc1, _ := cc.TC(1); tc1.String() != "RED, relative 9-90%" {
		t.Errorf("1/5 TC 1: %q", tc1.String())
	}

	pc, err := onyx.ParsePauseCounters(answer(t, s, "show interfaces ethernet 1/1 counters pfc prio 3"))
	if err != nil || pc != (onyx.PauseCounters{Rx: 12, Tx: 5}) {
		t.Errorf("pause counters %+v %v", pc, err)
	}
	if out := answer(t, s, "show interfaces ethernet 1/17 | json-print"); !strings.HasPrefix(out, "% Interface ethernet 1/17 does not exist") {
		t.Errorf("1/17: %q", out)
	}
	// Show commands change nothing and are not configuration.
	if len(s.Received()) != 0 {
		t.Errorf("received %q", s.Received())
	}
}

// PFC off on one port (onyx_pfc_interface's disable command): the port
// shows PFC admin Auto, oper Disabled; global PFC off shows every port
// disabled.
func TestShowPFCDisabled(t *testing.T) {
	c := newConfig("sw", 4, "3.6.8190")
	for _, cmd := range []string{
		"dcb priority-flow-control enable force",
		"interface ethernet 1/1-1/4 dcb priority-flow-control mode on force",
		"interface ethernet 1/3 no dcb priority-flow-control mode force",
	} {
		out := c.configCommand(cmd, false)
		if out.err != "" {
			t.Fatalf("%q: %s", cmd, out.err)
		}
		out.apply()
	}
	s := &Server{cfg: c, links: make([]PortState, 4)}
	pfc, err := onyx.ParsePFC(s.showPFC(true))
	if err != nil || pfc.Ports["Eth1/3"] != (onyx.PortPFC{Admin: "Auto", Oper: "Disabled"}) || !pfc.Ports["Eth1/4"].OperEnabled() || pfc.PriorityEnabled(3) {
		t.Errorf("%+v %v", pfc, err)
	}
	c.configCommand("no dcb priority-flow-control enable force", false).apply()
	pfc, _ = onyx.ParsePFC(s.showPFC(true))
	if pfc.Enabled() || pfc.Ports["Eth1/1"] != (onyx.PortPFC{Admin: "on", Oper: "Disabled"}) {
		t.Errorf("global off: %+v", pfc)
	}
}

// The `roce` template (ONYX ≥ 3.8.2000) shows its fixed values: PFC on
// priority 3 on every port, ECN 150–1500 KB on traffic class 3.
func TestShowRoCETemplate(t *testing.T) {
	s := Start(t, Options{Ports: 4, Version: "3.10.4006", Seed: []string{"roce"}, NoShow: []string{"show interfaces ethernet 1/2 counters"}})
	pfc, err := onyx.ParsePFC(answer(t, s, "show dcb priority-flow-control | json-print"))
	if err != nil || !pfc.Enabled() || !pfc.PriorityEnabled(3) || !pfc.Ports["Eth1/4"].OperEnabled() {
		t.Errorf("%+v %v", pfc, err)
	}
	cc, _ := onyx.ParseCongestion(answer(t, s, "show interfaces ethernet 1/4 congestion-control | json-print"))
	if tc3, _ := cc.TC(3); tc3.String() != "ECN, absolute 150-1500 KB" {
		t.Errorf("TC 3: %q", tc3.String())
	}
	if out := answer(t, s, "show interfaces ethernet 1/2 counters pfc prio 3"); !strings.HasPrefix(out, `% Unrecognized command "counters".`) {
		t.Errorf("NoShow: %q", out)
	}
}
