package esxiapply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railpair"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// The checks of the esxi target (readiness.Result.Check). Field names are
// the vSphere Web Services API reference's (developer.broadcom.com; the same
// in govmomi vim25/types). Per ESXi host (Machine = the inventory's esxi
// name):
const (
	// CheckExists: the ESXi host or VM is in vCenter, exactly once. Only
	// reported when it fails; the host's or VM's other checks are then
	// missing (or Unknown).
	CheckExists = "exists"
	// CheckRead: vCenter did not answer a read the host's checks need
	// (Unknown).
	CheckRead = "read"
	// CheckNIC: the inventory's uplink (nic.pf, a PhysicalNic device name)
	// exists, is SR-IOV capable (HostSriovInfo.sriovCapable) and supports
	// nic.vfs VFs (maxVirtualFunctionSupported); the problems that hold back
	// apply's NIC settings, with apply's message as Found. Subject: the
	// uplink ("vmnic4").
	CheckNIC = "nic"
	// CheckPassthrough: for each GPU of the host's VMs, DirectPath I/O is
	// enabled and active (HostPciPassthruInfo.passthruEnabled; passthruActive,
	// "enabled + rebooted"); for the PF, SR-IOV is enabled and active
	// (HostSriovInfo.sriovEnabled, sriovActive). Subject: the PCI address
	// ("0000:3b:00.0").
	CheckPassthrough = "passthrough"
	// CheckSRIOV: the PF's VF count: requested
	// (HostSriovInfo.numVirtualFunctionRequested) is the inventory's
	// nic.vfs, and present (numVirtualFunction) is the requested count.
	// Subject: the PF's PCI address.
	CheckSRIOV = "sriov"
	// CheckModuleParams: the nmlx5_core parameters configured on the host
	// (`esxcli system module parameters list -m nmlx5_core`; NVIDIA native
	// ESXi driver manual, "Module Parameters") are those apply sets, and the
	// PF's own value of the configured max_vfs (its entry of the per-port
	// list, vmx.NICPortIndex) is its numVirtualFunction (else the driver has
	// not loaded them yet: they take effect when it loads, at boot).
	// Subject: "nmlx5_core".
	CheckModuleParams = "module-params"
	// CheckMTU: the MTU in bytes of the virtual switch that carries the PF
	// (HostVirtualSwitch.mtu of a standard vSwitch, VMwareDVSConfigInfo.maxMtu
	// of a distributed switch) is at least the inventory's data_mtu. Subject:
	// the switch ("vSwitch vSwitch1", "distributed switch DSwitch").
	CheckMTU = "mtu"
	// CheckReboot: vCenter reports no pending reboot
	// (HostListSummary.rebootRequired, "whether or not the host requires a
	// reboot due to a configuration change").
	CheckReboot = "reboot"
)

// Per VM (Machine = the inventory's VM name):
const (
	// CheckPlacement: the VM runs on the ESXi host the inventory names
	// (VirtualMachineRuntimeInfo.host); passthrough devices belong to one
	// host.
	CheckPlacement = "placement"
	// CheckConfig: the settings apply manages (firmware, the 64-bit MMIO
	// ExtraConfig keys, the memory reservation, passthrough backings, the
	// SR-IOV adapter's port group): one failure per change apply would make,
	// Found and Expected its from and to; one pass when there is none.
	// Subject: the setting ("pciPassthru.64bitMMIOSizeGB", "firmware").
	CheckConfig = "config"
	// CheckPower: the VM is powered on (VirtualMachineRuntimeInfo.powerState
	// "poweredOn").
	CheckPower = "power"
	// CheckDevices: each GPU (VirtualPCIPassthrough) and the SR-IOV adapter
	// (VirtualSriovEthernetCard on the PF) is attached and, when the VM is
	// on, connected (VirtualDevice.connectable, VirtualDeviceConnectInfo
	// .connected; a device without connectable counts as connected). A
	// disconnected device's fix is govc device.connect (govmomi
	// cli/device/connect.go), which names devices as
	// object.VirtualDeviceList.Name does. Subject: the GPU's PCI address, or
	// "VF of vmnic4".
	CheckDevices = "devices"
	// CheckP2P: the PCIe peer-to-peer keys GPUDirect RDMA needs
	// (vmx.KeyAllowP2P, vmx.KeyRelaxACSforP2P) are set: a failure per key
	// apply would set, one pass otherwise. Subject: the key.
	CheckP2P = "p2p"
	// CheckNUMA: each of the VM's GPUs is on the NUMA node of the NIC's PF,
	// as the ESXi host reports its PCI devices per node
	// (HostNumaNode.pciId, "Segment:Bus:Device.Function"); across nodes
	// GPUDirect RDMA crosses the CPU interconnect, which NVIDIA's CUDA
	// documentation ("GPUDirect RDMA", Supported Systems) calls
	// performance-limited or unreliable. Reported only where the host lists
	// both devices: never a guess. Subject: the GPU's PCI address. For a VM
	// of several rails, one result per rail instead: the rail's VF (its
	// PF) is on the NUMA node of the rail's GPUs, or under their PCIe
	// switch, as the GPU–rail pairing (pkg/railpair) finds them; a pairing
	// that crosses sockets fails with the pairing's reason, one whose nodes
	// the host does not list is Unknown. Subject: "VF of vmnic5".
	CheckNUMA = "numa"
	// CheckDeviceGroups: for a VM of several rails, the vendor device groups
	// its ESXi host offers (QueryConfigTarget, vendorDeviceGroupInfo) and
	// the rails whose GPU and NIC each fits (railpair.DeviceGroups): a
	// report, never a requirement (rdggen attaches devices one by one), so
	// it passes, or is Unknown when the host could not be asked.
	CheckDeviceGroups = "device-groups"
)

// FixApply is the fix of whatever `rdggen apply --target esxi` sets.
const FixApply = "rdggen apply --target esxi"

// checkHostProps are the host properties Check reads beyond Apply's.
var checkHostProps = []string{"summary.rebootRequired", "hardware.numaInfo"}

// Check is `rdggen check --target esxi`: it reads vCenter and every ESXi
// host's nmlx5_core parameters and compares them with the inventory, without
// changing anything. Its calls are the retrieves of Apply's plan
// (CreateContainerView, RetrievePropertiesEx, DestroyView of its own view;
// a second RetrievePropertiesEx for the PCI device lists of hosts with a
// device to attach) and o.Modules.Get per host (by default one
// QueryConfiguredModuleOptionString); it never calls o.Modules.Set. It returns one
// readiness.Result per check (see the Check* names), each ESXi host in
// inventory order followed by its VMs. What it compares is Apply's plan: a
// check fails where apply would change something (Fix FixApply), and where
// a change apply made waits for the host's reboot (Fix "reboot ESXi host …
// (reboot needed: …)").
//
// o.Parallel bounds the parameter reads at once, o.Track hears the phases
// and the hosts whose parameters are being read; o.Modules nil means the
// HostKernelModuleSystem over the vSphere API (KernelModuleParams); DryRun, Out and Gate are
// ignored. The error is only for what stops every check: vCenter's state
// cannot be read, or ctx ended (then with the results so far).
func Check(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, o Options) ([]readiness.Result, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Modules == nil {
		o.Modules = KernelModuleParams{Client: c}
	}
	names := inv.ESXiHosts()
	o.Track.Phase(fmt.Sprintf("reading %d VM(s) and %d ESXi host(s) from vCenter", len(inv.Hosts), len(names)), 0)
	st, err := readState(ctx, c, vmReadOf(inv), inventoryVMs(inv), inv.ESXiHosts(), o.Parallel, checkHostProps...)
	if err != nil {
		return nil, err
	}
	o.Track.Phase(fmt.Sprintf("reading the %s parameters of %d ESXi host(s), %d at a time", vmx.NICModule, len(names), o.Parallel), 0)
	o.Modules = trackedModules{o.Modules, o.Track}
	hosts := planHosts(ctx, c, inv, st, o)
	var out []readiness.Result
	for _, hp := range hosts {
		out = append(out, hp.check(st, inv)...)
		for _, vp := range hp.vms {
			out = append(out, vp.check(st)...)
		}
	}
	return out, ctx.Err()
}

// trackedModules marks each host in flight on the tracker while its
// parameters are read, and refuses to set any.
type trackedModules struct {
	ModuleParams
	t *progress.Tracker
}

func (trackedModules) Set(context.Context, Host, string, string) error {
	return errors.New("check is read-only: it sets no module parameters")
}

func (m trackedModules) Get(ctx context.Context, h Host, module string) (string, error) {
	m.t.Begin("host " + h.Name)
	defer m.t.End("host " + h.Name)
	return m.ModuleParams.Get(ctx, h, module)
}

// results collects the results of one machine.
type results struct {
	machine string
	out     []readiness.Result
}

func (r *results) pass(check, subject, found string) {
	r.out = append(r.out, readiness.Result{Target: readiness.TargetESXi, Machine: r.machine, Check: check, Subject: subject, Status: readiness.Passed, Found: found})
}

func (r *results) fail(check, subject, found, expected, fix string) {
	r.out = append(r.out, readiness.Result{Target: readiness.TargetESXi, Machine: r.machine, Check: check, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fix})
}

func (r *results) unsure(check, subject, why string) {
	r.out = append(r.out, readiness.Result{Target: readiness.TargetESXi, Machine: r.machine, Check: check, Subject: subject, Status: readiness.Unknown, Found: why})
}

// rebootFix is the fix of a setting that waits for the host's boot.
func rebootFix(host, why string) string {
	return fmt.Sprintf("reboot ESXi host %s (reboot needed: %s)", host, why)
}

// check is the ESXi host's own checks.
func (hp *hostPlan) check(st *state, inv *inventory.Inventory) []readiness.Result {
	r := &results{machine: hp.name}
	switch n := len(st.hosts[hp.name]); {
	case n == 0:
		r.fail(CheckExists, "", "not in vCenter", fmt.Sprintf("ESXi host %s in vCenter", hp.name),
			fmt.Sprintf("add ESXi host %s to vCenter, or correct esxi in the inventory (it must be the name vCenter shows)", hp.name))
		return r.out
	case n > 1:
		r.fail(CheckExists, "", fmt.Sprintf("%d ESXi hosts named %s", n, hp.name), "one",
			fmt.Sprintf("rename or remove all but one ESXi host named %s in vCenter", hp.name))
		return r.out
	case hp.err != nil:
		r.unsure(CheckRead, "", hp.err.Error())
		return r.out
	}

	for _, pf := range hp.pfs {
		var fe *fixErr
		switch {
		case pf.blocked != nil && errors.As(pf.blocked, &fe):
			r.fail(CheckNIC, pf.vmnic, pf.blocked.Error(), fe.expected, fe.fix)
		case pf.blocked != nil:
			r.fail(CheckNIC, pf.vmnic, pf.blocked.Error(), "a usable uplink", "")
		default:
			sr := hp.sriovOf(pf.id)
			r.pass(CheckNIC, pf.vmnic, fmt.Sprintf("%s, SR-IOV capable, up to %d VFs", pf.id, sr.MaxVirtualFunctionSupported))
		}
	}

	for _, id := range hp.gpuIDs() {
		pi := hp.info[id]
		switch enabled, active := hp.passthruState(id); {
		case pi == nil || !pi.GetHostPciPassthruInfo().PassthruCapable:
			r.fail(CheckPassthrough, id, "not capable of passthrough", "enabled, active", biosFix(hp.name))
		case enabled && active:
			r.pass(CheckPassthrough, id, "enabled, active")
		case enabled:
			r.fail(CheckPassthrough, id, "enabled, not active", "active", rebootFix(hp.name, "passthrough takes effect at boot"))
		default:
			r.fail(CheckPassthrough, id, "disabled", "enabled, active", FixApply)
		}
	}
	if hp.blocked == nil {
		hp.checkSRIOV(r)
		hp.checkParams(r)
		hp.checkMTU(r, inv.DataMTU())
	}
	if hp.host.Summary.RebootRequired {
		r.fail(CheckReboot, "", "reboot required (vCenter: summary.rebootRequired)", "no reboot pending",
			rebootFix(hp.name, "vCenter reports configuration changes that take effect at boot"))
	} else {
		r.pass(CheckReboot, "", "no reboot pending")
	}
	return r.out
}

// gpuIDs lists the PCI addresses of the GPUs of the host's VMs: the ones
// the plan resolved, and the inventory's addresses of the VMs it could not
// plan; each once, in inventory order.
func (hp *hostPlan) gpuIDs() []string {
	var ids []string
	for _, vp := range hp.vms {
		for i, g := range vp.inv.GPUs {
			id := strings.ToLower(g.PCI)
			if i < len(vp.gpus) && vp.gpus[i] != "" {
				id = vp.gpus[i]
			}
			if id != "" && hp.info[id] != nil && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// hostChange is the planned host change of item, nil if none.
func (hp *hostPlan) hostChange(match func(item string) bool) *applyplan.Change {
	for i := range hp.changes {
		if match(hp.changes[i].Item) {
			return &hp.changes[i]
		}
	}
	return nil
}

// checkSRIOV: each PF's SR-IOV state (passthrough) and VF count (sriov).
func (hp *hostPlan) checkSRIOV(r *results) {
	for _, pf := range hp.pfs {
		sr := hp.sriovOf(pf.id)
		switch {
		case sr.SriovEnabled && sr.SriovActive:
			r.pass(CheckPassthrough, pf.id, "SR-IOV enabled, active")
		case sr.SriovEnabled:
			r.fail(CheckPassthrough, pf.id, "SR-IOV enabled, not active", "active", rebootFix(hp.name, "SR-IOV takes effect at boot"))
		default:
			r.fail(CheckPassthrough, pf.id, "SR-IOV disabled", "SR-IOV enabled, active", FixApply)
		}
		counts := fmt.Sprintf("%d VFs requested, %d present", sr.NumVirtualFunctionRequested, sr.NumVirtualFunction)
		if c := hp.hostChange(func(item string) bool { return item == "SR-IOV "+pf.vmnic }); c != nil {
			found := c.From
			if sr.SriovEnabled {
				found = "enabled, " + counts
			}
			r.fail(CheckSRIOV, pf.id, found, c.To, FixApply+", then reboot ESXi host "+hp.name+" (the VF count takes effect at boot)")
			continue
		}
		if sr.NumVirtualFunction != sr.NumVirtualFunctionRequested {
			r.fail(CheckSRIOV, pf.id, counts, fmt.Sprintf("%d VFs present", sr.NumVirtualFunctionRequested),
				rebootFix(hp.name, "the VF count takes effect at boot"))
			continue
		}
		r.pass(CheckSRIOV, pf.id, fmt.Sprintf("%d VFs", sr.NumVirtualFunction))
	}
}

// checkParams: the nmlx5_core parameters, configured and (as far as the
// PFs' VF counts tell) loaded.
func (hp *hostPlan) checkParams(r *results) {
	switch {
	case hp.paramsErr != nil:
		r.unsure(CheckModuleParams, vmx.NICModule, hp.paramsErr.Error())
		return
	case hp.paramsChanged:
		r.fail(CheckModuleParams, vmx.NICModule, quoteOrNone(hp.paramsCur), strconv.Quote(hp.paramsNew),
			FixApply+", then reboot ESXi host "+hp.name+" (module parameters take effect when the driver loads at boot)")
		return
	}
	// The configured string cannot say what the running driver got
	// (esxcli lists the configured values only); max_vfs can: each PF
	// runs its entry's VFs once the driver has loaded it.
	for _, pf := range hp.pfs {
		sr := hp.sriovOf(pf.id)
		if n, ok := maxVFs(hp.paramsCur, pf.port); ok && sr.NumVirtualFunction != int32(n) {
			r.fail(CheckModuleParams, vmx.NICModule,
				fmt.Sprintf("configured %q, but %s runs %d VFs: not loaded yet", hp.paramsCur, pf.vmnic, sr.NumVirtualFunction),
				fmt.Sprintf("loaded (%d VFs)", n),
				rebootFix(hp.name, "module parameters take effect when the driver loads at boot"))
			return
		}
	}
	r.pass(CheckModuleParams, vmx.NICModule, strconv.Quote(hp.paramsCur))
}

// maxVFs is the max_vfs value of the port at position port (the PF's,
// hostPlan.pfPort) in a parameter string; ok is false when the string
// sets no max_vfs or that value is not a number.
func maxVFs(params string, port int) (int, bool) {
	for _, p := range vmx.ParseParams(params) {
		if p.Name == vmx.ParamMaxVFs {
			return vmx.PortMaxVFs(p.Value, port)
		}
	}
	return 0, false
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return strconv.Quote(s)
}

// checkMTU: the MTU of each PF's virtual switch against data_mtu (bytes),
// once per switch.
func (hp *hostPlan) checkMTU(r *results, want int) {
	expected := fmt.Sprintf("at least %d (data_mtu)", want)
	var seen []string
	for _, pf := range hp.pfs {
		if pf.mtuSwitch != "" {
			if slices.Contains(seen, pf.mtuSwitch) {
				continue
			}
			seen = append(seen, pf.mtuSwitch)
		}
		switch {
		case pf.mtuUnread:
			r.unsure(CheckMTU, pf.mtuSwitch, fmt.Sprintf("%s is on %s, which vCenter did not list: its MTU cannot be read", pf.vmnic, pf.mtuSwitch))
			continue
		case pf.mtuSwitch == "" && want > 1500:
			r.fail(CheckMTU, pf.vmnic, "on no virtual switch (MTU 1500)", fmt.Sprintf("on the data network's virtual switch, MTU %s", expected),
				fmt.Sprintf("add %s to the vSwitch or distributed switch of the data network on ESXi host %s, then %s", pf.vmnic, hp.name, FixApply))
			continue
		case pf.mtuSwitch == "":
			r.pass(CheckMTU, pf.vmnic, "on no virtual switch (MTU 1500)")
			continue
		}
		if c := hp.hostChange(func(item string) bool {
			return item == pf.mtuSwitch+" mtu" || item == pf.mtuSwitch+" maxMtu"
		}); c != nil {
			r.fail(CheckMTU, pf.mtuSwitch, c.From, expected, FixApply)
			continue
		}
		r.pass(CheckMTU, pf.mtuSwitch, strconv.Itoa(int(pf.mtuCur)))
	}
}

// check is the VM's checks.
func (vp *vmPlan) check(st *state) []readiness.Result {
	hp, name := vp.host, vp.inv.VM
	r := &results{machine: name}
	vms := st.vms[name]
	switch {
	case vp.vm == nil && len(vms) == 0:
		r.fail(CheckExists, "", "not in vCenter", fmt.Sprintf("VM %s on ESXi host %s", name, hp.name),
			fmt.Sprintf("create VM %s on ESXi host %s, or correct vm (default: name) of %s in the inventory", name, hp.name, vp.inv.Name))
		return r.out
	case hp.err != nil:
		r.unsure(CheckConfig, "", "not checked: "+hp.err.Error())
		return r.out
	case vp.vm == nil && len(vms) > 1:
		r.fail(CheckExists, "", fmt.Sprintf("%d VMs named %s", len(vms), name), "one", fmt.Sprintf("rename all but one VM named %s in vCenter", name))
		return r.out
	case vp.vm == nil:
		where := "no host"
		if ref := vms[0].Runtime.Host; ref != nil {
			if o := st.hostName(*ref); o != "" {
				where = "ESXi host " + o
			}
		}
		r.fail(CheckPlacement, "", "on "+where, "on ESXi host "+hp.name,
			fmt.Sprintf("migrate VM %s to ESXi host %s (its passthrough devices belong to one host), or correct esxi of %s in the inventory", name, hp.name, vp.inv.Name))
		return r.out
	case vp.vm.Config == nil:
		r.unsure(CheckConfig, "", "its configuration cannot be read (is it inaccessible or orphaned?)")
		vp.checkPower(r, false)
		return r.out
	}

	// Errors of the plan, and the VM planned even if resolving its GPUs
	// failed (its other settings are still worth comparing).
	var errs []error
	if vp.err != nil && !vp.offErr {
		errs = append(errs, vp.err)
	}
	if !vp.planned {
		vp.err = nil
		planVM(st, vp)
		if vp.err != nil {
			errs = append(errs, vp.err)
		}
	}
	pending := false
	for _, c := range vp.changes {
		if c.Op == applyplan.Add {
			pending = true
			continue // a device to attach: CheckDevices
		}
		pending = true
		check := CheckConfig
		if vmx.IsP2P(c.Item) {
			check = CheckP2P
		}
		r.fail(check, c.Item, orUnset(c.From), c.To, vp.fix(slices.Contains(vp.coldOnly, c.Text)))
	}
	if !slices.ContainsFunc(r.out, func(x readiness.Result) bool { return x.Check == CheckConfig }) {
		r.pass(CheckConfig, "", vp.configText())
	}
	if !slices.ContainsFunc(r.out, func(x readiness.Result) bool { return x.Check == CheckP2P }) {
		r.pass(CheckP2P, "", vmx.KeyAllowP2P+"=TRUE; "+vmx.KeyRelaxACSforP2P+"=TRUE")
	}
	vp.checkPower(r, pending)

	reported := map[string]bool{}
	for _, err := range errs {
		var fe *fixErr
		if !errors.As(err, &fe) {
			r.unsure(CheckDevices, "", err.Error())
			continue
		}
		reported[fe.subject] = true
		r.fail(CheckDevices, fe.subject, err.Error(), fe.expected, fe.fix)
	}
	vp.checkDevices(r, reported)
	if vp.multiRail() {
		vp.checkRailNUMA(r)
		vp.checkGroups(r)
	} else {
		vp.checkNUMA(r)
	}
	return r.out
}

// checkNUMA compares the NUMA node of each resolved GPU with the PF's, where
// the host's hardware.numaInfo lists both (CheckNUMA).
func (vp *vmPlan) checkNUMA(r *results) {
	hp := vp.host
	if hp.host == nil || hp.host.Hardware == nil || hp.pfID == "" {
		return
	}
	node := numaNodes(hp.host.Hardware.NumaInfo)
	nicNode, ok := node[hp.pfID]
	if !ok {
		return
	}
	for _, id := range vp.gpus {
		gpuNode, ok := node[id]
		if id == "" || !ok {
			continue
		}
		found := fmt.Sprintf("GPU %s on NUMA node %d, NIC %s (%s) on node %d", id, gpuNode, hp.nic.PF, hp.pfID, nicNode)
		if gpuNode == nicNode {
			r.pass(CheckNUMA, id, found)
			continue
		}
		r.fail(CheckNUMA, id, found, fmt.Sprintf("the GPU on the NIC's NUMA node %d (GPUDirect RDMA otherwise crosses the CPU interconnect)", nicNode),
			fmt.Sprintf("pass VM %s a GPU of NUMA node %d (gpus[].pci in the inventory), or cable its data port to a NIC on node %d", vp.inv.VM, nicNode, gpuNode))
	}
}

// checkRailNUMA compares, rail by rail, the NUMA node of the rail's VF (its
// PF) with its GPUs', as the pairing found them (CheckNUMA).
func (vp *vmPlan) checkRailNUMA(r *results) {
	p := vp.pairing
	if p == nil {
		return
	}
	lines := p.Lines()
	for i, rail := range p.Rails {
		vf := vfSubject(rail.VMNIC)
		if len(rail.GPUs) == 0 {
			continue
		}
		var cross, unknown []railpair.GPU
		for _, g := range rail.GPUs {
			switch g.Locality {
			case railpair.CrossSocket:
				cross = append(cross, g)
			case railpair.Unknown:
				unknown = append(unknown, g)
			}
		}
		switch {
		case len(cross) > 0:
			var gs []string
			for _, g := range cross {
				gs = append(gs, fmt.Sprintf("GPU %s on node %d", g.PCI, g.Node))
			}
			r.fail(CheckNUMA, vf, fmt.Sprintf("%s (PF %s) on NUMA node %d, its %s", vf, rail.PF, rail.Node, strings.Join(gs, ", ")),
				"the VF on the NUMA node of its GPUs, or under their PCIe switch (GPUDirect RDMA otherwise crosses the CPU interconnect)",
				vp.railNUMAFix(rail, cross[0]))
		case len(unknown) > 0:
			r.unsure(CheckNUMA, vf, lines[i]+": "+unknownText(rail, unknown[0]))
		default:
			r.pass(CheckNUMA, vf, lines[i])
		}
	}
}

// unknownText says why a rail's pairing with g cannot be judged.
func unknownText(rail railpair.Rail, g railpair.GPU) string {
	switch {
	case rail.Node < 0 && g.Node < 0:
		return "the host lists no NUMA node for the GPU or the PF (hardware.numaInfo)"
	case g.Node < 0:
		return "the host lists no NUMA node for GPU " + g.PCI + " (hardware.numaInfo)"
	}
	return "the host lists no NUMA node for the PF (hardware.numaInfo)"
}

// railNUMAFix is the fix of rail's VF on another NUMA node than its GPU g:
// for a GPU the inventory places, its gpus[].pci or the rail's pf; for a
// GPU the VM has, removing it so that the pairing chooses again. A rail of
// the VM nearer to the GPU is named.
func (vp *vmPlan) railNUMAFix(rail railpair.Rail, g railpair.GPU) string {
	key := "nic.pf"
	if rail.Index > 0 {
		key = fmt.Sprintf("data[%d].pf", rail.Index)
	}
	var fix string
	if g.Slot < len(vp.inv.GPUs) && vp.inv.GPUs[g.Slot].PCI != "" {
		fix = fmt.Sprintf("set gpus[%d].pci of %s to a GPU on NUMA node %d, or %s to a NIC port on node %d, then %s", g.Slot, vp.inv.Name, rail.Node, key, g.Node, FixApply)
	} else {
		fix = fmt.Sprintf("free a GPU on NUMA node %d of ESXi host %s, shut down VM %s, remove GPU %s from it and run %s (the pairing then takes the free GPU), or set %s of %s to a NIC port on node %d",
			rail.Node, vp.host.name, vp.inv.VM, g.PCI, FixApply, key, vp.inv.Name, g.Node)
	}
	if g.Nearer >= 0 && g.Nearer < len(vp.pairing.Rails) {
		o := vp.pairing.Rails[g.Nearer]
		how := "is on its NUMA node"
		if g.NearerBy == railpair.SameSwitch {
			how = "shares its PCIe switch"
		}
		fix += fmt.Sprintf(" (rail %d's %s %s: gpus[].rail can pair GPU %s with rail %d)", o.Index, o.VMNIC, how, g.PCI, o.Index)
	}
	return fix
}

// checkGroups reports the vendor device groups the VM's host offers and
// the rails they fit (CheckDeviceGroups).
func (vp *vmPlan) checkGroups(r *results) {
	hp := vp.host
	switch {
	case vp.pairing == nil:
	case hp.groupsErr != nil:
		r.unsure(CheckDeviceGroups, "", "not read: "+hp.groupsErr.Error())
	default:
		var groups []string
		for _, n := range vp.notes {
			if strings.HasPrefix(n, "vendor device group ") {
				groups = append(groups, n)
			}
		}
		if len(groups) == 0 {
			r.pass(CheckDeviceGroups, "", "ESXi host "+hp.name+" offers no vendor device groups (none required)")
			return
		}
		r.pass(CheckDeviceGroups, "", strings.Join(groups, "; "))
	}
}

// numaNodes maps each PCI address (lower case) a host lists under a NUMA
// node (HostNumaNode.pciId) to the node's id.
func numaNodes(ni *types.HostNumaInfo) map[string]int {
	m := map[string]int{}
	if ni == nil {
		return m
	}
	for _, n := range ni.NumaNode {
		for _, id := range n.PciId {
			m[strings.ToLower(id)] = int(n.TypeId)
		}
	}
	return m
}

// vfSubject is the Subject of a VM's SR-IOV adapter on the uplink pf.
func vfSubject(pf string) string { return "VF of " + pf }

// fix is the fix of a VM setting: apply, after a shutdown when the change
// needs the VM off (rdggen does not power VMs off).
func (vp *vmPlan) fix(cold bool) string {
	if cold && vp.vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		return fmt.Sprintf("shut down VM %s, then %s", vp.inv.VM, FixApply)
	}
	return FixApply
}

// rebootThenApply is the fix of a device that waits for the host's reboot:
// the reboot, then the apply that attaches it (with the VM off: adding a
// device needs it powered off).
func (vp *vmPlan) rebootThenApply(why string) string {
	fix := rebootFix(vp.host.name, why) + ", then " + FixApply
	if vp.vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
		return fmt.Sprintf("shut down VM %s, %s and power on VM %s", vp.inv.VM, fix, vp.inv.VM)
	}
	return fix
}

// configText is the managed settings as they are, for a passed check.
func (vp *vmPlan) configText() string {
	parts := []string{"firmware " + vmx.Firmware}
	for _, o := range vmx.ExtraConfig(vp.inv) {
		if !vmx.IsP2P(o.Key) { // CheckP2P reports them
			parts = append(parts, o.Key+"="+o.Value)
		}
	}
	if vmx.ReserveAllMemory {
		parts = append(parts, fmt.Sprintf("%d MB reserved, locked", vp.vm.Config.Hardware.MemoryMB))
	}
	return strings.Join(parts, "; ")
}

// checkPower: powered on; pending says apply has changes for the VM first.
func (vp *vmPlan) checkPower(r *results, pending bool) {
	ps := vp.vm.Runtime.PowerState
	if ps == types.VirtualMachinePowerStatePoweredOn {
		r.pass(CheckPower, "", string(ps))
		return
	}
	fix := "power on VM " + vp.inv.VM
	if pending {
		fix = FixApply + ", then " + fix
	}
	r.fail(CheckPower, "", string(ps), string(types.VirtualMachinePowerStatePoweredOn), fix)
}

// checkDevices: every resolved GPU and the SR-IOV adapter attached, and
// connected when the VM is on; skip are the devices whose problem the plan
// already reported.
func (vp *vmPlan) checkDevices(r *results, skip map[string]bool) {
	hp := vp.host
	on := vp.vm.Runtime.PowerState == types.VirtualMachinePowerStatePoweredOn
	devs := object.VirtualDeviceList(vp.vm.Config.Hardware.Device)
	attached := func(subject string, d types.BaseVirtualDevice) {
		conn := d.GetVirtualDevice().Connectable
		switch {
		case !on:
			r.pass(CheckDevices, subject, "attached (VM not powered on: connection not checked)")
		case conn != nil && !conn.Connected:
			label := devs.Name(d)
			if info := d.GetVirtualDevice().DeviceInfo; info != nil && info.GetDescription().Label != "" {
				label = info.GetDescription().Label
			}
			r.fail(CheckDevices, subject, "attached, not connected", "connected",
				fmt.Sprintf("connect it: govc device.connect -vm %s %s (vSphere Client: Edit Settings → %s → Connected)", vp.inv.VM, devs.Name(d), label))
		default:
			r.pass(CheckDevices, subject, "attached, connected")
		}
	}
	byID := map[string]types.BaseVirtualDevice{}
	for _, d := range devs {
		if pt, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := pt.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				byID[strings.ToLower(b.Id)] = d
			}
		}
	}
	for _, id := range vp.gpus {
		if id == "" || skip[id] {
			continue // not resolved, or not usable: reported with the plan's error
		}
		if d := byID[id]; d != nil {
			attached(id, d)
			continue
		}
		switch enabled, active := hp.passthruState(id); {
		case active:
			r.fail(CheckDevices, id, "not attached", "attached", vp.fix(true))
		case enabled:
			r.fail(CheckDevices, id, "not attached", "attached", vp.rebootThenApply("passthrough of "+id+" is enabled, not active"))
		default:
			r.fail(CheckDevices, id, "not attached", "attached", FixApply)
		}
	}
	// Each rail's VF, from that rail's PF.
	cards := map[string]types.BaseVirtualDevice{} // by PF PCI address, the first
	for _, d := range devs {
		c, ok := d.(*types.VirtualSriovEthernetCard)
		if !ok || c.SriovBacking == nil || c.SriovBacking.PhysicalFunctionBacking == nil {
			continue
		}
		id := strings.ToLower(strings.TrimPrefix(c.SriovBacking.PhysicalFunctionBacking.Id, "Automatic-"))
		if cards[id] == nil {
			cards[id] = d
		}
	}
	var fe *fixErr
	for _, vmnic := range vp.railPFs() {
		vf := vfSubject(vmnic)
		pf := hp.pf(vmnic)
		if skip[vf] || pf == nil {
			continue
		}
		if card := cards[pf.id]; card != nil && pf.id != "" {
			attached(vf, card)
			continue
		}
		sr := hp.sriovOf(pf.id)
		switch {
		case hp.blocked != nil && errors.As(hp.blocked, &fe):
			r.fail(CheckDevices, vf, "not attached", "attached", fmt.Sprintf("first fix the NIC of ESXi host %s (its %s check): %s", hp.name, CheckNIC, fe.fix))
		case hp.blocked != nil:
			r.fail(CheckDevices, vf, "not attached", "attached", fmt.Sprintf("first fix the NIC of ESXi host %s (its %s check)", hp.name, CheckNIC))
		case sr.SriovActive:
			r.fail(CheckDevices, vf, "not attached", "attached", vp.fix(true))
		case sr.SriovEnabled && int(sr.NumVirtualFunctionRequested) == hp.nic.VFs:
			r.fail(CheckDevices, vf, "not attached", "attached", vp.rebootThenApply("SR-IOV on "+vmnic+" is enabled, not active"))
		default:
			r.fail(CheckDevices, vf, "not attached", "attached", FixApply)
		}
	}
}
