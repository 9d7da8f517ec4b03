package dockernet

import (
	"bytes"
	"net/netip"
	"slices"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// Route is one static route on a host to another host's container subnet
// (SPEC §2.3): "Dst via Via dev Dev".
type Route struct {
	// Dst is the other host's container subnet, e.g. 172.16.42.0/24.
	Dst netip.Prefix
	// Via is the other host's data address, an on-link next hop (validation
	// guarantees one shared data network), e.g. 31.31.31.42.
	Via netip.Addr
	// Dev is this host's data interface, e.g. enp1f0.
	Dev string
	// Host names the other host, for comments and plans.
	Host string
}

// RouteTo is the destination and next hop of the route that every other host
// uses to reach host o's containers: o's container subnet via o's data address.
func RouteTo(o *inventory.Host) (dst netip.Prefix, via netip.Addr) {
	return o.Subnet, o.Data.Address.Addr()
}

// Routes returns host h's routes: one per other host, in inventory order. It
// never contains h's own subnet: that route would replace docker0's connected
// route and cut h's containers off (research/hosts.md §2.1).
func Routes(inv *inventory.Inventory, h *inventory.Host) []Route {
	out := make([]Route, 0, len(inv.Hosts))
	for i := range inv.Hosts {
		o := &inv.Hosts[i]
		if o.Name == h.Name {
			continue
		}
		dst, via := RouteTo(o)
		out = append(out, Route{Dst: dst, Via: via, Dev: h.DataInterface, Host: o.Name})
	}
	return out
}

// Command is the route as an `ip -batch` line (the arguments of `ip`):
// "route replace 172.16.42.0/24 via 31.31.31.42 dev enp1f0". `replace` is
// idempotent where `add` fails on a re-run with "File exists".
func (r Route) Command() string {
	return "route replace " + r.Dst.String() + " via " + r.Via.String() + " dev " + r.Dev
}

// routeTable holds, per host, the text every other host's route lines repeat
// ("172.16.42.0/24 via 31.31.31.42"), so that n hosts' n-1 routes each are
// written without formatting n² addresses.
type routeTable struct {
	frag     []string
	netplan  []string // the same route as a netplan routes entry
	fragLen  int      // Σ len(frag)
	namesLen int      // Σ len(host name)
}

func newRouteTable(inv *inventory.Inventory) *routeTable {
	t := &routeTable{frag: make([]string, len(inv.Hosts)), netplan: make([]string, len(inv.Hosts))}
	for i := range inv.Hosts {
		dst, via := RouteTo(&inv.Hosts[i])
		d, v := dst.String(), via.String()
		t.frag[i] = d + " via " + v
		t.netplan[i] = "        - to: " + d + "\n          via: " + v + "\n"
		t.fragLen += len(t.frag[i])
		t.namesLen += len(inv.Hosts[i].Name)
	}
	return t
}

// batchSize is the exact length of ipBatchLines' output for host h.
func (t *routeTable) batchSize(inv *inventory.Inventory, h *inventory.Host, comments bool) int {
	n := len(inv.Hosts) - 1
	size := t.fragLen - len(t.frag[h.Index]) + n*len("route replace  dev \n") + n*len(h.DataInterface)
	if comments {
		size += t.namesLen - len(h.Name) + n*len("  # ")
	}
	return size
}

// lineFunc writes one route line into b; i is the other host's index.
type lineFunc func(b *bytes.Buffer, i int)

// eachOther calls line for every host but self, in inventory order.
func eachOther(inv *inventory.Inventory, self int, b *bytes.Buffer, line lineFunc) {
	for i := range inv.Hosts {
		if i != self {
			line(b, i)
		}
	}
}

// ipBatchLines writes host h's routes as `ip -batch` lines (Route.Command),
// each with a trailing "# <host>" comment when comments is set.
func (t *routeTable) ipBatchLines(inv *inventory.Inventory, h *inventory.Host, b *bytes.Buffer, comments bool) {
	dev := " dev " + h.DataInterface
	eachOther(inv, h.Index, b, func(b *bytes.Buffer, i int) {
		b.WriteString("route replace ")
		b.WriteString(t.frag[i])
		b.WriteString(dev)
		if comments {
			b.WriteString("  # ")
			b.WriteString(inv.Hosts[i].Name)
		}
		b.WriteByte('\n')
	})
}

// Firewall: rdggen's rules live in their own chain, which DOCKER-USER jumps to.
// The chain is replaced as one block with `iptables-restore --noflush` (declaring
// a chain flushes only that chain), so re-runs never duplicate a rule, and
// rules other people keep in DOCKER-USER are left alone (research/hosts.md §3.4).
const (
	// FirewallChain is the filter-table chain holding rdggen's ACCEPT rules.
	FirewallChain = "RDGGEN-CONTAINERS"
	// DockerUserChain is Docker's placeholder for user rules, evaluated first
	// in FORWARD (Docker ≥ 17.06).
	DockerUserChain = "DOCKER-USER"
	// DockerBridge is the default bridge docker0.
	DockerBridge = "docker0"
	// FirewallJump is the DOCKER-USER rule, in `iptables -S` form, that sends
	// forwarded traffic through FirewallChain; it is kept first in DOCKER-USER.
	FirewallJump = "-A " + DockerUserChain + " -j " + FirewallChain
)

// FirewallSources returns who may open connections to host h's containers
// through the data interface: the other hosts' data addresses, because Docker's
// MASQUERADE rule (-s <subnet> ! -o docker0) rewrites a container's traffic to
// its host's data address on the way out (research/hosts.md §3.2), and the
// other hosts' container subnets, which arrive unchanged when a host does not
// masquerade. Both lists are aggregated into the fewest prefixes that cover
// exactly those hosts (31.31.31.42/31, 31.31.31.44/30, 31.31.31.48/32).
func FirewallSources(inv *inventory.Inventory, h *inventory.Host) (data, subnets []netip.Prefix) {
	return newFirewallTable(inv).sources(h.Index)
}

// firewallTable holds the aggregated data addresses and subnets of all hosts,
// computed once, so that each host's sources are the cluster's minus its own:
// a binary search and a split of one prefix.
type firewallTable struct {
	data, subnets []netip.Prefix // aggregated, sorted
	own           []struct{ data, subnet netip.Prefix }
}

func newFirewallTable(inv *inventory.Inventory) *firewallTable {
	t := &firewallTable{own: make([]struct{ data, subnet netip.Prefix }, len(inv.Hosts))}
	data := make([]netip.Prefix, len(inv.Hosts))
	subnets := make([]netip.Prefix, len(inv.Hosts))
	for i := range inv.Hosts {
		dst, via := RouteTo(&inv.Hosts[i])
		data[i] = netip.PrefixFrom(via, via.BitLen())
		subnets[i] = dst
		t.own[i].data, t.own[i].subnet = data[i], dst
	}
	t.data, t.subnets = aggregate(data), aggregate(subnets)
	return t
}

func (t *firewallTable) sources(self int) (data, subnets []netip.Prefix) {
	return without(t.data, t.own[self].data), without(t.subnets, t.own[self].subnet)
}

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

// FirewallRules returns host h's rules of FirewallChain in `iptables -S` form
// (the order iptables prints: -s -d -i -o -j), so that the apply engine can
// compare them with the host's `iptables -S` text: accept new connections
// arriving on the data interface for docker0 and h's container subnet, from
// FirewallSources only. Replies to containers' own connections are accepted
// by Docker's conntrack rule; traffic leaving containers by its
// "-i docker0 ! -o docker0 -j ACCEPT".
func FirewallRules(inv *inventory.Inventory, h *inventory.Host) []string {
	return newFirewallTable(inv).rules(h)
}

func (t *firewallTable) rules(h *inventory.Host) []string {
	data, subnets := t.sources(h.Index)
	tail := " -d " + h.Subnet.String() + " -i " + h.DataInterface + " -o " + DockerBridge + " -j ACCEPT"
	out := make([]string, 0, len(data)+len(subnets))
	for _, s := range append(data, subnets...) {
		out = append(out, "-A "+FirewallChain+" -s "+s.String()+tail)
	}
	return out
}

// FirewallRestore is host h's FirewallChain as `iptables-restore --noflush`
// input: the chain declared (which creates or flushes it) and refilled, as
// one block.
func FirewallRestore(inv *inventory.Inventory, h *inventory.Host) []byte {
	return newFirewallTable(inv).restore(inv, h)
}

func (t *firewallTable) restore(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	b.WriteString("# rdggen: " + h.Name + "'s chain " + FirewallChain + ", jumped to from " + DockerUserChain + " (cluster " + inv.Name + ").\n")
	b.WriteString("# Accept connections from the other hosts' containers to this host's containers (" + h.Subnet.String() + ")\n")
	b.WriteString("# on " + h.DataInterface + ": sources are their data addresses (Docker masquerades container traffic\n")
	b.WriteString("# leaving a host) and their container subnets (hosts that do not masquerade).\n")
	b.WriteString("# Load with: iptables-restore --noflush < this file (replaces only this chain).\n")
	t.restoreBody(h, &b)
	return b.Bytes()
}

func (t *firewallTable) restoreBody(h *inventory.Host, b *bytes.Buffer) {
	b.WriteString("*filter\n:" + FirewallChain + " - [0:0]\n")
	for _, r := range t.rules(h) {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	b.WriteString("COMMIT\n")
}
