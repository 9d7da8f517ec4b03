package vcsimtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
)

// PciPassthruSystem is a host's HostPciPassthruSystem, which vcsim lacks
// (its hosts all point at an unregistered "ha-pcipassthrusystem").
// UpdatePassthruConfig switches GPUs to passthrough and sets SR-IOV VF counts;
// changes are active at once, as on a host that can rebind devices without a
// reboot, unless Options.NeedReboot is set or Options.NeedRebootHosts names
// the host: then they wait for Sim.Reboot, and the host's
// summary.rebootRequired is true until then.
type PciPassthruSystem struct {
	mo.HostPciPassthruSystem
	sim  *Sim
	host *simulator.HostSystem

	mu    sync.Mutex
	calls int
}

// UpdatePassthruConfig applies HostPciPassthruConfig / HostSriovConfig entries.
func (p *PciPassthruSystem) UpdatePassthruConfig(ctx *simulator.Context, req *types.UpdatePassthruConfig) soap.HasFault {
	body := &methods.UpdatePassthruConfigBody{}
	var fault *soap.Fault
	ctx.WithLock(p.host, func() {
		needReboot := p.sim.opts.NeedReboot || slices.Contains(p.sim.opts.NeedRebootHosts, p.host.Name)
		byID := map[string]types.BaseHostPciPassthruInfo{}
		for _, pi := range p.host.Config.PciPassthruInfo {
			byID[pi.GetHostPciPassthruInfo().Id] = pi
		}
		for _, c := range req.Config {
			cfg := c.GetHostPciPassthruConfig()
			pi, ok := byID[cfg.Id]
			if !ok {
				fault = simulator.Fault(fmt.Sprintf("no PCI device %s", cfg.Id), &types.InvalidArgument{InvalidProperty: "id"})
				return
			}
			if sc, ok := c.(*types.HostSriovConfig); ok {
				si, ok := pi.(*types.HostSriovInfo)
				if !ok || !si.SriovCapable {
					fault = simulator.Fault(fmt.Sprintf("%s is not SR-IOV capable", cfg.Id), &types.InvalidArgument{InvalidProperty: "sriovEnabled"})
					return
				}
				if sc.NumVirtualFunction > si.MaxVirtualFunctionSupported {
					fault = simulator.Fault(fmt.Sprintf("%d VFs > max %d", sc.NumVirtualFunction, si.MaxVirtualFunctionSupported), &types.InvalidArgument{InvalidProperty: "numVirtualFunction"})
					return
				}
				si.SriovEnabled, si.NumVirtualFunctionRequested = sc.SriovEnabled, sc.NumVirtualFunction
				if !needReboot {
					si.SriovActive, si.NumVirtualFunction = sc.SriovEnabled, sc.NumVirtualFunction
				} else if si.SriovActive != si.SriovEnabled || si.NumVirtualFunction != si.NumVirtualFunctionRequested {
					p.host.Summary.RebootRequired = true
				}
				continue
			}
			info := pi.GetHostPciPassthruInfo()
			if !info.PassthruCapable {
				fault = simulator.Fault(fmt.Sprintf("%s is not passthrough capable", cfg.Id), &types.InvalidArgument{InvalidProperty: "passthruEnabled"})
				return
			}
			info.PassthruEnabled = cfg.PassthruEnabled
			if !needReboot {
				info.PassthruActive = cfg.PassthruEnabled
			} else if info.PassthruActive != info.PassthruEnabled {
				p.host.Summary.RebootRequired = true
			}
		}
	})
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	if fault != nil {
		body.Fault_ = fault
		return body
	}
	body.Res = &types.UpdatePassthruConfigResponse{}
	return body
}

// Reboot reboots an ESXi host as far as passthrough goes: what
// UpdatePassthruConfig enabled becomes active (and what it disabled inactive),
// SR-IOV comes up with the requested VF count; summary.rebootRequired clears.
func (s *Sim) Reboot(esxi string) {
	h := s.hosts[esxi]
	s.Lock(h.Self, func() {
		h.Summary.RebootRequired = false
		for _, pi := range h.Config.PciPassthruInfo {
			switch pi := pi.(type) {
			case *types.HostSriovInfo:
				pi.SriovActive = pi.SriovEnabled
				pi.NumVirtualFunction = 0
				if pi.SriovEnabled {
					pi.NumVirtualFunction = pi.NumVirtualFunctionRequested
				}
			case *types.HostPciPassthruInfo:
				pi.PassthruActive = pi.PassthruEnabled
			}
		}
	})
}

// EnvironmentBrowser wraps vcsim's to add the simulated hosts' passthrough
// GPUs (once passthrough is active) and SR-IOV devices to QueryConfigTarget,
// each with the host's system id, and the vendor device groups of
// Options.DeviceGroups.
type EnvironmentBrowser struct {
	*simulator.EnvironmentBrowser
	sim *Sim
}

// QueryConfigTarget is vcsim's result plus PciPassthrough and Sriov entries.
func (b *EnvironmentBrowser) QueryConfigTarget(ctx *simulator.Context, req *types.QueryConfigTarget) soap.HasFault {
	body := b.EnvironmentBrowser.QueryConfigTarget(ctx, req).(*methods.QueryConfigTargetBody)
	if body.Res == nil || body.Res.Returnval == nil || req.Host == nil {
		return body
	}
	// A copy: vcsim may hand out a shared canned target.
	target := *body.Res.Returnval
	body.Res.Returnval = &target
	for name, h := range b.sim.hosts {
		if h.Self != *req.Host {
			continue
		}
		if g := b.sim.opts.DeviceGroups[name]; len(g) > 0 {
			target.VendorDeviceGroupInfo = slices.Concat(target.VendorDeviceGroupInfo, g)
		}
		ctx.WithLock(h, func() {
			devs := map[string]types.HostPciDevice{}
			for _, d := range h.Hardware.PciDevice {
				devs[d.Id] = d
			}
			for _, pi := range h.Config.PciPassthruInfo {
				switch pi := pi.(type) {
				case *types.HostSriovInfo:
					if pi.SriovActive {
						nic := ""
						for _, pn := range h.Config.Network.Pnic {
							if pn.Pci == pi.Id {
								nic = pn.Device
							}
						}
						target.Sriov = append(target.Sriov, types.VirtualMachineSriovInfo{
							VirtualMachinePciPassthroughInfo: types.VirtualMachinePciPassthroughInfo{
								VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: devs[pi.Id].DeviceName},
								PciDevice:                devs[pi.Id], SystemId: SystemID(name),
							},
							VirtualFunction: false, Pnic: nic,
						})
					}
				case *types.HostPciPassthruInfo:
					if pi.PassthruActive {
						target.PciPassthrough = append(target.PciPassthrough, &types.VirtualMachinePciPassthroughInfo{
							VirtualMachineTargetInfo: types.VirtualMachineTargetInfo{Name: devs[pi.Id].DeviceName},
							PciDevice:                devs[pi.Id], SystemId: SystemID(name),
						})
					}
				}
			}
		})
	}
	return body
}

// ModuleStore is an in-memory esxiapply.ModuleParams: per host and module, the
// parameter string, as `esxcli system module parameters list/set` would
// read and write it. Counts calls; can be told to fail for a host.
type ModuleStore struct {
	mu     sync.Mutex
	params map[string]string // host/module → string
	fail   map[string]error
	gets   int
	sets   int
}

var _ esxiapply.ModuleParams = (*ModuleStore)(nil)

// NewModuleStore returns an empty store.
func NewModuleStore() *ModuleStore {
	return &ModuleStore{params: map[string]string{}, fail: map[string]error{}}
}

// Get implements esxiapply.ModuleParams.
func (s *ModuleStore) Get(_ context.Context, h esxiapply.Host, module string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	if err := s.fail[h.Name]; err != nil {
		return "", err
	}
	return s.params[h.Name+"/"+module], nil
}

// Set implements esxiapply.ModuleParams.
func (s *ModuleStore) Set(_ context.Context, h esxiapply.Host, module, params string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets++
	if err := s.fail[h.Name]; err != nil {
		return err
	}
	s.params[h.Name+"/"+module] = strings.TrimSpace(params)
	return nil
}

// Params returns what is set for host and module.
func (s *ModuleStore) Params(host, module string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.params[host+"/"+module]
}

// Preset sets a host's parameter string as if set earlier by hand.
func (s *ModuleStore) Preset(host, module, params string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params[host+"/"+module] = params
}

// Fail makes every call for host fail with err (nil clears).
func (s *ModuleStore) Fail(host string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[host] = err
}

// Calls returns the number of Get and Set calls so far.
func (s *ModuleStore) Calls() (gets, sets int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets, s.sets
}

// Reset empties the store.
func (s *ModuleStore) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params = map[string]string{}
	s.gets, s.sets = 0, 0
}
