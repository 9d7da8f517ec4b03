package cloudinit_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railguest"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// railsInventory is the rails-firstboot case: two VMs with two rails each,
// cloned from a template that runs cloud-init.
func railsInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.LoadFile("../../testdata/golden/rails-firstboot/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// railMACs are the MAC addresses vCenter gave node1's adapters: rail 0's
// as Data, rail 1's in Rails.
var railMACs = cloudinit.MACs{Mgmt: "00:50:56:8a:00:01", Data: "00:50:56:8a:10:00", Rails: []string{"", "00:50:56:8A:10:01"}}

// The real cloud-init accepts the user-data of a VM with several rails:
// its write_files (the sysctl.d file, the topology's skeleton, boot script
// and unit, each the bytes pkg/railguest makes) and its runcmd.
func TestRailsUserDataSchema(t *testing.T) {
	ci := cloudInit(t)
	inv := railsInventory(t)
	dir := t.TempDir()
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		ud := cloudinit.UserData(inv, h)
		p := filepath.Join(dir, h.VM+"-user-data")
		if err := os.WriteFile(p, ud, 0o644); err != nil {
			t.Fatal(err)
		}
		if out := run(t, ci, "schema", "--config-file", p); !strings.Contains(out, "Valid cloud-config") {
			t.Errorf("%s: %s", h.VM, out)
		}
		var doc struct {
			WriteFiles []struct{ Path, Permissions, Content string } `yaml:"write_files"`
			RunCmd     [][]string                                    `yaml:"runcmd"`
		}
		if err := yaml.Unmarshal(ud, &doc); err != nil {
			t.Fatal(err)
		}
		want, err := railguest.Files(inv, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range doc.WriteFiles {
			got = append(got, f.Path+" "+f.Permissions)
			for _, w := range want {
				if w.Path == f.Path && w.Data != nil && string(w.Data) != f.Content {
					t.Errorf("%s: %s differs from railguest's", h.VM, f.Path)
				}
			}
		}
		if strings.Join(got, ",") != railnet.SysctlPath+" 0644,"+railguest.SkeletonPath+" 0644,"+railguest.ScriptPath+" 0755,"+railguest.UnitPath+" 0644" {
			t.Errorf("%s: write_files %v", h.VM, got)
		}
		if fmt.Sprint(doc.RunCmd) != "[[sysctl -p /etc/sysctl.d/60-rdggen-rails.conf] [systemctl daemon-reload] [systemctl enable --now rdggen-nccl-topology.service]]" {
			t.Errorf("%s: runcmd %v", h.VM, doc.RunCmd)
		}
	}
	// One rail: no write_files, no runcmd (the template case's bytes are
	// its golden files').
	one := templateInventory(t)
	if ud := string(cloudinit.UserData(one, &one.Hosts[0])); strings.Contains(ud, "write_files") || strings.Contains(ud, "runcmd") {
		t.Errorf("one rail:\n%s", ud)
	}
}

// The network config of a VM with several rails, rendered by cloud-init's
// netplan renderer (Ubuntu's, which passes a version 2 config through) and
// then by the real netplan into systemd-networkd's files: every rail with
// its address, the data MTU, its routes in the main table (metric 100+r)
// and its own table (100+r, its subnet on the link), its rule (priority
// 1000+r), matched by MAC and renamed when apply gives MACs, by name in the
// review copy; rail 0 keeps its container route first.
func TestRailsNetworkConfigRenders(t *testing.T) {
	ci := cloudInit(t)
	if _, err := exec.LookPath("netplan"); err != nil {
		netnstest.Unavailable(t, "netplan not found (Debian: netplan.io): %v", err)
	}
	inv := railsInventory(t)
	h := &inv.Hosts[0]
	for _, tc := range []struct {
		name string
		macs cloudinit.MACs
	}{{"by MAC", railMACs}, {"by name", cloudinit.MACs{}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "network-config")
			if err := os.WriteFile(in, cloudinit.NetworkConfig(inv, h, tc.macs), 0o644); err != nil {
				t.Fatal(err)
			}
			root := filepath.Join(dir, "np")
			run(t, ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", root, "-D", "ubuntu", "-O", "netplan")
			if err := os.Chmod(filepath.Join(root, "etc/netplan/50-cloud-init.yaml"), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("netplan", "generate", "--root-dir", root).CombinedOutput(); err != nil {
				t.Fatalf("netplan generate: %v\n%s", err, out)
			}
			read := func(name string) string {
				b, err := os.ReadFile(filepath.Join(root, "run/systemd/network", name))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
			for r, rail := range h.Rails {
				nw := read("10-netplan-" + rail.Interface + ".network")
				gw := inv.RailGateway(h, r)
				want := []string{
					"[Link]\nMTUBytes=9000\n",
					"Address=" + rail.Address.String() + "\n",
					fmt.Sprintf("[Route]\nDestination=10.20.0.0/23\nGateway=%s\nMetric=%d\n", gw, 100+r),
					fmt.Sprintf("[Route]\nDestination=%s\nScope=link\nTable=%d\n", rail.Address.Masked(), 100+r),
					fmt.Sprintf("[Route]\nDestination=10.20.0.0/23\nGateway=%s\nTable=%d\n", gw, 100+r),
					fmt.Sprintf("[RoutingPolicyRule]\nFrom=%s/32\nTable=%d\nPriority=%d\n", rail.Address.Addr(), 100+r, 1000+r),
				}
				if mac := tc.macs.Rail(r); mac != "" {
					want = append(want, "[Match]\nPermanentMACAddress="+strings.ToLower(mac)+"\nName="+rail.Interface+"\n")
					if l := read("10-netplan-" + rail.Interface + ".link"); !strings.Contains(l, "Name="+rail.Interface+"\n") {
						t.Errorf("rail %d's .link:\n%s", r, l)
					}
				} else {
					want = append(want, "[Match]\nName="+rail.Interface+"\n")
				}
				if r == 0 {
					want = append(want, "[Route]\nDestination=172.16.0.0/16\nGateway=10.20.0.254\n")
				}
				for _, w := range want {
					if !strings.Contains(nw, w) {
						t.Errorf("rail %d: no\n%s\nin\n%s", r, w, nw)
					}
				}
				if n := strings.Count(nw, "[Route]"); n != 3+b2i(r == 0) {
					t.Errorf("rail %d: %d routes:\n%s", r, n, nw)
				}
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// GuestInfo of a VM with several rails: the metadata matches every rail by
// its MAC, and the user-data's boot script finds each rail's VF by its MAC.
func TestRailsGuestInfo(t *testing.T) {
	inv := railsInventory(t)
	h := &inv.Hosts[0]
	gi := cloudinit.GuestInfo(inv, h, railMACs)
	decode := func(s string) string {
		z, _ := base64.StdEncoding.DecodeString(s)
		r, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		return string(b)
	}
	md, ud := decode(gi[0].Value), decode(gi[2].Value)
	for _, w := range []string{"macaddress: 00:50:56:8a:10:00\n", "set-name: ens224\n", "macaddress: 00:50:56:8a:10:01\n", "set-name: rail1\n"} {
		if !strings.Contains(md, w) {
			t.Errorf("metadata lacks %q:\n%s", w, md)
		}
	}
	script := func(ud string) string {
		var doc struct {
			WriteFiles []struct{ Path, Content string } `yaml:"write_files"`
		}
		if err := yaml.Unmarshal([]byte(ud), &doc); err != nil {
			t.Fatal(err)
		}
		for _, f := range doc.WriteFiles {
			if f.Path == railguest.ScriptPath {
				return f.Content
			}
		}
		t.Fatalf("no %s in\n%s", railguest.ScriptPath, ud)
		return ""
	}
	if s := script(ud); s != string(railguest.BootScript(inv, h, []string{"00:50:56:8a:10:00", "00:50:56:8A:10:01"})) ||
		!strings.Contains(s, "topo_rails='0 ens224 00:50:56:8a:10:00\n1 rail1 00:50:56:8a:10:01\n'") {
		t.Errorf("user-data's boot script does not find the rails by MAC:\n%s", s)
	}
	if s := script(string(cloudinit.UserData(inv, h))); !strings.Contains(s, "topo_rails='0 ens224 -\n1 rail1 -\n'") {
		t.Errorf("the review copy does not find the rails by name:\n%s", s)
	}
}
