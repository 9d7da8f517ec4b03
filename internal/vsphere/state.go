package vsphere

import (
	"context"
	"fmt"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

// Properties read in the one retrieve. Only these paths are fetched, so the
// retrieve of thousands of VMs stays small.
var (
	vmProps = []string{
		"name", "runtime.host", "runtime.powerState", "environmentBrowser",
		"config.firmware", "config.extraConfig", "config.memoryReservationLockedToMax",
		"config.memoryAllocation.reservation", "config.hardware.memoryMB", "config.hardware.device",
	}
	hostProps = []string{
		"name", "network", "hardware.pciDevice", "config.pciPassthruInfo",
		"config.network.pnic", "configManager.pciPassthruSystem",
	}
	netProps  = []string{"name"}
	dvpgProps = []string{"name", "key"}
)

// state is vCenter as read at the start of an apply.
type state struct {
	vms      map[string][]*mo.VirtualMachine // by name; more than one is an error
	vmByRef  map[types.ManagedObjectReference]*mo.VirtualMachine
	hosts    map[string][]*mo.HostSystem // by name
	networks map[types.ManagedObjectReference]network
	// vmsOnHost lists every VM (inventory or not) registered on a host.
	vmsOnHost map[types.ManagedObjectReference][]*mo.VirtualMachine
}

// network is a standard port group (Network) or a distributed port group.
type network struct {
	ref  types.ManagedObjectReference
	name string
	key  string // distributed port group key; "" for a standard port group
}

// readState reads every VM, host and network of vCenter in one
// PropertyCollector retrieve over one container view (3 round trips:
// CreateContainerView, RetrievePropertiesEx, DestroyView; more only when
// vCenter pages a very large result).
func readState(ctx context.Context, c *vim25.Client) (*state, error) {
	m := view.NewManager(c)
	kinds := []string{"VirtualMachine", "HostSystem", "Network", "DistributedVirtualPortgroup"}
	v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, kinds, true)
	if err != nil {
		return nil, fmt.Errorf("create container view: %w", err)
	}
	defer func() { _ = v.Destroy(context.WithoutCancel(ctx)) }()

	spec := types.PropertyFilterSpec{
		ObjectSet: []types.ObjectSpec{{
			Obj:  v.Reference(),
			Skip: types.NewBool(true),
			SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{
				Type: "ContainerView", Path: "view", Skip: types.NewBool(false),
			}},
		}},
		PropSet: []types.PropertySpec{
			{Type: "VirtualMachine", PathSet: vmProps},
			{Type: "HostSystem", PathSet: hostProps},
			{Type: "Network", PathSet: netProps},
			{Type: "DistributedVirtualPortgroup", PathSet: dvpgProps},
		},
	}
	res, err := property.DefaultCollector(c).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{spec}})
	if err != nil {
		return nil, fmt.Errorf("retrieve VMs and hosts: %w", err)
	}
	byType := map[string][]types.ObjectContent{}
	for _, oc := range res.Returnval {
		byType[oc.Obj.Type] = append(byType[oc.Obj.Type], oc)
	}
	s := &state{
		vms:       map[string][]*mo.VirtualMachine{},
		vmByRef:   map[types.ManagedObjectReference]*mo.VirtualMachine{},
		hosts:     map[string][]*mo.HostSystem{},
		networks:  map[types.ManagedObjectReference]network{},
		vmsOnHost: map[types.ManagedObjectReference][]*mo.VirtualMachine{},
	}
	var vms []mo.VirtualMachine
	if err := mo.LoadObjectContent(byType["VirtualMachine"], &vms); err != nil {
		return nil, fmt.Errorf("decode VMs: %w", err)
	}
	for i := range vms {
		vm := &vms[i]
		s.vms[vm.Name] = append(s.vms[vm.Name], vm)
		s.vmByRef[vm.Self] = vm
		if vm.Runtime.Host != nil {
			s.vmsOnHost[*vm.Runtime.Host] = append(s.vmsOnHost[*vm.Runtime.Host], vm)
		}
	}
	var hosts []mo.HostSystem
	if err := mo.LoadObjectContent(byType["HostSystem"], &hosts); err != nil {
		return nil, fmt.Errorf("decode hosts: %w", err)
	}
	for i := range hosts {
		s.hosts[hosts[i].Name] = append(s.hosts[hosts[i].Name], &hosts[i])
	}
	var nets []mo.Network
	if err := mo.LoadObjectContent(byType["Network"], &nets); err != nil {
		return nil, fmt.Errorf("decode networks: %w", err)
	}
	for _, n := range nets {
		s.networks[n.Self] = network{ref: n.Self, name: n.Name}
	}
	var pgs []mo.DistributedVirtualPortgroup
	if err := mo.LoadObjectContent(byType["DistributedVirtualPortgroup"], &pgs); err != nil {
		return nil, fmt.Errorf("decode distributed port groups: %w", err)
	}
	for _, pg := range pgs {
		s.networks[pg.Self] = network{ref: pg.Self, name: pg.Name, key: pg.Key}
	}
	return s, nil
}

// hostNetwork returns the network named name that host is connected to.
func (s *state) hostNetwork(h *mo.HostSystem, name string) (network, bool) {
	for _, ref := range h.Network {
		if n, ok := s.networks[ref]; ok && n.name == name {
			return n, true
		}
	}
	return network{}, false
}

// hostNetworkNames lists the names of host's networks, for error messages.
func (s *state) hostNetworkNames(h *mo.HostSystem) []string {
	var out []string
	for _, ref := range h.Network {
		if n, ok := s.networks[ref]; ok {
			out = append(out, fmt.Sprintf("%q", n.name))
		}
	}
	return out
}
