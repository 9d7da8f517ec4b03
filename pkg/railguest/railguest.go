// Package railguest is the guest side of an inventory's rails: what a VM
// with several rails (inventory.Host.Rails) gets inside, made from the
// inventory by the pure packages that know each part.
//
//   - VM and Guest: the VM's rails as pkg/railnet takes them (each rail's
//     interface, or a MAC address to find it by, its address, its (leaf,
//     rail) subnet's gateway, the fabric's MTU and the subnets it reaches),
//     from which railnet writes the netplan file with policy routing, the
//     sysctl.d file and the live script rails.sh.
//   - Skeleton, BootScript and Unit: NCCL's topology file as far as the
//     inventory knows it (which GPUs and which rail's VF share a PCIe switch,
//     from nccltopo.Generate with placeholder bus IDs), and the script that
//     fills in the guest's own bus IDs, NUMA nodes and CPU at every boot
//     (scripts/topology.sh), run by a systemd unit.
//   - Facts, ParseFacts and TopologyFile: the same file written in Go from
//     what the guest shows of itself, read over SSH (ReadFragment), for the
//     hosts target; it is checked with nccltopo.Validate and CheckGuest.
//   - Files and Stream: every file of a VM with several rails, with where it
//     is installed, for the output tree (hosts/<host>/), cloud-init's first
//     boot and the hosts target.
//
// A host with one rail gets nothing here: every function that takes a host
// says what it does for one. Every rule, with its source, is in
// docs/rules.md ("Several rails in one VM", "NCCL topology file") and
// docs/rails.md. Everything here is a pure function of its arguments.
package railguest

import (
	"fmt"
	"io/fs"
	"iter"
	"net/netip"
	"slices"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// Where a VM with several rails installs this package's files, and their
// names under hosts/<host>/ in the output tree. railnet's own
// (railnet.NetplanPath, railnet.SysctlPath) complete the list (Files).
const (
	// SkeletonPath holds Skeleton, which BootScript reads at every boot.
	SkeletonPath = "/etc/rdggen/nccl-topology.xml"
	// ScriptPath is BootScript, run by Unit.
	ScriptPath = "/usr/local/sbin/rdggen-nccl-topology"
	// UnitPath is Unit.
	UnitPath = "/etc/systemd/system/rdggen-nccl-topology.service"
	// UnitWantsPath is the link `systemctl enable` makes for
	// WantedBy=multi-user.target.
	UnitWantsPath = "/etc/systemd/system/multi-user.target.wants/rdggen-nccl-topology.service"

	SkeletonName = "nccl-topology.xml"
	ScriptName   = "nccl-topology.sh"
	UnitName     = "rdggen-nccl-topology.service"
)

// MACs are the MAC addresses of a VM's rail adapters, macs[r] for rail r, as
// vCenter gives them ("00:50:56:aa:bb:cc"); a rail without one ("", or
// beyond the slice) is found by its interface's name. The output tree has
// none: its files find every rail by name.
func macOf(macs []string, r int) string {
	if r < len(macs) {
		return macs[r]
	}
	return ""
}

// VM is host h's rails as railnet takes them, in rail order: rail r's
// interface (inventory.Rail.Interface), MAC address macs[r] when given, its
// address, the gateway of its (leaf, rail) subnet (inventory.RailGateway),
// the data MTU, and Peers. Rail 0's netplan ID is left "" (its interface's
// name, as in pkg/dockernet's file): the hosts target sets the ID it finds
// on the host. A host with one rail gives a VM of one rail.
func VM(inv *inventory.Inventory, h *inventory.Host, macs []string) railnet.VM {
	return vmWith(inv, h, macs, aggregate(railSubnets(inv)))
}

func vmWith(inv *inventory.Inventory, h *inventory.Host, macs []string, agg []netip.Prefix) railnet.VM {
	vm := railnet.VM{Name: h.Name, Rails: make([]railnet.Rail, len(h.Rails))}
	for r, rail := range h.Rails {
		vm.Rails[r] = railnet.Rail{Interface: rail.Interface, MAC: macOf(macs, r), Address: rail.Address,
			Gateway: inv.RailGateway(h, r), MTU: h.DataMTU, Peers: peersOf(agg, rail.Address.Masked())}
	}
	return vm
}

// Peers are the subnets rail r of host h reaches through its gateway: every
// (leaf, rail) subnet of the fabric (inventory.RailNets), merged into the
// fewest prefixes that cover exactly those subnets and nothing else
// (10.0.0.0/24 … 10.0.3.0/24 become 10.0.0.0/22), less the rail's own
// subnet where it stands alone. An aggregate may hold the rail's own
// subnet: railnet keeps that subnet on the link in the rail's table, and
// the connected route is the more specific in the main table. Merging
// only what is there routes no address the fabric does not own, and keeps
// a VM's routes few however many leaves there are.
func Peers(inv *inventory.Inventory, h *inventory.Host, r int) []netip.Prefix {
	if r < 0 || r >= len(h.Rails) {
		return nil
	}
	return peersOf(aggregate(railSubnets(inv)), h.Rails[r].Address.Masked())
}

// railSubnets are the fabric's (leaf, rail) subnets.
func railSubnets(inv *inventory.Inventory) []netip.Prefix {
	nets := inv.RailNets()
	out := make([]netip.Prefix, 0, len(nets))
	for _, n := range nets {
		out = append(out, n.Subnet.Masked())
	}
	return out
}

// peersOf is agg without own (when own is one of its prefixes).
func peersOf(agg []netip.Prefix, own netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(agg))
	for _, p := range agg {
		if p != own {
			out = append(out, p)
		}
	}
	return out
}

// aggregate is the fewest IPv4 prefixes that cover exactly the union of
// ps: contained prefixes dropped, then two halves of one prefix merged into
// it until none are left, in ascending order.
func aggregate(ps []netip.Prefix) []netip.Prefix {
	var s []netip.Prefix
	for _, p := range ps {
		if p.IsValid() && p.Addr().Is4() {
			s = append(s, p.Masked())
		}
	}
	slices.SortFunc(s, comparePrefix)
	s = slices.Compact(s)
	for {
		out := s[:0:0]
		for _, p := range s {
			if n := len(out); n > 0 && out[n-1].Bits() <= p.Bits() && out[n-1].Contains(p.Addr()) {
				continue // inside the previous one
			}
			out = append(out, p)
		}
		merged := false
		s = s[:0:0]
		for i := 0; i < len(out); i++ {
			p := out[i]
			if i+1 < len(out) && p.Bits() > 0 && p.Bits() == out[i+1].Bits() {
				up, _ := p.Addr().Prefix(p.Bits() - 1)
				if up.Addr() == p.Addr() && up.Contains(out[i+1].Addr()) {
					s = append(s, up)
					i++
					merged = true
					continue
				}
			}
			s = append(s, p)
		}
		if !merged {
			return s
		}
		slices.SortFunc(s, comparePrefix)
	}
}

// comparePrefix orders by address, then the wider prefix first.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// Guest is railnet's Guest of host h (VM), for its netplan file, sysctl.d
// file and live script. An error is railnet's finding for an inventory
// that was not validated; a valid inventory gives none.
func Guest(inv *inventory.Inventory, h *inventory.Host, macs []string) (*railnet.Guest, error) {
	g, err := railnet.New(VM(inv, h, macs))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	return g, nil
}

// File is one file a VM with several rails gets.
type File struct {
	// Name is the file's name under hosts/<host>/ in the output tree.
	Name string
	// Path is where the VM has it; "" for the live script rails.sh, which
	// is run, not installed.
	Path string
	// Mode is the installed file's mode: 0600 for the netplan file (netplan
	// warns about files others can read), 0755 for scripts, else 0644.
	Mode fs.FileMode
	// Data is the file's content.
	Data []byte
}

// Files are every file of host h's rails, macs as for VM, in this order:
// the netplan file (railnet.NetplanPath), the sysctl.d file
// (railnet.SysctlPath), the live script rails.sh, and, when the topology
// can be written (Skeleton), the skeleton (SkeletonPath), the boot script
// (ScriptPath) and its unit (UnitPath). None for a host with one rail. An
// error is Guest's, or the topology's reason (then the rails' own files
// come without the topology's).
func Files(inv *inventory.Inventory, h *inventory.Host, macs []string) ([]File, error) {
	return filesWith(inv, h, macs, aggregate(railSubnets(inv)))
}

func filesWith(inv *inventory.Inventory, h *inventory.Host, macs []string, agg []netip.Prefix) ([]File, error) {
	if !h.MultiRail() {
		return nil, nil
	}
	g, err := railnet.New(vmWith(inv, h, macs, agg))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", h.Name, err)
	}
	files := []File{
		{railnet.NetplanName, railnet.NetplanPath, 0o600, g.Netplan()},
		{railnet.SysctlName, railnet.SysctlPath, 0o644, g.Sysctl()},
		{railnet.ScriptName, "", 0o755, g.Script()},
	}
	skel, err := Skeleton(inv, h)
	if err != nil {
		return files, err
	}
	return append(files,
		File{SkeletonName, SkeletonPath, 0o644, skel},
		File{ScriptName, ScriptPath, 0o755, BootScript(inv, h, macs)},
		File{UnitName, UnitPath, 0o644, Unit(inv, h)},
	), nil
}

// Stream yields this package's part of the output tree, host by host in
// inventory order, for every host with several rails: Files (by name, no
// MAC addresses) under hosts/<host>/, each with mode 0644 but the
// scripts' 0755 (the netplan file is installed 0600, as pkg/dockernet's).
// A host whose files cannot be made (an inventory that was not validated)
// or whose topology cannot be written (Skeleton's error) gets what can be.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		if !inv.MultiRail() {
			return
		}
		agg := aggregate(railSubnets(inv))
		for i := range inv.Hosts {
			h := &inv.Hosts[i]
			files, _ := filesWith(inv, h, nil, agg)
			for _, f := range files {
				mode := fs.FileMode(0o644)
				if f.Mode&0o111 != 0 {
					mode = 0o755
				}
				if !yield(artifact.File{Path: "hosts/" + h.Name + "/" + f.Name, Mode: mode, Data: f.Data}) {
					return
				}
			}
		}
	}
}
