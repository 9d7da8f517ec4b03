package nccltopo

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Topology is one VM's PCI topology as NCCL needs it: its CPUs (NUMA
// nodes), and under each the groups of GPUs that share a PCIe switch with
// their rail NICs.
type Topology struct {
	// Name is written as <system name="…">, which NCCL prints when it loads
	// the file ("Loading topology vm03"); optional. Grammar: a letter or
	// digit, then up to 62 letters, digits, '.', '_' or '-' (a host name).
	Name string
	// CPUs are the VM's NUMA nodes; Generate writes them in NUMA order.
	CPUs []CPU
}

// Arch is a CPU architecture as NCCL names it in a <cpu>'s arch.
type Arch string

// The architectures NCCL knows (NVIDIA/nccl src/graph/topo.cc
// kvDictCpuArch); any other value makes NCCL's CPU model unknown.
const (
	ArchX86   Arch = "x86_64"
	ArchARM   Arch = "arm64"
	ArchPower Arch = "ppc64"
)

// Vendor is an x86 CPU vendor as CPUID leaf 0 spells it, which NCCL reads
// from a <cpu>'s vendor.
type Vendor string

// The x86 vendors NCCL knows (NVIDIA/nccl src/graph/topo.cc
// kvDictCpuVendor).
const (
	VendorIntel   Vendor = "GenuineIntel"
	VendorAMD     Vendor = "AuthenticAMD"
	VendorZhaoxin Vendor = "CentaurHauls"
)

// CPU is one NUMA node of the VM: a <cpu> element.
type CPU struct {
	// NUMA is the guest's NUMA node id (numaid), 0 or more; unique in a
	// Topology.
	NUMA int
	// CPUs are the guest CPUs of this node, written as the affinity mask
	// (CPUSet.Mask); NCCL pins the threads serving this node's GPUs to
	// them. Not empty, and no CPU in two nodes.
	CPUs CPUSet
	// Arch is the architecture, one of ArchX86, ArchARM, ArchPower.
	Arch Arch
	// Vendor is required with ArchX86 and empty otherwise.
	Vendor Vendor
	// Family and Model are the CPUID family and model ids (decimal in the
	// file, e.g. 6 and 143 for Sapphire Rapids); NCCL reads them for Intel
	// and Zhaoxin CPUs to pick its CPU bandwidth model, so they are
	// required there, optional (0: not written) for AMD, and 0 elsewhere.
	Family, Model int
	// Groups are this node's PCIe switches, one bridge each, in the
	// caller's order (rail order).
	Groups []Group
}

// Group is the GPUs that share one PCIe switch with their rail NICs: one
// fake bridge (ffff:ff:NN.0, class 0x060400) in the file, holding the GPUs
// and then the NICs. NCCL then sees each GPU one bridge away (PIX) from its
// own NICs and further from every other.
type Group struct {
	// GPUs are the group's GPUs, at least one.
	GPUs []Device
	// NICs are the group's rail NICs (VFs), in rail order; none is allowed
	// (a warning in Validate when the whole CPU then has no NIC).
	NICs []Device
}

// Device is one GPU or NIC as the guest sees it.
type Device struct {
	// BusID is the guest's PCI address (lspci -D in the VM, not the ESXi
	// host's), in NCCL's form "0000:0b:00.0" (ParseBusID). A NIC's device
	// and function must be 00.0: NCCL files an RDMA device under that
	// address only (ncclNICAddress).
	BusID string
	// Class is the device's PCI class: ClassVGA or Class3D (0x0300xx or
	// 0x0302xx) for a GPU, ClassEthernet or ClassInfiniBand (0x0200xx or
	// 0x0207xx) for a NIC.
	Class Class
	// Link is the device's PCIe link on the host, e.g. GPULink or NICLink;
	// a VF's is its PF's.
	Link Link
	// Label is written as a comment after the device's element ("GPU 0",
	// "rail 0 mlx5_0"); optional. Grammar: a letter or digit, then up to 63
	// letters, digits, spaces or ._:/#()+,=- without "--" and not ending in
	// '-' (so that it cannot end the comment).
	Label string
}

var (
	reName  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	reLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 ._:/#()+,=-]{0,63}$`)
)

// InputError is every problem Generate found in a Topology, each naming its
// field ("cpus[1].groups[0].nics[0].bus_id: …").
type InputError struct {
	Problems []string
}

func (e *InputError) Error() string {
	return "nccltopo: the topology is not valid:\n\t" + strings.Join(e.Problems, "\n\t")
}

// Header is the comment Generate writes first: what made the file and that
// its bus IDs are the guest's. NCCL skips comments (xmlGetNode).
const Header = `<!-- NCCL topology file written by rdggen (pkg/nccltopo). The bus IDs are
     the guest's own PCI addresses, as lspci shows them inside this VM, not
     the ESXi host's. Each ffff:ff:NN.0 bridge exists in no PCI tree: it
     tells NCCL that the GPUs and NICs under it share one PCIe switch. -->
`

// Generate writes t as NCCL's topology XML: the header comment, then
// <system version="1"> with one <cpu> per NUMA node (in NUMA order), under
// each one bridge per Group (numbered ffff:ff:01.0 … in file order, its
// link the widest of its devices' so that it is never a bottleneck), and
// under each bridge the group's GPUs and then its NICs with the guest's bus
// IDs, classes and links. The output is the same bytes for the same t, one
// element per line (NCCL's reader refuses a line break inside a tag), two
// spaces of indent, LF line ends; Validate finds nothing in it. An invalid
// t gives an *InputError listing every problem and no bytes.
func Generate(t Topology) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	cpus := slices.Clone(t.CPUs)
	slices.SortStableFunc(cpus, func(a, b CPU) int { return a.NUMA - b.NUMA })
	groups := 1
	for _, c := range cpus {
		groups = max(groups, c.CPUs.groups())
	}

	var b bytes.Buffer
	b.WriteString(Header)
	b.WriteString(`<system version="1"`)
	if t.Name != "" {
		fmt.Fprintf(&b, ` name="%s"`, t.Name)
	}
	b.WriteString(">\n")
	bridge := 0
	for _, c := range cpus {
		fmt.Fprintf(&b, `  <cpu numaid="%d" affinity="%s" arch="%s"`, c.NUMA, c.CPUs.Mask(groups), c.Arch)
		if c.Arch == ArchX86 {
			fmt.Fprintf(&b, ` vendor="%s"`, c.Vendor)
			if c.Family > 0 {
				fmt.Fprintf(&b, ` familyid="%d" modelid="%d"`, c.Family, c.Model)
			}
		}
		b.WriteString(">\n")
		for _, g := range c.Groups {
			bridge++
			var links []Link
			for _, d := range slices.Concat(g.GPUs, g.NICs) {
				links = append(links, d.Link)
			}
			up := widest(links...)
			fmt.Fprintf(&b, "    <pci busid=\"%s\" class=\"%s\" link_speed=\"%s\" link_width=\"%d\">\n",
				bridgeBusID(bridge), ClassBridge, up.Speed(), up.Width)
			for _, d := range slices.Concat(g.GPUs, g.NICs) {
				fmt.Fprintf(&b, `      <pci busid="%s" class="%s" link_speed="%s" link_width="%d"/>`,
					d.BusID, d.Class, d.Link.Speed(), d.Link.Width)
				if d.Label != "" {
					fmt.Fprintf(&b, "  <!-- %s -->", d.Label)
				}
				b.WriteByte('\n')
			}
			b.WriteString("    </pci>\n")
		}
		b.WriteString("  </cpu>\n")
	}
	b.WriteString("</system>\n")
	return b.Bytes(), nil
}

// check lists what Generate refuses in t.
func (t Topology) check() error {
	var p []string
	add := func(field, format string, args ...any) {
		p = append(p, field+": "+fmt.Sprintf(format, args...))
	}
	if t.Name != "" && !reName.MatchString(t.Name) {
		add("name", "%q is not a letter or digit then up to 62 letters, digits, '.', '_' or '-'", clip(t.Name))
	}
	if len(t.CPUs) == 0 {
		add("cpus", "a topology needs at least one CPU")
	}
	numa := map[int]int{}
	cpuOwner := map[int]int{}
	seen := map[string]string{}
	bridges := 0
	for i, c := range t.CPUs {
		f := "cpus[" + strconv.Itoa(i) + "]"
		if c.NUMA < 0 {
			add(f+".numa", "%d is negative", c.NUMA)
		} else if j, dup := numa[c.NUMA]; dup {
			add(f+".numa", "NUMA node %d is also cpus[%d]'s; NCCL keeps one <cpu> per NUMA node", c.NUMA, j)
		}
		numa[c.NUMA] = i
		if len(c.CPUs) == 0 {
			add(f+".cpus", "no CPUs: NCCL would pin this node's threads to nothing")
		}
		for k, cpu := range c.CPUs {
			if cpu < 0 || cpu > MaxCPU || (k > 0 && cpu <= c.CPUs[k-1]) {
				add(f+".cpus", "%v is not sorted CPU numbers 0–%d without repeats (use NewCPUSet or ParseCPUList)", c.CPUs, MaxCPU)
				break
			}
			if j, dup := cpuOwner[cpu]; dup && j != i {
				add(f+".cpus", "CPU %d is also in cpus[%d]; a CPU belongs to one NUMA node", cpu, j)
			}
			cpuOwner[cpu] = i
		}
		switch c.Arch {
		case ArchX86:
			switch c.Vendor {
			case VendorIntel, VendorZhaoxin:
				if c.Family <= 0 || c.Model < 0 {
					add(f+".family", "%s CPUs need their CPUID family and model: NCCL reads them for its CPU model", c.Vendor)
				}
			case VendorAMD:
				if c.Family < 0 || c.Model < 0 {
					add(f+".family", "family %d and model %d must not be negative", c.Family, c.Model)
				}
			default:
				add(f+".vendor", "%q is not GenuineIntel, AuthenticAMD or CentaurHauls, the x86 vendors NCCL knows", clip(string(c.Vendor)))
			}
		case ArchARM, ArchPower:
			if c.Vendor != "" || c.Family != 0 || c.Model != 0 {
				add(f+".vendor", "vendor, family and model are for x86_64 CPUs; NCCL ignores them on %s", c.Arch)
			}
		default:
			add(f+".arch", "%q is not x86_64, arm64 or ppc64, the architectures NCCL knows", clip(string(c.Arch)))
		}
		for gi, g := range c.Groups {
			gf := f + ".groups[" + strconv.Itoa(gi) + "]"
			bridges++
			if len(g.GPUs) == 0 {
				add(gf+".gpus", "a group holds at least one GPU; a NIC without GPUs belongs in the group of the GPUs it serves")
			}
			for _, kind := range []struct {
				name string
				devs []Device
				nic  bool
			}{{"gpus", g.GPUs, false}, {"nics", g.NICs, true}} {
				for di, d := range kind.devs {
					df := gf + "." + kind.name + "[" + strconv.Itoa(di) + "]"
					id, err := ParseBusID(d.BusID)
					switch {
					case err != nil:
						add(df+".bus_id", "%v", err)
					case id.Domain == 0xffff && id.Bus == 0xff:
						add(df+".bus_id", "%s is in ffff:ff, the bus of the file's own bridges", d.BusID)
					case kind.nic && id != id.ncclNICAddress():
						add(df+".bus_id", "%s: NCCL files an RDMA device under its address with device and function 00.0 (%s; it merges ports and VFs), so it would never match this one", d.BusID, id.ncclNICAddress())
					}
					if other, dup := seen[d.BusID]; dup && err == nil {
						add(df+".bus_id", "%s is also %s", d.BusID, other)
					}
					seen[d.BusID] = df
					if kind.nic && !d.Class.isNIC() {
						add(df+".class", "%s is not a NIC class (0x0200xx Ethernet or 0x0207xx InfiniBand)", d.Class)
					}
					if !kind.nic && !d.Class.isGPU() {
						add(df+".class", "%s is not a GPU class (0x0300xx VGA or 0x0302xx 3D controller)", d.Class)
					}
					if err := d.Link.check(); err != nil {
						add(df+".link", "%v", err)
					}
					if d.Label != "" && (!reLabel.MatchString(d.Label) || strings.Contains(d.Label, "--") || strings.HasSuffix(d.Label, "-")) {
						add(df+".label", "%q is not a letter or digit then up to 63 letters, digits, spaces or ._:/#()+,=- without \"--\" or a final '-'", clip(d.Label))
					}
				}
			}
		}
	}
	if bridges > maxBridges {
		add("cpus", "%d groups; the file numbers its bridges ffff:ff:01.0–ffff:ff:1f.0, at most %d", bridges, maxBridges)
	}
	if len(p) > 0 {
		return &InputError{Problems: p}
	}
	return nil
}
