package dockernet

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// The real netplan (Debian's netplan.io) takes every host's file, also
// that of a cluster of one host, which has no routes: its file leaves the
// routes key out, where a `routes:` without a list made `netplan generate`
// fail ("expected sequence") and with it every netplan file of the host.
func TestNetplanGenerates(t *testing.T) {
	if _, err := exec.LookPath("netplan"); err != nil {
		netnstest.Unavailable(t, "netplan not found (Debian: netplan.io): %v", err)
	}
	src, err := os.ReadFile("../../testdata/golden/minimal/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	two := string(src)
	one, _, ok := strings.Cut(two, "  - name: node2\n")
	if !ok {
		t.Fatal("minimal inventory: no node2")
	}
	for _, tc := range []struct {
		name, src string
		routes    []string
	}{
		{"two hosts", two, []string{"Destination=172.16.12.0/24\nGateway=192.168.100.12\n"}},
		{"one host", one, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := inventory.Load(tc.name+".yaml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			h := &inv.Hosts[0]
			root := t.TempDir()
			dir := filepath.Join(root, "etc", "netplan")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := RoutesPersist(inv, h)
			if err := os.WriteFile(filepath.Join(dir, NetplanName), file, 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("netplan", "generate", "--root-dir", root).CombinedOutput(); err != nil {
				t.Fatalf("netplan generate: %v\n%s\n%s", err, out, file)
			}
			nw, err := os.ReadFile(filepath.Join(root, "run", "systemd", "network", "10-netplan-"+h.DataInterface+".network"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(nw), "MTUBytes=1500\n") || strings.Count(string(nw), "[Route]") != len(tc.routes) {
				t.Errorf("networkd file:\n%s", nw)
			}
			for _, r := range tc.routes {
				if !strings.Contains(string(nw), r) {
					t.Errorf("no route %q in\n%s", r, nw)
				}
			}
		})
	}
}
