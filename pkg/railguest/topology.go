package railguest

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// NVIDIAVendor is NVIDIA's PCI vendor id as sysfs prints it: a GPU of the
// guest is a device of this vendor with a display class (0x03xxxx).
const NVIDIAVendor = "0x10de"

// group is one bridge of the topology file: a rail's GPUs (positions in
// Host.GPUs) and the rail's VF.
type group struct {
	rail int
	gpus []int
}

// layout is the structure of host h's topology file as the inventory gives
// it: one group per rail that has GPUs, in rail order (inventory.Rail.GPUs,
// gpus[].rail or by position), and the PCIe links NCCL is told for the
// GPUs (nccltopo.GPULink, per GPU) and the VFs (nccltopo.NICLink of the
// host's NIC: a VF's link is its PF's). A rail without GPUs has no group:
// its VF is left to NCCL, which places it from sysfs behind its own virtual
// root port, paired with no GPU.
type layout struct {
	groups  []group
	gpuLink []nccltopo.Link
	nicLink nccltopo.Link
}

// ErrNotNeeded is wrapped (errors.Is) by Skeleton's error, and so by
// Files' and TopologyFile's, when the VM needs no topology file at all: it
// has one rail (NCCL pairs its GPUs with its one NIC) or no GPU (nothing
// for NCCL to pair with the rails' NICs). Any other error of Skeleton is a
// file the VM needs and rdggen cannot make (a *ModelError, or what
// nccltopo.Generate refuses).
var ErrNotNeeded = errors.New("no topology file needed")

// ModelError is Skeleton's error for a VM that needs a topology file but has
// a GPU or NIC model whose PCIe link rdggen does not know (nccltopo.GPULink
// of the model's family, nccltopo.NICLink), which NCCL's file gives for
// every device.
type ModelError struct {
	// Host is the VM's name.
	Host string
	// GPU is the position in Host.GPUs of the GPU whose model is not
	// known, -1 when it is the NIC's.
	GPU int
	// Model is the model as the inventory names it.
	Model string
}

func (e *ModelError) Error() string {
	what, table := "NIC", "nccltopo.NICLink"
	if e.GPU >= 0 {
		what, table = "GPU", "nccltopo.GPULink"
	}
	return fmt.Sprintf("%s: rdggen knows no PCIe link for %s model %q (%s), which NCCL's topology file needs: %s gets no topology file", e.Host, what, e.Model, table, e.Host)
}

func layoutOf(h *inventory.Host) (layout, error) {
	if !h.MultiRail() {
		return layout{}, fmt.Errorf("%s has one rail, with whose NIC NCCL pairs its GPUs: %w", h.Name, ErrNotNeeded)
	}
	var l layout
	for k, g := range h.GPUs {
		link, ok := nccltopo.GPULink(inventory.ParseGPUModel(g.Model).Family)
		if !ok {
			return layout{}, &ModelError{Host: h.Name, GPU: k, Model: g.Model}
		}
		l.gpuLink = append(l.gpuLink, link)
	}
	nic, ok := nccltopo.NICLink(h.NIC.Model)
	if !ok {
		return layout{}, &ModelError{Host: h.Name, GPU: -1, Model: h.NIC.Model}
	}
	l.nicLink = nic
	for _, r := range h.Rails {
		if len(r.GPUs) > 0 {
			l.groups = append(l.groups, group{rail: r.Index, gpus: slices.Clone(r.GPUs)})
		}
	}
	if len(l.groups) == 0 {
		return layout{}, fmt.Errorf("%s has no GPU, nothing for NCCL to pair with the rails' NICs: %w", h.Name, ErrNotNeeded)
	}
	return l, nil
}

// Placeholders of Skeleton: GPU g stands as fffe:GG:00.0, rail r's VF as
// fffd:RR:00.0 (GG, RR two hex digits). Domains fffe and fffd exist in no
// vSphere guest (its PCI tree is all domain 0000), and a NIC's placeholder
// is device and function 00.0 as nccltopo wants a NIC's.
func gpuPlaceholder(g int) string  { return fmt.Sprintf("fffe:%02x:00.0", g) }
func railPlaceholder(r int) string { return fmt.Sprintf("fffd:%02x:00.0", r) }

// labels of the devices in the file: "GPU 3", "rail 1 mlx5_1".
func gpuLabel(g int) string { return "GPU " + strconv.Itoa(g) }
func railLabel(inv *inventory.Inventory, r int) string {
	return "rail " + strconv.Itoa(r) + " " + inv.Horovod.RailHCA(r)
}

// skeletonNote is the comment Skeleton writes first, in place of
// nccltopo's header, which would call the skeleton NCCL's file; the boot
// script writes nccltopo.Header (topo_head) in its place.
const skeletonNote = `<!-- Skeleton of this VM's NCCL topology file (rdggen, pkg/railguest): which GPUs
     and which rail's VF share a PCIe switch. It is not NCCL's file: at every
     boot ` + ScriptPath + ` writes
     ` + nccltopo.DefaultPath + ` from it and this
     guest's own devices. fffe:GG:00.0 stands for GPU GG (hex), the GG-th NVIDIA
     GPU in guest bus order; fffd:RR:00.0 for rail RR's VF, found by its MAC
     address or interface name; each class becomes the device's own. The cpu
     line is a placeholder: the file has one per guest NUMA node (its CPUs,
     architecture, vendor, family, model), each group under the node of its
     GPUs, or one with every CPU when the VM shows no device's node. -->
`

// Skeleton is the structure of host h's topology file for review and for
// BootScript: nccltopo.Generate of one bridge per group (a rail's GPUs in
// order, then the rail's VF, labelled "GPU g" and "rail r mlx5_r") under
// one placeholder CPU (NUMA node 0, CPU 0, x86_64, AuthenticAMD: the
// shortest <cpu> Generate writes), with placeholder bus IDs and classes
// (Class3D, ClassEthernet), headed by a comment that says so instead of
// nccltopo.Header. It passes nccltopo.Validate. An error names why the VM gets no topology file: one
// rail or no GPU (it wraps ErrNotNeeded), or a GPU or NIC model whose PCIe
// link rdggen does not know (a *ModelError).
func Skeleton(inv *inventory.Inventory, h *inventory.Host) ([]byte, error) {
	l, err := layoutOf(h)
	if err != nil {
		return nil, err
	}
	cpu0, _ := nccltopo.NewCPUSet(0)
	cpu := nccltopo.CPU{NUMA: 0, CPUs: cpu0, Arch: nccltopo.ArchX86, Vendor: nccltopo.VendorAMD}
	for _, g := range l.groups {
		var grp nccltopo.Group
		for _, k := range g.gpus {
			grp.GPUs = append(grp.GPUs, nccltopo.Device{BusID: gpuPlaceholder(k), Class: nccltopo.Class3D, Link: l.gpuLink[k], Label: gpuLabel(k)})
		}
		grp.NICs = []nccltopo.Device{{BusID: railPlaceholder(g.rail), Class: nccltopo.ClassEthernet, Link: l.nicLink, Label: railLabel(inv, g.rail)}}
		cpu.Groups = append(cpu.Groups, grp)
	}
	out, err := nccltopo.Generate(nccltopo.Topology{Name: h.Name, CPUs: []nccltopo.CPU{cpu}})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	return slices.Concat([]byte(skeletonNote), bytes.TrimPrefix(out, []byte(nccltopo.Header))), nil
}

// Facts is what a guest shows of itself for its topology file: what the
// fragment's topo_facts prints (ReadFragment), read by ParseFacts. Values
// are kept as the guest wrote them; TopologyFile judges them.
type Facts struct {
	// Machine is `uname -m`: "x86_64", "aarch64", "ppc64le".
	Machine string
	// Vendor, Family and Model are /proc/cpuinfo's vendor_id, "cpu family"
	// and "model" of the first CPU, "" when absent (white space in a value
	// is written as '_').
	Vendor, Family, Model string
	// Online is /sys/devices/system/cpu/online, a CPU list ("0-63").
	Online string
	// Nodes are the NUMA nodes with CPUs (/sys/devices/system/node/nodeN
	// with a non-empty cpulist), in the order read.
	Nodes []Node
	// Devices are the PCI devices (/sys/bus/pci/devices), in the order read.
	Devices []Device
}

// Node is one NUMA node of the guest.
type Node struct {
	// ID is N of nodeN.
	ID int
	// CPUList is its cpulist, "0-31".
	CPUList string
}

// Device is one PCI device of the guest.
type Device struct {
	// BusID is its address, "0000:13:00.0", lower-case as sysfs names it.
	BusID string
	// Vendor and Class are its vendor id and class as sysfs prints them,
	// "0x10de" and "0x030200".
	Vendor, Class string
	// NUMA is its numa_node, -1 when the guest gives none.
	NUMA int
	// Net are its network interfaces (its net/ directory).
	Net []NetInterface
}

// NetInterface is one network interface of a PCI device.
type NetInterface struct {
	// Name is the interface's name, MAC its address ("00:50:56:aa:bb:cc").
	Name, MAC string
}

var (
	reBusID = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\.[0-7]$`)
	reClass = regexp.MustCompile(`^0x[0-9a-f]{6}$`)
	reGPU   = regexp.MustCompile(`^0x03[0-9a-f]{4}$`)
	reNIC   = regexp.MustCompile(`^0x020[07][0-9a-f]{2}$`)
	reList  = regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)
	reNum   = regexp.MustCompile(`^[0-9]+$`)
)

// ParseFacts reads topo_facts' output (the lines after the hosts target's
// framing; the fragment's comment gives the grammar). A pci or net line
// whose bus ID is not sysfs's lower-case dddd:bb:dd.f is left out, as the
// boot script leaves it out. An error names the first line it cannot read.
func ParseFacts(out []byte) (Facts, error) {
	var f Facts
	byBus := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		w := strings.Fields(sc.Text())
		if len(w) == 0 {
			continue
		}
		bad := func(why string) error { return fmt.Errorf("guest facts line %d %q: %s", n, clipLine(sc.Text()), why) }
		dash := func(s string) string {
			if s == "-" {
				return ""
			}
			return s
		}
		switch w[0] {
		case "machine":
			if len(w) != 2 {
				return Facts{}, bad("want machine <uname -m>")
			}
			f.Machine = w[1]
		case "cpu":
			if len(w) != 4 {
				return Facts{}, bad("want cpu <vendor> <family> <model>")
			}
			f.Vendor, f.Family, f.Model = dash(w[1]), dash(w[2]), dash(w[3])
		case "online":
			if len(w) > 2 {
				return Facts{}, bad("want online <CPU list>")
			}
			if len(w) == 2 {
				f.Online = w[1]
			}
		case "node":
			if len(w) < 2 || len(w) > 3 {
				return Facts{}, bad("want node <id> <CPU list>")
			}
			id, err := strconv.Atoi(w[1])
			if err != nil || id < 0 {
				return Facts{}, bad("the node id is not a number")
			}
			if len(w) == 3 {
				f.Nodes = append(f.Nodes, Node{ID: id, CPUList: w[2]})
			}
		case "pci":
			if len(w) != 5 {
				return Facts{}, bad("want pci <bus id> <vendor> <class> <NUMA node>")
			}
			if !reBusID.MatchString(w[1]) {
				continue
			}
			numa, err := strconv.Atoi(w[4])
			if err != nil {
				return Facts{}, bad("the NUMA node is not a number")
			}
			byBus[w[1]] = len(f.Devices)
			f.Devices = append(f.Devices, Device{BusID: w[1], Vendor: dash(w[2]), Class: dash(w[3]), NUMA: numa})
		case "net":
			if len(w) != 4 {
				return Facts{}, bad("want net <bus id> <interface> <MAC address>")
			}
			i, ok := byBus[w[1]]
			if !ok {
				if reBusID.MatchString(w[1]) {
					return Facts{}, bad("no pci line before it for " + w[1])
				}
				continue
			}
			f.Devices[i].Net = append(f.Devices[i].Net, NetInterface{Name: w[2], MAC: dash(w[3])})
		default:
			return Facts{}, bad("unknown kind " + strconv.Quote(clipLine(w[0])))
		}
	}
	if err := sc.Err(); err != nil {
		return Facts{}, fmt.Errorf("guest facts: %w", err)
	}
	if f.Machine == "" {
		return Facts{}, errors.New("guest facts: no machine line (the output is not topo_facts')")
	}
	return f, nil
}

// dash is s, or "-" when it is empty: how the boot script names an absent value.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clipLine(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// GPUs are the guest's NVIDIA GPUs (vendor NVIDIAVendor, class 0x03xxxx)
// in guest bus order: GPUs()[g] is the VM's GPU g. That is rdggen's
// assumption about a vSphere guest (docs/rails.md, "The topology file"):
// the guest numbers the VM's passthrough GPUs in the order of the VM's
// pciPassthruN devices, which is the inventory's order.
func (f Facts) GPUs() []Device {
	var gs []Device
	for _, d := range f.Devices {
		if d.Vendor == NVIDIAVendor && reGPU.MatchString(d.Class) {
			gs = append(gs, d)
		}
	}
	slices.SortFunc(gs, func(a, b Device) int { return cmp.Compare(a.BusID, b.BusID) })
	return gs
}

// Rail is the PCI device of rail r's VF: the device with a network
// interface whose MAC address is mac (any case), or, when mac is "", whose
// name is name. False when no device has it.
func (f Facts) Rail(name, mac string) (Device, bool) {
	mac = strings.ToLower(mac)
	for _, d := range f.Devices {
		for _, n := range d.Net {
			if (mac != "" && strings.ToLower(n.MAC) == mac) || (mac == "" && n.Name == name) {
				return d, true
			}
		}
	}
	return Device{}, false
}

// arch is NCCL's name of a `uname -m` (nccltopo.Arch), false for one NCCL
// does not know.
func arch(machine string) (nccltopo.Arch, bool) {
	switch machine {
	case "x86_64":
		return nccltopo.ArchX86, true
	case "aarch64", "arm64":
		return nccltopo.ArchARM, true
	case "ppc64le", "ppc64":
		return nccltopo.ArchPower, true
	}
	return "", false
}

// TopologyFile is host h's NCCL topology file for the guest f describes,
// the bytes BootScript writes on that guest (the tests run both on the same
// sysfs trees): Skeleton's structure with the guest's own values.
//
//   - GPU g is f.GPUs()[g] (the guest's bus order), with its class;
//   - rail r's VF is f.Rail(interface, macs[r]) (by MAC address when macs
//     gives one, else by the rail's interface name), with its class, which
//     must be a NIC's (0x0200xx, 0x0207xx), at device and function 00.0;
//   - one <cpu> per NUMA node of f.Nodes, in ascending id, each with the
//     affinity of its CPU list and the CPU's architecture, vendor, family
//     and model, every group under the node of its first GPU — when the
//     guest has two or more nodes and every GPU's numa_node is one of them
//     (the VM exposes virtual NUMA with each device's node, vSphere 8
//     VirtualDevice.numaNode); otherwise one <cpu> with every CPU of every
//     node (or /sys/devices/system/cpu/online without nodes), numaid that
//     node's id or 0.
//
// The file is nccltopo.Generate's, and it is refused unless
// nccltopo.Validate and nccltopo.CheckGuest (against f's devices) find no
// error. An error says why no file can be written: Skeleton's reasons, a
// GPU count other than the inventory's, a rail whose VF is missing or is no
// NIC, a CPU NCCL does not know (architecture, vendor; an Intel or Zhaoxin
// CPU without family and model), a CPU list that does not parse, and what
// Validate or CheckGuest find.
func TopologyFile(inv *inventory.Inventory, h *inventory.Host, macs []string, f Facts) ([]byte, error) {
	l, err := layoutOf(h)
	if err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) ([]byte, error) {
		return nil, fmt.Errorf("%s: "+format, append([]any{h.Name}, a...)...)
	}
	gpus := f.GPUs()
	if len(gpus) != len(h.GPUs) {
		return fail("this guest shows %d NVIDIA GPUs (vendor 0x10de, class 0x03xxxx), the VM has %d: no file", len(gpus), len(h.GPUs))
	}
	// The CPU.
	a, ok := arch(f.Machine)
	if !ok {
		return fail("machine %s is not x86_64, aarch64 or ppc64le, the architectures NCCL knows", dash(f.Machine))
	}
	proto := nccltopo.CPU{Arch: a}
	if a == nccltopo.ArchX86 {
		v := nccltopo.Vendor(f.Vendor)
		switch v {
		case nccltopo.VendorIntel, nccltopo.VendorAMD, nccltopo.VendorZhaoxin:
		default:
			return fail("CPU vendor %s (/proc/cpuinfo vendor_id) is not GenuineIntel, AuthenticAMD or CentaurHauls, the vendors NCCL knows", dash(f.Vendor))
		}
		proto.Vendor = v
		fam, _ := strconv.Atoi(f.Family)
		mod, _ := strconv.Atoi(f.Model)
		switch {
		case reNum.MatchString(f.Family) && reNum.MatchString(f.Model) && fam > 0:
			proto.Family, proto.Model = fam, mod
		case v != nccltopo.VendorAMD:
			return fail("%s CPUs need their family and model (/proc/cpuinfo cpu family, model), which NCCL reads: found %s and %s", v, dash(f.Family), dash(f.Model))
		}
	}
	// The NUMA nodes.
	nodes := slices.Clone(f.Nodes)
	slices.SortStableFunc(nodes, func(a, b Node) int { return a.ID - b.ID })
	known := map[int]bool{}
	for _, n := range nodes {
		known[n.ID] = true
	}
	multi := len(nodes) >= 2
	for _, g := range gpus {
		multi = multi && known[g.NUMA]
	}
	var cpus []nccltopo.CPU
	owner := map[int]int{}
	addList := func(set *[]int, list string, i int) bool {
		if !reList.MatchString(list) {
			return false
		}
		for _, part := range strings.Split(list, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if isRange {
				b, _ = strconv.Atoi(hi)
			}
			if b < a || b > nccltopo.MaxCPU {
				return false
			}
			for c := a; c <= b; c++ {
				if o, seen := owner[c]; seen && o != i {
					return false
				}
				owner[c] = i
				*set = append(*set, c)
			}
		}
		return true
	}
	cpuOf := func(numa int, set []int) nccltopo.CPU {
		c := proto
		c.NUMA = numa
		c.CPUs, _ = nccltopo.NewCPUSet(set...)
		return c
	}
	if multi {
		for i, n := range nodes {
			var set []int
			if !addList(&set, n.CPUList, i) {
				return fail("NUMA node %d: cpulist %s is not a list of CPUs 0-1023 apart from the other nodes", n.ID, n.CPUList)
			}
			cpus = append(cpus, cpuOf(n.ID, set))
		}
	} else {
		var set []int
		id := 0
		if len(nodes) == 0 && !addList(&set, f.Online, 0) {
			return fail("no NUMA node, and /sys/devices/system/cpu/online (%s) is not a list of CPUs 0-1023", f.Online)
		}
		if len(nodes) == 1 {
			id = nodes[0].ID
		}
		for _, n := range nodes {
			if !addList(&set, n.CPUList, 0) {
				return fail("NUMA node %d: cpulist %s is not a list of CPUs 0-1023", n.ID, n.CPUList)
			}
		}
		cpus = append(cpus, cpuOf(id, set))
	}
	index := map[int]int{}
	for i, c := range cpus {
		index[c.NUMA] = i
	}
	// The groups.
	used := map[string]string{}
	guest := map[string]string{}
	for _, d := range f.Devices {
		if reClass.MatchString(d.Class) {
			guest[d.BusID] = d.Class
		}
	}
	device := func(d Device, what string, link nccltopo.Link, label string) (nccltopo.Device, error) {
		if !reClass.MatchString(d.Class) {
			return nccltopo.Device{}, fmt.Errorf("%s: %s: class %q is not 0x and 6 hex digits", h.Name, d.BusID, d.Class)
		}
		if o, dup := used[d.BusID]; dup {
			return nccltopo.Device{}, fmt.Errorf("%s: %s is both %s and %s", h.Name, d.BusID, o, what)
		}
		used[d.BusID] = what
		c, _ := nccltopo.NormalizeClass(d.Class)
		return nccltopo.Device{BusID: d.BusID, Class: c, Link: link, Label: label}, nil
	}
	for _, g := range l.groups {
		var grp nccltopo.Group
		for _, k := range g.gpus {
			d, err := device(gpus[k], "GPU "+strconv.Itoa(k), l.gpuLink[k], gpuLabel(k))
			if err != nil {
				return nil, err
			}
			grp.GPUs = append(grp.GPUs, d)
		}
		r := h.Rails[g.rail]
		mac := macOf(macs, g.rail)
		vf, ok := f.Rail(r.Interface, mac)
		switch {
		case !ok && mac != "":
			return fail("rail %d: no network interface has the MAC address %s (%s) on a PCI device", g.rail, strings.ToLower(mac), r.Interface)
		case !ok:
			return fail("rail %d: no network interface is named %s on a PCI device", g.rail, r.Interface)
		case !reNIC.MatchString(vf.Class):
			return fail("rail %d: %s (%s) has class %s, not an Ethernet or InfiniBand NIC", g.rail, vf.BusID, r.Interface, vf.Class)
		case !strings.HasSuffix(vf.BusID, ":00.0"):
			return fail("rail %d: %s (%s) is not device and function 00.0: NCCL files an RDMA device under %s00.0 and would never match it", g.rail, vf.BusID, r.Interface, vf.BusID[:8])
		}
		d, err := device(vf, "rail "+strconv.Itoa(g.rail), l.nicLink, railLabel(inv, g.rail))
		if err != nil {
			return nil, err
		}
		grp.NICs = []nccltopo.Device{d}
		node := 0
		if multi {
			node = index[gpus[g.gpus[0]].NUMA]
		}
		cpus[node].Groups = append(cpus[node].Groups, grp)
	}
	out, err := nccltopo.Generate(nccltopo.Topology{Name: h.Name, CPUs: cpus})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	fs := nccltopo.Validate(out)
	gf, err := nccltopo.CheckGuest(out, guest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	var errs []string
	for _, x := range append(fs, gf...) {
		if x.Severity == nccltopo.Error {
			errs = append(errs, x.String())
		}
	}
	if len(errs) > 0 {
		return fail("the file would not be read as written:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return out, nil
}
