package onyx

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// loadInv loads a one-switch inventory with the given switch lines and roce block.
func loadInv(t *testing.T, roce, sw string) *inventory.Inventory {
	t.Helper()
	src := "name: t\n" + roce + "switches:\n" + sw + `
docker: {pool: 172.16.0.0/16, prefix: 24}
defaults:
  os: ubuntu-18.04
  data_interface: enp1f0
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
  - {name: h1, esxi: e1, data: {address: 10.0.0.1/24, switch: s1, port: 1/1}}
  - {name: h2, esxi: e2, data: {address: 10.0.0.2/24, switch: s1, port: 1/2}}
`
	inv, err := inventory.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// wholeSwitchYAML is the reference inventory with `ports: all` on its
// switch: the deployment guide's whole-switch form (1/1-1/32).
func wholeSwitchYAML() []byte {
	return []byte(strings.Replace(string(inventory.ReferenceYAML), "    onyx: 3.6.8190", "    ports: all\n    onyx: 3.6.8190", 1))
}

// The default touches only the cabled ports; ports: all restores the
// guide's whole-switch form, and the header says which one the file is.
func TestPortsScope(t *testing.T) {
	ref := inventory.Reference()
	whole, err := inventory.Load("whole.yaml", wholeSwitchYAML())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		inv    *inventory.Inventory
		ranges []string
		header string
	}{
		{ref, []string{"ethernet 1/1-1/8"}, "on the cabled ports only, 1/1-1/8 (8 cabled to hosts)"},
		{whole, []string{"ethernet 1/1-1/32"}, "on all 32 ports (ports: all), as the guide does (8 cabled to hosts)"},
	} {
		sw := tc.inv.Switches[0]
		if got := Ranges(Ports(tc.inv, sw)); !cmp.Equal(got, tc.ranges) {
			t.Errorf("ports %q, want %q", got, tc.ranges)
		}
		if cfg := string(Config(tc.inv, sw)); !strings.Contains(cfg, tc.header) || !strings.Contains(cfg, "interface ethernet "+strings.TrimPrefix(tc.ranges[0], "ethernet ")+" qos trust L3") {
			t.Errorf("config lacks %q or its trust line:\n%s", tc.header, cfg)
		}
	}
}

func commands(stmts []Statement) []string {
	var out []string
	for _, l := range Lines(stmts) {
		out = append(out, l.Command)
	}
	return out
}

func TestArtifactsReference(t *testing.T) {
	inv := inventory.Reference()
	files := Artifacts(inv)
	if len(files) != 1 || files[0].Path != "switch/swx-mld-1-2.cfg" || files[0].Mode != 0o644 {
		t.Fatalf("files = %+v", files)
	}
	text := string(files[0].Data)
	// The commands, in running-config order, with the 3-space indent.
	want := []string{
		"   interface ethernet 1/1 description clx-mld-41@esx-41.example/vmnic4",
		"   interface ethernet 1/2 description clx-mld-42@esx-42.example/vmnic4",
		"   interface ethernet 1/3 description clx-mld-43@esx-43.example/vmnic4",
		"   interface ethernet 1/4 description clx-mld-44@esx-44.example/vmnic4",
		"   interface ethernet 1/5 description clx-mld-45@esx-45.example/vmnic4",
		"   interface ethernet 1/6 description clx-mld-46@esx-46.example/vmnic4",
		"   interface ethernet 1/7 description clx-mld-47@esx-47.example/vmnic4",
		"   interface ethernet 1/8 description clx-mld-48@esx-48.example/vmnic4",
		"   traffic pool roce type lossless",
		"   traffic pool roce memory percent 50.00",
		"   traffic pool roce map switch-priority 3",
		"   interface ethernet 1/1-1/8 qos trust L3",
		"   interface ethernet 1/1-1/8 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"   interface ethernet 1/1-1/8 traffic-class 6 dcb ets strict",
		"   dcb priority-flow-control enable force",
		"   dcb priority-flow-control priority 3 enable",
		"   interface ethernet 1/1-1/8 dcb priority-flow-control mode on force",
		"   lldp",
		"   hostname swx-mld-1-2",
	}
	var got []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "   ") {
			got = append(got, l)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("commands (-want +got):\n%s\n%s", d, text)
	}
	if !strings.Contains(text, "\n##\n## Running-config temporary prefix mode setting\n##\nno cli default prefix-modes enable\n") ||
		!strings.HasSuffix(text, "##\n## Persistent prefix mode setting\n##\ncli default prefix-modes enable\n") {
		t.Errorf("prefix-mode wrapper missing:\n%s", text)
	}
	for _, banned := range []string{"roce lossless", "password", "license", "\t", "\r"} {
		if strings.Contains(text, banned) {
			t.Errorf("config contains %q", banned)
		}
	}
	for _, l := range strings.Split(text, "\n") {
		if l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "no ") && l != prefixModesOn {
			t.Errorf("line %q is neither a comment, an indented command nor a no-command", l)
		}
	}
}

func TestDesiredFollowsInventory(t *testing.T) {
	inv := loadInv(t, "roce: {dscp: 34, priority: 4, cnp_dscp: 48, cnp_priority: 6, ecn_min_kb: 200, ecn_max_kb: 2000, buffer_percent: 37.5}\n",
		"  - {name: s1, model: SN2100, onyx: 3.7.1000}\n")
	got := commands(Desired(inv, inv.Switches[0]))
	want := []string{
		"interface ethernet 1/1 description h1@e1/vmnic4",
		"interface ethernet 1/2 description h2@e2/vmnic4",
		"traffic pool roce type lossless",
		"traffic pool roce memory percent 37.50",
		"traffic pool roce map switch-priority 4",
		"interface ethernet 1/1-1/2 qos trust L3",
		"interface ethernet 1/1-1/2 traffic-class 4 congestion-control ecn minimum-absolute 200 maximum-absolute 2000",
		"interface ethernet 1/1-1/2 traffic-class 6 dcb ets strict",
		"dcb priority-flow-control enable force",
		"dcb priority-flow-control priority 4 enable",
		"interface ethernet 1/1-1/2 dcb priority-flow-control mode on force",
		"lldp",
		"hostname s1",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestDesiredRoCETemplate(t *testing.T) {
	inv := loadInv(t, "", "  - {name: s1, model: SN3700, onyx: 3.8.2008}\n")
	got := commands(Desired(inv, inv.Switches[0]))
	want := []string{"interface ethernet 1/1 description h1@e1/vmnic4", "interface ethernet 1/2 description h2@e2/vmnic4", "roce lossless", "lldp", "hostname s1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	text := string(Config(inv, inv.Switches[0]))
	for _, explicit := range []string{"traffic pool", "qos trust", "priority-flow-control"} {
		if strings.Contains(text, explicit) {
			t.Errorf("roce config mixes in %q:\n%s", explicit, text)
		}
	}
}

// TestRoundTrip: generator output parsed back gives the same statements.
func TestNonTemplateValuesUseExplicitCommands(t *testing.T) {
	inv := loadInv(t, "roce: {ecn_min_kb: 200}\n", "  - {name: s1, model: SN2100, onyx: 3.10.4006}\n")
	got := commands(Desired(inv, inv.Switches[0]))
	if len(got) != 13 || got[6] != "interface ethernet 1/1-1/2 traffic-class 3 congestion-control ecn minimum-absolute 200 maximum-absolute 1500" {
		t.Errorf("got %q", got)
	}
	if !strings.Contains(string(Config(inv, inv.Switches[0])), "explicit QoS commands, since the priorities, ECN thresholds or buffer share differ") {
		t.Error("header does not say why")
	}
	// A buffer share other than the default is not dropped: the template
	// sizes its pool itself, so the explicit commands carry it.
	inv = loadInv(t, "roce: {buffer_percent: 30}\n", "  - {name: s1, model: SN2100, onyx: 3.10.4006}\n")
	if UsesRoCETemplate(inv, inv.Switches[0]) || !strings.Contains(strings.Join(commands(Desired(inv, inv.Switches[0])), "\n"), "traffic pool roce memory percent 30.00") {
		t.Errorf("buffer_percent 30 on ONYX 3.10: %q", commands(Desired(inv, inv.Switches[0])))
	}
}

func TestRoundTrip(t *testing.T) {
	cases := map[string]*inventory.Inventory{
		"reference": inventory.Reference(),
		"SN4600C":   loadInv(t, "", "  - {name: s1, model: SN4600C, onyx: 3.6.8190}\n"),
		"roce":      loadInv(t, "", "  - {name: s1, model: SN2700, onyx: 3.10.4006}\n"),
		"odd":       loadInv(t, "roce: {buffer_percent: 33.333}\n", "  - {name: s1, model: SN2010, onyx: 3.6.8190}\n"),
	}
	for name, inv := range cases {
		t.Run(name, func(t *testing.T) {
			sw := inv.Switches[0]
			want := Desired(inv, sw)
			text := Config(inv, sw)
			got := Parse(string(text))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Parse(Config) differs (-desired +parsed):\n%s", d)
			}
			// render → parse → render is stable.
			if again := Render(nil, got); string(again) != string(Render(nil, want)) {
				t.Errorf("render not stable")
			}
			if p := Diff(want, got); !p.Empty() {
				t.Errorf("Diff(desired, parse(config)) = %v", p.Commands())
			}
		})
	}
}

func TestParseGuideSample(t *testing.T) {
	src, err := os.ReadFile("testdata/guide-running-config.txt")
	if err != nil {
		t.Fatal(err)
	}
	stmts := Parse(string(src))
	count := map[Kind]int{}
	for _, s := range stmts {
		count[s.Kind]++
	}
	want := map[Kind]int{
		KindOther:      1, // the license line
		KindPoolType:   1,
		KindPoolMemory: 1,
		KindPoolMap:    1,
		KindLLDP:       1,
		KindTrust:      32,
		KindCongestion: 32,
		KindETS:        32,
		KindHostname:   1,
	}
	if d := cmp.Diff(want, count); d != "" {
		t.Errorf("statement kinds (-want +got):\n%s", d)
	}
	find := func(id ID) Statement {
		for _, s := range stmts {
			if s.ID() == id {
				return s
			}
		}
		t.Fatalf("no statement %v", id)
		return Statement{}
	}
	if s := find(ID{Ethernet(1, 32), "traffic-class 3 congestion-control"}); s.Body != "traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500" {
		t.Errorf("1/32 ECN = %q", s.Body)
	}
	if s := find(ID{Key: "traffic pool roce memory"}); s.Body != "traffic pool roce memory percent 50.00" {
		t.Errorf("memory = %q", s.Body)
	}

	// The guide's config lacks PFC, which lossless needs (docs/rules.md#switch-onyx): the
	// diff against the reference inventory in the guide's whole-switch form
	// (ports: all) is exactly the PFC commands.
	inv, err := inventory.Load("whole.yaml", wholeSwitchYAML())
	if err != nil {
		t.Fatal(err)
	}
	plan := Diff(Desired(inv, inv.Switches[0]), stmts)
	want2 := []string{
		"interface ethernet 1/1 description clx-mld-41@esx-41.example/vmnic4",
		"interface ethernet 1/2 description clx-mld-42@esx-42.example/vmnic4",
		"interface ethernet 1/3 description clx-mld-43@esx-43.example/vmnic4",
		"interface ethernet 1/4 description clx-mld-44@esx-44.example/vmnic4",
		"interface ethernet 1/5 description clx-mld-45@esx-45.example/vmnic4",
		"interface ethernet 1/6 description clx-mld-46@esx-46.example/vmnic4",
		"interface ethernet 1/7 description clx-mld-47@esx-47.example/vmnic4",
		"interface ethernet 1/8 description clx-mld-48@esx-48.example/vmnic4",
		"dcb priority-flow-control enable force",
		"dcb priority-flow-control priority 3 enable",
		"interface ethernet 1/1-1/32 dcb priority-flow-control mode on force",
	}
	if d := cmp.Diff(want2, plan.Commands()); d != "" {
		t.Errorf("plan against the guide (-want +got):\n%s", d)
	}
}

func TestParseNormalises(t *testing.T) {
	text := strings.Join([]string{
		"## banner",
		"# ldap bind-password ********",
		"no cli default prefix-modes enable",
		"traffic pool roce memory percent 50",
		"      traffic   pool roce  type lossless  ",
		"dcb priority-flow-control enable",
		"interface ethernet 1/1-1/2,1/4 qos trust l3",
		"interface ethernet 1/3 dcb priority-flow-control mode on",
		"interface ethernet 1/3/2 traffic-class 3 congestion-control ecn minimum-absolute 0150 maximum-absolute 1500",
		"interface mlag-port-channel 1-2 no shutdown",
		"vlan 101-103",
		"roce",
		"\r",
		"cli default prefix-modes enable",
	}, "\r\n")
	got := commands(Parse(text))
	want := []string{
		"traffic pool roce memory percent 50.00",
		"traffic pool roce type lossless",
		"dcb priority-flow-control enable force",
		"interface ethernet 1/1-1/2 qos trust L3",
		"interface ethernet 1/4 qos trust L3",
		"interface ethernet 1/3 dcb priority-flow-control mode on force",
		"interface ethernet 1/3/2 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface mlag-port-channel 1-2 no shutdown",
		"vlan 101", "vlan 102", "vlan 103",
		"roce lossless",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestDiffCorrectsOwnedConflicts(t *testing.T) {
	inv := loadInv(t, "", "  - {name: s1, model: SN2100, onyx: 3.6.8190, ports: all}\n")
	desired := Desired(inv, inv.Switches[0])
	// A switch configured once for RoCE, then changed by hand.
	current := Parse(string(Config(inv, inv.Switches[0])) + `
   traffic pool roce memory percent 30
   traffic pool other map switch-priority 3
   interface ethernet 1/5 qos trust L2
   interface ethernet 1/6-1/7 qos trust both
   interface ethernet 1/7 qos rewrite dscp
   interface ethernet 1/1-1/4 traffic-class 3 congestion-control ecn minimum-absolute 100 maximum-absolute 1000
   interface ethernet 1/16 traffic-class 6 dcb ets wrr 20
   interface ethernet 1/9 dcb priority-flow-control mode auto force
no lldp
   hostname old-name
`)
	plan := Diff(desired, current)
	want := []string{
		"traffic pool roce memory percent 50.00",
		"traffic pool roce map switch-priority 3",
		"interface ethernet 1/7 no qos rewrite dscp",
		"interface ethernet 1/5-1/7 qos trust L3",
		"interface ethernet 1/1-1/4 traffic-class 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500",
		"interface ethernet 1/16 traffic-class 6 dcb ets strict",
		"interface ethernet 1/9 dcb priority-flow-control mode on force",
		"lldp",
		"hostname s1",
	}
	if d := cmp.Diff(want, plan.Commands()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// What each command replaces, for the review.
	if got := plan.Changes[3].Replaces; !cmp.Equal(got, []string{"interface ethernet 1/5 qos trust L2", "interface ethernet 1/6-1/7 qos trust both"}) {
		t.Errorf("trust replaces %q", got)
	}
	if got := plan.Changes[1].Replaces; !cmp.Equal(got, []string{"traffic pool other map switch-priority 3"}) {
		t.Errorf("map replaces %q", got)
	}
}

func TestDiffLeavesUnownedAlone(t *testing.T) {
	inv := loadInv(t, "", "  - {name: s1, model: SN2100, onyx: 3.6.8190}\n")
	unrelated := `
   interface ethernet 1/1-1/16 mtu 9216 force
   interface ethernet 1/3 description "uplink to spine"
   interface ethernet 1/1-1/16 traffic-class 0 congestion-control ecn minimum-absolute 10 maximum-absolute 20
   interface ethernet 1/2 traffic-class 1 dcb ets wrr 30
   interface port-channel 1 qos trust L2
   dcb priority-flow-control priority 4 enable
   traffic pool bulk type lossy
   traffic pool bulk memory percent 10.00
   vlan 10-20
   username admin password 7 $6$abc
   snmp-server community public ro
no ntp server 1.2.3.4 disable
`
	current := Parse(string(Config(inv, inv.Switches[0])) + unrelated)
	if plan := Diff(Desired(inv, inv.Switches[0]), current); !plan.Empty() {
		t.Errorf("a configured switch with unrelated settings gets %q", plan.Commands())
	}
	// Without our config, only our commands are planned, none of theirs
	// (the description of 1/3, which no host is cabled to, stays).
	plan := Diff(Desired(inv, inv.Switches[0]), Parse(unrelated))
	if got := len(plan.Commands()); got != 13 {
		t.Errorf("plan has %d commands, want 13: %q", got, plan.Commands())
	}
	for _, c := range plan.Commands() {
		for _, other := range []string{"mtu", "1/3 description", "uplink to spine", "traffic-class 0", "traffic-class 1 ", "port-channel", "priority 4", "bulk", "vlan", "username", "snmp", "ntp"} {
			if strings.Contains(c, other) {
				t.Errorf("plan touches unowned config: %q", c)
			}
		}
	}
}

func TestDiffWarnsAboutMixedForms(t *testing.T) {
	inv := loadInv(t, "", "  - {name: s1, model: SN2700, onyx: 3.9.2400}\n")
	plan := Diff(Desired(inv, inv.Switches[0]), Parse("interface ethernet 1/1 qos trust L3\nlldp\nhostname s1\n"+
		"interface ethernet 1/1 description h1@e1/vmnic4\ninterface ethernet 1/2 description h2@e2/vmnic4\n"))
	if !cmp.Equal(plan.Commands(), []string{"roce lossless"}) || len(plan.Warnings) != 1 {
		t.Errorf("plan = %q, warnings %q", plan.Commands(), plan.Warnings)
	}
}

func TestRanges(t *testing.T) {
	ifs := []Iface{Ethernet(1, 3), Ethernet(1, 1), Ethernet(1, 2), Ethernet(1, 10), {Type: "ethernet", ID: "1/5/1"}, {Type: "ethernet", ID: "1/5/2"}, {Type: "port-channel", ID: "1"}}
	got := Ranges(ifs)
	want := []string{"ethernet 1/1-1/3", "ethernet 1/5/1", "ethernet 1/5/2", "ethernet 1/10", "port-channel 1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"1/4-1/2", "1/1-2/3", "a-b", "1/1-"} {
		if ids, ok := expandIDs(bad); ok {
			t.Errorf("expandIDs(%q) = %q, want failure", bad, ids)
		}
	}
}

// A jumbo-frame data network sets every front-panel port's MTU to 9216; a
// port already larger keeps its MTU; a 1500 network leaves ONYX's default.
func TestPortMTU(t *testing.T) {
	inv := loadInv(t, "", "  - {name: s1, model: SN2100, onyx: 3.6.8190}\n")
	for _, s := range Desired(inv, inv.Switches[0]) {
		if s.Kind == KindMTU {
			t.Fatalf("a 1500-byte data network sets %s", s)
		}
	}
	jumbo, err := inventory.Load("j.yaml", []byte(strings.Replace(string(wholeSwitchYAML()), "  # data_mtu: 9000", "  data_mtu: 9000", 1)))
	if err != nil {
		t.Fatal(err)
	}
	want := Desired(jumbo, jumbo.Switches[0])
	if got := commands(want); got[0] != "interface ethernet 1/1-1/32 mtu 9216 force" {
		t.Fatalf("jumbo: %q", got)
	}
	if jumbo.Docker.MTU != 1500 { // the reference writes docker.mtu: 1500
		t.Errorf("docker.mtu %d", jumbo.Docker.MTU)
	}
	current := Parse("interface ethernet 1/1 mtu 9216 force\ninterface ethernet 1/2 mtu 9600\ninterface ethernet 1/3 mtu 4200 force\n" +
		strings.Join(commands(want)[1:], "\n"))
	plan := Diff(want, current)
	if got := plan.Commands(); len(got) != 1 || got[0] != "interface ethernet 1/3-1/32 mtu 9216 force" {
		t.Errorf("plan %q", got)
	}
	if r := plan.Changes[0].Replaces; len(r) != 1 || r[0] != "interface ethernet 1/3 mtu 4200 force" {
		t.Errorf("replaces %q", r)
	}
}

// A config pasted by hand lives in the running-config only: the header of
// every switch file says to save it with `configuration write`, or the
// next reboot loses it (apply saves by itself).
func TestConfigHeaderSaysSave(t *testing.T) {
	for _, sw := range []string{"  - {name: s1, model: SN2700, onyx: 3.6.8190}\n", "  - {name: s1, model: SN3700, onyx: 3.8.2008}\n"} {
		inv := loadInv(t, "", sw)
		text := string(Config(inv, inv.Switches[0]))
		head, _, _ := strings.Cut(text, "no cli default prefix-modes enable")
		if !strings.Contains(head, "then save it: configuration write") || !strings.Contains(head, "reboot") {
			t.Errorf("the header does not say to save with configuration write:\n%s", head)
		}
	}
}
