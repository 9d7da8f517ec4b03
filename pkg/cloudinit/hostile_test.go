package cloudinit_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/cloudinit"
)

// topKeys is the sorted top-level keys of the YAML document doc.
func topKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// A Host a Go caller built without validation, with a newline and a YAML
// key in every string: no document gains a key (no top-level runcmd), the
// values read back as written, and the real cloud-init takes the user-data
// as valid cloud-config without a runcmd.
func TestHostileGoHost(t *testing.T) {
	inv := templateInventory(t)
	inject := "\nruncmd: [touch /tmp/rdggen-pwned]\n#"
	inv.Name += inject
	h := &inv.Hosts[0]
	h.Name += inject
	h.VM += inject
	h.DataInterface += inject
	tmpl := *h.Template
	tmpl.User += inject
	tmpl.MgmtInterface += inject
	tmpl.SSHKeys = append(slices.Clone(tmpl.SSHKeys), "ssh-ed25519 AAAA x"+inject)
	h.Template = &tmpl
	macs := cloudinit.MACs{Mgmt: "00:50:56:8a:00:01" + inject, Data: "00:50:56:8a:10:02"}

	for _, tc := range []struct {
		name string
		doc  []byte
		keys []string
	}{
		{"meta-data", cloudinit.MetaData(inv, h), []string{"instance-id", "local-hostname"}},
		{"user-data", cloudinit.UserData(inv, h), []string{"hostname", "preserve_hostname", "users"}},
		{"network-config", cloudinit.NetworkConfig(inv, h, macs), []string{"ethernets", "version"}},
		{"guestinfo.metadata", cloudinit.GuestData(inv, h, macs), []string{"instance-id", "local-hostname", "network"}},
	} {
		if got := topKeys(t, tc.doc); !slices.Equal(got, tc.keys) {
			t.Errorf("%s: top-level keys %q, want %q\n%s", tc.name, got, tc.keys, tc.doc)
		}
		if !strings.HasPrefix(string(tc.doc), "#") && tc.name != "guestinfo.metadata" {
			t.Errorf("%s: no header comment", tc.name)
		}
	}
	var ud struct {
		Hostname string
		Users    []struct {
			Name string
			Keys []string `yaml:"ssh_authorized_keys"`
		}
	}
	if err := yaml.Unmarshal(cloudinit.UserData(inv, h), &ud); err != nil {
		t.Fatal(err)
	}
	if ud.Hostname != h.Name || len(ud.Users) != 1 || ud.Users[0].Name != tmpl.User || ud.Users[0].Keys[len(ud.Users[0].Keys)-1] != tmpl.SSHKeys[len(tmpl.SSHKeys)-1] {
		t.Errorf("user-data does not read back as written: %+v", ud)
	}
	var nc struct {
		Ethernets map[string]struct {
			Match map[string]string
		}
	}
	if err := yaml.Unmarshal(cloudinit.NetworkConfig(inv, h, macs), &nc); err != nil {
		t.Fatal(err)
	}
	if m, ok := nc.Ethernets[tmpl.MgmtInterface]; !ok || m.Match["macaddress"] != macs.Mgmt || len(nc.Ethernets) != 2 {
		t.Errorf("network config: %+v", nc)
	}

	ci := cloudInit(t)
	p := filepath.Join(t.TempDir(), "user-data")
	if err := os.WriteFile(p, cloudinit.UserData(inv, h), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(t, ci, "schema", "--config-file", p, "--annotate"); !strings.Contains(out, "Valid cloud-config") || strings.Contains(out, "runcmd") {
		t.Errorf("cloud-init schema: %s", out)
	}
}
