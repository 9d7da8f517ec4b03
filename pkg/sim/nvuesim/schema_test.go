package nvuesim

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Every path and value rdggen writes is one the simulator knows: the
// intent of every Cumulus switch of every golden inventory, patched whole
// into a revision and applied, on the switch's release and model.
func TestSchemaTakesEveryIntent(t *testing.T) {
	cases, _ := filepath.Glob("../../../testdata/golden/*/inventory.yaml")
	n := 0
	for _, path := range cases {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := inventory.Load("inventory.yaml", src)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, sw := range inv.SwitchesOf(inventory.OSCumulus) {
			n++
			a := newAPI(t, Options{Version: sw.Cumulus.String(), Ports: sw.Ports, Model: sw.Model})
			id, esc := a.revision()
			body, _ := json.Marshal(cumulus.Intent(inv, sw))
			if code, v := a.do("PATCH", "/nvue_v1/?rev="+url.QueryEscape(id), string(body)); code != 200 {
				t.Errorf("%s %s: the intent is refused: %d %v", path, sw.Name, code, v["detail"])
				continue
			}
			a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
			if st := a.state(esc); st != stateAppliedSaved && st != stateApplied {
				_, v := a.do("GET", "/nvue_v1/revision/"+esc, "")
				t.Errorf("%s %s: apply ends %s: %v", path, sw.Name, st, v)
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d Cumulus switches in the golden inventories", n)
	}
}

// A wrong or renamed NVUE key, or a value NVUE does not take, is refused
// where rdggen writes: a test that sends it fails.
func TestSchemaRefusesUnknownPaths(t *testing.T) {
	for _, c := range []struct{ version, path, body, detail string }{
		{"5.9.1", "interface/swp1/link", `{"description": "h1"}`, "interface.swp1.link: Additional properties are not allowed ('description' was unexpected)"},
		{"5.9.1", "interface/swp1/link", `{"breakout": {"4x": {"lanes_per_port": 2}}}`, "interface.swp1.link.breakout.4x: Additional properties are not allowed ('lanes_per_port' was unexpected)"},
		{"5.9.1", "interface/swp1/link", `{"breakout": {"3x": {}}}`, `"3x" is not a breakout mode`},
		{"5.9.1", "interface/swp1/link", `{"breakout": "4x"}`, "interface.swp1.link.breakout: \"4x\" is not of type 'object'"},
		{"5.9.1", "interface/swp1", `{"descripton": "x"}`, "('descripton' was unexpected)"},
		{"5.9.1", "interface/swp1", `{"description": "a\nb"}`, "is not a string of at most 255 printable characters"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"bfd": {"enabled": "on"}}`, "('enabled' was unexpected)"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"bfd": {"enable": "yes"}}`, `"yes" is not one of on, off`},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"bfd": {"detect-multiplier": 1}}`, "is not an integer in 2-255"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"remote_as": "external"}`, "('remote_as' was unexpected)"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"remote-as": "externl"}`, "is not an AS number"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"type": "ipv6-link-local"}`, "is not one of unnumbered, numbered"},
		{"5.9.1", "vrf/default/router/bgp/neighbor/swp63", `{"remote-as": 65535, "state": "enabled"}`, "('state' was unexpected)"},
		{"5.9.1", "router/bgp", `{"asn": 65101}`, "('asn' was unexpected)"},
		{"5.9.1", "router/bgp", `{"router-id": "lo"}`, "is not an IPv4 address"},
		{"5.9.1", "vrf/default/router/bgp/address-family/ipv4-unicast", `{"networks": {"10.1.1.0/24": {}}}`, "('networks' was unexpected)"},
		{"5.9.1", "vrf/default/router/bgp/address-family/ipv4-unicast/network", `{"10.1.1.0": {}}`, "is not a prefix"},
		{"5.9.1", "interface/lo", `{"ip": {"addres": {"10.10.10.1/32": {}}}}`, "('addres' was unexpected)"},
		{"5.9.1", "interface/lo", `{"ipv4": {"address": {"10.10.10.1/32": {}}}}`, "('ipv4' was unexpected): Cumulus Linux 5.9.1 names it ip address"},
		{"5.15.0", "interface/lo", `{"ip": {"address": {"10.10.10.1/32": {}}}}`, "('ip' was unexpected): Cumulus Linux 5.15.0 names it ipv4 address"},
		{"5.15.0", "vrf/default/router/bgp/neighbor/swp63", `{"bfd": {"enable": "on"}}`, "('enable' was unexpected): Cumulus Linux 5.15.0 names it BFD profiles"},
		{"5.15.0", "service", `{"lldp": {}}`, "Cumulus Linux 5.15.0 names it system lldp"},
		{"5.9.1", "system", `{"lldp": {}}`, "Cumulus Linux 5.9.1 names it service lldp"},
		{"5.9.1", "qos/roce", `{"mode": "lossless", "pfc": {}}`, "('pfc' was unexpected)"},
	} {
		a := newAPI(t, Options{Version: c.version})
		id, esc := a.revision()
		code, v := a.do("PATCH", "/nvue_v1/"+c.path+"?rev="+url.QueryEscape(id), c.body)
		detail, _ := v["detail"].(string)
		if code != 400 || !strings.Contains(detail, c.detail) {
			t.Errorf("%s PATCH %s %s: %d %q, want 400 with %q", c.version, c.path, c.body, code, detail, c.detail)
		}
		if st := a.state(esc); st != "pending" {
			t.Errorf("a refused body changed the revision: %s", st)
		}
	}
}

// A split port's lanes exist only while the port is broken out in a mode
// the model has, with one mode a port: the apply of a configuration with a
// lane but no breakout (rdggen's files before breakouts were generated)
// fails as NVUE's does.
func TestBreakoutValidation(t *testing.T) {
	apply := func(o Options, body string) (string, map[string]any) {
		a := newAPI(t, o)
		id, esc := a.revision()
		if code, v := a.do("PATCH", "/nvue_v1/?rev="+url.QueryEscape(id), body); code != 200 {
			t.Fatalf("PATCH %s: %d %v", body, code, v)
		}
		a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
		_, v := a.do("GET", "/nvue_v1/revision/"+esc, "")
		st, _ := v["state"].(string)
		return st, v
	}
	sn5600 := Options{Ports: 64, Model: "SN5600"}
	for _, c := range []struct {
		o         Options
		body, msg string
	}{
		{sn5600, `{"interface": {"swp1s0": {"type": "swp"}}}`, "Invalid config [interface swp1s0]: no such interface: swp1 is not broken out (nv set interface swp1 link breakout …)"},
		{sn5600, `{"interface": {"swp1": {"link": {"breakout": {"2x": {"lanes-per-port": 4}}}}, "swp1s2": {"type": "swp"}}}`, "Invalid config [interface swp1s2]: no such interface: swp1 is broken out into 2 ports (swp1s0-swp1s1)"},
		{Options{Ports: 32, Model: "SN3700"}, `{"interface": {"swp1": {"link": {"breakout": {"8x": {}}}}}}`, "Invalid config [interface swp1]: breakout 8x is not supported on this platform (SN3700)"},
		{sn5600, `{"interface": {"swp1": {"link": {"breakout": {"2x": {}, "4x": {}}}}}}`, "more than one breakout mode (2x, 4x)"},
		// An SN5600's 8x (an SN2700's 4x) takes the next port.
		{sn5600, `{"interface": {"swp58": {"link": {"breakout": {"8x": {"lanes-per-port": 1}}}}}}`, "Invalid config [interface swp58]: breakout 8x is supported on odd-numbered ports only on this platform (SN5600)"},
		{sn5600, `{"interface": {"swp57": {"link": {"breakout": {"8x": {"lanes-per-port": 1}}}}, "swp58": {"type": "swp"}}}`, "Invalid config [interface swp58]: swp58 is disabled by the 8x breakout of swp57"},
		{sn5600, `{"interface": {"swp57": {"link": {"breakout": {"8x": {}}}}, "swp58": {"link": {"breakout": {"2x": {}}}}, "swp58s0": {"type": "swp"}}}`, "swp58 is disabled by the 8x breakout of swp57"},
		{Options{Ports: 32, Model: "SN2700"}, `{"interface": {"swp1": {"link": {"breakout": {"4x": {}}}}, "swp2": {"link": {"mtu": 9216}}}}`, "Invalid config [interface swp2]: swp2 is disabled by the 4x breakout of swp1"},
		// The SN4700 splits 8x under Cumulus Linux (not under ONYX).
		{Options{Ports: 32, Model: "SN4700"}, `{"interface": {"swp2": {"link": {"breakout": {"8x": {}}}}}}`, "breakout 8x is supported on odd-numbered ports only on this platform (SN4700)"},
	} {
		st, v := apply(c.o, c.body)
		issue, _ := json.Marshal(v["transition"])
		if st != stateInvalid || !strings.Contains(string(issue), c.msg) {
			t.Errorf("%s: %s %s, want invalid with %q", c.body, st, issue, c.msg)
		}
	}
	for _, body := range []string{
		`{"interface": {"swp57": {"link": {"breakout": {"8x": {"lanes-per-port": 1}}}}, "swp57s7": {"type": "swp"}}}`,
		`{"interface": {"swp1": {"link": {"breakout": {"4x": {"lanes-per-port": 2}}}}, "swp1s3": {"type": "swp", "description": "h14@esx-14.example/vmnic4"}}}`,
		`{"interface": {"swp57": {"link": {"breakout": {"8x": {"lanes-per-port": 1}}}}, "swp58": {"link": {"breakout": {"disabled": {}}}}}}`,
		`{"interface": {"swp1": {"link": {"breakout": {"4x": {"lanes-per-port": 2}}}}, "swp2": {"link": {"breakout": {"4x": {"lanes-per-port": 2}}}}, "swp2s3": {"type": "swp"}}}`,
	} {
		if st, v := apply(sn5600, body); st != stateAppliedSaved {
			t.Errorf("%s: %s %v", body, st, v)
		}
	}
}
