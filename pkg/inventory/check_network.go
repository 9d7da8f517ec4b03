package inventory

// The network rules: management endpoints, vCenter, data addresses on one
// network, container subnets derived, inside the pool and overlapping nothing.

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// specialRanges are IPv4 ranges that can be neither data addresses nor
// container subnets (RFC 6890): "this network", loopback, link-local,
// multicast and reserved.
var specialRanges = []struct {
	p    netip.Prefix
	name string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "127.0.0.0/8 (loopback)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "169.254.0.0/16 (link-local)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "224.0.0.0/4 (multicast)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "240.0.0.0/4 (reserved)"},
}

// specialRange names the special range p overlaps, or "".
func specialRange(p netip.Prefix) string {
	for _, r := range specialRanges {
		if r.p.Overlaps(p) {
			return r.name
		}
	}
	return ""
}

// validMgmt accepts host, IP, host:port, IPv4:port and [IPv6]:port; an IP
// must be one a machine can be reached at (not 0.0.0.0, multicast or
// broadcast).
func validMgmt(s string) bool {
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return false
		}
		host = h
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return reachable(a)
	}
	return validHostname(host)
}

// unreachable are ranges no machine is reached at: "this network",
// multicast and reserved (with the broadcast address).
var unreachable = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("224.0.0.0/4"), netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/128"), netip.MustParsePrefix("ff00::/8"),
}

// reachable reports whether a is an address a machine can have.
func reachable(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range unreachable {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// mgmtAddr returns the IP address of a management endpoint written as an IP
// literal (with or without a port).
func mgmtAddr(s string) (netip.Addr, bool) {
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

func (c *checker) data(h *Host, r *DataSpec, p string) {
	if r == nil {
		c.missing(p, "data", " (address, switch and port of the data link)")
		return
	}
	if r.Rails != nil {
		c.railList(h, r, p) // rails.go
		return
	}
	h.Data = c.dataLink(r.Address, r.Switch, r.Port, p+".data")
	h.Rails = []Rail{{DataLink: h.Data, PF: h.NIC.PF, Interface: h.DataInterface}}
}

// dataLink resolves one data link written at p (a host's data, or one
// rail of it): the address, the switch (the only one when there is one)
// and the port. What does not resolve stays zero, with its finding.
func (c *checker) dataLink(addr, swName, port, p string) DataLink {
	var l DataLink
	if addr == "" {
		c.missing(p, "address", " (e.g. 31.31.31.41/24)")
	} else if a, err := netip.ParsePrefix(addr); err != nil || !a.Addr().Is4() {
		c.errf(p+".address", "%q is not an IPv4 address with its prefix length, like 31.31.31.41/24", addr)
	} else if a.Bits() < 31 && (a.Addr() == a.Masked().Addr() || a.Addr() == lastAddr(a)) {
		c.errf(p+".address", "%s is the network or broadcast address of %s, not a host address", a.Addr(), a.Masked())
	} else if r := specialRange(netip.PrefixFrom(a.Addr(), 32)); r != "" {
		c.errf(p+".address", "%s is in %s, not a routable data address", a.Addr(), r)
	} else {
		l.Address = a
	}
	l.Switch = swName
	if swName == "" {
		if len(c.inv.Switches) == 1 {
			l.Switch = c.inv.Switches[0].Name
		} else {
			c.missing(p, "switch", " (the switch the data port is cabled to)")
		}
	}
	sw := c.switchNamed(l.Switch)
	if l.Switch != "" && sw == nil {
		c.errf(p+".switch", "unknown switch %q (switches: %s)", l.Switch, c.switchNames())
	}
	if port == "" {
		c.missing(p, "port", " (the switch port, e.g. 1/1)")
		return l
	}
	// Cumulus's swpN (swpNsM for a lane of a split port) or ONYX's 1/N
	// (1/N/M): fabric.go's switchPort, shared with the fabric's links.
	if pt, ok := c.switchPort(p+".port", port, sw); ok {
		l.Port = pt
	}
	return l
}

// lastAddr is the broadcast address of p's network.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return addr4(n)
}

func addr4(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// deriveSubnet applies the guide's convention: the host's offset inside its
// data network (41 for 31.31.31.41/24) picks the prefix-sized block of the pool
// (172.16.41.0/24).
func (c *checker) deriveSubnet(addr netip.Prefix, path string) netip.Prefix {
	d := c.inv.Docker
	if d.Prefix < d.Pool.Bits() || d.Prefix > 30 {
		return netip.Prefix{} // already reported at docker.prefix
	}
	offset := u32(addr.Addr()) - u32(addr.Masked().Addr())
	blocks := uint64(1) << (d.Prefix - d.Pool.Bits())
	if uint64(offset) >= blocks {
		c.errf(path, "offset %d of %s in %s does not fit the pool %s, which holds %d /%d subnets (offsets 0–%d); set hosts[].docker.subnet or widen docker.pool",
			offset, addr.Addr(), addr.Masked(), d.Pool, blocks, d.Prefix, blocks-1)
		return netip.Prefix{}
	}
	return netip.PrefixFrom(addr4(u32(d.Pool.Addr())+offset<<(32-d.Prefix)), d.Prefix)
}

// hostSpec is hosts[i] as written (an empty HostSpec past the end).
func (c *checker) hostSpec(i int) *HostSpec {
	if c.raw == nil || i < 0 || i >= len(c.raw.Hosts) {
		return &HostSpec{}
	}
	return &c.raw.Hosts[i]
}

// subnetPath is where a host's container subnet came from: the
// docker.subnet written for the host, else the data address it is derived
// from. Whether a key is written is read from the Spec, not from the file's
// positions, so that Build names the same fields as Load.
func (c *checker) subnetPath(i int) string {
	if r := c.hostSpec(i); r.Docker != nil && r.Docker.Subnet != "" {
		return fmt.Sprintf("hosts[%d].docker.subnet", i)
	}
	return c.railPath(i, 0) + ".address"
}

// crossHost checks the rules that relate hosts to each other and to the cluster.
func (c *checker) crossHost() {
	inv := c.inv
	type first struct {
		i    int
		path string
	}
	// dup reports a key seen before, at whichever of the two places the user
	// wrote explicitly (prefer), else at the later one.
	dup := func(kind string, explicit func(path string) bool) func(key string, i int, path string) {
		seen := map[string]first{}
		return func(key string, i int, path string) {
			if key == "" {
				return
			}
			k := strings.ToLower(key) // names are compared as DNS and file systems do
			if f, ok := seen[k]; ok {
				at, other := path, f.i
				if explicit != nil && explicit(f.path) && !explicit(path) {
					at, other = f.path, i
				}
				hint := ""
				if kind == "container subnet" && c.inv.IsFabric() && (explicit == nil || !explicit(at)) {
					// Each leaf numbers its own hosts, but the derived subnet
					// is the host's offset in its data subnet (docs/rules.md).
					hint = ": derived from each host's offset in its own leaf's data subnet, which repeats across leaves; number the hosts apart across leaves (e.g. .11 on leaf1, .21 on leaf2), or set hosts[].docker.subnet"
				}
				c.errf(at, "duplicate %s %s (also hosts[%d])%s", kind, key, other, hint)
				return
			}
			seen[k] = first{i, path}
		}
	}
	writtenSubnet := func(path string) bool { return strings.HasSuffix(path, ".docker.subnet") } // see subnetPath
	names, vms, addrs, subnets := dup("host name", nil), dup("VM name", nil), dup("data address", nil), dup("container subnet", writtenSubnet)
	shortSeen := map[string]int{}
	esxiSpelling := map[string]int{}
	mgmt, dataNets := c.mgmtAddrs(), c.dataNets()
	mgmtIn, dataNetsOf := newAddrIndex(mgmt), newNetIndex(dataNets)
	c.subnetOverlaps()
	c.ports()
	c.mgmtEndpoints()
	dataNet, dataFrom := c.majorityDataNet()
	mtu, mtuFrom := c.majorityDataMTU()
	dockerMTUSet := inv.Docker.MTU != 0
	if !dockerMTUSet {
		inv.Docker.MTU = mtu // no encapsulation between docker0 and the data link
	}
	var shortMTU []string
	for i, h := range inv.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		names(h.Name, i, p+".name")
		if k := strings.ToLower(h.ESXi); h.ESXi != "" {
			if j, ok := esxiSpelling[k]; ok && inv.Hosts[j].ESXi != h.ESXi {
				c.errf(p+".esxi", "%s and %s (hosts[%d]) name the same ESXi host (names do not depend on case): write it the same way", h.ESXi, inv.Hosts[j].ESXi, j)
			} else if !ok {
				esxiSpelling[k] = i
			}
		}
		// run.sh tells the hosts apart by `hostname -s`, the first label.
		short, _, _ := strings.Cut(strings.ToLower(h.Name), ".")
		if j, ok := shortSeen[short]; ok && !strings.EqualFold(inv.Hosts[j].Name, h.Name) {
			c.errf(p+".name", "%s has the short name %s of hosts[%d] (%s): run.sh tells hosts apart by `hostname -s`", h.Name, short, j, inv.Hosts[j].Name)
		} else if !ok && short != "" {
			shortSeen[short] = i
		}
		vmPath := p + ".vm"
		if c.hostSpec(i).VM == "" { // the VM name is the host name
			vmPath = p + ".name"
		}
		vms(h.VM, i, vmPath)
		if h.Data.Address.IsValid() {
			addrs(h.Data.Address.Addr().String(), i, c.railPath(i, 0)+".address")
			if h.Data.Address.Masked() != dataNet && !inv.IsFabric() { // a fabric's leaves each own a subnet (fabric.go)
				c.errf(c.railPath(i, 0)+".address", "%s is not on the data network %s of hosts[%d] and the others: all data addresses must share one directly connected network (routes need an on-link next hop)",
					h.Data.Address, dataNet, dataFrom)
			}
		}
		for _, r := range h.Rails[min(1, len(h.Rails)):] { // rail 0 is Data, above
			if r.Address.IsValid() {
				addrs(r.Address.Addr().String(), i, c.railPath(i, r.Index)+".address")
			}
		}
		if h.Subnet.IsValid() {
			sp := c.subnetPath(i)
			subnets(h.Subnet.String(), i, sp)
			if !inv.Docker.Pool.Contains(h.Subnet.Addr()) || h.Subnet.Bits() < inv.Docker.Pool.Bits() {
				c.errf(sp, "container subnet %s is outside the pool %s", h.Subnet, inv.Docker.Pool)
			}
			for _, k := range mgmtIn.within(h.Subnet) {
				m := mgmt[k]
				c.errf(sp, "container subnet %s contains the management address %s of %s", h.Subnet, m.addr, m.owner)
			}
			for _, k := range dataNetsOf.overlapping(h.Subnet) {
				n := dataNets[k]
				c.errf(sp, "container subnet %s overlaps the data network %s (hosts[%d])", h.Subnet, n.net, n.host)
			}
		}
		if h.DataMTU != mtu {
			at := p + ".data_mtu"
			if c.hostSpec(i).DataMTU == nil { // inherited or the default
				at = p + ".name"
			}
			c.errf(at, "data_mtu %d differs from %d of hosts[%d] and the others: the data network has one MTU, set on every switch port, vSwitch and VF it crosses (a smaller hop drops large frames while pings pass)",
				h.DataMTU, mtu, mtuFrom)
		} else if inv.Docker.MTU > h.DataMTU {
			shortMTU = append(shortMTU, fmt.Sprintf("%s (%d)", h.Name, h.DataMTU))
		}
	}
	if len(shortMTU) > 0 && inv.Docker.MTU <= MaxDataMTU { // above that, docker.mtu has its range finding

		list := shortMTU
		if len(list) > 4 {
			list = append(list[:4:4], fmt.Sprintf("and %d more", len(shortMTU)-4))
		}
		c.errf("docker.mtu", "%d is above the data link MTU of %s; raise data_mtu (rdggen sets it on the switch ports, the ESXi vSwitch and the VF) or lower docker.mtu (or leave it out: it follows data_mtu)",
			inv.Docker.MTU, strings.Join(list, ", "))
	}
	if dockerMTUSet && inv.Docker.MTU < mtu && inv.Horovod.Network != NetworkHost {
		// rdggen example writes docker.mtu: 1500: a user who then raises
		// data_mtu gets jumbo frames everywhere but in the containers.
		c.warnf("docker.mtu", "%d is below data_mtu %d (hosts[%d] and the others): docker0 and the bridge-mode workers stay at %d bytes while the data link carries %d; leave docker.mtu out to follow data_mtu, or set it to %d",
			inv.Docker.MTU, mtu, mtuFrom, inv.Docker.MTU, mtu, mtu)
	}
	if inv.Horovod.Network == NetworkHost && inv.Horovod.SSHPort == 22 {
		c.errf("horovod.ssh_port", "22 is the VM's own sshd: with host networking the workers' sshd must listen on another port (e.g. 12345)")
	}
	c.esxiShared()
}

// majorityDataMTU is the data_mtu most hosts have (the first host's on a
// tie) and the first host that has it.
func (c *checker) majorityDataMTU() (int, int) {
	count := map[int]int{}
	first := map[int]int{}
	best := DefaultDataMTU
	for i, h := range c.inv.Hosts {
		if count[h.DataMTU] == 0 {
			first[h.DataMTU] = i
		}
		count[h.DataMTU]++
		if count[h.DataMTU] > count[best] || (count[h.DataMTU] == count[best] && first[h.DataMTU] < first[best]) {
			best = h.DataMTU
		}
	}
	return best, first[best]
}

// majorityDataNet is the data network most hosts are on (the first host's on
// a tie), so that one stray address is what gets reported, not the others.
func (c *checker) majorityDataNet() (netip.Prefix, int) {
	count := map[netip.Prefix]int{}
	var order []netip.Prefix
	first := map[netip.Prefix]int{}
	for i, h := range c.inv.Hosts {
		if !h.Data.Address.IsValid() {
			continue
		}
		n := h.Data.Address.Masked()
		if count[n] == 0 {
			order = append(order, n)
			first[n] = i
		}
		count[n]++
	}
	best := netip.Prefix{}
	for _, n := range order {
		if !best.IsValid() || count[n] > count[best] {
			best = n
		}
	}
	return best, first[best]
}

// mgmtEndpoints checks that no two machines (hosts and switches) share a
// management endpoint, and that no host is managed through another host's
// data address: apply would push two configurations to one machine.
func (c *checker) mgmtEndpoints() {
	inv := c.inv
	type owner struct{ path, name string }
	seen := map[string]owner{}
	add := func(endpoint, path, name string) {
		if endpoint == "" {
			return
		}
		key := strings.ToLower(endpoint)
		if o, ok := seen[key]; ok {
			c.errf(path, "management address %s is also %s's (%s): apply would configure one machine twice", endpoint, o.name, o.path)
			return
		}
		seen[key] = owner{path, name}
	}
	for j, s := range inv.Switches {
		add(s.Mgmt, fmt.Sprintf("switches[%d].mgmt", j), s.Name)
	}
	data := map[netip.Addr]int{}
	for j, h := range inv.Hosts {
		for _, r := range h.Rails[min(1, len(h.Rails)):] { // rail 0 is Data
			if r.Address.IsValid() {
				data[r.Address.Addr()] = j
			}
		}
		if h.Data.Address.IsValid() {
			data[h.Data.Address.Addr()] = j
		}
	}
	for i, h := range inv.Hosts {
		p := fmt.Sprintf("hosts[%d].mgmt", i)
		if c.hostSpec(i).Mgmt == "" { // the management address is the host name
			p = fmt.Sprintf("hosts[%d].name", i)
		}
		add(h.Mgmt, p, h.Name)
		if a, ok := mgmtAddr(h.Mgmt); ok {
			if j, ok := data[a]; ok && j != i {
				c.errf(p, "management address %s is hosts[%d]'s (%s) data address", a, j, inv.Hosts[j].Name)
			}
		}
	}
}

type ownedAddr struct {
	addr  netip.Addr
	owner string
}

// mgmtAddrs lists the management addresses written as IP literals.
func (c *checker) mgmtAddrs() []ownedAddr {
	var out []ownedAddr
	for j, h := range c.inv.Hosts {
		if a, ok := mgmtAddr(h.Mgmt); ok {
			out = append(out, ownedAddr{a, fmt.Sprintf("hosts[%d]", j)})
		}
	}
	for j, s := range c.inv.Switches {
		if a, ok := mgmtAddr(s.Mgmt); ok {
			out = append(out, ownedAddr{a, fmt.Sprintf("switches[%d]", j)})
		}
	}
	return out
}

type dataNet struct {
	net  netip.Prefix
	host int
}

// dataNets lists the distinct data networks with the first host on each.
func (c *checker) dataNets() []dataNet {
	var out []dataNet
	seen := map[netip.Prefix]bool{}
	for j, h := range c.inv.Hosts {
		if n := h.Data.Address.Masked(); h.Data.Address.IsValid() && !seen[n] {
			seen[n] = true
			out = append(out, dataNet{n, j})
		}
		for _, r := range h.Rails[min(1, len(h.Rails)):] { // every rail's network (rail 0 is Data)
			if n := r.Address.Masked(); r.Address.IsValid() && !seen[n] {
				seen[n] = true
				out = append(out, dataNet{n, j})
			}
		}
	}
	return out
}

// subnetOverlaps reports container subnets that overlap without being equal
// (equal ones are duplicates), in O(n log n): sorted by first address, a subnet
// overlaps an earlier one exactly when it starts before the furthest end so far.
func (c *checker) subnetOverlaps() {
	inv := c.inv
	idx := make([]int, 0, len(inv.Hosts))
	for i, h := range inv.Hosts {
		if h.Subnet.IsValid() {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := inv.Hosts[idx[a]].Subnet, inv.Hosts[idx[b]].Subnet
		if x.Addr() != y.Addr() {
			return x.Addr().Less(y.Addr())
		}
		return x.Bits() < y.Bits()
	})
	widest := -1 // the host whose subnet reaches furthest so far
	for _, i := range idx {
		s := inv.Hosts[i].Subnet
		if widest >= 0 {
			w := inv.Hosts[widest].Subnet
			if w != s && w.Overlaps(s) {
				j, k := min(i, widest), max(i, widest)
				c.errf(c.subnetPath(k), "container subnet %s overlaps hosts[%d]'s %s", inv.Hosts[k].Subnet, j, inv.Hosts[j].Subnet)
			}
			if u32(lastAddr(s)) <= u32(lastAddr(w)) {
				continue
			}
		}
		widest = i
	}
}
