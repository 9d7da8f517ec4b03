package railnet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// The real netplan (Debian's netplan.io) takes the rails' file beside the
// host's own (rail 0's address, under the same ID) and pkg/dockernet's
// (rail 0's MTU and container routes, 60-rdggen.yaml), and gives
// systemd-networkd: rail 0's definition with all three files' routes and
// its rule, its address once; rail 1 matched by its MAC address and
// renamed, with its routes, its table's routes and its rule.
func TestNetplanGenerates(t *testing.T) {
	if _, err := exec.LookPath("netplan"); err != nil {
		netnstest.Unavailable(t, "netplan not found (Debian: netplan.io): %v", err)
	}
	g, err := New(twoRails())
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "etc", "netplan")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"50-cloud-init.yaml": "network:\n  version: 2\n  ethernets:\n    enp1f0:\n      dhcp4: false\n      addresses: [10.0.1.11/24]\n      mtu: 1500\n",
		"60-rdggen.yaml":     "network:\n  version: 2\n  ethernets:\n    enp1f0:\n      mtu: 9000\n      routes:\n        - to: 172.16.2.0/24\n          via: 10.0.1.12\n",
		NetplanName:          string(g.Netplan()),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("netplan", "generate", "--root-dir", root).CombinedOutput(); err != nil {
		t.Fatalf("netplan generate: %v\n%s\n%s", err, out, g.Netplan())
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "run", "systemd", "network", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rail0, rail1, link1 := read("10-netplan-enp1f0.network"), read("10-netplan-rail1.network"), read("10-netplan-rail1.link")
	for _, tc := range []struct {
		file, text string
		want       []string
	}{
		{"10-netplan-enp1f0.network", rail0, []string{
			"[Link]\nMTUBytes=9000\n",
			"Address=10.0.1.11/24\n",
			"[Route]\nDestination=172.16.2.0/24\nGateway=10.0.1.12\n",
			"[Route]\nDestination=10.1.2.0/24\nGateway=10.0.1.1\nMetric=100\n",
			"[Route]\nDestination=10.0.1.0/24\nScope=link\nTable=100\n",
			"[Route]\nDestination=10.1.2.0/24\nGateway=10.0.1.1\nTable=100\n",
			"[RoutingPolicyRule]\nFrom=10.0.1.11/32\nTable=100\nPriority=1000\n",
		}},
		{"10-netplan-rail1.network", rail1, []string{
			"[Match]\nPermanentMACAddress=00:50:56:aa:00:11\nName=rail1\n",
			"[Link]\nMTUBytes=9000\n",
			"Address=10.1.2.11/24\n",
			"[Route]\nDestination=10.0.1.0/24\nGateway=10.1.2.1\nMetric=101\n",
			"[Route]\nDestination=10.1.2.0/24\nScope=link\nTable=101\n",
			"[Route]\nDestination=10.1.1.0/24\nGateway=10.1.2.1\nTable=101\n",
			"[RoutingPolicyRule]\nFrom=10.1.2.11/32\nTable=101\nPriority=1001\n",
		}},
		{"10-netplan-rail1.link", link1, []string{"[Match]\nPermanentMACAddress=00:50:56:aa:00:11\n", "Name=rail1\n"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.text, w) {
				t.Errorf("%s lacks %q:\n%s", tc.file, w, tc.text)
			}
		}
	}
	if n := strings.Count(rail0, "Address="); n != 1 {
		t.Errorf("rail 0's address %d times:\n%s", n, rail0)
	}
	// 3 peers in the main table and in table 100, the subnet on the link,
	// the container route.
	if n, m := strings.Count(rail0, "[Route]"), strings.Count(rail1, "[Route]"); n != 8 || m != 7 {
		t.Errorf("%d and %d routes:\n%s\n%s", n, m, rail0, rail1)
	}
}
