// Package vcsimtest is a test harness: govmomi's in-process vCenter simulator
// (vcsim) extended with what it lacks for rdggen (docs/architecture.md#vcenter-simulator):
// NVIDIA GPUs and a ConnectX PF with SR-IOV on every ESXi host, a per-host
// HostPciPassthruSystem that handles UpdatePassthruConfig, a QueryConfigTarget
// that lists passthrough and SR-IOV devices, a per-host
// HostKernelModuleSystem over an nmlx5_core parameter store, and on request
// a GPU server's PCI tree with its NUMA nodes (PCITree, pcitree.go).
//
// The model carries the inventory's names (ESXi hosts, VMs) and is served over
// HTTPS. Import it only from _test.go files and internal/lab (rdggen lab).
package vcsimtest

import (
	"context"
	"crypto/sha1"
	"crypto/tls"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Credentials the simulator accepts.
const (
	Username = "rdggen@vsphere.local"
	Password = "s3cret-pw"
)

// Options shape the simulated cluster.
type Options struct {
	// ExtraGPUs adds free NVIDIA devices of the first VM's first GPU model to
	// the named ESXi hosts (for ambiguity tests).
	ExtraGPUs map[string]int
	// MemoryMB of every VM, default 16384.
	MemoryMB int32
	// SkipVMs are inventory VMs not created (for "missing VM" tests).
	SkipVMs []string
	// SkipHosts are inventory ESXi hosts not created; their VMs are not
	// created either.
	SkipHosts []string
	// NeedReboot models hosts that cannot switch devices without a reboot:
	// UpdatePassthruConfig enables passthrough / SR-IOV (and records the VF
	// count) but leaves them inactive, and QueryConfigTarget does not offer
	// them, until Reboot.
	NeedReboot bool
	// NeedRebootHosts names ESXi hosts that wait for Reboot as with
	// NeedReboot, while the others (NeedReboot false) activate their
	// devices at once.
	NeedRebootHosts []string
	// DVPortGroups adds a distributed switch with this many port groups
	// (DC0_DVPG0, …) on every host.
	DVPortGroups int
	// PFOnDVS puts the PF on that distributed switch (needs DVPortGroups)
	// instead of the standard vSwitch DataVSwitch.
	PFOnDVS bool
	// NoSRIOV names ESXi hosts whose PF is not SR-IOV capable (a plain
	// simulator's NIC, or SR-IOV off in the BIOS).
	NoSRIOV []string
	// Templates are created on the first ESXi host (clone.go); CloneFaults
	// make clones onto a host fail.
	Templates   []Template
	CloneFaults []CloneFault
	// CloneDelay is how long each clone takes (default 0).
	CloneDelay time.Duration
	// ToolsDelay is how long after a power-on VMware Tools reports
	// running; ToolsNever names VMs whose tools never do.
	ToolsDelay time.Duration
	ToolsNever []string
	// ESXiVersion sets config.product.version of the named hosts
	// (vcsim's is 8.0.2).
	ESXiVersion map[string]string
	// PCITrees give the named ESXi hosts a PCI tree of GPUs, PCIe switches
	// and NIC ports with their NUMA nodes (Sim.SetPCITree).
	PCITrees map[string]PCITree
	// DeviceGroups are the vendor device groups the named ESXi hosts offer
	// (QueryConfigTarget's vendorDeviceGroupInfo, vSphere API 8.0.0.1),
	// which vcsim's canned config target lacks.
	DeviceGroups map[string][]types.VirtualMachineVendorDeviceGroupInfo
	// PortGroups are standard port groups put on DataVSwitch of the named
	// ESXi hosts (Sim.AddPortGroup), beside vcsim's "VM Network": the
	// inventory's nic.portgroup, for one.
	PortGroups map[string][]string
}

// Sim is a running simulator with the inventory's hosts and VMs.
type Sim struct {
	Model  *simulator.Model
	Server *simulator.Server
	// URL is the SDK endpoint (https, no credentials).
	URL *url.URL
	// CAFile is a PEM file with the server certificate (GOVC_TLS_CA_CERTS).
	CAFile string
	// Modules is the module parameter store behind every host's
	// HostKernelModuleSystem (also a esxiapply.ModuleParams of its own, which
	// skips SOAP).
	Modules *ModuleStore

	inv   *inventory.Inventory
	opts  Options
	ctx   *simulator.Context
	hosts map[string]*simulator.HostSystem // by ESXi name
	tools *toolsHandler
	// cloneCalls counts the templates' CloneVM_Task requests.
	cloneCalls, inFlight, maxInFlight atomic.Int64
	gpus                              map[string][]string // ESXi name → GPU PCI addresses
	pf                                map[string]string   // ESXi name → PF PCI address
}

// PFAddress is the PCI address of the ConnectX PF on every simulated host.
const PFAddress = "0000:d8:00.0"

// SystemID is the ESXi system id QueryConfigTarget reports for host.
func SystemID(host string) string {
	h := sha1.Sum([]byte(host))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// GPUAddress is the PCI address the simulator gives the i-th GPU of a host
// when the inventory names none.
func GPUAddress(i int) string { return fmt.Sprintf("0000:%02x:00.0", 0x20+i) }

// New builds and serves the simulator for inv.
func New(inv *inventory.Inventory, opts Options) (*Sim, error) {
	if opts.MemoryMB == 0 {
		opts.MemoryMB = 16384
	}
	skipHost := map[string]bool{}
	for _, h := range opts.SkipHosts {
		skipHost[h] = true
	}
	var esxi []string
	for _, e := range inv.ESXiHosts() {
		if !skipHost[e] {
			esxi = append(esxi, e)
		}
	}
	m := simulator.VPX()
	m.Datacenter, m.Cluster, m.ClusterHost, m.Host, m.Machine = 1, 1, len(esxi), 0, 0
	m.Portgroup = opts.DVPortGroups
	m.Autostart = false
	if err := m.Create(); err != nil {
		return nil, err
	}
	s := &Sim{Model: m, inv: inv, opts: opts, ctx: m.Service.Context, hosts: map[string]*simulator.HostSystem{},
		gpus: map[string][]string{}, pf: map[string]string{}, Modules: NewModuleStore()}

	// Rename the hosts to the inventory's names and add the devices.
	all := m.Map().All("HostSystem")
	slices.SortFunc(all, func(a, b mo.Entity) int { return compareRef(a.Reference(), b.Reference()) })
	if len(all) < len(esxi) {
		m.Remove()
		return nil, fmt.Errorf("vcsim made %d hosts, want %d", len(all), len(esxi))
	}
	for i, name := range esxi {
		h := all[i].(*simulator.HostSystem)
		h.Name = name
		h.Summary.Config.Name = name
		if v := opts.ESXiVersion[name]; v != "" {
			cfg := *h.Config
			cfg.Product.Version = v
			h.Config = &cfg
		}
		s.hosts[name] = h
		s.addDevices(h, name, opts.ExtraGPUs[name])
		s.attachPF(h, vmx.RailPFs(inv.HostsOnESXi(name)))
		pts := &PciPassthruSystem{sim: s, host: h}
		pts.Self = types.ManagedObjectReference{Type: "HostPciPassthruSystem", Value: "pcipassthru-" + h.Self.Value}
		m.Map().Put(pts)
		ref := pts.Self
		h.ConfigManager.PciPassthruSystem = &ref
		s.addKernelModuleSystem(h, name)
	}
	for _, name := range esxi {
		if t, ok := opts.PCITrees[name]; ok {
			s.SetPCITree(name, t)
		}
	}
	for _, name := range esxi {
		for _, pg := range opts.PortGroups[name] {
			if err := s.AddPortGroup(name, pg); err != nil {
				m.Remove()
				return nil, err
			}
		}
	}
	for _, ref := range m.Map().AllReference("EnvironmentBrowser") {
		m.Map().Put(&EnvironmentBrowser{EnvironmentBrowser: ref.(*simulator.EnvironmentBrowser), sim: s})
	}

	m.Service.TLS = new(tls.Config)
	m.Service.Listen = &url.URL{User: url.UserPassword(Username, Password)}
	s.Server = m.Service.NewServer()
	u := *s.Server.URL
	u.User = nil
	s.URL = &u
	ca, err := s.Server.CertificateFile()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.CAFile = ca
	if err := s.createVMs(opts, skipHost); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.createTemplates(context.Background()); err != nil {
		s.Close()
		return nil, err
	}
	s.tools = &toolsHandler{sim: s, self: types.ManagedObjectReference{Type: "RdggenTools", Value: "tools"}}
	m.Map().AddHandler(s.tools)
	return s, nil
}

func compareRef(a, b types.ManagedObjectReference) int {
	if len(a.Value) != len(b.Value) {
		return len(a.Value) - len(b.Value)
	}
	switch {
	case a.Value < b.Value:
		return -1
	case a.Value > b.Value:
		return 1
	}
	return 0
}

// addDevices gives host its GPUs (the inventory's addresses, or generated
// ones) and the ConnectX PF with its uplink, all passthrough-capable.
func (s *Sim) addDevices(h *simulator.HostSystem, name string, extra int) {
	var devs []types.HostPciDevice
	var info []types.BaseHostPciPassthruInfo
	n := 0
	var first *inventory.GPU
	addGPU := func(g inventory.GPU, id string) {
		devID := uint16(0x1db4)
		if ids := vmx.DeviceIDsFor(g); len(ids) > 0 {
			devID = ids[0]
		}
		var bus byte
		_, _ = fmt.Sscanf(id, "0000:%02x:", &bus)
		devs = append(devs, types.HostPciDevice{
			Id: id, ClassId: 0x0302, Bus: bus, VendorId: int16(vmx.NVIDIAVendorID), DeviceId: int16(devID),
			SubVendorId: int16(vmx.NVIDIAVendorID), VendorName: "NVIDIA Corporation", DeviceName: "NVIDIA " + g.Model,
		})
		info = append(info, &types.HostPciPassthruInfo{Id: id, DependentDevice: id, PassthruCapable: true})
		s.gpus[name] = append(s.gpus[name], id)
	}
	for _, vm := range s.inv.HostsOnESXi(name) {
		for _, g := range vm.GPUs {
			if first == nil {
				g := g
				first = &g
			}
			id := g.PCI
			if id == "" {
				id = GPUAddress(n)
				n++
			}
			addGPU(g, id)
		}
	}
	for i := 0; i < extra && first != nil; i++ {
		g := *first
		addGPU(g, GPUAddress(n))
		n++
	}
	nic, _ := vmx.HostNIC(s.inv, name)
	devs = append(devs, types.HostPciDevice{
		Id: PFAddress, ClassId: 0x0200, Bus: 0xd8, VendorId: 0x15b3, DeviceId: 0x1017,
		VendorName: "Mellanox Technologies", DeviceName: "MT27800 Family [" + nic.Model + "]",
	})
	maxVF := int32(nic.MaxVFs())
	if maxVF == 0 {
		maxVF = 127
	}
	info = append(info, &types.HostSriovInfo{
		HostPciPassthruInfo: types.HostPciPassthruInfo{Id: PFAddress, DependentDevice: PFAddress, PassthruCapable: true},
		SriovCapable:        !slices.Contains(s.opts.NoSRIOV, name), MaxVirtualFunctionSupported: maxVF,
	})
	s.pf[name] = PFAddress

	hw := *h.Hardware
	hw.PciDevice = append(slices.Clone(h.Hardware.PciDevice), devs...)
	h.Hardware = &hw
	h.Config.PciPassthruInfo = info
	if h.Config.Network != nil {
		net := *h.Config.Network
		net.Pnic = append(slices.Clone(net.Pnic), types.PhysicalNic{
			Key: "key-vim.host.PhysicalNic-" + nic.PF, Device: nic.PF, Pci: PFAddress, Driver: "nmlx5_core",
		})
		h.Config.Network = &net
	}
}

// createVMs creates the inventory's VMs on their hosts through the API, each
// powered off with firmware bios, one vmxnet3 NIC on "VM Network" and one
// unrelated ExtraConfig key (both must survive an apply).
func (s *Sim) createVMs(opts Options, skipHost map[string]bool) error {
	ctx := context.Background()
	c, err := s.Client(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = c.Logout(ctx) }()
	f, folders, pool, err := placement(ctx, c)
	if err != nil {
		return err
	}
	netw, err := f.Network(ctx, inventory.DefaultPortGroup)
	if err != nil {
		return err
	}
	backing, err := netw.EthernetCardBackingInfo(ctx)
	if err != nil {
		return err
	}
	skipVM := map[string]bool{}
	for _, v := range opts.SkipVMs {
		skipVM[v] = true
	}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range s.inv.Hosts {
		h := &s.inv.Hosts[i]
		if skipVM[h.VM] || skipHost[h.ESXi] {
			continue
		}
		host := object.NewHostSystem(c.Client, s.hosts[h.ESXi].Self)
		spec := types.VirtualMachineConfigSpec{
			Name: h.VM, GuestId: "ubuntu64Guest", NumCPUs: 8, MemoryMB: int64(opts.MemoryMB), Firmware: "bios",
			Files:       &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"},
			ExtraConfig: []types.BaseOptionValue{&types.OptionValue{Key: "guestinfo.rdggen.keep", Value: "yes"}},
			DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationAdd,
				Device: &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
					VirtualDevice: types.VirtualDevice{Key: -1, Backing: backing},
				}}},
			}},
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			task, err := folders.VmFolder.CreateVM(ctx, spec, pool, host)
			if err == nil {
				err = task.Wait(ctx)
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = fmt.Errorf("create VM %s: %w", h.VM, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// Client logs in to the simulator (TLS not verified: a harness client).
func (s *Sim) Client(ctx context.Context) (*govmomi.Client, error) {
	u := *s.URL
	u.User = url.UserPassword(Username, Password)
	return govmomi.NewClient(ctx, &u, true)
}

// Close stops the server and removes the model's files.
func (s *Sim) Close() {
	if s.tools != nil {
		s.tools.wg.Wait()
	}
	if s.Server != nil {
		s.Server.Close()
	}
	s.Model.Remove()
}

// GPUs returns the PCI addresses of the GPUs on an ESXi host.
func (s *Sim) GPUs(esxi string) []string { return slices.Clone(s.gpus[esxi]) }

// Host returns the simulator's host object (tests read it under Lock).
func (s *Sim) Host(esxi string) *simulator.HostSystem { return s.hosts[esxi] }

// Lock runs f with obj locked against the simulator's request handlers.
func (s *Sim) Lock(obj types.ManagedObjectReference, f func()) {
	s.Model.Map().WithLock(&simulator.Context{}, obj, f)
}
