// Package railnet is the guest side of a VM with several rails: one RDMA
// interface per rail, each on its own (leaf, rail) subnet. It writes each
// rail's address and MTU, the policy routing that keeps what a rail's
// address sends on that rail's port, and the kernel's ARP and
// reverse-path settings for several interfaces in one host, as netplan
// definitions (Guest.Ethernets, Guest.Netplan), a sysctl.d file
// (Guest.Sysctl) and an idempotent script that applies the same live
// (Guest.Script; scripts/rails.sh). Every rule, with its source, is in
// docs/rules.md ("Several rails in one VM").
//
// The input is typed values, not the inventory (VM, Rail): a VM's rails in
// rail order, each with its interface, address, gateway, MTU and the
// subnets reached through it. Rail 0 is the interface of a VM with one
// rail, the data interface that keeps the container networking
// (pkg/dockernet); its definition here amends the host's own under the
// netplan ID given (Rail.ID).
//
// Everything here is a pure function of its arguments.
package railnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The numbers of rail r's policy routing (Table, Priority, Metric). AMD's
// cluster guide ("Configure network routing", instinct.docs.amd.com,
// system-acceptance) gives each NIC its own table (101, 102, …) and a rule
// `priority 10N0 from <its address> table 10N`; NVIDIA's Network Operator
// routes each rail's range and the east-west range through every rail
// NIC's own gateway (its rail quick starts). rdggen does both, the main
// table's routes told apart by a metric per rail, and numbers from rail 0:
//
//   - tables 100 … 100+MaxRails−1: clear of 0 (unspecified) and of the
//     tables the system reserves, 253 (default), 254 (main) and 255
//     (local) in /etc/iproute2/rt_tables; nothing else of rdggen uses a
//     table other than main;
//   - rule priorities 1000 … 1000+MaxRails−1: after the kernel's rule 0
//     (the local table, so a VM's own addresses stay local) and before its
//     rules 32766 (main) and 32767 (default), so a rail's table is looked
//     up before main; each rule matches one source address, so their order
//     among themselves does not matter, and rail order is how `ip rule`
//     lists them;
//   - main-table metrics 100 … 100+MaxRails−1: a destination that several
//     rails reach is reached through the lowest rail when nothing chose a
//     source (rail 0, as with one rail). The routes of pkg/dockernet have
//     no metric (0); where one goes to a peer subnet too (in a leaf-spine
//     fabric, the other leaves' data subnets through rail 0's gateway) it
//     is the same way as rail 0's, and wins over the other rails' alike.
const (
	// MaxRails is the most rails a VM may have: 64 (NVIDIA's HGX designs
	// have 8 east-west NICs per server; the bound keeps the tables well
	// below 253).
	MaxRails = 64
	// TableBase is rail 0's table; rail r's is TableBase + r.
	TableBase = 100
	// PriorityBase is rail 0's rule priority; rail r's is PriorityBase + r.
	PriorityBase = 1000
	// MetricBase is rail 0's metric in the main table; rail r's is
	// MetricBase + r.
	MetricBase = 100
)

// Table is rail r's routing table, TableBase + r (0 ≤ r < MaxRails).
func Table(r int) int { return TableBase + r }

// Priority is the priority of rail r's rule `from <address> table
// Table(r)`, PriorityBase + r.
func Priority(r int) int { return PriorityBase + r }

// Metric is the metric of rail r's routes in the main table, MetricBase + r.
func Metric(r int) int { return MetricBase + r }

// VM is one VM's rails.
type VM struct {
	// Name is the VM's name, for the files' comments.
	Name string
	// Rails are the VM's rails in rail order: Rails[r] is rail r. 1 …
	// MaxRails.
	Rails []Rail
}

// Rail is one rail of a VM as its guest sees it.
type Rail struct {
	// Interface is the guest's name of the rail's interface, e.g.
	// "enp1f0" or "rail1": 1–15 letters, digits, '_', '.', '-', starting
	// with a letter or digit (the inventory's grammar for data_interface);
	// not "lo" or "docker0".
	Interface string
	// MAC, when set, is the interface's MAC address ("00:50:56:aa:00:11",
	// any case, ':' or '-'): netplan matches the interface by it and names
	// it Interface (match.macaddress and set-name), and the script renames
	// the interface that has it. "" matches the interface by its name.
	MAC string
	// ID is the netplan ID of the rail's definition; "" is Interface. For
	// rail 0, give the ID that already configures the data interface on
	// the host: a later file's definition with the same ID amends that one
	// (netplan-generate(8), "Handling multiple files").
	ID string
	// Address is the rail's IPv4 address with its subnet's prefix length,
	// e.g. 10.0.1.11/24; prefix lengths 8–31 (a /31 has no network or
	// broadcast address, RFC 3021).
	Address netip.Prefix
	// Gateway is the (leaf, rail) subnet's gateway, the leaf's address on
	// it: inside the subnet, not Address, not its network or broadcast
	// address.
	Gateway netip.Addr
	// MTU is the rail interface's MTU in bytes: the fabric's MTU,
	// inventory.MinDataMTU … inventory.MaxDataMTU.
	MTU int
	// Peers are the IPv4 subnets this rail reaches through Gateway: every
	// other (leaf, rail) subnet of the cluster, or prefixes that aggregate
	// them. Each is a network prefix (no host bits) that either does not
	// overlap the rail's own subnet or contains it (an aggregate; the own
	// subnet stays on the link: see Guest.Ethernets). Several VMs on one
	// (leaf, rail) may share one slice.
	Peers []netip.Prefix
}

// Subnet is the rail's own subnet, Address masked: 10.0.1.0/24.
func (r Rail) Subnet() netip.Prefix { return r.Address.Masked() }

// NetplanID is the rail's netplan ID: ID, or Interface when ID is "".
func (r Rail) NetplanID() string {
	if r.ID != "" {
		return r.ID
	}
	return r.Interface
}

// Guest is a VM's rails, validated, from which every artifact of this
// package is made.
type Guest struct {
	vm   VM
	macs []string // the rails' MAC addresses in canonical form ("" for none)
}

// New validates vm and returns its Guest. The error lists every finding
// (errors.Join), each as "rails[r].field: rule", e.g.
// "rails[1].gateway: 10.1.2.1 is outside the rail's subnet 10.1.1.0/24".
// The Guest keeps vm's slices; they must not change afterwards.
func New(vm VM) (*Guest, error) {
	var errs []error
	bad := func(path, f string, a ...any) { errs = append(errs, fmt.Errorf(path+": "+f, a...)) }
	if n := len(vm.Rails); n < 1 || n > MaxRails {
		return nil, fmt.Errorf("rails: %d rails; a VM has 1 to %d", n, MaxRails)
	}
	g := &Guest{vm: vm, macs: make([]string, len(vm.Rails))}
	names, macs, ids := map[string]int{}, map[string]int{}, map[string]int{}
	subnets := make([]netip.Prefix, 0, len(vm.Rails))
	for i, r := range vm.Rails {
		p := fmt.Sprintf("rails[%d]", i)
		switch {
		case !reIface.MatchString(r.Interface):
			bad(p+".interface", "%q is not a Linux interface name (1–15 letters, digits, '_', '.', '-')", r.Interface)
		case r.Interface == "lo" || r.Interface == "docker0":
			bad(p+".interface", "%q is the VM's own %s, not a rail's interface", r.Interface, map[string]string{"lo": "loopback", "docker0": "Docker bridge"}[r.Interface])
		default:
			if j, dup := names[r.Interface]; dup {
				bad(p+".interface", "%s is rail %d's interface too", r.Interface, j)
			}
			names[r.Interface] = i
		}
		if r.MAC != "" {
			hw, err := net.ParseMAC(r.MAC)
			switch {
			case err != nil || len(hw) != 6:
				bad(p+".mac", "%q is not an Ethernet MAC address (6 bytes, e.g. 00:50:56:aa:00:11)", r.MAC)
			case hw[0]&1 != 0:
				bad(p+".mac", "%s is a multicast address, not an interface's", hw)
			default:
				g.macs[i] = hw.String()
				if j, dup := macs[g.macs[i]]; dup {
					bad(p+".mac", "%s is rail %d's MAC address too", hw, j)
				}
				macs[g.macs[i]] = i
			}
		}
		if id := r.NetplanID(); id != "" {
			// Two IDs taken from the interfaces' names are the same
			// interface, found above.
			if j, dup := ids[id]; dup && (r.ID != "" || vm.Rails[j].ID != "") {
				bad(p+".id", "netplan ID %q is rail %d's too: one ID is one definition", id, j)
			}
			ids[id] = i
		}
		a := r.Address
		switch {
		case !a.IsValid() || !a.Addr().Is4():
			bad(p+".address", "%v is not an IPv4 address with a prefix length", a)
			continue
		case a.Bits() < 8 || a.Bits() > 31:
			bad(p+".address", "%s: prefix length %d, not 8–31", a, a.Bits())
			continue
		case a.Bits() < 31 && (a.Addr() == a.Masked().Addr() || a.Addr() == broadcast(a)):
			bad(p+".address", "%s is its subnet's network or broadcast address", a)
		}
		sub := r.Subnet()
		for j, o := range subnets {
			if o.Overlaps(sub) {
				bad(p+".address", "subnet %s overlaps rail %d's %s: each (leaf, rail) has its own subnet", sub, j, o)
			}
		}
		subnets = append(subnets, sub)
		gw := r.Gateway
		switch {
		case !gw.IsValid() || !gw.Is4():
			bad(p+".gateway", "%v is not an IPv4 address", gw)
		case !sub.Contains(gw):
			bad(p+".gateway", "%s is outside the rail's subnet %s", gw, sub)
		case gw == a.Addr():
			bad(p+".gateway", "%s is the rail's own address", gw)
		case a.Bits() < 31 && (gw == sub.Addr() || gw == broadcast(a)):
			bad(p+".gateway", "%s is the subnet's network or broadcast address", gw)
		}
		if r.MTU < inventory.MinDataMTU || r.MTU > inventory.MaxDataMTU {
			bad(p+".mtu", "%d bytes, not %d–%d", r.MTU, inventory.MinDataMTU, inventory.MaxDataMTU)
		}
		seen := make(map[netip.Prefix]bool, len(r.Peers))
		for k, q := range r.Peers {
			pp := fmt.Sprintf("%s.peers[%d]", p, k)
			switch {
			case !q.IsValid() || !q.Addr().Is4():
				bad(pp, "%v is not an IPv4 prefix", q)
			case q != q.Masked():
				bad(pp, "%s has host bits set (the subnet is %s)", q, q.Masked())
			case q == sub:
				bad(pp, "%s is the rail's own subnet, which is on the link", q)
			case q.Overlaps(sub) && q.Bits() > sub.Bits():
				bad(pp, "%s lies inside the rail's own subnet %s, which is on the link", q, sub)
			case seen[q]:
				bad(pp, "%s is listed twice", q)
			}
			seen[q] = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return g, nil
}

// reIface is a Linux interface name as the inventory takes one
// (data_interface): at most 15 bytes (IFNAMSIZ − 1), no '/', ':' or
// white space.
var reIface = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)

// broadcast is the last address of p's subnet.
func broadcast(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// VM is the VM g was made from.
func (g *Guest) VM() VM { return g.vm }

// MAC is rail r's MAC address in canonical form (lower case, ':'), "" when
// the rail is matched by name.
func (g *Guest) MAC(r int) string { return g.macs[r] }
