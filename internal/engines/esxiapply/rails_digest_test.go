package esxiapply

import (
	"strings"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The record's digest of a VM of several rails covers each rail's PF: a
// record written when a rail's VF came from another PF, or by an rdggen
// that attached rail 0's VF alone (no rail lines), proves nothing.
func TestVMDigestRails(t *testing.T) {
	src := `name: d
switches:
  - {name: spine, model: SN5600, cumulus: 5.9.1, role: spine}
  - {name: leaf0, model: SN5600, cumulus: 5.9.1, role: leaf}
  - {name: leaf1, model: SN5600, cumulus: 5.9.1, role: leaf}
fabric:
  links:
    - {switch: leaf0, port: swp64, peer: spine, peer_port: swp1}
    - {switch: leaf1, port: swp64, peer: spine, peer_port: swp2}
docker: {version: "24.0"}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus: [{model: H100-PCIE-80GB, memory_gb: 80}, {model: H100-PCIE-80GB, memory_gb: 80}]
  nic: {model: ConnectX-7, pf: vmnic2, vfs: 4}
hosts:
  - name: a
    esxi: esx-0
    data:
      - {address: 10.0.0.11/24, switch: leaf0, port: swp1}
      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic3}
`
	digest := func(src string, pfs ...*pfPlan) string {
		inv, err := inventory.Load("d.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		netRef := types.ManagedObjectReference{Type: "Network", Value: "network-1"}
		st := &state{networks: map[types.ManagedObjectReference]network{netRef: {ref: netRef, name: inventory.DefaultPortGroup}}}
		host := &mo.HostSystem{Network: []types.ManagedObjectReference{netRef}}
		host.Self = types.ManagedObjectReference{Type: "HostSystem", Value: "host-1"}
		hp := &hostPlan{host: host, pfID: pfs[0].id, pfs: pfs}
		return vmDigest(st, hp, &inv.Hosts[0])
	}
	pf2, pf3, pf4 := &pfPlan{vmnic: "vmnic2", id: "0000:15:00.0"}, &pfPlan{vmnic: "vmnic3", id: "0000:1b:00.0"}, &pfPlan{vmnic: "vmnic4", id: "0000:8d:00.0"}
	base := digest(src, pf2, pf3)
	if base == "" {
		t.Fatal("no digest")
	}
	if d := digest(strings.Replace(src, "pf: vmnic3", "pf: vmnic4", 1), pf2, pf4); d == base {
		t.Error("rail 1's pf changed, the digest did not")
	}
	if d := digest(src, pf2, &pfPlan{vmnic: "vmnic3", id: "0000:1c:00.0"}); d == base {
		t.Error("rail 1's PF's PCI address changed, the digest did not")
	}
	if d := digest(strings.Replace(src, "      - {address: 10.0.1.11/24, switch: leaf1, port: swp1, pf: vmnic3}\n", "", 1), pf2); d == base || d == "" {
		t.Errorf("one rail and two digest alike (%q)", d)
	}
	if d := digest(src, pf2, pf3); d != base {
		t.Error("the digest is not a function of its inputs")
	}
}
