package nvuesim

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// railsLeaf is an inventory of one Cumulus leaf carrying all nine rails
// an inventory can have (inventory.MaxRails) of two hosts, under one spine:
// rail r of each host in VLAN r+1 (VLANs 1–9), each (leaf, rail) subnet
// 10.0.r.0/24 with its gateway 10.0.r.254 on interface vlan<r+1>.
func railsLeaf(t *testing.T, release string) (*inventory.Inventory, inventory.Switch) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `name: r9
switches:
  - {name: spine, model: SN5600, cumulus: %[1]s, role: spine}
  - {name: leaf, model: SN5600, cumulus: %[1]s, role: leaf}
fabric:
  links:
    - {switch: leaf, port: swp64, peer: spine, peer_port: swp1}
docker: {version: "24.0"}
horovod: {launcher: torchrun, image: nvcr.io/nvidia/pytorch:24.01-py3}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus:
    - {model: H100-PCIE-80GB, memory_gb: 80}
  nic: {model: ConnectX-7, pf: vmnic4, vfs: 4, speed_gbps: 400}
hosts:
`, release)
	for h := 0; h < 2; h++ {
		fmt.Fprintf(&b, "  - name: h%d\n    esxi: esx-%d\n    data:\n", h+1, h+1)
		for r := 0; r < inventory.MaxRails; r++ {
			fmt.Fprintf(&b, "      - {address: 10.0.%d.%d/24, switch: leaf, port: swp%d, pf: vmnic%d}\n", r, 11+h, 1+h*inventory.MaxRails+r, 4+r)
		}
	}
	inv, err := inventory.Load("r9.yaml", []byte(b.String()))
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return inv, *inv.Switch("leaf")
}

// The rails' part of a leaf's intent is in the schema: the bridge's VLANs
// 1–9, each rail's ports in its VLAN, each rail's SVI (vlan2 … vlan9) with
// its gateway address (ip address before 5.15, ipv4 address from 5.15),
// every (leaf, rail) subnet in BGP, and each rail port's description. The
// whole intent is applied, and the applied configuration holds it. Keys
// the schema does not have under those objects, and VLANs out of range,
// are still refused.
func TestSchemaTakesRailIntents(t *testing.T) {
	for _, release := range []string{"5.9.1", "5.15.0"} {
		inv, sw := railsLeaf(t, release)
		a := newAPI(t, Options{Version: release, Ports: sw.Ports, Model: sw.Model})
		id, esc := a.revision()
		body, _ := json.Marshal(cumulus.Intent(inv, sw))
		if code, v := a.do("PATCH", "/nvue_v1/?rev="+url.QueryEscape(id), string(body)); code != 200 {
			t.Fatalf("%s: the rails intent is refused: %d %v", release, code, v["detail"])
		}
		a.do("PATCH", "/nvue_v1/revision/"+esc, `{"state": "apply", "auto-prompt": {"ays": "ays_yes"}}`)
		if st := a.state(esc); st != stateAppliedSaved && st != stateApplied {
			t.Fatalf("%s: apply ends %s", release, st)
		}
		ip := "ip"
		if release == "5.15.0" {
			ip = "ipv4"
		}
		for r := 1; r < inventory.MaxRails; r++ {
			svi := cumulus.RailSVI(r)
			_, v := a.do("GET", "/nvue_v1/interface/"+svi+"?rev=applied", "")
			addr, _ := json.Marshal(v[ip])
			if v["type"] != "svi" || fmt.Sprint(v["vlan"]) != fmt.Sprint(r+1) || !strings.Contains(string(addr), fmt.Sprintf(`"10.0.%d.254/24"`, r)) {
				t.Errorf("%s: applied %s: %v", release, svi, v)
			}
			_, v = a.do("GET", fmt.Sprintf("/nvue_v1/interface/swp%d?rev=applied", 1+r), "")
			br, _ := json.Marshal(v["bridge"])
			if !strings.Contains(string(br), fmt.Sprintf(`"access":%d`, r+1)) || v["description"] != fmt.Sprintf("h1@esx-1/vmnic%d:rail%d", 4+r, r) {
				t.Errorf("%s: applied swp%d: %v", release, 1+r, v)
			}
		}
		_, v := a.do("GET", "/nvue_v1/bridge/domain/br_default/vlan?rev=applied", "")
		if len(v) != inventory.MaxRails {
			t.Errorf("%s: applied bridge VLANs %v, want 1-%d", release, v, inventory.MaxRails)
		}
		_, v = a.do("GET", "/nvue_v1/vrf/default/router/bgp/address-family/ipv4-unicast/network?rev=applied", "")
		for r := 0; r < inventory.MaxRails; r++ {
			if _, ok := v[fmt.Sprintf("10.0.%d.0/24", r)]; !ok {
				t.Errorf("%s: no BGP network 10.0.%d.0/24 in %v", release, r, v)
			}
		}
	}
	for _, c := range []struct{ version, path, body, detail string }{
		{"5.9.1", "interface/vlan9", `{"ip": {"gateway": "10.0.8.1"}}`, "('gateway' was unexpected)"},
		{"5.9.1", "interface/vlan9", `{"vlan": 9, "vlan-id": 9}`, "('vlan-id' was unexpected)"},
		{"5.9.1", "interface/vlan9", `{"vlan": 4095}`, "is not an integer in 1-4094"},
		{"5.15.0", "interface/vlan9", `{"ip": {"address": {"10.0.8.254/24": {}}}}`, "('ip' was unexpected): Cumulus Linux 5.15.0 names it ipv4 address"},
		{"5.9.1", "interface/swp9", `{"bridge": {"domain": {"br_default": {"access": 0}}}}`, "is not an integer in 1-4094"},
		{"5.9.1", "interface/swp9", `{"bridge": {"domain": {"br_default": {"vlan": {"9": {}}}}}}`, "('vlan' was unexpected)"},
		{"5.9.1", "bridge/domain/br_default/vlan", `{"4095": {}}`, `"4095" is not a VLAN`},
		{"5.9.1", "bridge/domain/br_default", `{"vlans": {"9": {}}}`, "('vlans' was unexpected)"},
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
