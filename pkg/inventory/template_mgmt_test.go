package inventory

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// The template's static management network: mgmt_prefix with a gateway on
// each static host's management network is valid and read; a gateway off
// that network, or mgmt_gateway / mgmt_dns without mgmt_prefix, is refused
// at the key, naming the host.
func TestTemplateStaticMgmt(t *testing.T) {
	src := func(tmpl string) string {
		y := strings.Replace(baseYAML, "vfs: 8}\n", "vfs: 8}\n  template: {name: t1, "+tmpl+"}\n", 1)
		return strings.Replace(y, "    esxi: esx-a\n", "    esxi: esx-a\n    mgmt: 192.168.1.41\n", 1)
	}
	inv, err := Load("mini.yaml", []byte(src("mgmt_prefix: 24, mgmt_gateway: 192.168.1.1, mgmt_dns: [192.168.1.2]")))
	if err != nil {
		t.Fatal(err)
	}
	tm := inv.Hosts[0].Template
	if tm.MgmtPrefix != 24 || tm.MgmtGateway != netip.MustParseAddr("192.168.1.1") || len(tm.MgmtDNS) != 1 || tm.MgmtDNS[0] != netip.MustParseAddr("192.168.1.2") {
		t.Errorf("template %+v", tm)
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"mgmt_prefix: 24, mgmt_gateway: 192.168.2.1", "mini.yaml:12:55: defaults.template.mgmt_gateway: 192.168.2.1 is not on a's management network 192.168.1.0/24 (hosts[0].mgmt 192.168.1.41, mgmt_prefix 24): a default route needs an on-link gateway"},
		{"mgmt_prefix: 24, mgmt_gateway: 192.168.1.41", "mini.yaml:12:55: defaults.template.mgmt_gateway: 192.168.1.41 is a's own management address (hosts[0].mgmt)"},
		{"mgmt_gateway: 192.168.1.1", "mini.yaml:12:38: defaults.template.mgmt_gateway: needs mgmt_prefix: the static management network (address from hosts[].mgmt, prefix, gateway, DNS) is used only with mgmt_prefix set"},
		{"mgmt_dns: [192.168.1.2]", "mini.yaml:12:34: defaults.template.mgmt_dns: needs mgmt_prefix"},
	} {
		_, err := Load("mini.yaml", []byte(src(tc.tmpl)))
		var rep *Report
		if !errors.As(err, &rep) || len(rep.Findings) != 1 || !strings.HasPrefix(rep.Findings[0].String(), tc.want) {
			t.Errorf("%s: %v\nwant %q", tc.tmpl, err, tc.want)
		}
	}
}
