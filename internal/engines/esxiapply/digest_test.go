package esxiapply

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// vmDigestFmt is vmDigest as first written, with fmt.Fprintf: records
// written by it must stay valid.
func vmDigestFmt(st *state, hp *hostPlan, h *inventory.Host) string {
	a := vmx.SRIOVAdapter(h)
	net, ok := st.hostNetwork(hp.host, a.PortGroup)
	if !ok {
		return ""
	}
	d := sha256.New()
	w := func(format string, args ...any) { fmt.Fprintf(d, format+"\n", args...) }
	w("%s", RecordSchema)
	w("vm %q esxi %q host %s", h.VM, h.ESXi, hp.host.Self.Value)
	w("firmware %q reserve-all-memory %t", vmx.Firmware, vmx.ReserveAllMemory)
	for _, o := range vmx.ExtraConfig(h) {
		w("extra %q = %q", o.Key, o.Value)
	}
	for _, g := range h.GPUs {
		w("gpu %+v", g)
	}
	w("adapter %+v pf %q", a, hp.pfID)
	w("network %s key %q name %q", net.ref.Value, net.key, net.name)
	w("template %t", h.Template != nil)
	return hexSum(d)
}

// vmDigest hashes the lines vmDigestFmt hashed, for every VM of the
// reference inventory and for names that need quoting.
func TestVMDigestAsFprintf(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	hosts := inv.Hosts
	odd := hosts[0]
	odd.VM, odd.ESXi = "vm \"quoted\" ü\t\\", "esx\n1"
	odd.NIC.PortGroup = "pg \"x\""
	odd.Template = &inventory.Template{Name: "t"}
	hosts = append(hosts, odd)
	for i := range hosts {
		h := &hosts[i]
		netRef := types.ManagedObjectReference{Type: "Network", Value: fmt.Sprintf("network-%d", i)}
		st := &state{networks: map[types.ManagedObjectReference]network{netRef: {ref: netRef, name: h.NIC.PortGroup, key: "dvportgroup-\"7\""}}}
		host := &mo.HostSystem{Network: []types.ManagedObjectReference{netRef}}
		host.Self = types.ManagedObjectReference{Type: "HostSystem", Value: fmt.Sprintf("host-%d", i)}
		hp := &hostPlan{host: host, pfID: "0000:d8:00.0"}
		for range 2 { // the second time from plusV's cache
			if got, want := vmDigest(st, hp, h), vmDigestFmt(st, hp, h); got != want || got == "" {
				t.Fatalf("%s: vmDigest %s, as written with fmt %s", h.VM, got, want)
			}
		}
	}
}
