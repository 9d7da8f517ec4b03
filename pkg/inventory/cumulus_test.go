package inventory

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// cumulusYAML is baseYAML with its switch on Cumulus Linux 5.9.1.
var cumulusYAML = strings.Replace(baseYAML, "onyx: 3.6.8190", "cumulus: 5.9.1", 1)

func TestCumulusSwitch(t *testing.T) {
	inv, err := Load("mini.yaml", []byte(strings.Replace(cumulusYAML, "port: 1/2", "port: swp2", 1)))
	if err != nil {
		t.Fatal(err)
	}
	sw := inv.Switches[0]
	if !(sw.OS() == OSCumulus) || sw.OS() != OSCumulus || sw.Cumulus.String() != "5.9.1" || !sw.ONYX.IsZero() || sw.HasRoCECommand() {
		t.Errorf("switch %+v", sw)
	}
	if sw.Release() != "Cumulus Linux 5.9.1" {
		t.Errorf("Release %q", sw.Release())
	}
	// 1/1 and swp2 are both front-panel ports of the Cumulus switch.
	if a, b := inv.Hosts[0].Data.Port, inv.Hosts[1].Data.Port; a != (Port{1, 1, 0}) || b != (Port{1, 2, 0}) {
		t.Errorf("ports %v %v", a, b)
	}
	if got := sw.PortName(inv.Hosts[1].Data.Port); got != "swp2" {
		t.Errorf("PortName %q", got)
	}
	if len(inv.Warnings) != 0 {
		t.Errorf("warnings: %v", inv.Warnings)
	}
	onyx, err := Load("mini.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	if o := onyx.Switches[0]; (o.OS() == OSCumulus) || o.OS() != OSONYX || o.PortName(Port{Module: 1, Number: 2}) != "1/2" || o.Release() != "ONYX 3.6.8190" {
		t.Errorf("ONYX switch %+v", o)
	}
}

// The roce values Cumulus's `qos roce` profile cannot take are errors on
// the key to change, naming the switch; the same values pass on ONYX.
func TestCumulusFindings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []string
		want  string // a finding's String()
	}{
		{"priority", []string{"name: mini\n", "name: mini\nroce: {priority: 4, dscp: 34}\n"},
			"mini.yaml:2:18: roce.priority: 4: sw1 (switches[0]) runs Cumulus Linux, whose `nv set qos roce` puts RoCE on switch priority 3 (PFC, traffic class 3); use 3, with DSCP 26"},
		{"ecn", []string{"name: mini\n", "name: mini\nroce: {ecn_min_kb: 200}\n"},
			"mini.yaml:2:20: roce.ecn_min_kb: ECN thresholds 200–1500 KB: sw1 (switches[0]) runs Cumulus Linux, whose `nv set qos roce` marks ECN between 150 and 1500 KB and has no threshold setting; use those"},
		{"ecn max", []string{"name: mini\n", "name: mini\nroce: {ecn_max_kb: 2000}\n"},
			"mini.yaml:2:20: roce.ecn_max_kb: ECN thresholds 150–2000 KB: sw1 (switches[0]) runs Cumulus Linux, whose `nv set qos roce` marks ECN between 150 and 1500 KB and has no threshold setting; use those"},
		{"buffer", []string{"name: mini\n", "name: mini\nroce: {buffer_percent: 30}\n"},
			"mini.yaml:2:24: roce.buffer_percent: 30: sw1 (switches[0]) runs Cumulus Linux, whose `nv set qos roce` sizes its lossless pool itself and has no buffer share setting; leave buffer_percent out (or 50)"},
		{"port range", []string{"port: 1/2", "port: swp17"}, "mini.yaml:18:40: hosts[1].data.port: swp17 is outside SN2100 ports swp1-swp16 (1/1-1/16)"},
		{"port syntax", []string{"port: 1/2", "port: eth2"}, `mini.yaml:18:40: hosts[1].data.port: "eth2" is not a switch port like swp1 (or 1/1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, onyxSrc := cumulusYAML, baseYAML
			for i := 0; i+1 < len(tc.edits); i += 2 {
				src = strings.Replace(src, tc.edits[i], tc.edits[i+1], 1)
				onyxSrc = strings.Replace(onyxSrc, tc.edits[i], tc.edits[i+1], 1)
			}
			_, err := Load("mini.yaml", []byte(src))
			got := findingStrings(err)
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), tc.want)
			}
			if strings.HasPrefix(tc.name, "port") {
				return
			}
			if _, err := Load("mini.yaml", []byte(onyxSrc)); err != nil {
				t.Errorf("on ONYX: %v", err)
			}
		})
	}
}

// A second Cumulus switch does not repeat the cluster-wide roce finding.
func TestCumulusFindingsOnce(t *testing.T) {
	src := strings.Replace(cumulusYAML, "switches:\n", "switches:\n  - {name: sw0, model: SN2700, cumulus: 5.6.0}\n", 1)
	src = strings.Replace(src, "name: mini\n", "name: mini\nroce: {buffer_percent: 30}\n", 1)
	src = strings.ReplaceAll(src, ", port: 1/", ", switch: sw1, port: 1/")
	_, err := Load("mini.yaml", []byte(src))
	got := findingTexts(err)
	if len(got) != 1 || !strings.Contains(got[0], "sw0 (switches[0]) runs Cumulus Linux") {
		t.Errorf("findings:\n%s", strings.Join(got, "\n"))
	}
}

func TestCumulusWarnings(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"cumulus: 5.9.1", "cumulus: 5.16.0", "mini.yaml:3:41: switches[0].cumulus: Cumulus Linux 5.16.0 is newer than the releases rdggen's NVUE paths follow (5.0.0–5.15)"},
		{"cumulus: 5.9.1}", "cumulus: 5.9.1, mgmt: sw1.example:22}", `mini.yaml:3:54: switches[0].mgmt: "sw1.example:22": port 22 is SSH, but apply reaches a Cumulus switch through the NVUE REST API (HTTPS, port 8765 by default)`},
		{"cumulus: 5.9.1", "cumulus: 5.15.2", ""},
	} {
		inv, err := Load("mini.yaml", []byte(strings.Replace(cumulusYAML, tc.from, tc.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range inv.Warnings {
			got = append(got, w.String())
		}
		if tc.want == "" {
			if len(got) > 0 {
				t.Errorf("%s: warnings %v", tc.to, got)
			}
			continue
		}
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%s: warnings:\n%s\nwant prefix:\n%s", tc.to, strings.Join(got, "\n"), tc.want)
		}
	}
}

// Build holds a Spec to the same rules: both keys, neither key.
func TestCumulusBuild(t *testing.T) {
	for _, tc := range []struct {
		set  func(*SwitchSpec)
		want string
	}{
		{func(s *SwitchSpec) { v := MustVersion("5.9.1"); s.Cumulus = &v }, "switches[0].cumulus: a switch runs one OS"},
		{func(s *SwitchSpec) { s.ONYX = nil }, "switches[0]: names no OS"},
		{func(s *SwitchSpec) { v := MustVersion("4.4.3"); s.ONYX, s.Cumulus = nil, &v }, "switches[0].cumulus: Cumulus Linux 4.4.3 has no NVUE `qos roce`"},
	} {
		spec := miniSpec(t)
		tc.set(&spec.Switches[0])
		_, err := Build("mini.yaml", spec)
		got := findingTexts(err)
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("findings %v, want %q", got, tc.want)
		}
	}
}

// miniSpec is baseYAML as a Spec, as a program would build it.
func miniSpec(t *testing.T) *Spec {
	t.Helper()
	var s Spec
	if err := yaml.Unmarshal([]byte(baseYAML), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// findingStrings is err's findings as Finding.String (file:line:col: path: rule).
func findingStrings(err error) []string {
	var out []string
	if rep, ok := err.(*Report); ok {
		for _, f := range rep.Findings {
			out = append(out, f.String())
		}
	} else if err != nil {
		out = append(out, "not a report: "+err.Error())
	}
	return out
}
