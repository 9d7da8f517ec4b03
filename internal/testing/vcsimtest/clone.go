package vcsimtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Template is a VM template the harness creates: a powered-off VM with
// one vmxnet3 adapter on "VM Network", marked as a template.
type Template struct {
	// Name in vCenter; Firmware "efi" (the guide's) or "bios".
	Name, Firmware string
	// Version is the hardware version, e.g. "vmx-21" (default vmx-19).
	Version string
	// PoweredOn makes it a running VM instead: not marked as a template,
	// powered on.
	PoweredOn bool
}

// CloneFault is a clone that fails on the named ESXi host: the task ends
// with a fault carrying Message, as vCenter's does when the copy fails.
type CloneFault struct {
	Host, Message string
}

// templateVM wraps a template so that its CloneVM_Task behaves as
// vCenter's where vcsim's does not: the clone keeps the template's
// firmware (vcsim's clone drops it: its ConfigSpec copies only the size,
// version and guest id), and a clone onto a CloneFault host fails.
type templateVM struct {
	*simulator.VirtualMachine
	sim *Sim
}

// CloneVMTask clones like vcsim, then gives the clone the template's
// firmware, or fails for a CloneFault host.
func (t *templateVM) CloneVMTask(ctx *simulator.Context, req *types.CloneVM_Task) soap.HasFault {
	host := ""
	if h := req.Spec.Location.Host; h != nil {
		for name, hs := range t.sim.hosts {
			if hs.Self == *h {
				host = name
			}
		}
	}
	firmware := t.Config.Firmware
	// The task's entity is the clone-to-be, not the template: vcsim holds a
	// task's entity locked while it runs, which would make clones of one
	// template run one at a time, where vCenter runs them side by side.
	entity := ref{types.ManagedObjectReference{Type: "VirtualMachine", Value: "rdggen-clone-" + req.Name}}
	task := simulator.CreateTask(entity, "cloneVm", func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
		t.sim.cloneCalls.Add(1)
		n := t.sim.inFlight.Add(1)
		defer t.sim.inFlight.Add(-1)
		for {
			m := t.sim.maxInFlight.Load()
			if n <= m || t.sim.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(t.sim.opts.CloneDelay)
		for _, f := range t.sim.opts.CloneFaults {
			if f.Host == host {
				return nil, &types.FileFault{VimFault: types.VimFault{MethodFault: types.MethodFault{
					FaultCause: &types.LocalizedMethodFault{Fault: &types.SystemErrorFault{Reason: f.Message}, LocalizedMessage: f.Message}}}, File: "[LocalDS_0] " + req.Name}
			}
		}
		res := t.VirtualMachine.CloneVMTask(ctx, req).(*methods.CloneVM_TaskBody)
		if res.Fault_ != nil {
			return nil, res.Fault_.VimFault().(types.BaseMethodFault)
		}
		inner := ctx.Map.Get(res.Res.Returnval).(*simulator.Task)
		inner.Wait()
		if inner.Info.Error != nil {
			return nil, inner.Info.Error.Fault
		}
		cref := inner.Info.Result.(types.ManagedObjectReference)
		clone := ctx.Map.Get(cref).(*simulator.VirtualMachine)
		// vCenter gives a clone's adapters new generated MACs; vcsim
		// copies the template's.
		var devices []types.BaseVirtualDevice
		ctx.Map.WithLock(ctx, clone, func() {
			for i, d := range clone.Config.Hardware.Device {
				if card, ok := d.(types.BaseVirtualEthernetCard); ok {
					c := card.GetVirtualEthernetCard()
					sum := 0
					for _, r := range req.Name {
						sum = sum*31 + int(r)
					}
					c.MacAddress = fmt.Sprintf("00:50:56:%02x:%02x:%02x", (sum>>16)&0x3f, (sum>>8)&0xff, (sum+i)&0xff)
				}
			}
			devices = clone.Config.Hardware.Device
		})
		ctx.Map.AtomicUpdate(ctx, clone, []types.PropertyChange{{Name: "config.firmware", Val: firmware}, {Name: "config.hardware.device", Val: devices}})
		return cref, nil
	})
	return &methods.CloneVM_TaskBody{Res: &types.CloneVM_TaskResponse{Returnval: task.Run(ctx)}}
}

// ref is a bare managed object reference (a task's entity).
type ref struct{ types.ManagedObjectReference }

func (r ref) Reference() types.ManagedObjectReference { return r.ManagedObjectReference }

// createTemplates creates opts.Templates on the first ESXi host.
func (s *Sim) createTemplates(ctx context.Context) error {
	if len(s.opts.Templates) == 0 {
		return nil
	}
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
	var first *simulator.HostSystem
	for _, e := range s.inv.ESXiHosts() {
		if h := s.hosts[e]; h != nil {
			first = h
			break
		}
	}
	if first == nil {
		return fmt.Errorf("no ESXi host for the templates")
	}
	for _, t := range s.opts.Templates {
		version := t.Version
		if version == "" {
			version = "vmx-19"
		}
		spec := types.VirtualMachineConfigSpec{
			Name: t.Name, GuestId: "ubuntu64Guest", NumCPUs: 4, MemoryMB: 8192, Firmware: t.Firmware, Version: version,
			Files: &types.VirtualMachineFileInfo{VmPathName: "[LocalDS_0]"},
			DeviceChange: []types.BaseVirtualDeviceConfigSpec{&types.VirtualDeviceConfigSpec{
				Operation: types.VirtualDeviceConfigSpecOperationAdd,
				Device: &types.VirtualVmxnet3{VirtualVmxnet: types.VirtualVmxnet{VirtualEthernetCard: types.VirtualEthernetCard{
					VirtualDevice: types.VirtualDevice{Key: -1, Backing: backing},
				}}},
			}},
		}
		task, err := folders.VmFolder.CreateVM(ctx, spec, pool, object.NewHostSystem(c.Client, first.Self))
		if err != nil {
			return err
		}
		info, err := task.WaitForResult(ctx)
		if err != nil {
			return fmt.Errorf("create template %s: %w", t.Name, err)
		}
		ref := info.Result.(types.ManagedObjectReference)
		if t.PoweredOn {
			task, err := object.NewVirtualMachine(c.Client, ref).PowerOn(ctx)
			if err == nil {
				err = task.Wait(ctx)
			}
			if err != nil {
				return fmt.Errorf("power on %s: %w", t.Name, err)
			}
		} else if err := object.NewVirtualMachine(c.Client, ref).MarkAsTemplate(ctx); err != nil {
			return fmt.Errorf("mark %s as a template: %w", t.Name, err)
		}
		vm := s.Model.Map().Get(ref).(*simulator.VirtualMachine)
		s.Model.Map().Put(&templateVM{VirtualMachine: vm, sim: s})
	}
	return nil
}

// toolsHandler models VMware Tools in the guests: ToolsDelay after a VM
// powers on, its guest.toolsRunningStatus becomes guestToolsRunning,
// except for the VMs in Options.ToolsNever (a guest that does not boot).
type toolsHandler struct {
	sim  *Sim
	self types.ManagedObjectReference
	wg   sync.WaitGroup
}

func (h *toolsHandler) Reference() types.ManagedObjectReference { return h.self }

// PutObject is part of simulator.RegisterObject.
func (h *toolsHandler) PutObject(*simulator.Context, mo.Reference) {}

// RemoveObject is part of simulator.RegisterObject.
func (h *toolsHandler) RemoveObject(*simulator.Context, types.ManagedObjectReference) {}

// UpdateObject starts the guest's tools after a power-on.
func (h *toolsHandler) UpdateObject(ctx *simulator.Context, obj mo.Reference, changes []types.PropertyChange) {
	vm, ok := obj.(*mo.VirtualMachine)
	if !ok {
		return
	}
	on := slices.ContainsFunc(changes, func(c types.PropertyChange) bool {
		return c.Name == "runtime.powerState" && c.Val == types.VirtualMachinePowerStatePoweredOn
	})
	if !on || slices.Contains(h.sim.opts.ToolsNever, vm.Name) {
		return
	}
	ref := vm.Self
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		time.Sleep(h.sim.opts.ToolsDelay)
		if o := ctx.Map.Get(ref); o != nil {
			ctx.Map.AtomicUpdate(ctx, o, []types.PropertyChange{
				{Name: "guest.toolsRunningStatus", Val: string(types.VirtualMachineToolsRunningStatusGuestToolsRunning)},
				{Name: "guest.toolsStatus", Val: types.VirtualMachineToolsStatusToolsOk},
			})
		}
	}()
}

// MaxClonesInFlight is the most clones the templates ran at once.
func (s *Sim) MaxClonesInFlight() int { return int(s.maxInFlight.Load()) }

// CloneCalls is how many CloneVM_Task requests the templates received.
func (s *Sim) CloneCalls() int { return int(s.cloneCalls.Load()) }
