package cloudinit_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func templateInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.LoadFile("../../testdata/golden/template/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// cloudInit is the path of Debian's cloud-init, or Unavailable.
func cloudInit(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("cloud-init")
	if err != nil {
		netnstest.Unavailable(t, "no cloud-init (Debian: cloud-init): %v", err)
	}
	return p
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestUserDataSchema: the real cloud-init accepts every host's user-data,
// with keys and without.
func TestUserDataSchema(t *testing.T) {
	ci := cloudInit(t)
	inv := templateInventory(t)
	dir := t.TempDir()
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		if h.Template == nil {
			t.Fatalf("%s: no template", h.Name)
		}
		p := filepath.Join(dir, h.VM+"-user-data")
		if err := os.WriteFile(p, cloudinit.UserData(inv, h), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := run(t, ci, "schema", "--config-file", p); !strings.Contains(out, "Valid cloud-config") {
			t.Errorf("%s: %s", h.VM, out)
		}
	}
}

// TestNetworkConfigRenders renders the network config with cloud-init's own
// renderers, netplan and networkd, matched by MAC as apply writes it and by
// name as the review copy has it: the data interface gets its address, the
// data MTU and exactly dockernet.Routes, the management interface DHCP.
func TestNetworkConfigRenders(t *testing.T) {
	ci := cloudInit(t)
	inv := templateInventory(t)
	h := &inv.Hosts[0]
	macs := cloudinit.MACs{Mgmt: "00:50:56:8a:00:01", Data: "00:50:56:8a:10:02"}
	routes := dockernet.Routes(inv, h)
	if len(routes) != 2 {
		t.Fatalf("routes %v", routes)
	}
	for _, tc := range []struct {
		name string
		macs cloudinit.MACs
	}{{"by MAC", macs}, {"by name", cloudinit.MACs{}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "network-config")
			if err := os.WriteFile(in, cloudinit.NetworkConfig(inv, h, tc.macs), 0o644); err != nil {
				t.Fatal(err)
			}
			// netplan
			run(t, ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", filepath.Join(dir, "np"), "-D", "ubuntu", "-O", "netplan")
			np, err := os.ReadFile(filepath.Join(dir, "np/etc/netplan/50-cloud-init.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Network struct {
					Ethernets map[string]struct {
						Match   map[string]string `yaml:"match"`
						SetName string            `yaml:"set-name"`
						DHCP4   bool              `yaml:"dhcp4"`
						Addrs   []string          `yaml:"addresses"`
						MTU     int               `yaml:"mtu"`
						Routes  []struct{ To, Via string }
					} `yaml:"ethernets"`
				} `yaml:"network"`
			}
			if err := yaml.Unmarshal(np, &doc); err != nil {
				t.Fatalf("%v\n%s", err, np)
			}
			data, ok := doc.Network.Ethernets[h.DataInterface]
			if !ok {
				t.Fatalf("no %s in\n%s", h.DataInterface, np)
			}
			if tc.macs.Data != "" {
				if data.Match["macaddress"] != macs.Data || data.SetName != h.DataInterface {
					t.Errorf("data match %v set-name %q", data.Match, data.SetName)
				}
			} else if data.Match["name"] != h.DataInterface {
				t.Errorf("data match %v", data.Match)
			}
			if len(data.Addrs) != 1 || data.Addrs[0] != "10.10.0.1/24" || data.MTU != 9000 || data.DHCP4 {
				t.Errorf("data %+v", data)
			}
			if len(data.Routes) != len(routes) {
				t.Fatalf("routes %+v, want %v", data.Routes, routes)
			}
			for i, r := range routes {
				if data.Routes[i].To != r.Dst.String() || data.Routes[i].Via != r.Via.String() {
					t.Errorf("route %d: %+v, want %s via %s", i, data.Routes[i], r.Dst, r.Via)
				}
			}
			if m := doc.Network.Ethernets["ens192"]; !m.DHCP4 {
				t.Errorf("management %+v", m)
			}
			// networkd: cloud-init's renderer chowns the files it writes
			// (util.chownbyid), which only root may.
			if os.Geteuid() != 0 {
				netnstest.Unavailable(t, "cloud-init's networkd renderer chowns the files it writes (util.chownbyid), which needs root: run as root for the networkd half")
			}
			run(t, ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", filepath.Join(dir, "nd"), "-D", "ubuntu", "-O", "networkd")
			nd, err := os.ReadFile(filepath.Join(dir, "nd/etc/systemd/network/10-cloud-init-"+h.DataInterface+".network"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"Address=10.10.0.1/24", "MTUBytes=9000", "DHCP=no",
				"Destination=172.16.2.0/24", "Gateway=10.10.0.2", "Destination=172.16.3.0/24", "Gateway=10.10.0.3"}
			if tc.macs.Data != "" {
				want = append(want, "MACAddress="+macs.Data)
			} else {
				want = append(want, "Name="+h.DataInterface)
			}
			for _, w := range want {
				if !strings.Contains(string(nd), w+"\n") {
					t.Errorf("networkd: no %q in\n%s", w, nd)
				}
			}
			mg, err := os.ReadFile(filepath.Join(dir, "nd/etc/systemd/network/10-cloud-init-ens192.network"))
			if err != nil || !strings.Contains(string(mg), "DHCP=ipv4") {
				t.Errorf("management: %v\n%s", err, mg)
			}
		})
	}
}

// TestGuestInfo decodes the guestinfo values as the VMware datasource does
// (gzip+base64) and finds meta-data, the network config under "network"
// matched by MAC, and the user-data.
func TestGuestInfo(t *testing.T) {
	inv := templateInventory(t)
	h := &inv.Hosts[1]
	macs := cloudinit.MACs{Mgmt: "00:50:56:8a:00:01", Data: "00:50:56:8a:10:02"}
	gi := cloudinit.GuestInfo(inv, h, macs)
	keys := []string{"guestinfo.metadata", "guestinfo.metadata.encoding", "guestinfo.userdata", "guestinfo.userdata.encoding"}
	if len(gi) != len(keys) {
		t.Fatalf("%v", gi)
	}
	decode := func(s string) []byte {
		z, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, k := range keys {
		if gi[i].Key != k {
			t.Errorf("key %d = %s, want %s", i, gi[i].Key, k)
		}
	}
	if gi[1].Value != "gzip+base64" || gi[3].Value != "gzip+base64" {
		t.Errorf("encodings %q %q", gi[1].Value, gi[3].Value)
	}
	var md struct {
		InstanceID string         `yaml:"instance-id"`
		Hostname   string         `yaml:"local-hostname"`
		Network    map[string]any `yaml:"network"`
	}
	raw := decode(gi[0].Value)
	if err := yaml.Unmarshal(raw, &md); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	if md.InstanceID != "tmpl-gpu-2" || md.Hostname != "gpu-2" || md.Network["version"] != 2 {
		t.Errorf("metadata %+v", md)
	}
	if !bytes.Contains(raw, []byte("macaddress: 00:50:56:8a:10:02\n")) || !bytes.Contains(raw, []byte("set-name: enp11s0\n")) {
		t.Errorf("metadata does not match the VF by MAC:\n%s", raw)
	}
	if ud := decode(gi[2].Value); !bytes.Equal(ud, cloudinit.UserData(inv, h)) {
		t.Errorf("userdata\n%s", ud)
	}
	// Deterministic: the same input gives the same value (a second apply compares them).
	if again := cloudinit.GuestInfo(inv, h, macs); again[0] != gi[0] {
		t.Error("GuestInfo is not deterministic")
	}
}

// TestNoCloudInit: a template without cloud-init has no documents.
func TestNoCloudInit(t *testing.T) {
	inv := templateInventory(t)
	var paths []string
	for _, f := range cloudinit.Artifacts(inv) {
		paths = append(paths, f.Path)
	}
	if len(paths) != 6 || strings.Contains(strings.Join(paths, " "), "gpu-3") {
		t.Errorf("artifacts %v", paths)
	}
	if cloudinit.Enabled(&inv.Hosts[2]) || !cloudinit.Enabled(&inv.Hosts[0]) {
		t.Error("Enabled")
	}
}
