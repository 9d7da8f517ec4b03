package hostapply

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// The host's own netplan definition of the data interface, by key,
// set-name, match.name (a glob) or match.macaddress, in netplan's file order.
func TestNetplanID(t *testing.T) {
	const mac = "00:50:56:aa:bb:41"
	for _, tc := range []struct {
		name  string
		files []netplanFile
		id    string
		how   string
	}{
		{"by key", []netplanFile{{"/etc/netplan/50-cloud-init.yaml", []byte("network:\n  ethernets:\n    eno0: {dhcp4: true}\n    enp1f0: {addresses: [31.31.31.41/24]}\n")}},
			"enp1f0", "its key in /etc/netplan/50-cloud-init.yaml"},
		{"by set-name", []netplanFile{{"/etc/netplan/50-cloud-init.yaml", []byte("network:\n  ethernets:\n    data0:\n      match: {name: enp1f0}\n      set-name: enp1f0\n      addresses: [31.31.31.41/24]\n")}},
			"data0", "set-name in /etc/netplan/50-cloud-init.yaml"},
		{"by a match.name glob", []netplanFile{{"/etc/netplan/01-net.yaml", []byte("network:\n  ethernets:\n    vf:\n      match: {name: \"enp1*\"}\n      addresses: [31.31.31.41/24]\n")}},
			"vf", "match.name in /etc/netplan/01-net.yaml"},
		{"by MAC address", []netplanFile{{"/etc/netplan/50-cloud-init.yaml", []byte("network:\n  ethernets:\n    eth1:\n      match: {macaddress: \"00:50:56:AA:BB:41\"}\n      addresses: [31.31.31.41/24]\n")}},
			"eth1", "match.macaddress in /etc/netplan/50-cloud-init.yaml"},
		{"/run hides /etc, rdggen's own file does not count", []netplanFile{
			{"/etc/netplan/50-x.yaml", []byte("network:\n  ethernets:\n    old: {match: {name: enp1f0}}\n")},
			{"/run/netplan/50-x.yaml", []byte("network:\n  ethernets:\n    new: {match: {name: enp1f0}}\n")},
			{dockernet.NetplanPath, []byte("network:\n  ethernets:\n    enp1f0: {mtu: 9000}\n")},
		}, "new", "match.name in /run/netplan/50-x.yaml"},
		{"none", []netplanFile{{dockernet.NetplanPath, []byte("network:\n  ethernets:\n    enp1f0: {mtu: 9000}\n")}}, "", ""},
	} {
		id, how, ok := netplanID(tc.files, "enp1f0", mac)
		if id != tc.id || how != tc.how || ok != (tc.id != "") {
			t.Errorf("%s: %q %q %v", tc.name, id, how, ok)
		}
	}
}

// With the real netplan (Debian's netplan.io): for the host's two usual
// layouts, rdggen's file under the ID the plan finds puts the routes and the
// MTU into the one systemd-networkd file that matches the NIC. Under the
// interface's name instead (rdggen before it read the host's files), the
// second layout gets two files for the NIC and the one networkd uses has no
// routes.
func TestNetplanGenerate(t *testing.T) {
	if _, err := exec.LookPath("netplan"); err != nil {
		netnstest.Unavailable(t, "netplan not found (install netplan.io)")
	}
	src := strings.Replace(strings.Replace(string(inventory.ReferenceYAML), "os: ubuntu-16.04", "os: ubuntu-20.04", 1), "  # data_mtu: 9000", "  data_mtu: 9000", 1)
	inv, err := inventory.Load("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	h := &inv.Hosts[0]
	layouts := map[string]string{
		"key":      "network:\n  version: 2\n  ethernets:\n    eno0: {dhcp4: true}\n    enp1f0:\n      addresses: [31.31.31.41/24]\n",
		"set-name": "network:\n  version: 2\n  ethernets:\n    data0:\n      match: {name: enp1f0}\n      set-name: enp1f0\n      addresses: [31.31.31.41/24]\n",
	}
	for name, own := range layouts {
		t.Run(name, func(t *testing.T) {
			files := []netplanFile{{"/etc/netplan/50-cloud-init.yaml", []byte(own)}}
			id, how, ok := netplanID(files, h.DataInterface, "")
			if !ok {
				t.Fatal("no ID found")
			}
			used := generate(t, own, dockernet.NetplanFor(inv, h, id, how))
			for _, want := range []string{"Address=31.31.31.41/24", "MTUBytes=9000", "Destination=172.16.42.0/24", "Gateway=31.31.31.42", "Destination=172.16.48.0/24"} {
				if !strings.Contains(used, want) {
					t.Errorf("the file networkd uses for enp1f0 lacks %s:\n%s", want, used)
				}
			}
		})
	}
	// The old way, under the interface's name, with the set-name layout.
	used := generate(t, layouts["set-name"], dockernet.NetplanFor(inv, h, h.DataInterface, ""))
	if strings.Contains(used, "Destination=172.16.42.0/24") {
		t.Errorf("under another ID the routes reached the file networkd uses; the test no longer shows the fault:\n%s", used)
	}
}

// generate runs `netplan generate` on a root with the host's file and
// rdggen's, and returns the first (in networkd's order) .network file that
// matches enp1f0, after checking that only one does.
func generate(t *testing.T, own string, ours []byte) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "etc", "netplan")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"50-cloud-init.yaml": []byte(own), "60-rdggen.yaml": ours} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("netplan", "generate", "--root-dir", root).CombinedOutput(); err != nil {
		t.Fatalf("netplan generate: %v\n%s", err, out)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "run", "systemd", "network", "*.network"))
	sort.Strings(paths) // networkd reads them in this order; the first match wins
	var matching []string
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "\nName=enp1f0\n") {
			matching = append(matching, string(b))
		}
	}
	if len(matching) == 0 {
		t.Fatalf("no .network file matches enp1f0: %v", paths)
	}
	if len(matching) > 1 {
		t.Logf("%d .network files match enp1f0; networkd uses the first", len(matching))
	}
	return matching[0]
}
