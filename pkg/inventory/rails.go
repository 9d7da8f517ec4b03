package inventory

// Rails (docs/inventory.md#rails, docs/rails.md): a host whose `data` is a
// list has one VF per rail, each from its own NIC port (PF) and cabled to
// a leaf; each (leaf, rail) owns a routed subnet with its gateway on the
// leaf. A host whose `data` is a mapping has one rail, and nothing here
// changes it.

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Rail is one of a host's data links: the VF of one NIC port of its ESXi
// host, cabled to a switch port, with its address in the guest.
type Rail struct {
	// Index is the rail's number: its position in Host.Rails, 0 first.
	Index int
	// DataLink is the rail's address (with its (leaf, rail) subnet's
	// prefix length) and the switch port its PF is cabled to.
	DataLink
	// PF is the ESXi uplink of the rail's NIC port, e.g. "vmnic5"; rail
	// 0's is NIC.PF.
	PF string
	// Interface is the guest's name of the rail's VF: rail 0's is
	// DataInterface, rail r's data[r].interface or DefaultRailInterface(r).
	Interface string
	// GPUs are the positions in Host.GPUs of the GPUs paired with the
	// rail, ascending (GPU.Rail).
	GPUs []int
}

// HostRail is one rail of one host: what a switch port carries.
type HostRail struct {
	Host *Host
	Rail *Rail
}

// LeafRail is the routed subnet of one rail on one leaf: the leaf's
// address in it is the gateway of that rail of the hosts cabled there.
type LeafRail struct {
	// Rail is the rail's number.
	Rail int
	// Subnet is the (leaf, rail) subnet, e.g. 10.0.1.0/24: switches[].subnet
	// on a leaf that carries one rail, else its hosts' network.
	Subnet netip.Prefix
	// Gateway is the leaf's address in Subnet: switches[].gateway on a
	// leaf that carries one rail, else Subnet's last host address.
	Gateway netip.Addr
}

// Bounds on rails. A VM has at most 10 virtual network adapters (VMware
// Configuration Maximums, "Virtual NICs per virtual machine", vSphere 6.x
// through 8.0) and the guide's VM keeps one for management, so a VM takes
// at most 9 rails' SR-IOV adapters (an SR-IOV passthrough adapter is a
// virtual NIC: the API's VirtualSriovEthernetCard is a
// VirtualEthernetCard). NCCL itself takes up to 32 RDMA devices.
const (
	MaxVirtualNICs = 10
	MaxRails       = MaxVirtualNICs - 1
)

// DefaultRailInterface is the guest's name of rail r's VF when the
// inventory gives none: "rail1", "rail2", …; rail 0's is data_interface.
// rdggen gives the name itself (a netplan match on the VF's MAC address
// with set-name), so that every clone names its rails alike, whatever the
// order the guest's kernel finds the VFs in.
func DefaultRailInterface(r int) string { return "rail" + strconv.Itoa(r) }

// RailVLAN is the VLAN of rail r's host ports on a leaf, and the VLAN
// interface that holds the (leaf, rail) gateway: 1 for rail 0 (the data
// VLAN of a single-rail inventory, unchanged), r+1 for rail r, so that
// the rails one leaf carries are separate broadcast domains, each with
// its own subnet.
func RailVLAN(r int) int { return r + 1 }

// MultiRail reports whether the host has more than one rail.
func (h *Host) MultiRail() bool { return len(h.Rails) > 1 }

// RailHCA is the guest's RDMA device of rail r, for NCCL_IB_HCA: the
// kernel numbers mlx5 devices in the order it probes them, the VFs' PCI
// order, which is rail order when the VFs are attached in rail order; so
// rail r is horovod.hca's number plus r ("mlx5_0" → "mlx5_2" for rail 2).
// A name without a trailing number gets r appended after an underscore.
func (hv Horovod) RailHCA(r int) string {
	name := hv.HCA
	if name == "" {
		name = DefaultHCA
	}
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == len(name) {
		if r == 0 {
			return name
		}
		return name + "_" + strconv.Itoa(r)
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil {
		return name
	}
	return name[:i] + strconv.Itoa(n+r)
}

// RailCount is the number of rails every host has (1 for an inventory
// whose hosts' data are mappings; 0 without hosts).
func (inv *Inventory) RailCount() int {
	if len(inv.Hosts) == 0 {
		return 0
	}
	return len(inv.Hosts[0].Rails)
}

// MultiRail reports whether the inventory's hosts have several rails.
func (inv *Inventory) MultiRail() bool { return inv.RailCount() > 1 }

// RailsOnSwitch returns every host rail cabled to switch sw: the hosts in
// file order, each host's rails in rail order. In an inventory of one
// rail it is HostsOnSwitch, rail 0 of each.
func (inv *Inventory) RailsOnSwitch(sw string) []HostRail {
	var out []HostRail
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		for r := range h.Rails {
			if h.Rails[r].Switch == sw {
				out = append(out, HostRail{h, &h.Rails[r]})
			}
		}
	}
	return out
}

// LeafRail returns the (leaf, rail) subnet of rail r on switch sw, or
// false when sw carries no such rail.
func (s *Switch) LeafRail(r int) (LeafRail, bool) {
	for _, lr := range s.Fabric.Rails {
		if lr.Rail == r {
			return lr, true
		}
	}
	return LeafRail{}, false
}

// RailGateway is the gateway of host h's rail r: the leaf's address in
// its (leaf, rail) subnet; the zero Addr outside a fabric.
func (inv *Inventory) RailGateway(h *Host, r int) netip.Addr {
	if r < 0 || r >= len(h.Rails) {
		return netip.Addr{}
	}
	if sw := inv.Switch(h.Rails[r].Switch); sw != nil && sw.IsLeaf() {
		if lr, ok := sw.LeafRail(r); ok {
			return lr.Gateway
		}
	}
	return netip.Addr{}
}

// RailNet is one (leaf, rail) subnet of the fabric with its leaf.
type RailNet struct {
	Leaf *Switch
	LeafRail
}

// RailNets are every (leaf, rail) subnet of the fabric: the leaves in
// file order, each leaf's rails ascending. A guest's rail r reaches rail r
// of a host on another leaf through these (docs/rails.md).
func (inv *Inventory) RailNets() []RailNet {
	var out []RailNet
	for _, l := range inv.Leaves() {
		for _, lr := range l.Fabric.Rails {
			if lr.Subnet.IsValid() {
				out = append(out, RailNet{l, lr})
			}
		}
	}
	return out
}

// RailsJoined reports whether a NIC of one rail reaches a NIC of another:
// every rail ends on one switch, or the leaves are joined by spines. A
// fabric of leaves with no link between them keeps each rail apart.
func (inv *Inventory) RailsJoined() bool {
	return inv.RailsOnOneSwitch() || len(inv.Fabric.Links) > 0
}

// RailsOnOneSwitch reports whether every rail of every host ends on one
// switch (a single leaf carrying all rails, or an inventory of one rail on
// one switch).
func (inv *Inventory) RailsOnOneSwitch() bool {
	sw := ""
	for i := range inv.Hosts {
		for _, r := range inv.Hosts[i].Rails {
			if sw == "" {
				sw = r.Switch
			} else if r.Switch != sw {
				return false
			}
		}
	}
	return true
}

// dataPath is where host i's data is written: "hosts[i].data".
func dataPath(i int) string { return fmt.Sprintf("hosts[%d].data", i) }

// railPath is where rail r of host i is written: hosts[i].data for a host
// whose data is a mapping, hosts[i].data[r] in the list form.
func (c *checker) railPath(i, r int) string {
	if d := c.hostSpec(i).Data; d != nil && d.Rails != nil {
		return fmt.Sprintf("hosts[%d].data[%d]", i, r)
	}
	return dataPath(i)
}

// railList resolves the list form of host h's data (p is "hosts[i]"):
// each rail's address and port as a mapping's, its PF and interface with
// their defaults, and the rules within one host: at most MaxRails, no PF
// or interface twice, rail 0's PF and interface those of nic.pf and
// data_interface.
func (c *checker) railList(h *Host, r *DataSpec, p string) {
	p += ".data"
	if r.Address != "" || r.Switch != "" || r.Port != "" {
		c.errf(p, "sets both the one-rail keys (address, switch, port) and a list of rails: write one form")
	}
	if len(r.Rails) == 0 {
		c.errf(p, "is an empty list: write one mapping per rail (address, switch, port, pf), rail 0 first, or a single mapping for one rail")
		return
	}
	if len(r.Rails) > MaxRails {
		c.errf(p, "%d rails: a VM has at most %d virtual network adapters (VMware Configuration Maximums) and one is its management adapter, so it takes at most %d rails' SR-IOV adapters", len(r.Rails), MaxVirtualNICs, MaxRails)
	}
	pfs := map[string]int{}
	ifaces := map[string]int{}
	for k, rs := range r.Rails {
		rp := fmt.Sprintf("%s[%d]", p, k)
		rail := Rail{Index: k, DataLink: c.dataLink(rs.Address, rs.Switch, rs.Port, rp)}
		switch {
		case rs.PF == "" && k == 0:
			rail.PF = h.NIC.PF
		case rs.PF == "":
			c.missing(rp, "pf", " (the ESXi uplink of this rail's NIC port, e.g. vmnic5)")
		case !reVmnic.MatchString(rs.PF):
			c.errf(rp+".pf", "%q is not an ESXi uplink name like vmnic5", rs.PF)
		case k == 0 && h.NIC.PF != "" && rs.PF != h.NIC.PF:
			c.errf(rp+".pf", "%s is not nic.pf %s: rail 0's physical function is the NIC's pf (leave pf out here, or make the two agree)", rs.PF, h.NIC.PF)
		default:
			rail.PF = rs.PF
		}
		if rail.PF != "" {
			if j, dup := pfs[rail.PF]; dup {
				c.errf(rp+".pf", "%s is also rail %d's physical function: each rail has a NIC port of its own (one VF of one PF per rail)", rail.PF, j)
			} else {
				pfs[rail.PF] = k
			}
		}
		at := rp + ".interface"
		switch {
		case rs.Interface == "" && k == 0:
			rail.Interface = h.DataInterface
		case rs.Interface == "":
			rail.Interface, at = DefaultRailInterface(k), rp
		case k == 0 && h.DataInterface != "" && rs.Interface != h.DataInterface:
			c.errf(at, "%q is not data_interface %q: rail 0's interface is data_interface (leave interface out here, or make the two agree)", rs.Interface, h.DataInterface)
		case !reIface.MatchString(rs.Interface):
			c.errf(at, "%q is not a Linux interface name (1–15 letters, digits, '_', '.', '-')", rs.Interface)
		case rs.Interface == "lo" || rs.Interface == "docker0":
			c.errf(at, "%q is the VM's %s, not a rail's VF: give the VF a name of its own, or leave interface out (%s)", rs.Interface,
				map[string]string{"lo": "loopback interface", "docker0": "Docker bridge"}[rs.Interface], defaultIfaceOf(k))
		default:
			rail.Interface = rs.Interface
		}
		if rail.Interface != "" {
			if j, dup := ifaces[rail.Interface]; dup {
				c.errf(at, "interface %q is also rail %d's: each rail's VF has a name of its own in the guest", rail.Interface, j)
			} else {
				ifaces[rail.Interface] = k
			}
			if t := h.Template; k > 0 && t != nil && t.MgmtInterface == rail.Interface {
				c.errf(at, "interface %q is also the template's mgmt_interface: the management NIC and rail %d's VF are two interfaces", rail.Interface, k)
			}
		}
		h.Rails = append(h.Rails, rail)
	}
	h.Data = h.Rails[0].DataLink
}

// gpuRails pairs h's GPUs with its rails (GPU.Rail, Rail.GPUs): by
// gpus[].rail when every GPU names one, else by position — with n GPUs
// per rail (the GPU count over the rail count, rounded up), GPU i goes
// with rail i / n (8 GPUs on 4 rails: GPUs 0–1 with rail 0, 2–3 with
// rail 1, …), the rule pkg/railpair pairs the host's devices by. specs are
// the GPUs as written and at their path (the host's own or defaults').
func (c *checker) gpuRails(h *Host, specs []GPUSpec, at string) {
	n := max(len(h.Rails), 1)
	named := 0
	for _, g := range specs {
		if g.Rail != nil {
			named++
		}
	}
	once := func(path, format string, args ...any) {
		if !slices.ContainsFunc(c.rep.Findings, func(f Finding) bool { return f.Path == path }) {
			c.errf(path, format, args...)
		}
	}
	if named > 0 && named < len(specs) {
		once(at, "%d of %d GPUs name their rail: either every GPU names its rail, or none does and GPU i goes with rail i / (GPUs per rail)", named, len(specs))
	}
	byPosition := named < len(specs) || len(specs) != len(h.GPUs)
	per := (len(h.GPUs) + n - 1) / n
	for k := range h.GPUs {
		r := 0
		switch {
		case !byPosition:
			r = *specs[k].Rail
			if r < 0 || r >= n {
				once(fmt.Sprintf("%s[%d].rail", at, k), "rail %d: %s has %s", r, h.Name, railRange(n))
				r = 0
			}
		case per > 0:
			r = k / per
		}
		h.GPUs[k].Rail = r
		if r < len(h.Rails) {
			h.Rails[r].GPUs = append(h.Rails[r].GPUs, k)
		}
	}
	if n > 1 && len(h.GPUs) > 0 {
		var empty []string
		for _, r := range h.Rails {
			if len(r.GPUs) == 0 {
				empty = append(empty, strconv.Itoa(r.Index))
			}
		}
		if len(empty) > 0 {
			c.warnf(dataPath(h.Index), "rail(s) %s of %s have no GPU (%d GPUs on %d rails): NCCL pairs no GPU with their NICs; give the VM at least one GPU per rail, or fewer rails", strings.Join(empty, ", "), h.Name, len(h.GPUs), n)
		}
	}
	if n > 1 && len(h.GPUs)+n > MaxGPUsPerVM {
		c.errf(dataPath(h.Index), "%d GPUs and %d rails' VFs are %d PCI passthrough devices: a VM takes at most %d (ESXi 8.0 U2, hardware version 21; Broadcom KB 309986), and rdggen counts each rail's VF as one", len(h.GPUs), n, len(h.GPUs)+n, MaxGPUsPerVM)
	}
}

// defaultIfaceOf says what rail k's interface is when the inventory
// names none, for a finding's fix.
func defaultIfaceOf(k int) string {
	if k == 0 {
		return "rail 0's is then data_interface"
	}
	return "then " + DefaultRailInterface(k)
}

// railRange names the rails of a host of n rails: "one rail (0)", "rails 0–3".
func railRange(n int) string {
	if n <= 1 {
		return "one rail (0)"
	}
	return fmt.Sprintf("rails 0–%d", n-1)
}

// railRules checks what relates the rails of different hosts, in an
// inventory where any host has several: every host has as many rails,
// the inventory is a fabric, hosts that share a leaf for one rail share
// one for every rail, a switch port carries one rail of one ESXi host's
// PF, and each rail's addresses are unique. A warning names a leaf that
// carries two rails of one host.
func (c *checker) railRules() {
	inv := c.inv
	multi := -1
	for i := range inv.Hosts {
		if inv.Hosts[i].MultiRail() {
			multi = i
			break
		}
	}
	if multi < 0 {
		return
	}
	want := len(inv.Hosts[multi].Rails)
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		if n := len(h.Rails); n != want && n > 0 {
			c.errf(dataPath(i), "%d rail(s), and %s (hosts[%d]) has %d: every host of a cluster has the same number of rails (rail r of every host is on rail r's networks)", n, inv.Hosts[multi].Name, multi, want)
		}
		if h.MultiRail() && h.OS.Distro != "" && !h.OS.UsesNetplan() {
			c.errf(dataPath(i), "%d rails on %s: a VM's rails are set up with netplan (each rail's address, routes and routing-policy rule, docs/rails.md), which Ubuntu has from 18.04; use ubuntu-18.04 or later", len(h.Rails), h.OS)
		}
	}
	if !inv.IsFabric() {
		c.errf(dataPath(multi), "%d rails on switches without roles: each rail is a routed subnet of its own with its gateway on its leaf; give the switches role: leaf (and role: spine to join leaves, docs/rails.md)", want)
	}
	// Leaf groups: the first host seen on each (leaf, rail) stands for it.
	type leafRail struct {
		sw   string
		rail int
	}
	first := map[leafRail]int{}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
	rails:
		for _, r := range h.Rails {
			if c.switchNamed(r.Switch) == nil {
				continue
			}
			j, ok := first[leafRail{r.Switch, r.Index}]
			if !ok {
				first[leafRail{r.Switch, r.Index}] = i
				continue
			}
			o := &inv.Hosts[j]
			for s := range min(len(h.Rails), len(o.Rails)) {
				a, b := h.Rails[s].Switch, o.Rails[s].Switch
				if a != b && c.switchNamed(a) != nil && c.switchNamed(b) != nil {
					c.errf(c.railPath(i, s)+".switch", "rail %d of %s is on %s, but %s (hosts[%d]), on %s with it for rail %d, has rail %d on %s: hosts that share a leaf for one rail share one for every rail (rail r of a group of hosts on one leaf), so that each (leaf, rail) subnet holds one group",
						s, h.Name, a, o.Name, j, r.Switch, r.Index, s, b)
					break rails
				}
			}
		}
	}
	// Ports: one (ESXi host, PF) and one rail per switch port.
	type cable struct {
		sw   string
		port Port
	}
	type owner struct {
		esxi, pf string
		host     int
		rail     int
	}
	byPort := map[cable]owner{}
	// byPF is, per ESXi host and PF, the first rail that names it: its
	// cable, host and rail.
	type pfUse struct {
		cable
		host, rail int
	}
	byPF := map[string]pfUse{}
	portName := func(k cable) string {
		if sw := inv.Switch(k.sw); sw != nil {
			return k.sw + " " + sw.PortName(k.port)
		}
		return k.sw + " " + k.port.String()
	}
	shared := map[string]bool{} // leaves already warned about
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		leafOf := map[string]int{}
		for _, r := range h.Rails {
			if j, ok := leafOf[r.Switch]; ok && r.Switch != "" && !shared[r.Switch] {
				shared[r.Switch] = true
				c.warnf(c.railPath(i, r.Index)+".switch", "rails %d and %d of %s both end on %s: the leaf carries both rails (each with its own VLAN, subnet and gateway), and losing it takes both; a rail-optimized fabric cables rail r of a group of hosts to leaf r", j, r.Index, h.Name, r.Switch)
			} else if !ok {
				leafOf[r.Switch] = r.Index
			}
			if r.Port.Number == 0 || r.Switch == "" {
				continue
			}
			k := cable{r.Switch, r.Port}
			at := c.railPath(i, r.Index) + ".port"
			shown := portName(k)
			if o, ok := byPort[k]; ok {
				switch {
				case o.esxi != h.ESXi || o.pf != r.PF:
					if r.Index > 0 || o.rail > 0 { // rail 0 against rail 0 is ports()'s finding
						c.errf(at, "duplicate switch port %s (also hosts[%d] rail %d): only VMs on one ESXi host share a port, through one PF", shown, o.host, o.rail)
					}
				case o.rail != r.Index:
					c.errf(at, "switch port %s carries rail %d of hosts[%d] and rail %d here: a switch port carries one rail (its VLAN and subnet)", shown, o.rail, o.host, r.Index)
				}
			} else {
				byPort[k] = owner{h.ESXi, r.PF, i, r.Index}
			}
			if r.PF != "" && h.ESXi != "" {
				key := h.ESXi + "\x00" + r.PF
				if prev, ok := byPF[key]; ok && prev.cable != k && r.Index > 0 {
					holder := fmt.Sprintf("rail %d of VM %s (hosts[%d]) names it", prev.rail, vmName(&inv.Hosts[prev.host]), prev.host)
					if prev.host == i {
						holder = fmt.Sprintf("rail %d of this VM, %s, names it", prev.rail, vmName(h))
					}
					c.errf(at, "%s of ESXi host %s is cabled to %s (%s): one PF, one cable", r.PF, h.ESXi, portName(prev.cable), holder)
				} else if !ok {
					byPF[key] = pfUse{k, i, r.Index}
				}
			}
		}
	}
}

// vmName is host h's vSphere VM name (hosts[].vm, default its name).
func vmName(h *Host) string {
	if h.VM != "" {
		return h.VM
	}
	return h.Name
}

// leafRails derives the (leaf, rail) subnets of leaf i, sw, from the host
// rails cabled to it, and checks each rail's addresses and gateway. A
// leaf that carries one rail (or none) takes switches[i].subnet and
// .gateway as in an inventory of one rail, with the same findings; a leaf
// that carries several derives each rail's subnet from its hosts'
// addresses and its gateway as the subnet's last host address.
func (c *checker) leafRails(i int, sw *Switch) {
	p := fmt.Sprintf("switches[%d]", i)
	ports := c.inv.RailsOnSwitch(sw.Name)
	var rails []int
	for _, hr := range ports {
		if !slices.Contains(rails, hr.Rail.Index) {
			rails = append(rails, hr.Rail.Index)
		}
	}
	slices.Sort(rails)
	f := &sw.Fabric
	raw := c.rawSwitch(i)
	if len(rails) <= 1 {
		r := 0
		if len(rails) == 1 {
			r = rails[0]
		}
		c.leafRail(i, sw, r, ports, true)
		if f.Subnet.IsValid() {
			f.Rails = []LeafRail{{Rail: r, Subnet: f.Subnet, Gateway: f.Gateway}}
		}
		return
	}
	for key, set := range map[string]bool{"subnet": raw.Subnet != "", "gateway": raw.Gateway != ""} {
		if set {
			c.errf(p+"."+key, "%s carries rails %s, each with a subnet of its own (its hosts' network) and its gateway (the subnet's last host address): %s names one; leave it out here", sw.Name, intList(rails), key)
		}
	}
	for _, r := range rails {
		var mine []HostRail
		for _, hr := range ports {
			if hr.Rail.Index == r {
				mine = append(mine, hr)
			}
		}
		f.Subnet, f.Gateway = netip.Prefix{}, netip.Addr{}
		c.leafRail(i, sw, r, mine, false)
		if f.Subnet.IsValid() {
			f.Rails = append(f.Rails, LeafRail{Rail: r, Subnet: f.Subnet, Gateway: f.Gateway})
		}
	}
	f.Subnet, f.Gateway = netip.Prefix{}, netip.Addr{}
	if len(f.Rails) > 0 {
		f.Subnet, f.Gateway = f.Rails[0].Subnet, f.Rails[0].Gateway
	}
}

// leafRail derives and checks one (leaf, rail) subnet of switch sw (at
// switches[i]) into sw.Fabric.Subnet and .Gateway, from the host rails ports
// cabled to it; keys says the switch's subnet and gateway keys apply.
func (c *checker) leafRail(i int, sw *Switch, rail int, ports []HostRail, keys bool) {
	p := fmt.Sprintf("switches[%d]", i)
	f := &sw.Fabric
	raw := SwitchFabricSpec{}
	if keys {
		raw = c.rawSwitch(i)
	}
	addrPath := func(hr HostRail) string { return c.railPath(hr.Host.Index, hr.Rail.Index) + ".address" }
	what := "data address"
	if rail > 0 {
		what = fmt.Sprintf("rail %d address", rail)
	}
	from := "" // where a derived subnet came from, for the message
	if !f.Subnet.IsValid() && raw.Subnet == "" {
		for _, hr := range ports {
			if hr.Rail.Address.IsValid() {
				f.Subnet = hr.Rail.Address.Masked()
				if keys {
					from = fmt.Sprintf(" (taken from %s's %s, hosts[%d], the first host cabled to it; %s.subnet sets it)", hr.Host.Name, what, hr.Host.Index, p)
				} else {
					from = fmt.Sprintf(" (rail %d's, taken from %s's address, hosts[%d], the first host whose rail %d is cabled to it)", rail, hr.Host.Name, hr.Host.Index, rail)
				}
				break
			}
		}
	}
	if !f.Subnet.IsValid() {
		return
	}
	subnetOf := "data subnet"
	if !keys {
		subnetOf = fmt.Sprintf("rail %d subnet", rail)
	}
	for _, hr := range ports {
		if a := hr.Rail.Address; a.IsValid() && a.Masked() != f.Subnet {
			c.errf(addrPath(hr), "%s is not on %s's %s %s%s: each leaf owns the data subnet of the hosts cabled to it and is their gateway, so a host's data address is in its leaf's subnet, with its prefix length", a, sw.Name, subnetOf, f.Subnet, from)
		}
	}
	gwPath := p + ".gateway"
	if !f.Gateway.IsValid() && raw.Gateway == "" {
		gwPath = p + ".subnet"
		if !keys {
			gwPath = p
		}
		a, ok := DefaultGateway(f.Subnet)
		if !ok {
			if keys {
				c.errf(gwPath, "%s%s has no last host address for the leaf's gateway to default to: set %s.gateway, or widen the subnet to /30 or shorter", f.Subnet, from, p)
			} else {
				// A leaf of several rails takes no gateway key: the
				// hosts' prefix length is what to change.
				c.errf(gwPath, "%s's rail %d subnet %s%s has no last host address for the leaf's gateway: give rail %d's hosts a prefix length of /30 or shorter", sw.Name, rail, f.Subnet, from, rail)
			}
			return
		}
		f.Gateway = a
	}
	switch gw := f.Gateway; {
	case !gw.IsValid():
	case !f.Subnet.Contains(gw):
		c.errf(gwPath, "the gateway %s is not on %s's %s %s: set %s.gateway to a free address of %s, or leave it out (the subnet's last host address)", gw, sw.Name, subnetOf, f.Subnet, p, f.Subnet)
	case gw == f.Subnet.Addr() || gw == lastAddr(f.Subnet):
		c.errf(gwPath, "the gateway %s is the network or broadcast address of %s, not a host address: set %s.gateway to a free host address of %s", gw, f.Subnet, p, f.Subnet)
	default:
		for _, hr := range ports {
			if a := hr.Rail.Address; a.IsValid() && a.Addr() == gw {
				if keys {
					c.errf(gwPath, "the gateway %s of %s is hosts[%d]'s (%s) data address: set %s.gateway to a free address of %s", gw, sw.Name, hr.Host.Index, hr.Host.Name, p, f.Subnet)
				} else {
					c.errf(addrPath(hr), "%s is the gateway of %s's rail %d subnet %s (its last host address): give the host another address", gw, sw.Name, rail, f.Subnet)
				}
			}
		}
	}
}
