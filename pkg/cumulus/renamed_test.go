package cumulus

import (
	"strings"
	"testing"
)

// TestRenamedForms515: from Cumulus Linux 5.15 the intent, the YAML and
// the `nv set` lines use the names of NVIDIA's 5.15 "New and Changed NVUE
// Commands" (qos roce state enabled, interface <id> ipv4 address, system
// lldp); up to 5.14 the old ones.
func TestRenamedForms515(t *testing.T) {
	for _, tc := range []struct {
		ver       string
		want, not []string
	}{
		{"5.15.0",
			[]string{"nv set qos roce state enabled\n", "nv set interface vlan1 ipv4 address 31.31.31.254/24\n", "nv set system lldp\n", "nv config save\n"},
			[]string{"roce enable", " ip address", "service lldp"}},
		{"5.14.0",
			[]string{"nv set qos roce enable on\n", "nv set interface vlan1 ip address 31.31.31.254/24\n", "nv set service lldp\n"},
			[]string{"roce state", " ipv4 address", "system lldp"}},
	} {
		inv := load(t, tc.ver, "  # routing: switch", "  routing: switch")
		sw := inv.Switches[0]
		sh := string(Commands(inv, sw))
		yaml := string(YAML(inv, sw))
		for _, w := range tc.want {
			if !strings.Contains(sh, w) {
				t.Errorf("%s: script lacks %q:\n%s", tc.ver, w, sh)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(sh, n) {
				t.Errorf("%s: script has %q", tc.ver, n)
			}
		}
		in := Intent(inv, sw)
		roce := in["qos"].(Tree)["roce"].(Tree)
		svi := in["interface"].(Tree)[SVI].(Tree)
		if RenamedForms(sw) {
			if roce["state"] != "enabled" || roce["enable"] != nil || svi["ipv4"] == nil || svi["ip"] != nil ||
				!strings.Contains(yaml, "      state: enabled\n") || !strings.Contains(yaml, "      ipv4:\n") {
				t.Errorf("%s: intent %v / %v\n%s", tc.ver, roce, svi, yaml)
			}
		} else if roce["enable"] != "on" || roce["state"] != nil || svi["ip"] == nil || svi["ipv4"] != nil {
			t.Errorf("%s: intent %v / %v", tc.ver, roce, svi)
		}
	}
}
