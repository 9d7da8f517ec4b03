package onyx

import (
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// craySummary is `show ip bgp summary` on a Mellanox ONYX spine as HPE's
// Cray System Management documentation prints it (github.com/Cray-HPE/
// docs-csm, operations/network/metallb_bgp/
// Check_BGP_Status_and_Reset_Sessions.md; two of its rows), with the
// prompt's echo before it.
const craySummary = `sw-spine-001 [standalone: master] # show ip bgp summary
 
VRF name                  : default
BGP router identifier     : 10.252.0.2
local AS number           : 65533
BGP table version         : 50
Main routing table version: 50
IPV4 Prefixes             : 68
IPV6 Prefixes             : 0
L2VPN EVPN Prefixes       : 0
 
------------------------------------------------------------------------------------------------------------------
Neighbor          V    AS           MsgRcvd   MsgSent   TblVer    InQ    OutQ   Up/Down       State/PfxRcd
------------------------------------------------------------------------------------------------------------------
10.252.1.10       4    65533        3144      3564      50        0      0      1:01:50:41    ESTABLISHED/13
10.252.1.11       4    65533        3144      3569      50        0      0      1:01:50:40    ESTABLISHED/14
`

func TestParseBGPSummary(t *testing.T) {
	// A second VRF (as `show ip bgp vrf all summary` prints one block per
	// VRF) with a session that is not established: its row is the
	// assumed form, the state word alone.
	vrfAll := craySummary + `
VRF name                  : red
BGP router identifier     : 10.252.0.2
local AS number           : 65534

------------------------------------------------------------------------------------------------------------------
Neighbor          V    AS           MsgRcvd   MsgSent   TblVer    InQ    OutQ   Up/Down       State/PfxRcd
------------------------------------------------------------------------------------------------------------------
10.0.0.1          4    65100        0         0         0         0      0      never         IDLE
`
	got, err := ParseBGPSummary(vrfAll)
	if err != nil {
		t.Fatal(err)
	}
	want := []BGPVRF{
		{VRF: "default", RouterID: "10.252.0.2", LocalAS: 65533, Neighbors: []BGPNeighbor{
			{Address: netip.MustParseAddr("10.252.1.10"), AS: 65533, UpDown: "1:01:50:41", State: "ESTABLISHED", PfxRcd: 13},
			{Address: netip.MustParseAddr("10.252.1.11"), AS: 65533, UpDown: "1:01:50:40", State: "ESTABLISHED", PfxRcd: 14},
		}},
		{VRF: "red", RouterID: "10.252.0.2", LocalAS: 65534, Neighbors: []BGPNeighbor{
			{Address: netip.MustParseAddr("10.0.0.1"), AS: 65100, UpDown: "never", State: "IDLE", PfxRcd: -1},
		}},
	}
	if d := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !got[0].Neighbors[0].Established() || got[1].Neighbors[0].Established() {
		t.Errorf("Established: %v %v", got[0].Neighbors[0], got[1].Neighbors[0])
	}
	if n, ok := got[0].Neighbor(netip.MustParseAddr("10.252.1.11")); !ok || n.PfxRcd != 14 {
		t.Errorf("Neighbor: %v %v", n, ok)
	}
	if _, ok := got[0].Neighbor(netip.MustParseAddr("10.0.0.1")); ok {
		t.Error("Neighbor found a row of another VRF")
	}

	// The JSON API's answer (CANU's test fixture bgp_status_mellanox).
	canu := `{"status": "OK", "executed_command": "show ip bgp summary", "status_message": "",
  "data": [{"VRF name": "default"}, {"192.168.1.9": [{"State/PfxRcd": "ESTABLISHED/13"}]}]}`
	got, err = ParseBGPSummary(canu)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].VRF != "default" || len(got[0].Neighbors) != 1 || got[0].Neighbors[0].Address != netip.MustParseAddr("192.168.1.9") ||
		!got[0].Neighbors[0].Established() || got[0].Neighbors[0].PfxRcd != 13 {
		t.Errorf("JSON: %+v", got)
	}

	// Not a summary: an error, so that a check cannot pass or fail on it.
	for _, bad := range []string{"", "% Unrecognized command \"bgp\".\n", `{"data": []}`} {
		if v, err := ParseBGPSummary(bad); err == nil {
			t.Errorf("%q: no error (%+v)", bad, v)
		}
	}
}

// canuLLDP is CANU's test fixture lldp_json_mellanox (github.com/Cray-HPE/
// canu, tests/test_report_switch_cabling.py): the JSON API's answer to
// `show lldp interfaces ethernet remote`, the "data" of which `|
// json-print` prints.
const canuLLDP = `{
    "status": "OK",
    "executed_command": "show lldp interfaces ethernet remote",
    "status_message": "",
    "data": [
        {"Eth1/1 (Po100)": [{"port id subtype": "Interface Name (5)", "Remote chassis id": "aa:bb:cc:dd:ee:ff",
            "Remote system description": "Test Switch 3", "Remote port-id": "Eth1/11",
            "Remote port description": "sw-test03", "Remote system name": "sw-test03"}]},
        {"Eth1/2 (Po100)": [{"port id subtype": "Interface Name (5)", "Remote chassis id": "11:22:33:44:55:66",
            "Remote system description": "Test Switch 4", "Remote port-id": "ethernet1/1/12",
            "Remote port description": "sw-test04", "Remote system name": "sw-test04"}]},
        {"Eth1/3 (Po100)": [{"port id subtype": "Interface Name (5)", "Remote chassis id": "Not Advertised",
            "Remote system description": "Not Advertised", "Remote port-id": "Not Advertised",
            "Remote port description": "Not Advertised", "Remote system name": "Not Advertised"}]},
        {"Eth1/4 (Po100)": [{"port id subtype": "Interface Name (5)", "Remote port-id": "Not Advertised"}]}
    ]
}`

func TestParseLLDPRemote(t *testing.T) {
	want := map[string][]LLDPRemote{
		"Eth1/1": {{Port: "Eth1/1", SystemName: "sw-test03", PortID: "Eth1/11", PortIDSubtype: "Interface Name (5)", ChassisID: "aa:bb:cc:dd:ee:ff", PortDescription: "sw-test03"}},
		"Eth1/2": {{Port: "Eth1/2", SystemName: "sw-test04", PortID: "ethernet1/1/12", PortIDSubtype: "Interface Name (5)", ChassisID: "11:22:33:44:55:66", PortDescription: "sw-test04"}},
		"Eth1/3": {{Port: "Eth1/3", PortIDSubtype: "Interface Name (5)"}},
		"Eth1/4": {{Port: "Eth1/4", PortIDSubtype: "Interface Name (5)"}},
	}
	got, err := ParseLLDPRemote(canuLLDP)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("JSON API (-want +got):\n%s", d)
	}
	// `| json-print` after the echo: the list alone.
	got, err = ParseLLDPRemote("show lldp interfaces ethernet remote | json-print\n" +
		`[{"Eth1/31": [{"port id subtype": "Interface Name (5)", "Remote port-id": "Eth1/1", "Remote system name": "spine1"}]}]`)
	if err != nil || len(got) != 1 || got["Eth1/31"][0].SystemName != "spine1" || got["Eth1/31"][0].PortID != "Eth1/1" {
		t.Errorf("json-print: %+v %v", got, err)
	}
	// No neighbors at all (what CANU's cabling.py tests for).
	for _, none := range []string{`[{"Lines": ["", "No lldp remote information.", ""]}]`, "\nNo lldp remote information.\n"} {
		got, err = ParseLLDPRemote(none)
		if err != nil || len(got) != 0 {
			t.Errorf("%q: %+v %v", none, got, err)
		}
	}
	// The text layout the ska-sa switch_exporter reads.
	text := `
Eth1/31
Remote Index             : 1
Remote chassis id        : 7c:fe:90:f0:54:01 ; chassis id subtype: Mac Address (4)
Remote port-id           : Eth1/1 ; port id subtype: Interface Name (5)
Remote port description  : N\A
Remote system name       : spine1

Eth1/32 (Po1):
Remote port-id           : swp1 ; port id subtype: Interface Name (5)
Remote system name       : spine2
`
	got, err = ParseLLDPRemote(text)
	if err != nil {
		t.Fatal(err)
	}
	if r := got["Eth1/31"]; len(r) != 1 || r[0].SystemName != "spine1" || r[0].PortID != "Eth1/1" || r[0].PortIDSubtype != "Interface Name (5)" {
		t.Errorf("text Eth1/31: %+v", r)
	}
	if r := got["Eth1/32"]; len(r) != 1 || r[0].SystemName != "spine2" || r[0].PortID != "swp1" {
		t.Errorf("text Eth1/32: %+v", r)
	}
	// Two neighbors on one port (a miswire: something joins the link) stay
	// two, in JSON (one object each, as the simulator prints them) and in
	// the text layout (numbered by Remote Index under one heading, or a
	// heading each); an object that only adds attributes is more of the
	// same neighbor.
	for name, two := range map[string]string{
		"json": `[{"Eth1/31": [{"port id subtype": "Interface Name (5)", "Remote port-id": "Eth1/1", "Remote system name": "spine1", "Remote chassis id": "Not Advertised"},
			{"port id subtype": "Interface Name (5)", "Remote port-id": "Eth1/3", "Remote system name": "spine2", "Remote chassis id": "Not Advertised"}]}]`,
		"json, attributes split": `[{"Eth1/31": [{"Remote system name": "spine1"}, {"Remote port-id": "Eth1/1"},
			{"Remote system name": "spine2"}, {"Remote port-id": "Eth1/3"}]}]`,
		"text, by index": "\nEth1/31\nRemote Index             : 1\nRemote port-id           : Eth1/1 ; port id subtype: Interface Name (5)\nRemote system name       : spine1\n" +
			"Remote Index             : 2\nRemote port-id           : Eth1/3 ; port id subtype: Interface Name (5)\nRemote system name       : spine2\n",
		"text, a heading each": "\nEth1/31\nRemote port-id           : Eth1/1\nRemote system name       : spine1\n\nEth1/31\nRemote port-id           : Eth1/3\nRemote system name       : spine2\n",
	} {
		got, err := ParseLLDPRemote(two)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := got["Eth1/31"]
		if len(r) != 2 || r[0].SystemName != "spine1" || r[0].PortID != "Eth1/1" || r[1].SystemName != "spine2" || r[1].PortID != "Eth1/3" {
			t.Errorf("%s: two neighbors read as %+v", name, r)
		}
	}
	for _, bad := range []string{"", "% Unrecognized command \"lldp\".\n", `{"status": "OK"}`} {
		if v, err := ParseLLDPRemote(bad); err == nil {
			t.Errorf("%q: no error (%+v)", bad, v)
		}
	}
}
