package cloudinit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// staticInventory is the template case with a static management network
// in the template, gpu-1's mgmt an IPv4 address and gpu-2's a name.
func staticInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	src, err := os.ReadFile("../../testdata/golden/template/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	y := strings.Replace(string(src), "    mgmt_interface: ens192\n", "    mgmt_interface: ens192\n    mgmt_prefix: 24\n    mgmt_gateway: 192.168.50.1\n    mgmt_dns: [192.168.50.2, 192.168.50.3]\n", 1)
	y = strings.Replace(y, "  - name: gpu-1\n", "  - name: gpu-1\n    mgmt: 192.168.50.41\n", 1)
	y = strings.Replace(y, "  - name: gpu-2\n", "  - name: gpu-2\n    mgmt: gpu-2.mgmt.example\n", 1)
	inv, err := inventory.Load("static.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// A static management address in the network config, rendered by the real
// cloud-init: gpu-1 (mgmt 192.168.50.41, template mgmt_prefix 24) gets
// 192.168.50.41/24, a default route via mgmt_gateway and the mgmt_dns name
// servers on its management interface, matched by MAC, with netplan and
// networkd alike; gpu-2 (mgmt a name) keeps DHCP.
func TestStaticMgmtRenders(t *testing.T) {
	inv := staticInventory(t)
	if p, ok := cloudinit.StaticMgmt(&inv.Hosts[0]); !ok || p.String() != "192.168.50.41/24" {
		t.Fatalf("gpu-1: StaticMgmt %v %v", p, ok)
	}
	if _, ok := cloudinit.StaticMgmt(&inv.Hosts[1]); ok {
		t.Fatal("gpu-2's mgmt is a name: DHCP")
	}
	var doc struct {
		Ethernets map[string]struct {
			DHCP4  bool     `yaml:"dhcp4"`
			Addrs  []string `yaml:"addresses"`
			Routes []struct{ To, Via string }
			NS     struct {
				Addresses []string
			} `yaml:"nameservers"`
		}
	}
	if err := yaml.Unmarshal(cloudinit.NetworkConfig(inv, &inv.Hosts[1], cloudinit.MACs{}), &doc); err != nil || !doc.Ethernets["ens192"].DHCP4 {
		t.Errorf("gpu-2: %v %+v", err, doc)
	}
	ci := cloudInit(t)
	h := &inv.Hosts[0]
	macs := cloudinit.MACs{Mgmt: "00:50:56:8a:00:01", Data: "00:50:56:8a:10:02"}
	dir := t.TempDir()
	in := filepath.Join(dir, "network-config")
	if err := os.WriteFile(in, cloudinit.NetworkConfig(inv, h, macs), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", filepath.Join(dir, "np"), "-D", "ubuntu", "-O", "netplan")
	np, err := os.ReadFile(filepath.Join(dir, "np/etc/netplan/50-cloud-init.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Network struct{ Ethernets map[string]yaml.Node }
	}
	if err := yaml.Unmarshal(np, &out); err != nil {
		t.Fatal(err)
	}
	var mg struct {
		DHCP4  bool     `yaml:"dhcp4"`
		Addrs  []string `yaml:"addresses"`
		Match  map[string]string
		Routes []struct{ To, Via string }
		NS     struct{ Addresses []string } `yaml:"nameservers"`
	}
	node := out.Network.Ethernets["ens192"]
	if err := node.Decode(&mg); err != nil {
		t.Fatalf("netplan: %v\n%s", err, np)
	}
	if mg.DHCP4 || len(mg.Addrs) != 1 || mg.Addrs[0] != "192.168.50.41/24" || mg.Match["macaddress"] != macs.Mgmt ||
		len(mg.Routes) != 1 || mg.Routes[0].To != "0.0.0.0/0" || mg.Routes[0].Via != "192.168.50.1" ||
		strings.Join(mg.NS.Addresses, ",") != "192.168.50.2,192.168.50.3" {
		t.Errorf("netplan's management interface: %+v\n%s", mg, np)
	}
	if os.Geteuid() != 0 {
		netnstest.Unavailable(t, "cloud-init's networkd renderer chowns the files it writes (util.chownbyid), which needs root: run as root for the networkd half")
	}
	run(t, ci, "devel", "net-convert", "-p", in, "-k", "yaml", "-d", filepath.Join(dir, "nd"), "-D", "ubuntu", "-O", "networkd")
	nd, err := os.ReadFile(filepath.Join(dir, "nd/etc/systemd/network/10-cloud-init-ens192.network"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"MACAddress=" + macs.Mgmt, "Address=192.168.50.41/24", "Gateway=192.168.50.1", "DNS=192.168.50.2 192.168.50.3"} {
		if !strings.Contains(string(nd), w+"\n") {
			t.Errorf("networkd: no %q in\n%s", w, nd)
		}
	}
	if strings.Contains(string(nd), "DHCP=ipv4") {
		t.Errorf("networkd: DHCP on a static management interface\n%s", nd)
	}
}
