package vcsimtest

import (
	"fmt"
	"slices"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
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

// attachPF puts the host's PFs (nic.pf, and every rail's pf for VMs of
// several rails) on DataVSwitch (MTU 1500), or on the distributed switch's
// proxy switch, and registers the NetworkSystem. (vcsim accepts a
// distributed switch's maxMtu in ReconfigureDvs_Task but does not keep it,
// and wrapping its switch breaks vcsim's own type assertions: tests of
// that path check the request.) A rail's PF gets its uplink from the
// host's PCI tree (Options.PCITrees); until then the switch names a
// physical NIC the host does not list.
func (s *Sim) attachPF(h *simulator.HostSystem, pfs []string) {
	var keys []string
	for _, pf := range pfs {
		keys = append(keys, "key-vim.host.PhysicalNic-"+pf)
	}
	net := *h.Config.Network
	if s.opts.PFOnDVS {
		for _, obj := range s.Model.Map().All("DistributedVirtualSwitch") {
			d := obj.(*simulator.DistributedVirtualSwitch)
			net.ProxySwitch = append(net.ProxySwitch, types.HostProxySwitch{
				DvsUuid: d.Uuid, DvsName: d.Name, Key: d.Uuid, Pnic: keys, Mtu: 1500,
			})
			break
		}
	} else {
		net.Vswitch = append(append([]types.HostVirtualSwitch(nil), net.Vswitch...), types.HostVirtualSwitch{
			Name: DataVSwitch, Key: "key-vim.host.VirtualSwitch-" + DataVSwitch, NumPorts: 128, Mtu: 1500,
			Pnic: keys,
			Spec: types.HostVirtualSwitchSpec{NumPorts: 128, Mtu: 1500, Bridge: &types.HostVirtualSwitchBondBridge{NicDevice: slices.Clone(pfs)}},
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

// AddPortGroup puts a standard port group named name on DataVSwitch of
// ESXi host esxi, as `esxcli network vswitch standard portgroup add
// --portgroup-name NAME --vswitch-name vSwitch1` would on a real host
// (VMware's ESXCLI reference): config.network gets the port group (VLAN 0,
// on the vSwitch's list), and the host connects to the datacenter's
// network of that name (HostSystem.network), made when no other host has
// one yet, as vCenter shows one Network per name for the standard port
// groups of all its hosts. vcsim's own AddPortGroup does neither (it adds
// the port group to a vSwitch0 of its own and connects no host).
//
// Adding a port group the host has already is a no-op. Errors: no such
// host; the PF on a distributed switch (Options.PFOnDVS), which has no
// standard vSwitch for it; a datacenter entity of that name that is not a
// standard network (a distributed port group, say).
func (s *Sim) AddPortGroup(esxi, name string) error {
	h := s.hosts[esxi]
	if h == nil {
		return fmt.Errorf("no ESXi host %s", esxi)
	}
	if s.opts.PFOnDVS {
		return fmt.Errorf("port group %q on %s: the PF is on the distributed switch (Options.PFOnDVS), not on a standard vSwitch", name, esxi)
	}
	m := s.Model.Map()
	dcs := m.All("Datacenter")
	if len(dcs) == 0 {
		return fmt.Errorf("no datacenter")
	}
	dc := dcs[0].(*simulator.Datacenter)
	folder, ok := m.Get(dc.NetworkFolder).(*simulator.Folder)
	if !ok {
		return fmt.Errorf("no network folder")
	}
	ctx := &simulator.Context{}
	var ref types.ManagedObjectReference
	var err error
	m.WithLock(ctx, folder, func() {
		switch e := m.FindByName(name, folder.ChildEntity).(type) {
		case nil:
			n := &mo.Network{}
			n.Name = name
			m.NewEntity(n)
			n.Summary = &types.NetworkSummary{Network: &n.Self, Name: name, Accessible: true}
			// The folder's child first: a container view of the folder
			// (how apply finds the networks) sees it once it is there.
			folder.ChildEntity = append(folder.ChildEntity, n.Self)
			m.PutEntity(folder, n)
			m.AddReference(ctx, dc, &dc.Network, n.Self)
			ref = n.Self
		case *mo.Network:
			ref = e.Self
		default:
			err = fmt.Errorf("port group %q: the datacenter's %s of that name is not a standard network", name, e.Reference())
		}
	})
	if err != nil {
		return err
	}
	if n, ok := m.Get(ref).(*mo.Network); ok {
		m.AddReference(ctx, n, &n.Host, h.Self)
	}
	s.Lock(h.Self, func() {
		if slices.Contains(h.Network, ref) {
			return
		}
		// A clone: vcsim's hosts of one cluster share the cluster's slice.
		h.Network = append(slices.Clone(h.Network), ref)
		net := *h.Config.Network
		net.Vswitch = slices.Clone(net.Vswitch)
		for i := range net.Vswitch {
			if net.Vswitch[i].Name == DataVSwitch {
				net.Vswitch[i].Portgroup = append(slices.Clone(net.Vswitch[i].Portgroup), "key-vim.host.PortGroup-"+name)
			}
		}
		net.Portgroup = append(slices.Clone(net.Portgroup), types.HostPortGroup{
			Key: "key-vim.host.PortGroup-" + name, Vswitch: "key-vim.host.VirtualSwitch-" + DataVSwitch,
			Spec: types.HostPortGroupSpec{Name: name, VswitchName: DataVSwitch},
		})
		h.Config.Network = &net
	})
	return nil
}
