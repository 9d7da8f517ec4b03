package vcsimtest

import (
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
)

// KernelModuleSystem is a host's HostKernelModuleSystem, which vcsim lacks
// (its hosts all point at an unregistered "kernelModuleSystem"): the two
// methods rdggen calls, over the Sim's ModuleStore, so a test's reads and
// writes go through the real client as SOAP calls. As on ESXi,
// UpdateModuleOptionString replaces the module's whole option string and
// QueryConfiguredModuleOptionString returns it ("" when none is set)
// (VMware vSphere Web Services API reference, HostKernelModuleSystem).
type KernelModuleSystem struct {
	mo.HostKernelModuleSystem
	sim  *Sim
	host string // ESXi name
}

func (k *KernelModuleSystem) ref() esxiapply.Host { return esxiapply.Host{Name: k.host} }

// QueryConfiguredModuleOptionString returns the module's option string.
func (k *KernelModuleSystem) QueryConfiguredModuleOptionString(ctx *simulator.Context, req *types.QueryConfiguredModuleOptionString) soap.HasFault {
	body := &methods.QueryConfiguredModuleOptionStringBody{}
	v, err := k.sim.Modules.Get(ctx.Context, k.ref(), req.Name)
	if err != nil {
		body.Fault_ = simulator.Fault(err.Error(), &types.SystemError{Reason: err.Error()})
		return body
	}
	body.Res = &types.QueryConfiguredModuleOptionStringResponse{Returnval: v}
	return body
}

// UpdateModuleOptionString replaces the module's option string.
func (k *KernelModuleSystem) UpdateModuleOptionString(ctx *simulator.Context, req *types.UpdateModuleOptionString) soap.HasFault {
	body := &methods.UpdateModuleOptionStringBody{}
	if err := k.sim.Modules.Set(ctx.Context, k.ref(), req.Name, req.Options); err != nil {
		body.Fault_ = simulator.Fault(err.Error(), &types.SystemError{Reason: err.Error()})
		return body
	}
	body.Res = &types.UpdateModuleOptionStringResponse{}
	return body
}

// addKernelModuleSystem registers h's KernelModuleSystem.
func (s *Sim) addKernelModuleSystem(h *simulator.HostSystem, name string) {
	k := &KernelModuleSystem{sim: s, host: name}
	k.Self = types.ManagedObjectReference{Type: "HostKernelModuleSystem", Value: "kernelmodulesystem-" + h.Self.Value}
	s.Model.Map().Put(k)
	ref := k.Self
	h.ConfigManager.KernelModuleSystem = &ref
}
