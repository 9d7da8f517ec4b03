package vcsimtest

import (
	"fmt"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
)

// DataVSwitch is the standard vSwitch that carries the PF on every
// simulated host (unless Options.PFOnDVS).
const DataVSwitch = "vSwitch1"

// NetworkSystem is a host's HostNetworkSystem with UpdateVirtualSwitch,
// which vcsim lacks: it replaces the vSwitch's spec and so its MTU, in the
// host's config.network as a real host does.
type NetworkSystem struct {
	*simulator.HostNetworkSystem
	host *simulator.HostSystem
}

// UpdateVirtualSwitch sets a standard vSwitch's spec (its MTU included).
func (n *NetworkSystem) UpdateVirtualSwitch(ctx *simulator.Context, req *types.UpdateVirtualSwitch) soap.HasFault {
	body := &methods.UpdateVirtualSwitchBody{}
	found := false
	ctx.WithLock(n.host, func() {
		net := *n.host.Config.Network
		net.Vswitch = append([]types.HostVirtualSwitch(nil), net.Vswitch...)
		for i := range net.Vswitch {
			vs := &net.Vswitch[i]
			if vs.Name != req.VswitchName {
				continue
			}
			found = true
			vs.Spec = req.Spec
			if req.Spec.Mtu != 0 {
				vs.Mtu = req.Spec.Mtu
			}
		}
		n.host.Config.Network = &net
	})
	if !found {
		body.Fault_ = simulator.Fault(fmt.Sprintf("no vSwitch %s", req.VswitchName), &types.NotFound{})
		return body
	}
	body.Res = &types.UpdateVirtualSwitchResponse{}
	return body
}

// attachPF puts the host's PF on DataVSwitch (MTU 1500), or on the
// distributed switch's proxy switch, and registers the NetworkSystem. (vcsim
// accepts a distributed switch's maxMtu in ReconfigureDvs_Task but does not
// keep it, and wrapping its switch breaks vcsim's own type assertions:
// tests of that path check the request.)
func (s *Sim) attachPF(h *simulator.HostSystem, pf string) {
	key := "key-vim.host.PhysicalNic-" + pf
	net := *h.Config.Network
	if s.opts.PFOnDVS {
		for _, obj := range s.Model.Map().All("DistributedVirtualSwitch") {
			d := obj.(*simulator.DistributedVirtualSwitch)
			net.ProxySwitch = append(net.ProxySwitch, types.HostProxySwitch{
				DvsUuid: d.Uuid, DvsName: d.Name, Key: d.Uuid, Pnic: []string{key}, Mtu: 1500,
			})
			break
		}
	} else {
		net.Vswitch = append(append([]types.HostVirtualSwitch(nil), net.Vswitch...), types.HostVirtualSwitch{
			Name: DataVSwitch, Key: "key-vim.host.VirtualSwitch-" + DataVSwitch, NumPorts: 128, Mtu: 1500,
			Pnic: []string{key},
			Spec: types.HostVirtualSwitchSpec{NumPorts: 128, Mtu: 1500, Bridge: &types.HostVirtualSwitchBondBridge{NicDevice: []string{pf}}},
		})
	}
	h.Config.Network = &net
	if ns, ok := s.Model.Map().Get(*h.ConfigManager.NetworkSystem).(*simulator.HostNetworkSystem); ok {
		s.Model.Map().Put(&NetworkSystem{HostNetworkSystem: ns, host: h})
	}
}

// VSwitchMTU is the MTU of DataVSwitch on an ESXi host (0: none).
func (s *Sim) VSwitchMTU(esxi string) int32 {
	var mtu int32
	h := s.hosts[esxi]
	s.Lock(h.Self, func() {
		for _, vs := range h.Config.Network.Vswitch {
			if vs.Name == DataVSwitch {
				mtu = vs.Mtu
			}
		}
	})
	return mtu
}

// EditHostNetwork changes an ESXi host's config.network in place, as a
// change made on the host itself (esxcli, the host client) would: f gets a
// copy, which replaces the host's. false: no such host.
func (s *Sim) EditHostNetwork(esxi string, f func(net *types.HostNetworkInfo)) bool {
	h := s.hosts[esxi]
	if h == nil {
		return false
	}
	s.Lock(h.Self, func() {
		net := *h.Config.Network
		net.Vswitch = append([]types.HostVirtualSwitch(nil), net.Vswitch...)
		f(&net)
		h.Config.Network = &net
	})
	return true
}
