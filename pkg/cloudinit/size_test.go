package cloudinit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestGuestInfoSize: at 4,095 hosts (routes to every other host, 220 KB
// of YAML) gzip keeps guestinfo.metadata below 64 KiB, a size an
// ExtraConfig value carries without trouble (the bound is rdggen's own
// choice; vSphere documents none for guestinfo values that we rely on).
func TestGuestInfoSize(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: big\nswitches:\n")
	for i := range 64 {
		fmt.Fprintf(&b, "  - {name: sw-%d, model: SN4600C, onyx: 3.10.2000}\n", i)
	}
	b.WriteString("docker: {pool: 172.16.0.0/12, prefix: 24}\ndefaults:\n  os: ubuntu-22.04\n  data_interface: enp1f0\n  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]\n")
	b.WriteString("  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n  template: {name: t}\nhosts:\n")
	for i := range 4095 {
		fmt.Fprintf(&b, "  - {name: vm-%d, esxi: esx-%d, data: {address: 10.0.%d.%d/16, switch: sw-%d, port: 1/%d}}\n", i, i, (i+1)/256, (i+1)%256, i/64, i%64+1)
	}
	inv, err := inventory.Load("big.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	h := &inv.Hosts[100]
	gi := cloudinit.GuestInfo(inv, h, cloudinit.MACs{Mgmt: "00:50:56:00:00:01", Data: "00:50:56:00:00:02"})
	raw := len(cloudinit.GuestData(inv, h, cloudinit.MACs{Mgmt: "00:50:56:00:00:01", Data: "00:50:56:00:00:02"}))
	t.Logf("4,095 hosts: metadata %d bytes, guestinfo.metadata %d bytes (gzip+base64)", raw, len(gi[0].Value))
	if len(gi[0].Value) >= 64<<10 {
		t.Errorf("guestinfo.metadata is %d bytes", len(gi[0].Value))
	}
}
