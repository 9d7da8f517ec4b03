package esxiapply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmware/govmomi/property"
	"github.com/vmware/govmomi/view"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/vcenter"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Properties of the first retrieve: what every diff needs, nothing more. Of
// a VM only what finds it and proves it unchanged (vmIDProps); the rest of
// what its plan compares (vmProps) comes with its device list, for the VMs
// the last apply's record does not prove unchanged (record.go). The hosts'
// hardware.pciDevice lists (dozens to hundreds of entries per host) and the
// VMs' environment browsers are only needed to add or pick devices, so
// readDevices fetches them in a later retrieve, for the hosts that need
// them. ExtraConfig is read by key (config.extraConfig["KEY"], one path per
// key rdggen manages) instead of whole: a VM's ExtraConfig holds dozens of
// keys rdggen never looks at.
var (
	// config.changeVersion is the proof that a VM is unchanged since the
	// last apply read it (record.go).
	vmIDProps = []string{"name", "runtime.host", "config.changeVersion"}
	vmProps   = []string{
		"runtime.powerState",
		"config.firmware", "config.memoryReservationLockedToMax",
		"config.memoryAllocation.reservation", "config.hardware.memoryMB",
		"config.version", // the hardware version: the passthrough limit (limits.go)
	}
	hostProps = []string{
		"name", "network", "config.pciPassthruInfo",
		"config.network.pnic", vswitchProp, proxySwitchProp,
		"configManager.kernelModuleSystem", // every apply reads the nmlx5_core parameters through it
		"config.product.version",           // the ESXi version: the passthrough limit (limits.go)
	}
	netProps  = []string{"name"}
	dvpgProps = []string{"name", "key"}
	// A distributed switch's config is read whole: maxMtu is a property of
	// VMwareDVSConfigInfo only, and the type is read as its base type
	// DistributedVirtualSwitch (vCenter's VmwareDistributedVirtualSwitch is a
	// subtype; vcsim has only the base type).
	dvsProps = []string{"name", "uuid", "config"}

	// The VMs' device lists, read for the inventory's VMs only
	// (readVMDevices) with vmProps, and the change version again: a VM
	// changed between the two reads is not recorded (record.go).
	vmHardwareProps = []string{"config.hardware.device", "config.changeVersion"}

	// The managers a host change is sent to: read only for the hosts
	// that change (readDevices, readManagers), not by every no-op.
	hostManagerProps = []string{"configManager.pciPassthruSystem", "configManager.networkSystem"}

	// Second retrieve (readDevices).
	hostDeviceProps = append([]string{"hardware.pciDevice"}, hostManagerProps...)
	vmDeviceProps   = []string{"environmentBrowser"}
)

// extraConfigPrefix starts a keyed ExtraConfig property path.
const extraConfigPrefix = "config.extraConfig["

// extraConfigPath is the property path of one ExtraConfig key.
func extraConfigPath(key string) string { return fmt.Sprintf("%s%q]", extraConfigPrefix, key) }

// vswitchProp is a host's list of standard vSwitches; vswitchPrefix starts
// a keyed path into it, one vSwitch by its key (HostVirtualSwitch.key).
const (
	vswitchProp   = "config.network.vswitch"
	vswitchPrefix = vswitchProp + "["
	// proxySwitchProp is a host's list of distributed switches' proxy
	// switches.
	proxySwitchProp = "config.network.proxySwitch"
)

// vswitchPath is the property path of the vSwitch whose key is key.
func vswitchPath(key string) string { return fmt.Sprintf("%s%q]", vswitchPrefix, key) }

// vmRead is what the device-list read takes of a VM beyond vmProps and
// vmHardwareProps: the ExtraConfig keys (managedKeys) and, for an
// inventory of several rails, railVMProps.
type vmRead struct {
	keys, paths []string
}

// railVMProps are the VM properties the virtual NUMA assignment of a VM
// of several rails reads (railpair.VMFrom): its vCPUs and virtual NUMA
// node size; config.version is among vmProps.
var railVMProps = []string{"config.hardware.numCPU", "config.numaInfo"}

// vmReadOf is inv's vmRead.
func vmReadOf(inv *inventory.Inventory) vmRead {
	vr := vmRead{keys: managedKeys(inv)}
	if inv.MultiRail() {
		vr.paths = railVMProps
	}
	return vr
}

// managedKeys lists the ExtraConfig keys apply sets for any VM of inv.
func managedKeys(inv *inventory.Inventory) []string {
	var keys []string
	for i := range inv.Hosts {
		for _, o := range vmx.ExtraConfig(&inv.Hosts[i]) {
			keys = append(keys, o.Key)
		}
	}
	for i := range inv.Hosts {
		if inv.Hosts[i].Template != nil { // a clone's first boot (clone.go)
			keys = append(keys, FirstBootKey)
			break
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// inventoryVMs lists the VM names of inv, then the templates its VMs are
// cloned from (clone.go compares the templates' firmware and hardware
// version, read with the device lists).
func inventoryVMs(inv *inventory.Inventory) []string {
	names := make([]string, len(inv.Hosts))
	for i := range inv.Hosts {
		names[i] = inv.Hosts[i].VM
	}
	for i := range inv.Hosts {
		if t := inv.Hosts[i].Template; t != nil && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	return names
}

// state is vCenter as read at the start of an apply.
type state struct {
	vms      map[string][]*mo.VirtualMachine // by name; more than one is an error
	vmByRef  map[types.ManagedObjectReference]*mo.VirtualMachine
	hosts    map[string][]*mo.HostSystem // by name
	networks map[types.ManagedObjectReference]network
	// dvs are the distributed switches by UUID (a host's proxy switch names
	// its switch by UUID).
	dvs map[string]*dvs
	// vmsOnHost lists every VM (inventory or not) registered on a host.
	vmsOnHost map[types.ManagedObjectReference][]*mo.VirtualMachine
	// clones are the VMs Apply clones, by VM name (clone.go); nil in Check.
	clones map[string]*clonePlan
	// proven are the VMs the last apply's record proves unchanged
	// (record.go): their device lists were not read. Empty in Check and
	// in a full read.
	proven map[types.ManagedObjectReference]*VMRecord
	// vswitchPart marks the hosts whose config.network.vswitch holds only
	// the vSwitches read by key (vswitchPath) in the first retrieve, not
	// the whole list, and whose proxy switches were not read:
	// completeVSwitches reads it whole for every
	// inventory host where none of them carries the PF (record.go).
	vswitchPart map[types.ManagedObjectReference]bool
}

// dvs is a distributed switch as read, and what apply does to it: its
// maximum MTU is one setting for all its member hosts.
type dvs struct {
	ref           types.ManagedObjectReference
	name          string
	maxMTU        int32
	configVersion string
	// newMTU is the MTU to set (0: none); hosts names the ESXi hosts whose
	// data uplink is on it.
	newMTU int32
	hosts  []string
	err    error
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
// vCenter pages a very large result), then the device lists of the VMs
// named in vmNames and of every VM on the ESXi hosts named in hostNames,
// and of no other VM (readVMDevices: at most parallel retrieves, run at
// once). extraKeys are the ExtraConfig keys to read (managedKeys);
// hostExtra are host properties beyond hostProps (Check reads
// summary.rebootRequired).
func readState(ctx context.Context, c *vim25.Client, vr vmRead, vmNames, hostNames []string, parallel int, hostExtra ...string) (*state, error) {
	return readStateProving(ctx, c, nil, nil, vr, vmNames, hostNames, parallel, hostExtra...)
}

// readStateProving is readState, except that the VMs prove returns (given
// the state of the first retrieve) are taken as unchanged: their device
// lists are not read (state.proven). prove nil reads every VM whole. With
// vswitchKeys (the record's hint, record.go), the hosts' vSwitches are read
// by those keys only (state.vswitchPart): the caller completes them
// (completeVSwitches) before planning.
func readStateProving(ctx context.Context, c *vim25.Client, prove func(*state) map[types.ManagedObjectReference]*VMRecord,
	vswitchKeys []string, vr vmRead, vmNames, hostNames []string, parallel int, hostExtra ...string) (*state, error) {
	m := view.NewManager(c)
	kinds := []string{"VirtualMachine", "HostSystem", "Network", "DistributedVirtualPortgroup", "DistributedVirtualSwitch"}
	v, err := m.CreateContainerView(ctx, c.ServiceContent.RootFolder, kinds, true)
	if err != nil {
		return nil, fmt.Errorf("create container view: %w", err)
	}
	defer vcenter.Cleanup(ctx, v.Destroy) // also when interrupted, but not for long

	spec := func(vmPaths []string) types.RetrieveProperties {
		return types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: []types.ObjectSpec{{
				Obj:  v.Reference(),
				Skip: types.NewBool(true),
				SelectSet: []types.BaseSelectionSpec{&types.TraversalSpec{
					Type: "ContainerView", Path: "view", Skip: types.NewBool(false),
				}},
			}},
			PropSet: []types.PropertySpec{
				{Type: "VirtualMachine", PathSet: vmPaths},
				{Type: "HostSystem", PathSet: append(hostPaths(vswitchKeys), hostExtra...)},
				{Type: "Network", PathSet: netProps},
				{Type: "DistributedVirtualPortgroup", PathSet: dvpgProps},
				{Type: "DistributedVirtualSwitch", PathSet: dvsProps},
			},
		}}}
	}
	pc := property.DefaultCollector(c)
	res, err := pc.RetrieveProperties(ctx, spec(vmIDProps))
	if err != nil && isInvalidProperty(err) && len(vswitchKeys) > 0 {
		// A server that does not take the keyed vSwitch paths: read the
		// vSwitches whole, as without the record.
		vswitchKeys = nil
		res, err = pc.RetrieveProperties(ctx, spec(vmIDProps))
	}
	if err != nil {
		return nil, fmt.Errorf("retrieve VMs and hosts: %w", err)
	}
	byType := map[string][]types.ObjectContent{}
	for _, oc := range res.Returnval {
		byType[oc.Obj.Type] = append(byType[oc.Obj.Type], oc)
	}
	s := &state{
		vms:         map[string][]*mo.VirtualMachine{},
		vmByRef:     map[types.ManagedObjectReference]*mo.VirtualMachine{},
		hosts:       map[string][]*mo.HostSystem{},
		networks:    map[types.ManagedObjectReference]network{},
		vmsOnHost:   map[types.ManagedObjectReference][]*mo.VirtualMachine{},
		dvs:         map[string]*dvs{},
		proven:      map[types.ManagedObjectReference]*VMRecord{},
		vswitchPart: map[types.ManagedObjectReference]bool{},
	}
	vms, err := loadVMIDs(byType["VirtualMachine"])
	if err != nil {
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
	hostOCs := byType["HostSystem"]
	keyedVS := make([][]types.HostVirtualSwitch, len(hostOCs))
	if len(vswitchKeys) > 0 {
		for i := range hostOCs {
			hostOCs[i], keyedVS[i] = splitVSwitches(hostOCs[i])
		}
	}
	var hosts []mo.HostSystem
	if err := mo.LoadObjectContent(hostOCs, &hosts); err != nil {
		return nil, fmt.Errorf("decode hosts: %w", err)
	}
	for i := range hosts {
		h := &hosts[i]
		if len(vswitchKeys) > 0 && h.Config != nil && i < len(keyedVS) && hostOCs[i].Obj == h.Self {
			if h.Config.Network == nil {
				h.Config.Network = &types.HostNetworkInfo{}
			}
			h.Config.Network.Vswitch = keyedVS[i]
			s.vswitchPart[h.Self] = true
		}
		s.hosts[h.Name] = append(s.hosts[h.Name], h)
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
	for _, typ := range []string{"DistributedVirtualSwitch", "VmwareDistributedVirtualSwitch"} {
		for _, oc := range byType[typ] {
			d := &dvs{ref: oc.Obj}
			var uuid string
			for _, p := range oc.PropSet {
				switch v := p.Val.(type) {
				case string:
					switch p.Name {
					case "name":
						d.name = v
					case "uuid":
						uuid = v
					}
				case types.BaseDVSConfigInfo:
					d.configVersion = v.GetDVSConfigInfo().ConfigVersion
					if vc, ok := v.(*types.VMwareDVSConfigInfo); ok {
						d.maxMTU = vc.MaxMtu
					}
				}
			}
			if d.maxMTU == 0 {
				d.maxMTU = 1500 // vSphere's default
			}
			s.dvs[uuid] = d
		}
	}
	// The plan looks at the inventory's VMs and at every VM on the
	// inventory's hosts (which GPUs they hold).
	var wanted []*mo.VirtualMachine
	seen := map[types.ManagedObjectReference]bool{}
	if prove != nil {
		s.proven = prove(s)
	}
	add := func(vm *mo.VirtualMachine) {
		if !seen[vm.Self] && s.proven[vm.Self] == nil {
			seen[vm.Self] = true
			wanted = append(wanted, vm)
		}
	}
	for _, name := range vmNames {
		for _, vm := range s.vms[name] {
			add(vm)
		}
	}
	for _, name := range hostNames {
		for _, h := range s.hosts[name] {
			for _, vm := range s.vmsOnHost[h.Self] {
				add(vm)
			}
		}
	}
	if err := readVMDevices(ctx, c, wanted, vr, parallel); err != nil {
		return nil, err
	}
	return s, nil
}

// loadVMIDs is mo.LoadObjectContent for the VMs of the first retrieve
// (vmIDProps), without its reflection for the usual VM (one per VM in
// vCenter, so the bulk of a no-op's decoding besides the XML): a VM whose
// content holds anything else, or a missing property, goes through
// mo.LoadObjectContent, as before.
func loadVMIDs(ocs []types.ObjectContent) ([]mo.VirtualMachine, error) {
	vms := make([]mo.VirtualMachine, len(ocs))
	for i, oc := range ocs {
		if vm, ok := vmIDOf(oc); ok {
			vms[i] = vm
			continue
		}
		var one []mo.VirtualMachine
		if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &one); err != nil {
			return nil, err
		}
		if len(one) != 1 {
			return nil, fmt.Errorf("VM %s: %d objects decoded", oc.Obj.Value, len(one))
		}
		vms[i] = one[0]
	}
	return vms, nil
}

// vmIDOf loads a VM's vmIDProps from oc; false when oc holds anything else.
func vmIDOf(oc types.ObjectContent) (mo.VirtualMachine, bool) {
	vm := mo.VirtualMachine{}
	vm.Self = oc.Obj
	if oc.Obj.Type != "VirtualMachine" || len(oc.MissingSet) > 0 {
		return vm, false
	}
	for _, p := range oc.PropSet {
		switch v := p.Val.(type) {
		case string:
			switch p.Name {
			case "name":
				vm.Name = v
			case "config.changeVersion":
				vm.Config = &types.VirtualMachineConfigInfo{ChangeVersion: v}
			default:
				return vm, false
			}
		case types.ManagedObjectReference:
			if p.Name != "runtime.host" {
				return vm, false
			}
			vm.Runtime.Host = &v
		default:
			return vm, false
		}
	}
	return vm, true
}

// vmsPerDeviceRead is the fewest VMs one device-list retrieve carries
// (below it, a round trip costs more than the decoding it spreads).
const vmsPerDeviceRead = 32

// readVMDevices reads config.hardware.device of vms, with the rest of what
// their plans compare (vmProps, the ExtraConfig keys extraKeys). A VM's
// device list is most of what vCenter sends about it (about 7 KB of XML for
// a VM with two GPUs and a VF, a dozen devices; more with disks), and
// decoding it is most of an apply's CPU, so it is read only for the
// inventory's VMs and those on its hosts (not every VM in vCenter), not for
// the VMs the record proves unchanged, and split into up to parallel
// retrieves of explicit objects, decoded at once on as many cores.
func readVMDevices(ctx context.Context, c *vim25.Client, vms []*mo.VirtualMachine, vr vmRead, parallel int) error {
	if len(vms) == 0 {
		return nil
	}
	parts := min(max(parallel, 1), (len(vms)+vmsPerDeviceRead-1)/vmsPerDeviceRead)
	size := (len(vms) + parts - 1) / parts
	errs := make([]error, parts)
	driver.ForEach(parts, parts, func(p int) {
		if chunk := vms[min(p*size, len(vms)):min((p+1)*size, len(vms))]; len(chunk) > 0 {
			errs[p] = readVMDeviceChunk(ctx, c, chunk, vr)
		}
	})
	return errors.Join(errs...)
}

func readVMDeviceChunk(ctx context.Context, c *vim25.Client, vms []*mo.VirtualMachine, vr vmRead) error {
	extraKeys := vr.keys
	objs := make([]types.ObjectSpec, len(vms))
	byRef := make(map[types.ManagedObjectReference]*mo.VirtualMachine, len(vms))
	for i, vm := range vms {
		objs[i] = types.ObjectSpec{Obj: vm.Self}
		byRef[vm.Self] = vm
	}
	spec := func(paths []string) types.RetrieveProperties {
		return types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
			ObjectSet: objs,
			PropSet:   []types.PropertySpec{{Type: "VirtualMachine", PathSet: paths}},
		}}}
	}
	paths := slices.Concat(vmProps, vmHardwareProps, vr.paths)
	keyed := slices.Clone(paths)
	for _, k := range extraKeys {
		keyed = append(keyed, extraConfigPath(k))
	}
	pc := property.DefaultCollector(c)
	res, err := pc.RetrieveProperties(ctx, spec(keyed))
	if err != nil && isInvalidProperty(err) && len(extraKeys) > 0 {
		// A server that does not take keyed paths: read ExtraConfig whole.
		res, err = pc.RetrieveProperties(ctx, spec(append(paths, "config.extraConfig")))
	}
	if err != nil {
		return fmt.Errorf("retrieve VM devices: %w", err)
	}
	for _, oc := range res.Returnval {
		dst := byRef[oc.Obj]
		if dst == nil {
			continue
		}
		oc, extra := splitExtraConfig(oc)
		var got []mo.VirtualMachine
		if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &got); err != nil {
			return fmt.Errorf("decode VM %s: %w", dst.Name, err)
		}
		if len(got) != 1 {
			continue
		}
		cv := ""
		if dst.Config != nil {
			cv = dst.Config.ChangeVersion
		}
		dst.Runtime.PowerState = got[0].Runtime.PowerState
		dst.Config = got[0].Config
		if dst.Config == nil {
			continue // inaccessible: the plan says so
		}
		if len(extra) > 0 {
			dst.Config.ExtraConfig = extra
		}
		if dst.Config.ChangeVersion != cv {
			// Changed between the two reads: what was read is no
			// proof of one version (record.go).
			dst.Config.ChangeVersion = ""
		}
	}
	return nil
}

// splitExtraConfig takes the keyed ExtraConfig properties out of a VM's
// content (mo cannot load them; a key the VM lacks may come back in the
// missing set) and returns them as option values.
func splitExtraConfig(oc types.ObjectContent) (types.ObjectContent, []types.BaseOptionValue) {
	oc, keyed := takeKeyed(oc, extraConfigPrefix)
	var opts []types.BaseOptionValue
	for _, p := range keyed {
		switch v := p.Val.(type) {
		case types.OptionValue:
			opts = append(opts, &v)
		case *types.OptionValue:
			opts = append(opts, v)
		}
	}
	return oc, opts
}

// takeKeyed takes out of oc the properties read by keyed paths under prefix
// (`config.extraConfig["…"]`, `config.network.vswitch["…"]`), which mo
// cannot load, and drops their entries from the missing set.
func takeKeyed(oc types.ObjectContent, prefix string) (types.ObjectContent, []types.DynamicProperty) {
	var keyed []types.DynamicProperty
	props := oc.PropSet[:0:0]
	for _, p := range oc.PropSet {
		if strings.HasPrefix(p.Name, prefix) {
			keyed = append(keyed, p)
		} else {
			props = append(props, p)
		}
	}
	oc.PropSet = props
	missing := oc.MissingSet[:0:0]
	for _, m := range oc.MissingSet {
		if !strings.HasPrefix(m.Path, prefix) {
			missing = append(missing, m)
		}
	}
	oc.MissingSet = missing
	return oc, keyed
}

// hostPaths is the first retrieve's host properties: hostProps, with the
// vSwitch list read by the keys vswitchKeys instead of whole when there are
// any, and then without the distributed switches' proxy switches (planMTU
// looks at them only for a PF on no vSwitch: completeVSwitches reads them
// with the whole vSwitch list).
func hostPaths(vswitchKeys []string) []string {
	if len(vswitchKeys) == 0 {
		return slices.Clone(hostProps)
	}
	var out []string
	for _, p := range hostProps {
		if p != vswitchProp && p != proxySwitchProp {
			out = append(out, p)
		}
	}
	for _, k := range vswitchKeys {
		out = append(out, vswitchPath(k))
	}
	return out
}

// splitVSwitches takes the keyed vSwitch properties out of a host's content
// (mo cannot load them; a key the host lacks comes back empty or in the
// missing set, and is simply not there) and returns the vSwitches.
func splitVSwitches(oc types.ObjectContent) (types.ObjectContent, []types.HostVirtualSwitch) {
	oc, keyed := takeKeyed(oc, vswitchPrefix)
	var out []types.HostVirtualSwitch
	for _, p := range keyed {
		switch v := p.Val.(type) {
		case types.HostVirtualSwitch:
			out = append(out, v)
		case *types.HostVirtualSwitch:
			out = append(out, *v)
		}
	}
	return oc, out
}

// completeVSwitches reads whole the vSwitch list (and the proxy switches)
// of every host of the inventory read by key (state.vswitchPart) on which none of the vSwitches
// read carries the PF (vmx.HostNIC; for VMs of several rails, any of the
// rails' PFs, vmx.RailPFs): one retrieve for all of them, none when every
// keyed read found its PFs. ESXi attaches a physical NIC to one
// virtual switch at a time (adding one in use to another switch migrates
// it: VMware PowerCLI reference, Add-VirtualSwitchPhysicalNetworkAdapter),
// so the vSwitch read by key that carries the PF is the one the whole list
// would give planMTU; anything else (the PF moved to another
// vSwitch or to a distributed switch, the vSwitch gone or renamed) reads
// the whole list, as without the record.
func completeVSwitches(ctx context.Context, c *vim25.Client, inv *inventory.Inventory, s *state) error {
	var objs []types.ObjectSpec
	byRef := map[types.ManagedObjectReference]*mo.HostSystem{}
	for _, name := range inv.ESXiHosts() {
		nic, _ := vmx.HostNIC(inv, name)
		pfs := []string{nic.PF}
		if inv.MultiRail() {
			pfs = vmx.RailPFs(inv.HostsOnESXi(name))
		}
		for _, h := range s.hosts[name] {
			if !s.vswitchPart[h.Self] || !slices.ContainsFunc(pfs, func(pf string) bool { return !carriesPF(h, pf) }) {
				continue
			}
			objs = append(objs, types.ObjectSpec{Obj: h.Self})
			byRef[h.Self] = h
		}
	}
	if len(objs) == 0 {
		return nil
	}
	res, err := property.DefaultCollector(c).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet:   []types.PropertySpec{{Type: "HostSystem", PathSet: []string{vswitchProp, proxySwitchProp}}},
	}}})
	if err != nil {
		return fmt.Errorf("retrieve vSwitches: %w", err)
	}
	for _, oc := range res.Returnval {
		dst := byRef[oc.Obj]
		if dst == nil {
			continue
		}
		var h mo.HostSystem
		if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &h); err != nil {
			return fmt.Errorf("decode vSwitches of %s: %w", dst.Name, err)
		}
		dst.Config.Network.Vswitch, dst.Config.Network.ProxySwitch = nil, nil
		if h.Config != nil && h.Config.Network != nil {
			dst.Config.Network.Vswitch, dst.Config.Network.ProxySwitch = h.Config.Network.Vswitch, h.Config.Network.ProxySwitch
		}
		delete(s.vswitchPart, dst.Self)
	}
	for _, h := range byRef {
		if s.vswitchPart[h.Self] {
			return fmt.Errorf("retrieve vSwitches: ESXi host %s not returned", h.Name)
		}
	}
	return nil
}

// carriesPF reports whether one of h's vSwitches has the uplink pf (by its
// physical NIC's key, or in its bond bridge): the test planMTU makes.
func carriesPF(h *mo.HostSystem, pf string) bool {
	if h.Config == nil || h.Config.Network == nil || pf == "" {
		return false
	}
	pnicKey := ""
	for _, pn := range h.Config.Network.Pnic {
		if pn.Device == pf {
			pnicKey = pn.Key
		}
	}
	for i := range h.Config.Network.Vswitch {
		if vswitchCarries(&h.Config.Network.Vswitch[i], pnicKey, pf) {
			return true
		}
	}
	return false
}

// vswitchCarries reports whether vs has the uplink pf, whose physical NIC's
// key is pnicKey.
func vswitchCarries(vs *types.HostVirtualSwitch, pnicKey, pf string) bool {
	bond, _ := vs.Spec.Bridge.(*types.HostVirtualSwitchBondBridge)
	return (pnicKey != "" && slices.Contains(vs.Pnic, pnicKey)) || (bond != nil && slices.Contains(bond.NicDevice, pf))
}

func isInvalidProperty(err error) bool {
	if !soap.IsSoapFault(err) {
		return false
	}
	switch soap.ToSoapFault(err).VimFault().(type) {
	case types.InvalidProperty, *types.InvalidProperty:
		return true
	}
	return false
}

// railHostProps are the host properties beyond hostDeviceProps that the
// second retrieve reads for an inventory of several rails: the NUMA nodes
// of the host's PCI devices, which the GPU–rail pairing reads (pkg/railpair
// HostProperties; the first retrieve reads the uplinks).
var railHostProps = []string{"hardware.numaInfo"}

// readDevices is the second, targeted retrieve: the PCI device lists of the
// hosts that add or pick devices (with the host properties hostExtra), and
// the environment browsers of their VMs (for QueryConfigTarget). One round
// trip for all of them.
func readDevices(ctx context.Context, c *vim25.Client, hosts []*mo.HostSystem, vms []*mo.VirtualMachine, hostExtra ...string) error {
	if len(hosts) == 0 && len(vms) == 0 {
		return nil
	}
	var objs []types.ObjectSpec
	for _, h := range hosts {
		objs = append(objs, types.ObjectSpec{Obj: h.Self})
	}
	for _, vm := range vms {
		objs = append(objs, types.ObjectSpec{Obj: vm.Self})
	}
	res, err := property.DefaultCollector(c).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet: []types.PropertySpec{
			{Type: "HostSystem", PathSet: append(slices.Clone(hostDeviceProps), hostExtra...)},
			{Type: "VirtualMachine", PathSet: vmDeviceProps},
		},
	}}})
	if err != nil {
		return fmt.Errorf("retrieve PCI devices: %w", err)
	}
	hostByRef := map[types.ManagedObjectReference]*mo.HostSystem{}
	for _, h := range hosts {
		hostByRef[h.Self] = h
	}
	vmByRef := map[types.ManagedObjectReference]*mo.VirtualMachine{}
	for _, vm := range vms {
		vmByRef[vm.Self] = vm
	}
	for _, oc := range res.Returnval {
		switch oc.Obj.Type {
		case "HostSystem":
			var h mo.HostSystem
			if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &h); err != nil {
				return fmt.Errorf("decode PCI devices: %w", err)
			}
			if dst := hostByRef[oc.Obj]; dst != nil {
				if dst.Hardware != nil && h.Hardware != nil && h.Hardware.NumaInfo == nil {
					h.Hardware.NumaInfo = dst.Hardware.NumaInfo // read by the first retrieve (Check)
				}
				dst.Hardware = h.Hardware
				setManagers(dst, &h)
			}
		case "VirtualMachine":
			var vm mo.VirtualMachine
			if err := mo.LoadObjectContent([]types.ObjectContent{oc}, &vm); err != nil {
				return fmt.Errorf("decode environment browser: %w", err)
			}
			if dst := vmByRef[oc.Obj]; dst != nil {
				dst.EnvironmentBrowser = vm.EnvironmentBrowser
			}
		}
	}
	return nil
}

// setManagers copies the manager references of hostManagerProps read into
// src to dst.
func setManagers(dst, src *mo.HostSystem) {
	if r := src.ConfigManager.PciPassthruSystem; r != nil {
		dst.ConfigManager.PciPassthruSystem = r
	}
	if r := src.ConfigManager.NetworkSystem; r != nil {
		dst.ConfigManager.NetworkSystem = r
	}
}

// readManagers reads the manager references (hostManagerProps) of the
// hosts whose plan sends a passthrough, SR-IOV or vSwitch change and that
// readDevices did not read: one retrieve for all of them, none when no
// host needs one. A host it cannot read fails.
func readManagers(ctx context.Context, c *vim25.Client, hosts []*hostPlan) {
	var objs []types.ObjectSpec
	byRef := map[types.ManagedObjectReference]*hostPlan{}
	for _, hp := range hosts {
		if hp.err != nil || hp.host == nil {
			continue
		}
		cm := hp.host.ConfigManager
		vswitch := slices.ContainsFunc(hp.pfs, func(pf *pfPlan) bool { return pf.vswitchSpec != nil })
		if (len(hp.passthru) > 0 && cm.PciPassthruSystem == nil) || (vswitch && cm.NetworkSystem == nil) {
			objs = append(objs, types.ObjectSpec{Obj: hp.host.Self})
			byRef[hp.host.Self] = hp
		}
	}
	if len(objs) == 0 {
		return
	}
	res, err := property.DefaultCollector(c).RetrieveProperties(ctx, types.RetrieveProperties{SpecSet: []types.PropertyFilterSpec{{
		ObjectSet: objs,
		PropSet:   []types.PropertySpec{{Type: "HostSystem", PathSet: hostManagerProps}},
	}}})
	if err == nil {
		for _, oc := range res.Returnval {
			hp := byRef[oc.Obj]
			if hp == nil {
				continue
			}
			var h mo.HostSystem
			if err = mo.LoadObjectContent([]types.ObjectContent{oc}, &h); err != nil {
				break
			}
			setManagers(hp.host, &h)
		}
	}
	if err != nil {
		for _, hp := range byRef {
			hp.fail(fmt.Errorf("ESXi host %s: read its managers: %w", hp.name, err))
		}
	}
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
