package esxiapply

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railpair"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// hostPlan is what apply does on one ESXi host.
type hostPlan struct {
	inv  *inventory.Inventory
	name string
	host *mo.HostSystem // nil when vCenter has no such host
	err  error          // a host-level problem: every VM on the host fails with it
	vms  []*vmPlan
	nic  inventory.NIC

	devices map[string]*types.HostPciDevice          // hardware.pciDevice by id (see loadDevices)
	info    map[string]types.BaseHostPciPassthruInfo // config.pciPassthruInfo by id
	pfID    string                                   // PCI address of the NIC's PF (rail 0's, pfs[0])
	// pfPort is the PF's position (0 = first) among the host's nmlx5_core
	// ports in PCI order, its entry in max_vfs (vmx.NICPortIndex).
	pfPort int
	// pfs are the NIC ports (physical functions) the host's VMs take VFs
	// from: nic.pf, rail 0's, first, then the other rails' pf in rail
	// order (vmx.RailPFs), each once. One for an inventory of one rail.
	pfs []*pfPlan

	// partial: planned without the host's PCI device list (first retrieve
	// only); devices then holds what the VMs' attached backings say.
	// incomplete: that was not enough (a device to add or pick, a backing
	// that cannot vouch for its device, a VM of several rails to pair):
	// plan the host again with the list.
	partial, incomplete bool

	passthru []types.BaseHostPciPassthruConfig // UpdatePassthruConfig payload
	changes  []applyplan.Change                // the host's own changes
	reboot   []string                          // why the host needs a reboot

	// blocked is a problem of one of the host's PFs (no such uplink, no
	// SR-IOV, too few VFs; the first in rail order) that holds back its
	// SR-IOV, MTU and nmlx5_core changes and its VMs' SR-IOV adapters; the
	// rest (GPU passthrough, the VMs' other settings) is planned and
	// applied. The host counts as failed. It is a *fixErr (what Check
	// expects and the fix).
	blocked error

	paramsCur, paramsNew string
	paramsChanged        bool
	paramsErr            error // the parameters could not be read (see planHosts)

	// vswitchKey is the key of the vSwitch that carries rail 0's PF (""
	// if none; pfs[0].vswitchKey): the record's hint for the next apply's
	// read (record.go).
	vswitchKey string
	notes      []string

	// groupsErr says why the vendor device groups the host offers could
	// not be read (readGroups, for hosts with VMs of several rails; the
	// groups themselves are notes of those VMs).
	groupsErr error

	target *types.ConfigTarget // QueryConfigTarget, fetched only when a VM adds a device

	started, applied bool    // the apply began; it succeeded
	seconds          float64 // how long the host's own apply took
}

// pfPlan is one NIC port (physical function, PF) of an ESXi host that VFs
// are taken from, and what apply does on it.
type pfPlan struct {
	// vmnic is its uplink ("vmnic5"), key the inventory key that names it
	// ("nic.pf", "data[1].pf": the first rail that takes VFs from it).
	vmnic, key string
	// id is its PCI address (lower case), port its position among the
	// host's nmlx5_core ports in PCI order (its entry in max_vfs); blocked
	// its problem, if any (see hostPlan.blocked).
	id      string
	port    int
	blocked error

	// mtuSwitch names the virtual switch that carries the PF as planMTU
	// found it ("vSwitch vSwitch1", "distributed switch DVS0"; "" for none),
	// mtuCur its MTU in bytes; mtuUnread: a distributed switch vCenter did
	// not list. Check reports them.
	mtuSwitch string
	mtuCur    int32
	mtuUnread bool

	// The data MTU on the virtual switch of the PF (the VFs' ceiling):
	// vswitchSpec is the standard vSwitch's whole spec with the new MTU
	// (UpdateVirtualSwitch replaces the spec; nil: no change, or another
	// PF of the host carries the change of the same vSwitch); dvs is the
	// distributed switch the PF is on instead. vswitchKey is the key of
	// the vSwitch that carries it ("" if none).
	vswitch     string
	vswitchKey  string
	vswitchSpec *types.HostVirtualSwitchSpec
	dvs         *dvs
}

// vmPlan is what apply does on one VM.
type vmPlan struct {
	inv  *inventory.Host
	vm   *mo.VirtualMachine
	host *hostPlan
	err  error

	// planned: planVM ran (its changes are known). offErr: err is the
	// refusal of changes that need the VM powered off (planVMs), not a
	// problem of the plan itself.
	planned, offErr bool

	gpus []string // resolved PCI address per inventory GPU

	// pairing is the VM's GPUs paired with its rails (pkg/railpair), for
	// a VM of several rails planned with its host's PCI device list; nil
	// otherwise. notes are the plan's lines about it (the pairing, its
	// warnings, the virtual NUMA nodes, the vendor device groups), printed
	// with the VM's changes.
	pairing *railpair.Pairing
	notes   []string
	// vnode is the virtual NUMA node (VirtualDevice.numaNode) each of the
	// VM's GPUs (by PCI address) and each rail's VF (by rail, vfNode)
	// gets; nil when there is no assignment (railpair.Pairing.VNUMA).
	vnode  map[string]int32
	vfNode []int32

	spec     types.VirtualMachineConfigSpec
	changes  []applyplan.Change // what changes from what to what
	coldOnly []string           // the Text of changes that need the VM powered off
	addGPUs  []deviceAdd
	sriovs   []*sriovChange // one per rail whose adapter is added
	nextKey  int32

	// waiting lists device adds that wait for the host's reboot: passthrough
	// or SR-IOV is enabled but not active yet. They are not changes of this
	// run; the first apply after the reboot makes them. Device adds held
	// back by the host's blocked problem are listed here too (blockedBy).
	waiting   []string
	blockedBy bool

	started, applied bool    // the reconfigure began; it succeeded
	seconds          float64 // how long it took

	// proven is the VM's entry in the last apply's record when it proves
	// the VM unchanged (record.go): its device list was not read, and it
	// is not planned (nothing to change); gpus come from the entry.
	proven *VMRecord

	// clone is the VM's clone when Apply clones it (before the clone, vm
	// is nil); boot its first boot, when it still needs one (clone.go).
	clone *clonePlan
	boot  *firstBoot
}

// anyChange reports whether the VM has anything to do this run: a clone,
// a reconfiguration or a first boot.
func (p *vmPlan) anyChange() bool {
	return len(p.changes) > 0 || p.boot != nil || (p.clone != nil && p.vm == nil)
}

// deviceAdd is a GPU to attach; its backing is filled after QueryConfigTarget.
type deviceAdd struct {
	id     string // PCI address
	what   string // "add GPU …"
	line   string // plan line: what, qualified when it depends on this run
	active bool   // passthrough was active when planned (else switched on by this run)
}

// sriovChange is an SR-IOV adapter to add, a VF of rail's PF pf (an
// existing one on the PF is re-pointed by planVM directly).
type sriovChange struct {
	net        network
	pf         *pfPlan
	rail       int
	what, line string // as in deviceAdd
	active     bool   // SR-IOV was active on the PF when planned
}

func (p *vmPlan) changed() bool { return len(p.changes) > 0 }

// fixErr is a plan error that also says what Check expects instead and what
// clears it; Apply prints only the error. subject is the device it is about
// when Check reports it under CheckDevices ("" for the VM's GPUs as a whole).
type fixErr struct {
	error
	subject, expected, fix string
}

// fixable wraps err with what is expected and the fix.
func fixable(err error, expected, fix string) error { return &fixErr{err, "", expected, fix} }

// fixableAt is fixable about one device (see fixErr).
func fixableAt(subject string, err error, expected, fix string) error {
	return &fixErr{err, subject, expected, fix}
}

// postpone turns a planned device add (plan line line) into one that waits
// for the host's reboot: the device did not become available.
func (p *vmPlan) postpone(what, line, why string) {
	p.changes = slices.DeleteFunc(p.changes, func(c applyplan.Change) bool { return c.Text == line })
	p.coldOnly = slices.DeleteFunc(p.coldOnly, func(l string) bool { return l == line })
	p.waiting = append(p.waiting, what+": "+why)
}

// change plans one change of the VM; cold says it needs the VM powered off.
func (p *vmPlan) change(cold bool, c applyplan.Change) {
	p.changes = append(p.changes, c)
	if cold {
		p.coldOnly = append(p.coldOnly, c.Text)
	}
}

// hostChange plans one change of the ESXi host.
func (hp *hostPlan) change(op applyplan.Op, item, from, to, text string) {
	hp.changes = append(hp.changes, applyplan.Change{Op: op, Item: item, From: from, To: to, Text: text})
}

func (p *vmPlan) key() int32 {
	p.nextKey--
	return p.nextKey
}

// hexID is a PCI ID as the VMX and the API want it: hex of the unsigned 16-bit
// value ("1db4"), never the signed decimal the API reports (govmomi #2248).
func hexID(id int16) string { return strconv.FormatUint(uint64(uint16(id)), 16) }

// newHostPlan checks the ESXi host (planHost) and finds the inventory's VMs
// on it; planVMs then plans them.
func newHostPlan(inv *inventory.Inventory, st *state, name string) *hostPlan {
	hp := planHost(inv, st, name)
	for _, h := range inv.HostsOnESXi(name) {
		vp := &vmPlan{inv: h, host: hp}
		hp.vms = append(hp.vms, vp)
		if hp.err != nil {
			vp.err = hp.err
			continue
		}
		vp.clone = st.clones[h.VM]
		switch vms := st.vms[h.VM]; {
		case len(vms) == 0 && vp.clone != nil:
			vp.err = vp.clone.err // cloned by Apply, then planned again
		case len(vms) == 0 && h.Template != nil:
			vp.err = fmt.Errorf("VM %s not found in vCenter (`rdggen apply --target esxi` clones it from template %q)", h.VM, h.Template.Name)
		case len(vms) == 0:
			vp.err = fmt.Errorf("VM %s not found in vCenter", h.VM)
		case len(vms) > 1:
			vp.err = fmt.Errorf("%d VMs are named %s in vCenter; rename all but one", len(vms), h.VM)
		case vms[0].Runtime.Host == nil || *vms[0].Runtime.Host != hp.host.Self:
			where := "no host"
			if r := vms[0].Runtime.Host; r != nil {
				if o := st.hostName(*r); o != "" {
					where = o
				}
			}
			vp.err = fmt.Errorf("VM %s is on %s, the inventory places it on %s (passthrough devices belong to one host)", h.VM, where, name)
		default:
			vp.vm = vms[0]
			vp.proven = st.proven[vp.vm.Self]
		}
	}
	return hp
}

// planVMs resolves the GPUs and plans every VM of the host, then the host's
// passthrough switches. full says whether hp.host.Hardware holds the host's
// PCI device list (readDevices); without it the plan is partial and may come
// out incomplete (see loadDevices).
func (hp *hostPlan) planVMs(st *state, full bool) {
	if hp.err != nil {
		return
	}
	hp.partial = !full
	hp.loadDevices()
	hp.resolveGPUs(st)
	if hp.incomplete {
		return // planned again, with the device list
	}
	for _, vp := range hp.vms {
		if vp.err == nil && vp.vm != nil && vp.proven != nil {
			// Unchanged since the last apply found it matching: nothing to
			// plan but the checks of the first retrieve's facts.
			vp.err = passthroughLimitErr(hp.host, vp.proven.HW, vp.inv, "its")
			continue
		}
		if vp.err == nil && vp.vm != nil {
			planVM(st, vp)
			if vp.err == nil && vp.vm.Config != nil {
				vp.err = passthroughLimitErr(hp.host, vp.vm.Config.Version, vp.inv, "its")
			}
		}
		if hp.partial && (len(vp.addGPUs) > 0 || len(vp.waiting) > 0 || len(vp.sriovs) > 0) {
			// A device to add: its plan line and backing need the host's
			// description of it.
			hp.incomplete = true
		}
		if vp.err == nil && len(vp.coldOnly) > 0 && vp.vm != nil && vp.vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOff {
			vp.err = fmt.Errorf("VM %s is %s; these changes need it powered off: %s. rdggen does not power VMs off: shut it down, then re-run apply",
				vp.inv.VM, vp.vm.Runtime.PowerState, strings.Join(vp.coldOnly, "; "))
			vp.offErr = true
		}
	}
	hp.planPassthrough()
}

// loadDevices fills hp.devices. With the host's PCI device list (full plan),
// from it. Without (partial plan, the no-op case): from the passthrough
// backings attached to the host's inventory VMs, which rdggen wrote from that
// list: id, vendor and hex device id. Only a backing with a well-formed hex
// device id counts; anything it cannot answer marks the plan incomplete
// (device), and the host is planned again with the list. A partial plan that
// stays complete is the one the list would give, as long as the hardware
// behind an attached device was not swapped.
func (hp *hostPlan) loadDevices() {
	hp.devices = map[string]*types.HostPciDevice{}
	if !hp.partial {
		if h := hp.host.Hardware; h != nil {
			for i := range h.PciDevice {
				d := &h.PciDevice[i]
				hp.devices[strings.ToLower(d.Id)] = d
			}
		}
		return
	}
	for _, vp := range hp.vms {
		if vp.vm == nil || vp.vm.Config == nil {
			continue
		}
		for _, d := range vp.vm.Config.Hardware.Device {
			pt, ok := d.(*types.VirtualPCIPassthrough)
			if !ok {
				continue
			}
			b, ok := pt.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo)
			if !ok {
				continue
			}
			id, err := strconv.ParseUint(b.DeviceId, 16, 16)
			key := strings.ToLower(b.Id)
			if err != nil || hexID(int16(uint16(id))) != b.DeviceId || hp.devices[key] != nil {
				continue
			}
			hp.devices[key] = &types.HostPciDevice{Id: b.Id, VendorId: b.VendorId, DeviceId: int16(uint16(id)), DeviceName: b.DeviceName}
		}
	}
}

// device returns the host's PCI device at id (lower case), nil if none; in a
// partial plan a miss makes the plan incomplete.
func (hp *hostPlan) device(id string) *types.HostPciDevice {
	d := hp.devices[id]
	if d == nil && hp.partial {
		hp.incomplete = true
	}
	return d
}

// matches is vmx.MatchesDevice; in a partial plan only a model with known
// device ids can be checked against a backing (a name match is not enough
// to vouch for the backing's device id).
func (hp *hostPlan) matches(g inventory.GPU, d *types.HostPciDevice) bool {
	if hp.partial && len(vmx.DeviceIDsFor(g)) == 0 {
		hp.incomplete = true
	}
	return vmx.MatchesDevice(g, uint16(d.VendorId), uint16(d.DeviceId), d.DeviceName)
}

// firstVM is a VM of the host found in vCenter (for its environment browser).
func (hp *hostPlan) firstVM() *mo.VirtualMachine {
	for _, vp := range hp.vms {
		if vp.vm != nil {
			return vp.vm
		}
	}
	return nil
}

// planHost checks the ESXi host and computes its SR-IOV change; planVMs adds
// the passthrough switches for its VMs' GPUs.
func planHost(inv *inventory.Inventory, st *state, name string) *hostPlan {
	hp := &hostPlan{inv: inv, name: name}
	hp.nic, _ = vmx.HostNIC(inv, name)
	hosts := st.hosts[name]
	switch len(hosts) {
	case 0:
		hp.err = fmt.Errorf("ESXi host %s not found in vCenter", name)
		return hp
	case 1:
		hp.host = hosts[0]
	default:
		hp.err = fmt.Errorf("%d ESXi hosts are named %s in vCenter; rdggen needs one", len(hosts), name)
		return hp
	}
	h := hp.host
	hp.info = map[string]types.BaseHostPciPassthruInfo{}
	if h.Config != nil {
		for _, pi := range h.Config.PciPassthruInfo {
			hp.info[strings.ToLower(pi.GetHostPciPassthruInfo().Id)] = pi
		}
	}
	// The physical functions: each uplink's PCI address, its place among
	// the nmlx5_core ports (max_vfs has one value per port), and SR-IOV
	// on it; rail 0's (nic.pf) first, then the other rails' PFs.
	hp.pfs = []*pfPlan{{vmnic: hp.nic.PF, key: "nic.pf"}}
	for _, vm := range inv.HostsOnESXi(name) {
		for _, r := range vm.Rails {
			if r.PF != "" && !slices.ContainsFunc(hp.pfs, func(p *pfPlan) bool { return p.vmnic == r.PF }) {
				hp.pfs = append(hp.pfs, &pfPlan{vmnic: r.PF, key: fmt.Sprintf("data[%d].pf", r.Index)})
			}
		}
	}
	for _, pf := range hp.pfs {
		if pf.blocked = hp.checkPF(pf); pf.blocked != nil && hp.blocked == nil {
			hp.blocked = pf.blocked
		}
	}
	hp.pfID, hp.pfPort = hp.pfs[0].id, hp.pfs[0].port
	if hp.blocked != nil {
		return hp
	}
	var waits []devWait
	for _, pf := range hp.pfs {
		sr := hp.sriovOf(pf.id)
		if !sr.SriovEnabled || int(sr.NumVirtualFunctionRequested) != hp.nic.VFs {
			hp.passthru = append(hp.passthru, &types.HostSriovConfig{
				HostPciPassthruConfig: types.HostPciPassthruConfig{Id: sr.Id, PassthruEnabled: sr.PassthruEnabled},
				SriovEnabled:          true,
				NumVirtualFunction:    int32(hp.nic.VFs),
			})
			hp.change(applyplan.Update, "SR-IOV "+pf.vmnic, sriovState(sr), fmt.Sprintf("enabled, %d VFs", hp.nic.VFs),
				fmt.Sprintf("SR-IOV on %s (%s): %s → enabled, %d VFs", pf.vmnic, pf.id, sriovState(sr), hp.nic.VFs))
			waits = append(waits, devWait{pf.vmnic, setNow})
		} else if w := sriovWait(sr); w != "" {
			waits = append(waits, devWait{pf.vmnic, w}) // set earlier, waits for the reboot
		}
	}
	if why := deviceReason(whySRIOV, waits, 0, ""); why != "" {
		hp.reboot = append(hp.reboot, why)
	}
	for _, pf := range hp.pfs {
		hp.planMTU(st, pf, inv.DataMTU())
	}
	hp.vswitchKey = hp.pfs[0].vswitchKey
	return hp
}

// checkPF finds the PF's uplink and checks that it can give the VMs their
// VFs: an nmlx5_core port (the driver's parameters must reach it), SR-IOV
// capable, with nic.vfs VFs at most its maximum. The error is a *fixErr;
// the fix names the inventory key of the PF (pfPlan.key).
func (hp *hostPlan) checkPF(pf *pfPlan) error {
	h, name := hp.host, hp.name
	var uplinks []string
	var ports []vmx.NICPort
	driver := ""
	if h.Config != nil && h.Config.Network != nil {
		for _, pn := range h.Config.Network.Pnic {
			uplinks = append(uplinks, pn.Device)
			ports = append(ports, vmx.NICPort{Device: pn.Device, PCI: pn.Pci, Driver: pn.Driver})
			if pn.Device == pf.vmnic {
				pf.id, driver = strings.ToLower(pn.Pci), pn.Driver
			}
		}
	}
	if pf.id == "" {
		return fixable(fmt.Errorf("no uplink %s (uplinks: %s); check the inventory's %s", pf.vmnic, strings.Join(uplinks, ", "), pf.key),
			fmt.Sprintf("uplink %s on ESXi host %s", pf.vmnic, name),
			fmt.Sprintf("set %s in the inventory to the ConnectX uplink of %s (esxcli network nic list)", pf.key, name))
	}
	port, ok := vmx.NICPortIndex(ports, pf.vmnic)
	if !ok {
		return fixable(fmt.Errorf("%s (%s) is driven by %s, not %s: rdggen's %s parameters (max_vfs, PFC, trust, ECN) would not reach it", pf.vmnic, pf.id, driver, vmx.NICModule, vmx.NICModule),
			fmt.Sprintf("uplink %s driven by %s", pf.vmnic, vmx.NICModule),
			fmt.Sprintf("set %s in the inventory to the ConnectX uplink of %s (esxcli network nic list: Driver %s)", pf.key, name, vmx.NICModule))
	}
	pf.port = port
	sr, ok := hp.info[pf.id].(*types.HostSriovInfo)
	if !ok || !sr.SriovCapable {
		return fixable(fmt.Errorf("%s (%s) is not SR-IOV capable (enable SR-IOV in the BIOS and the NIC firmware)", pf.vmnic, pf.id),
			"SR-IOV capable",
			fmt.Sprintf("enable SR-IOV in the BIOS of ESXi host %s and in the NIC firmware (mlxconfig SRIOV_EN=1 NUM_OF_VFS>=%d), then reboot it", name, hp.nic.VFs))
	}
	if int(sr.MaxVirtualFunctionSupported) > 0 && hp.nic.VFs > int(sr.MaxVirtualFunctionSupported) {
		return fixable(fmt.Errorf("%s supports at most %d VFs, the inventory asks for %d", pf.vmnic, sr.MaxVirtualFunctionSupported, hp.nic.VFs),
			fmt.Sprintf("at least %d VFs supported", hp.nic.VFs),
			fmt.Sprintf("lower nic.vfs in the inventory to at most %d, or raise NUM_OF_VFS in the NIC firmware (mlxconfig) and reboot ESXi host %s", sr.MaxVirtualFunctionSupported, name))
	}
	return nil
}

// pf returns the host's PF whose uplink is vmnic (rail 0's when vmnic is
// ""), nil if none.
func (hp *hostPlan) pf(vmnic string) *pfPlan {
	if vmnic == "" && len(hp.pfs) > 0 {
		return hp.pfs[0]
	}
	for _, p := range hp.pfs {
		if p.vmnic == vmnic {
			return p
		}
	}
	return nil
}

// planMTU raises the MTU of the virtual switch that carries the PF to the
// data MTU: a VF's MTU cannot exceed its PF's, and the PF takes its switch's
// (HostVirtualSwitchSpec.mtu for a standard vSwitch, VMwareDVSConfigSpec.maxMtu
// for a distributed switch; vSphere Web Services API reference). A larger
// MTU is left as it is. A switch that carries several of the host's PFs
// is changed once.
func (hp *hostPlan) planMTU(st *state, pf *pfPlan, want int) {
	h := hp.host
	if h.Config == nil || h.Config.Network == nil {
		return
	}
	pnicKey := ""
	for _, pn := range h.Config.Network.Pnic {
		if pn.Device == pf.vmnic {
			pnicKey = pn.Key
		}
	}
	for i := range h.Config.Network.Vswitch {
		vs := &h.Config.Network.Vswitch[i]
		if !vswitchCarries(vs, pnicKey, pf.vmnic) {
			continue
		}
		pf.vswitchKey = vs.Key
		cur := vs.Mtu
		if cur == 0 {
			cur = vs.Spec.Mtu
		}
		if cur == 0 {
			cur = 1500 // vSphere's default
		}
		pf.mtuSwitch, pf.mtuCur = "vSwitch "+vs.Name, cur
		if int(cur) < want && !slices.ContainsFunc(hp.pfs, func(o *pfPlan) bool { return o.vswitch == vs.Name }) {
			spec := vs.Spec
			spec.Mtu = int32(want)
			pf.vswitch, pf.vswitchSpec = vs.Name, &spec
			hp.change(applyplan.Update, "vSwitch "+vs.Name+" mtu", strconv.Itoa(int(cur)), strconv.Itoa(want),
				fmt.Sprintf("vSwitch %s (uplink %s): MTU %d → %d", vs.Name, pf.vmnic, cur, want))
		}
		return
	}
	for _, ps := range h.Config.Network.ProxySwitch {
		if !slices.Contains(ps.Pnic, pnicKey) {
			continue
		}
		d := st.dvs[ps.DvsUuid]
		pf.mtuSwitch = "distributed switch " + ps.DvsName
		if d == nil {
			hp.notes = append(hp.notes, fmt.Sprintf("%s is on distributed switch %s, which vCenter did not list: its MTU is not checked", pf.vmnic, ps.DvsName))
			pf.mtuUnread = true
			return
		}
		pf.mtuSwitch, pf.mtuCur = "distributed switch "+d.name, d.maxMTU
		if !slices.Contains(d.hosts, hp.name) {
			d.hosts = append(d.hosts, hp.name)
		}
		if int(d.maxMTU) < want && !slices.ContainsFunc(hp.pfs, func(o *pfPlan) bool { return o.dvs == d }) {
			d.newMTU = int32(want)
			hp.change(applyplan.Update, "distributed switch "+d.name+" maxMtu", strconv.Itoa(int(d.maxMTU)), strconv.Itoa(want),
				fmt.Sprintf("distributed switch %s (uplink %s): maximum MTU %d → %d (one setting for all its hosts)", d.name, pf.vmnic, d.maxMTU, want))
		}
		pf.dvs = d
		return
	}
	if want > 1500 {
		hp.notes = append(hp.notes, fmt.Sprintf("%s is on no virtual switch: its MTU, the VFs' ceiling, stays at its default 1500; add it to the vSwitch or distributed switch of the data network", pf.vmnic))
	}
}

// passthruState reports whether passthrough is enabled and active for the device.
func (hp *hostPlan) passthruState(id string) (enabled, active bool) {
	if pi := hp.info[id]; pi != nil {
		info := pi.GetHostPciPassthruInfo()
		return info.PassthruEnabled, info.PassthruActive
	}
	return false, false
}

// sriovOf is the SR-IOV state of the PF at PCI address id (an empty one
// when the host lists none).
func (hp *hostPlan) sriovOf(id string) *types.HostSriovInfo {
	sr, _ := hp.info[id].(*types.HostSriovInfo)
	if sr == nil {
		return &types.HostSriovInfo{}
	}
	return sr
}

// waitText says why a device add waits, and until when.
func (hp *hostPlan) waitText(why string) string {
	return fmt.Sprintf("after ESXi host %s reboots (%s)", hp.name, why)
}

// onceText qualifies a device add that depends on this run's host change.
func (hp *hostPlan) onceText(what string) string {
	return fmt.Sprintf("when %s is active: now, or at the first apply after %s reboots", what, hp.name)
}

func sriovState(sr *types.HostSriovInfo) string {
	if !sr.SriovEnabled {
		return "disabled"
	}
	return fmt.Sprintf("enabled, %d VFs", sr.NumVirtualFunctionRequested)
}

// planPassthrough adds the passthrough switch for every GPU the host's
// healthy VMs use.
func (hp *hostPlan) planPassthrough() {
	seen := map[string]bool{}
	var waits []devWait
	for _, vp := range hp.vms {
		if vp.err != nil {
			continue
		}
		for i, id := range vp.gpus {
			if seen[id] || id == "" { // "": picked once the clone exists
				continue
			}
			seen[id] = true
			pi := hp.info[id]
			if pi == nil || !pi.GetHostPciPassthruInfo().PassthruCapable {
				vp.err = fixableAt(id, fmt.Errorf("GPU %s on %s is not capable of passthrough (check VT-d and above-4G decoding in the BIOS)", id, hp.name),
					"passthrough capable", biosFix(hp.name))
				continue
			}
			info := pi.GetHostPciPassthruInfo()
			if !info.PassthruEnabled {
				hp.passthru = append(hp.passthru, &types.HostPciPassthruConfig{Id: info.Id, PassthruEnabled: true})
				hp.change(applyplan.Update, "passthrough "+id, "off", "on",
					fmt.Sprintf("passthrough of GPU %s (%s gpus[%d] %s): off → on", id, vp.inv.VM, i, vp.inv.GPUs[i].Model))
				waits = append(waits, devWait{id, setNow})
			} else if w := gpuWait(pi); w != "" {
				waits = append(waits, devWait{id, w}) // set earlier, waits for the reboot
			}
		}
	}
	slices.SortStableFunc(waits, func(a, b devWait) int { return strings.Compare(a.dev, b.dev) })
	if why := deviceReason(whyGPU, waits, gpusNamed, "GPUs"); why != "" {
		hp.reboot = append(hp.reboot, why)
	}
}

// usedBy maps each PCI address passed through on the host to the VM using it.
func usedBy(st *state, h *mo.HostSystem) map[string]string {
	out := map[string]string{}
	for _, vm := range st.vmsOnHost[h.Self] {
		for _, id := range st.passthroughOf(vm) {
			out[id] = vm.Name
		}
	}
	return out
}

// usedByOther names a VM on host h other than vm that holds the GPU at id
// ("" if none).
func usedByOther(st *state, h *mo.HostSystem, id string, vm *mo.VirtualMachine) string {
	for _, o := range st.vmsOnHost[h.Self] {
		if o.Self != vm.Self && slices.Contains(st.passthroughOf(o), id) {
			return o.Name
		}
	}
	return ""
}

// vmPassthroughIDs lists the PCI addresses of a VM's DirectPath devices.
func vmPassthroughIDs(vm *mo.VirtualMachine) []string {
	if vm.Config == nil {
		return nil
	}
	var out []string
	for _, d := range vm.Config.Hardware.Device {
		if pt, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := pt.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				out = append(out, strings.ToLower(b.Id))
			}
		}
	}
	return out
}

func deviceText(d *types.HostPciDevice) string {
	return fmt.Sprintf("%s %s (%s:%s)", d.Id, d.DeviceName, hexID(d.VendorId), hexID(d.DeviceId))
}

// resolveGPUs gives every GPU of the host's VMs a PCI address: the inventory's,
// checked against the host, or one picked among the host's free NVIDIA devices
// of the model. A VM whose GPUs cannot be resolved gets an error.
func (hp *hostPlan) resolveGPUs(st *state) {
	used := usedBy(st, hp.host)
	claimed := map[string]string{} // PCI address → inventory VM, this run
	defer func() {
		if hp.partial {
			for _, vp := range hp.vms {
				if vp.err != nil && vp.vm != nil {
					// Maybe only for want of the device list: plan again.
					hp.incomplete = true
				}
			}
		}
	}()
	for _, vp := range hp.vms {
		vp.gpus = make([]string, len(vp.inv.GPUs))
		if vp.err != nil {
			continue
		}
		if vp.proven != nil {
			copy(vp.gpus, vp.proven.GPUs)
			for i, id := range vp.gpus {
				claimed[id] = vp.inv.VM
				// As in a whole read: a GPU the inventory places that
				// another VM also holds fails the VM.
				if other := usedByOther(st, hp.host, id, vp.vm); other != "" && vp.inv.GPUs[i].PCI != "" && vp.err == nil {
					vp.err = fixable(fmt.Errorf("gpus[%d]: GPU %s on %s is already passed through to VM %s", i, id, hp.name, other),
						fmt.Sprintf("a free %s at %s on ESXi host %s", vp.inv.GPUs[i].Model, id, hp.name),
						fmt.Sprintf("remove GPU %s from VM %s, or correct gpus[%d].pci of %s in the inventory", id, other, i, vp.inv.Name))
				}
			}
			continue
		}
		for i, g := range vp.inv.GPUs {
			if g.PCI == "" {
				continue
			}
			d := hp.device(g.PCI)
			want := fmt.Sprintf("a free %s at %s on ESXi host %s", g.Model, g.PCI, hp.name)
			fixPCI := fmt.Sprintf("correct gpus[%d].pci of %s in the inventory", i, vp.inv.Name)
			switch {
			case d == nil:
				vp.err = fixable(fmt.Errorf("gpus[%d]: no PCI device %s on ESXi host %s", i, g.PCI, hp.name), want, fixPCI)
			case !hp.matches(g, d):
				vp.err = fixable(fmt.Errorf("gpus[%d]: %s on %s is %s, not a %s", i, g.PCI, hp.name, deviceText(d), g.Model), want, fixPCI)
			case used[g.PCI] != "" && used[g.PCI] != vp.inv.VM:
				vp.err = fixable(fmt.Errorf("gpus[%d]: GPU %s on %s is already passed through to VM %s", i, g.PCI, hp.name, used[g.PCI]), want,
					fmt.Sprintf("remove GPU %s from VM %s, or %s", g.PCI, used[g.PCI], fixPCI))
			default:
				vp.gpus[i] = g.PCI
				claimed[g.PCI] = vp.inv.VM
			}
		}
	}
	// VMs of several rails: their GPUs are paired with the rails by the
	// host's PCI tree (rails.go), which only the device list describes.
	var rh *railpair.Host
	for _, vp := range hp.vms {
		if vp.err != nil || vp.vm == nil || vp.proven != nil || !vp.multiRail() {
			continue
		}
		if hp.partial {
			hp.incomplete = true
			return
		}
		if rh == nil {
			h := railpair.FromHost(hp.host)
			rh = &h
		}
		hp.pairGPUs(*rh, vp, claimed, used)
	}
	// GPUs without an address: first the matching ones the VM already has
	// (a second apply keeps them), then free ones if the choice is unique.
	type want struct {
		vp  *vmPlan
		idx []int
	}
	waiting := map[string][]want{} // by model
	for _, vp := range hp.vms {
		if vp.err != nil || vp.vm == nil || vp.proven != nil || vp.multiRail() {
			continue
		}
		var have []string
		for _, id := range vmPassthroughIDs(vp.vm) {
			if claimed[id] == "" {
				have = append(have, id)
			}
		}
		var missing []int
		for i, g := range vp.inv.GPUs {
			if g.PCI != "" {
				continue
			}
			found := false
			for k, id := range have {
				if d := hp.device(id); d != nil && hp.matches(g, d) {
					vp.gpus[i], claimed[id] = id, vp.inv.VM
					have = slices.Delete(have, k, k+1)
					found = true
					break
				}
			}
			if !found {
				missing = append(missing, i)
			}
		}
		if len(missing) > 0 {
			key := modelKey(vp.inv.GPUs[missing[0]])
			waiting[key] = append(waiting[key], want{vp, missing})
		}
	}
	if len(waiting) > 0 && hp.partial {
		// Free devices are only in the host's device list.
		hp.incomplete = true
		return
	}
	for _, ws := range waiting {
		g := ws[0].vp.inv.GPUs[ws[0].idx[0]]
		var free, busy []string
		for id, d := range hp.devices {
			if !vmx.MatchesDevice(g, uint16(d.VendorId), uint16(d.DeviceId), d.DeviceName) || claimed[id] != "" {
				continue
			}
			if vm := used[id]; vm != "" {
				busy = append(busy, fmt.Sprintf("%s is passed through to VM %s", id, vm))
				continue
			}
			free = append(free, id)
		}
		slices.Sort(free)
		slices.Sort(busy)
		need := 0
		var names []string
		for _, w := range ws {
			need += len(w.idx)
			names = append(names, w.vp.inv.VM)
		}
		var err error
		want := fmt.Sprintf("one free %s on ESXi host %s for each GPU without a pci address", g.Model, hp.name)
		setPCI := "set gpus[].pci in the inventory"
		switch {
		case len(free) < need:
			err = fmt.Errorf("needs %d more %s on ESXi host %s but %d are free", need, g.Model, hp.name, len(free))
			if len(busy) > 0 {
				err = fmt.Errorf("%w: GPU %s", err, strings.Join(busy, ", "))
			}
			err = fixable(err, want, fmt.Sprintf("free %d %s on ESXi host %s (remove them from the VMs that have them) or list fewer gpus in the inventory", need-len(free), g.Model, hp.name))
		case len(ws) > 1:
			err = fixable(fmt.Errorf("GPUs without a pci address: VMs %s on ESXi host %s all need %s and which device goes to which VM would be a guess (free: %s); set gpus[].pci in the inventory",
				strings.Join(names, ", "), hp.name, g.Model, strings.Join(free, ", ")), want, setPCI)
		case len(free) > need:
			err = fixable(fmt.Errorf("GPUs without a pci address: %d %s on ESXi host %s are free for %d GPU(s) (%s), so the choice would be a guess; set gpus[].pci in the inventory",
				len(free), g.Model, hp.name, need, strings.Join(free, ", ")), want, setPCI)
		}
		for _, w := range ws {
			if err != nil {
				w.vp.err = err
				continue
			}
			for _, i := range w.idx {
				w.vp.gpus[i], free = free[0], free[1:]
			}
		}
	}
}

// planVM compares one VM with the inventory and builds its ConfigSpec (without
// the new devices' backings, which need QueryConfigTarget).
func planVM(st *state, vp *vmPlan) {
	vp.planned = true
	vm, h := vp.vm, vp.inv
	cfg := vm.Config
	if cfg == nil {
		vp.err = fmt.Errorf("VM %s: its configuration cannot be read (is it inaccessible or orphaned?)", h.VM)
		return
	}
	// Firmware.
	if cfg.Firmware != vmx.Firmware {
		vp.spec.Firmware = vmx.Firmware
		vp.change(true, applyplan.Change{Op: applyplan.Update, Item: "firmware", From: cfg.Firmware, To: vmx.Firmware,
			Text: fmt.Sprintf("firmware: %s → %s", orUnset(cfg.Firmware), vmx.Firmware)})
	}
	// ExtraConfig: only our keys.
	cur := map[string]string{}
	for _, o := range cfg.ExtraConfig {
		ov := o.GetOptionValue()
		cur[ov.Key] = fmt.Sprint(ov.Value)
	}
	for _, o := range vmx.ExtraConfig(h) {
		if v, ok := cur[o.Key]; !ok || !o.Matches(v) {
			vp.spec.ExtraConfig = append(vp.spec.ExtraConfig, &types.OptionValue{Key: o.Key, Value: o.Value})
			vp.change(true, applyplan.Change{Op: applyplan.Update, Item: o.Key, From: v, To: o.Value,
				Text: fmt.Sprintf("%s: %s → %s", o.Key, orUnset(v), o.Value)})
		}
	}
	// Memory: all reserved, locked to max.
	memMB := int64(cfg.Hardware.MemoryMB)
	locked := cfg.MemoryReservationLockedToMax != nil && *cfg.MemoryReservationLockedToMax
	var res int64
	if cfg.MemoryAllocation != nil && cfg.MemoryAllocation.Reservation != nil {
		res = *cfg.MemoryAllocation.Reservation
	}
	if vmx.ReserveAllMemory && (!locked || res != memMB) {
		vp.spec.MemoryReservationLockedToMax = types.NewBool(true)
		vp.spec.MemoryAllocation = &types.ResourceAllocationInfo{Reservation: types.NewInt64(memMB)}
		vp.change(false, applyplan.Change{Op: applyplan.Update, Item: "memory reservation", From: fmt.Sprintf("%d MB%s", res, lockedText(locked)),
			To:   fmt.Sprintf("%d MB (locked)", memMB),
			Text: fmt.Sprintf("memory reservation: %d MB%s → %d MB of %d MB, all locked", res, lockedText(locked), memMB, memMB)})
	}
	// The virtual NUMA node of each device, for a VM of several rails
	// (rails.go).
	vp.planVNUMA()
	// GPUs.
	attached := map[string]*types.VirtualPCIPassthrough{}
	for _, d := range cfg.Hardware.Device {
		if pt, ok := d.(*types.VirtualPCIPassthrough); ok {
			if b, ok := pt.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo); ok {
				attached[strings.ToLower(b.Id)] = pt
			}
		}
	}
	for i, id := range vp.gpus {
		if id == "" {
			continue // not resolved: the VM has an error (Check plans it anyway)
		}
		d := vp.host.devices[id]
		pt := attached[id]
		if pt == nil {
			what := fmt.Sprintf("add GPU gpus[%d] %s: %s", i, h.GPUs[i].Model, deviceText(d))
			if n := vp.gpuNode(id); n != nil {
				what += fmt.Sprintf(", virtual NUMA node %d", *n)
			}
			switch enabled, active := vp.host.passthruState(id); {
			case active:
				vp.addGPUs = append(vp.addGPUs, deviceAdd{id: id, what: what, line: what, active: true})
				vp.change(true, applyplan.Change{Op: applyplan.Add, Item: fmt.Sprintf("gpus[%d]", i), To: id, Text: what})
			case enabled:
				vp.waiting = append(vp.waiting, what+": "+vp.host.waitText("passthrough enabled, not active yet"))
			default:
				// Switched on by this run (planPassthrough); attached now
				// if the host activates it at once, else postponed.
				line := what + " (" + vp.host.onceText("passthrough") + ")"
				vp.addGPUs = append(vp.addGPUs, deviceAdd{id: id, what: what, line: line})
				vp.change(true, applyplan.Change{Op: applyplan.Add, Item: fmt.Sprintf("gpus[%d]", i), To: id, Text: line})
			}
			continue
		}
		var edit *types.VirtualPCIPassthrough // one edit of the device for all its changes
		b := pt.Backing.(*types.VirtualPCIPassthroughDeviceBackingInfo)
		if b.DeviceId != hexID(d.DeviceId) || b.VendorId != d.VendorId {
			nb := *b
			nb.DeviceId, nb.VendorId = hexID(d.DeviceId), d.VendorId
			np := *pt
			np.Backing = &nb
			edit = &np
			vp.change(true, applyplan.Change{Op: applyplan.Update, Item: "GPU " + id + " deviceId vendorId",
				From: fmt.Sprintf("%s %d", b.DeviceId, b.VendorId), To: fmt.Sprintf("%s %d", nb.DeviceId, nb.VendorId),
				Text: fmt.Sprintf("GPU %s: deviceId %q vendorId %d → %q %d (hex device id, govmomi #2248)", id, b.DeviceId, b.VendorId, nb.DeviceId, nb.VendorId)})
		}
		if want := vp.gpuNode(id); want != nil && !sameNode(pt.NumaNode, *want) {
			if edit == nil {
				np := *pt
				edit = &np
			}
			edit.NumaNode = types.NewInt32(*want)
			vp.change(true, numaChange("GPU "+id, pt.NumaNode, *want, vp.hostNodeOfGPU(id)))
		}
		if edit != nil {
			vp.spec.DeviceChange = append(vp.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: edit})
		}
	}
	// An SR-IOV adapter per rail on the rail's PF and the port group.
	a := vmx.SRIOVAdapter(h)
	rails := vp.railPFs()
	if hp := vp.host; hp.blocked != nil {
		if len(rails) > 1 {
			vp.waiting = append(vp.waiting, fmt.Sprintf("SR-IOV adapters (one per rail, VFs of %s %s, port group %q): wait on ESXi host %s: %v",
				a.NICModel, strings.Join(rails, ", "), a.PortGroup, hp.name, hp.blocked))
		} else {
			vp.waiting = append(vp.waiting, fmt.Sprintf("SR-IOV adapter (VF of %s %s, port group %q): waits on ESXi host %s: %v",
				a.NICModel, a.PF, a.PortGroup, hp.name, hp.blocked))
		}
		vp.blockedBy = true
		return
	}
	net, ok := st.hostNetwork(vp.host.host, a.PortGroup)
	if !ok {
		// Checked before anything is sent: vcsim crashes, and vCenter
		// fails late, on a NIC backed by an unknown network.
		vp.err = fixableAt(vfSubject(a.PF), fmt.Errorf("port group %q is not on ESXi host %s (networks: %s)", a.PortGroup, vp.host.name, strings.Join(st.hostNetworkNames(vp.host.host), ", ")),
			fmt.Sprintf("port group %q on ESXi host %s", a.PortGroup, vp.host.name),
			fmt.Sprintf("create port group %q on ESXi host %s, or correct nic.portgroup in the inventory", a.PortGroup, vp.host.name))
		return
	}
	for r, vmnic := range rails {
		if pf := vp.host.pf(vmnic); pf != nil { // planHost lists every rail's PF
			vp.planSRIOV(st, cfg, r, pf, a, net)
		}
	}
}

// railPFs are the uplinks of the VM's rails in rail order: nic.pf alone
// for a VM of one rail.
func (p *vmPlan) railPFs() []string {
	h := p.inv
	if len(h.Rails) <= 1 {
		return []string{h.NIC.PF}
	}
	out := make([]string, len(h.Rails))
	for i, r := range h.Rails {
		out[i] = r.PF
	}
	out[0] = h.NIC.PF
	return out
}

// planSRIOV plans rail's SR-IOV adapter, a VF of pf on port group net:
// nothing when the VM has one on pf and net, a new port group for one on
// pf elsewhere, else an adapter to add (now, or once SR-IOV is active on
// pf); and, with a virtual NUMA assignment, the adapter's node.
func (p *vmPlan) planSRIOV(st *state, cfg *types.VirtualMachineConfigInfo, rail int, pf *pfPlan, a vmx.Adapter, net network) {
	hp := p.host
	var onPF, onNet *types.VirtualSriovEthernetCard
	for _, d := range cfg.Hardware.Device {
		card, ok := d.(*types.VirtualSriovEthernetCard)
		if !ok || card.SriovBacking == nil || card.SriovBacking.PhysicalFunctionBacking == nil {
			continue
		}
		id := strings.ToLower(strings.TrimPrefix(card.SriovBacking.PhysicalFunctionBacking.Id, "Automatic-"))
		if id != pf.id {
			continue
		}
		if backingIs(card.Backing, net) {
			onNet = card
			break
		}
		if onPF == nil {
			onPF = card
		}
	}
	label := "SR-IOV adapter on " + pf.vmnic
	want := p.railNode(rail)
	if onNet != nil {
		if want != nil && !sameNode(onNet.NumaNode, *want) {
			nc := *onNet
			nc.NumaNode = types.NewInt32(*want)
			p.spec.DeviceChange = append(p.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &nc})
			p.change(true, numaChange(label, onNet.NumaNode, *want, p.pairing.Rails[rail].Node))
		}
		return
	}
	if onPF != nil {
		nc := *onPF
		nc.Backing = netBacking(net)
		p.change(true, applyplan.Change{Op: applyplan.Update, Item: label + " port group", From: backingName(st, onPF.Backing), To: a.PortGroup,
			Text: fmt.Sprintf("SR-IOV adapter on %s: port group %s → %q", pf.vmnic, backingName(st, onPF.Backing), a.PortGroup)})
		if want != nil && !sameNode(onPF.NumaNode, *want) {
			nc.NumaNode = types.NewInt32(*want)
			p.change(true, numaChange(label, onPF.NumaNode, *want, p.pairing.Rails[rail].Node))
		}
		p.spec.DeviceChange = append(p.spec.DeviceChange, &types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationEdit, Device: &nc})
		return
	}
	what := fmt.Sprintf("add SR-IOV adapter: VF of %s %s (%s), port group %q", a.NICModel, pf.vmnic, pf.id, a.PortGroup)
	if rail > 0 {
		what = fmt.Sprintf("add SR-IOV adapter for rail %d: VF of %s %s (%s), port group %q", rail, a.NICModel, pf.vmnic, pf.id, a.PortGroup)
	}
	if want != nil {
		what += fmt.Sprintf(", virtual NUMA node %d", *want)
	}
	switch sr := hp.sriovOf(pf.id); {
	case sr.SriovActive:
		p.sriovs = append(p.sriovs, &sriovChange{net: net, pf: pf, rail: rail, what: what, line: what, active: true})
		p.change(true, applyplan.Change{Op: applyplan.Add, Item: label, To: a.PortGroup, Text: what})
	case sr.SriovEnabled && int(sr.NumVirtualFunctionRequested) == hp.nic.VFs:
		p.waiting = append(p.waiting, what+": "+hp.waitText("SR-IOV enabled, not active yet"))
	default:
		line := what + " (" + hp.onceText("SR-IOV") + ")"
		p.sriovs = append(p.sriovs, &sriovChange{net: net, pf: pf, rail: rail, what: what, line: line})
		p.change(true, applyplan.Change{Op: applyplan.Add, Item: label, To: a.PortGroup, Text: line})
	}
}

// biosFix is the fix for a GPU the host cannot pass through.
func biosFix(host string) string {
	return fmt.Sprintf("enable VT-d (AMD-Vi) and above-4G decoding in the BIOS of ESXi host %s, then reboot it", host)
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func lockedText(locked bool) string {
	if locked {
		return " (locked)"
	}
	return ""
}

// backingIs reports whether a NIC backing points at net.
func backingIs(b types.BaseVirtualDeviceBackingInfo, net network) bool {
	switch b := b.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		return net.key == "" && (b.DeviceName == net.name || (b.Network != nil && *b.Network == net.ref))
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		return net.key != "" && b.Port.PortgroupKey == net.key
	}
	return false
}

func backingName(st *state, b types.BaseVirtualDeviceBackingInfo) string {
	switch b := b.(type) {
	case *types.VirtualEthernetCardNetworkBackingInfo:
		return fmt.Sprintf("%q", b.DeviceName)
	case *types.VirtualEthernetCardDistributedVirtualPortBackingInfo:
		for _, n := range st.networks {
			if n.key == b.Port.PortgroupKey {
				return fmt.Sprintf("%q", n.name)
			}
		}
		return "key " + b.Port.PortgroupKey
	}
	return "(none)"
}
