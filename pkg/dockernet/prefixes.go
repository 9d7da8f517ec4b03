package dockernet

import (
	"net/netip"
	"slices"
)

// aggregate returns the fewest prefixes whose union is exactly the union of
// in (pairwise disjoint, as validation guarantees for data addresses and
// container subnets), sorted by address: sibling prefixes of equal length are
// merged into their parent, repeatedly.
func aggregate(in []netip.Prefix) []netip.Prefix {
	sorted := slices.Clone(in)
	slices.SortFunc(sorted, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	stack := make([]netip.Prefix, 0, 16)
	for _, p := range sorted {
		stack = append(stack, p)
		for len(stack) >= 2 {
			a, b := stack[len(stack)-2], stack[len(stack)-1]
			if a.Bits() != b.Bits() || a.Bits() == 0 {
				break
			}
			parent, _ := a.Addr().Prefix(a.Bits() - 1)
			if parent.Addr() != a.Addr() || !parent.Contains(b.Addr()) {
				break
			}
			stack = append(stack[:len(stack)-2], parent)
		}
	}
	return stack
}

// without returns agg (from aggregate) minus p, which lies inside one of its
// prefixes B: B is replaced by the halves that split B down to p, which are
// minimal too (a half cannot pair with a prefix outside B).
func without(agg []netip.Prefix, p netip.Prefix) []netip.Prefix {
	j, _ := slices.BinarySearchFunc(agg, p.Addr(), func(e netip.Prefix, a netip.Addr) int { return e.Addr().Compare(a) })
	if j == len(agg) || agg[j].Addr() != p.Addr() {
		j-- // the prefix starting before p's address
	}
	if j < 0 || !agg[j].Contains(p.Addr()) {
		return slices.Clone(agg)
	}
	b := agg[j]
	out := make([]netip.Prefix, 0, len(agg)+p.Bits()-b.Bits())
	out = append(out, agg[:j]...)
	var upper []netip.Prefix // halves above p, collected from the largest down
	for bits := b.Bits() + 1; bits <= p.Bits(); bits++ {
		half, _ := p.Addr().Prefix(bits) // the half of the current block that holds p
		parent, _ := p.Addr().Prefix(bits - 1)
		if half.Addr() == parent.Addr() { // p in the lower half: keep the upper one
			upper = append(upper, netip.PrefixFrom(lastOf(half).Next(), bits))
		} else {
			out = append(out, netip.PrefixFrom(parent.Addr(), bits))
		}
	}
	for i := len(upper) - 1; i >= 0; i-- {
		out = append(out, upper[i])
	}
	return append(out, agg[j+1:]...)
}

// lastOf is the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}
