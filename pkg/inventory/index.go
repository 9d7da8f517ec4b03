package inventory

import (
	"cmp"
	"net/netip"
	"slices"
	"sort"
)

// The indexes below let the checks that relate hosts to each other run in
// O(n log n) for n hosts instead of comparing every host with every other
// (or with every ESXi host, switch or address). Each gives its matches in
// the order the pairwise scan would, so that findings keep their order.

// esxiGroup is one ESXi host and the VMs placed on it, in file order.
type esxiGroup struct {
	name  string
	hosts []*Host
}

// esxiGroups is Inventory.ByESXi, computed once per check.
func (c *checker) esxiGroups() []esxiGroup {
	if c.esxi != nil {
		return c.esxi
	}
	groups := []esxiGroup{}
	for name, hosts := range c.inv.ByESXi() {
		groups = append(groups, esxiGroup{name, hosts})
	}
	c.esxi = groups
	return groups
}

// switchNamed is Inventory.Switch by a map: the first switch of that name,
// or nil. It is built on first use, once every switch is resolved.
func (c *checker) switchNamed(name string) *Switch {
	if c.switchAt == nil {
		c.switchAt = make(map[string]int, len(c.inv.Switches))
		for i, s := range c.inv.Switches {
			if _, dup := c.switchAt[s.Name]; !dup {
				c.switchAt[s.Name] = i
			}
		}
	}
	if i, ok := c.switchAt[name]; ok {
		return &c.inv.Switches[i]
	}
	return nil
}

// addrIndex finds which of a list of addresses a network contains.
type addrIndex struct {
	addrs []netip.Addr // sorted
	at    []int        // at[k] is the list position of addrs[k]
}

func newAddrIndex(list []ownedAddr) addrIndex {
	order := make([]int, len(list))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return list[order[a]].addr.Less(list[order[b]].addr) })
	x := addrIndex{addrs: make([]netip.Addr, len(list)), at: order}
	for k, i := range order {
		x.addrs[k] = list[i].addr
	}
	return x
}

// within returns the list positions of the addresses p contains, in list
// order: those of p's family between its first and last address.
func (x addrIndex) within(p netip.Prefix) []int {
	p = p.Masked()
	first := p.Addr()
	last := lastAddrOf(p)
	lo := sort.Search(len(x.addrs), func(k int) bool { return !x.addrs[k].Less(first) })
	var out []int
	for k := lo; k < len(x.addrs) && !last.Less(x.addrs[k]); k++ {
		if p.Contains(x.addrs[k]) {
			out = append(out, x.at[k])
		}
	}
	slices.Sort(out)
	return out
}

// lastAddrOf is the last address of the network p, of either family.
func lastAddrOf(p netip.Prefix) netip.Addr {
	p = p.Masked()
	if p.Addr().Is4() {
		return lastAddr(p)
	}
	b := p.Addr().As16()
	for i := p.Bits(); i < 128; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	return netip.AddrFrom16(b)
}

// netIndex finds which of a list of distinct networks a prefix overlaps.
type netIndex struct {
	pos   map[netip.Prefix]int // network → list position
	nets  []netip.Prefix       // sorted by first address
	at    []int                // at[k] is the list position of nets[k]
	width map[int]bool         // the prefix lengths in the list
}

func newNetIndex(list []dataNet) netIndex {
	x := netIndex{pos: make(map[netip.Prefix]int, len(list)), width: map[int]bool{}}
	for i, n := range list {
		x.pos[n.net] = i
		x.width[n.net.Bits()] = true
		x.at = append(x.at, i)
	}
	slices.SortStableFunc(x.at, func(a, b int) int { return list[a].net.Addr().Compare(list[b].net.Addr()) })
	for _, i := range x.at {
		x.nets = append(x.nets, list[i].net)
	}
	return x
}

// overlapping returns the list positions of the networks that overlap s,
// in list order. Two networks overlap when one contains the other: the
// list's networks as wide as s or wider are looked up by s masked to each
// of their lengths, the narrower ones by a range of first addresses.
func (x netIndex) overlapping(s netip.Prefix) []int {
	var out []int
	for bits := range x.width {
		if bits <= s.Bits() {
			if p, err := s.Addr().Prefix(bits); err == nil {
				if i, ok := x.pos[p]; ok {
					out = append(out, i)
				}
			}
		}
	}
	s = s.Masked()
	first, last := s.Addr(), lastAddrOf(s)
	lo := sort.Search(len(x.nets), func(k int) bool { return !x.nets[k].Addr().Less(first) })
	for k := lo; k < len(x.nets) && !last.Less(x.nets[k].Addr()); k++ {
		if x.nets[k].Bits() > s.Bits() && s.Overlaps(x.nets[k]) {
			out = append(out, x.at[k])
		}
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}
