package nccltopo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Setting is one NCCL environment variable with the reason for its value.
type Setting struct {
	// Name is the variable, e.g. "NCCL_IB_HCA".
	Name string
	// Value is what to set it to; "" means leave it unset.
	Value string
	// Why says where the value comes from, for a comment beside it.
	Why string
	// Source is the documentation or code the rule rests on.
	Source string
}

// Version is an NCCL release; the zero Version means not known.
type Version struct{ Major, Minor, Patch int }

// RailLabels is the first NCCL release that reads a rail in NCCL_IB_HCA
// (<hca>:<port>:<rail>:<plane>) and, with NCCL_CROSS_NIC=0, keeps rings on
// one rail by that label (NVIDIA/nccl commits 7ec092af "net: add rail/plane
// NIC identity" and 9eea7308 "topo/net: propagate rail and plane IDs",
// first tag v2.30.7-1; src/graph/search.cc ncclTopoSearchCheckNet).
var RailLabels = Version{2, 30, 7}

// ParseVersion reads an NCCL version as people and tools write it:
// "2.30.7", "2.30.7-1", "v2.30.7-1", or the number ncclGetVersion returns
// (23007: major × 10000 + minor × 100 + patch, NCCL ≥ 2.9).
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	t, _, _ = strings.Cut(t, "-")
	t, _, _ = strings.Cut(t, "+")
	if !strings.Contains(t, ".") {
		if n, err := strconv.Atoi(t); err == nil && n >= 20900 && n < 1000000 {
			return Version{n / 10000, n / 100 % 100, n % 100}, nil
		}
		return Version{}, fmt.Errorf("NCCL version %q is not major.minor.patch or ncclGetVersion's number", clip(s))
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return Version{}, fmt.Errorf("NCCL version %q is not major.minor.patch", clip(s))
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 999 {
			return Version{}, fmt.Errorf("NCCL version %q is not major.minor.patch", clip(s))
		}
		v[i] = n
	}
	return Version{v[0], v[1], v[2]}, nil
}

// IsZero says the version is not known.
func (v Version) IsZero() bool { return v == Version{} }

// AtLeast says v is w or later; an unknown v is never.
func (v Version) AtLeast(w Version) bool {
	if v.IsZero() {
		return false
	}
	if v.Major != w.Major {
		return v.Major > w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor > w.Minor
	}
	return v.Patch >= w.Patch
}

func (v Version) String() string {
	if v.IsZero() {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// reHCA is an RDMA device name as the kernel gives them (mlx5_0, rocep3s0,
// mlx5_bond_0): at most 63 bytes (IB_DEVICE_NAME_MAX 64), and none of
// NCCL_IB_HCA's separators (, : ^ =) or white space.
var reHCA = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$`)

// maxHCAs is NCCL's fixed upper limit of RDMA devices (env.rst
// NCCL_IB_HCA: "a fixed upper limit of 32 Host Channel Adapter (HCA)
// devices").
const maxHCAs = 32

// IBHCA is NCCL_IB_HCA for a VM whose rail r uses the guest RDMA device
// hcas[r]: "=" (exact names: without it "mlx5_1" also selects mlx5_10 to
// mlx5_19) and one entry per rail in rail order, "<hca>:1" (a ConnectX VF
// has one port, numbered 1). When v is RailLabels or later each entry
// also carries its rail, "<hca>:1:<r>", which lets NCCL_CROSS_NIC=0 keep a
// ring on one rail by label; older releases read the port and ignore the
// rest of the entry, and an unknown v gets no labels. Source: NVIDIA/nccl
// docs/userguide/source/env.rst NCCL_IB_HCA; src/misc/utils.cc
// parseStringList (2.29.7 and 2.30.7).
//
// The order is for people and for the labels: NCCL numbers its RDMA
// devices by PCI address, not by this list (NCCL_IB_DEVICE_PCI_ORDER=1,
// src/transport/net_ib/init.cc ncclIbCompareDevs), so a rail is the same
// NCCL device on every VM only when the VFs' bus IDs are in rail order on
// every VM; RailOrder checks that.
//
// An error names an empty, malformed or repeated device name, or more
// than 32 rails.
func IBHCA(hcas []string, v Version) (Setting, error) {
	if len(hcas) == 0 {
		return Setting{}, fmt.Errorf("NCCL_IB_HCA: no rails")
	}
	if len(hcas) > maxHCAs {
		return Setting{}, fmt.Errorf("NCCL_IB_HCA: %d rails; NCCL uses at most %d RDMA devices", len(hcas), maxHCAs)
	}
	seen := map[string]int{}
	entries := make([]string, len(hcas))
	labels := v.AtLeast(RailLabels)
	for r, h := range hcas {
		if !reHCA.MatchString(h) {
			return Setting{}, fmt.Errorf("NCCL_IB_HCA: rail %d's device %q is not an RDMA device name (letters, digits, '_', '.', '-'; at most 63)", r, clip(h))
		}
		if q, dup := seen[h]; dup {
			return Setting{}, fmt.Errorf("NCCL_IB_HCA: rails %d and %d are both %s", q, r, h)
		}
		seen[h] = r
		entries[r] = h + ":1"
		if labels {
			entries[r] += ":" + strconv.Itoa(r)
		}
	}
	why := "the rails' RDMA devices in rail order, exact names, port 1"
	if labels {
		why += fmt.Sprintf(", each labelled with its rail (NCCL %s ≥ %s)", v, RailLabels)
	} else if !v.IsZero() {
		why += fmt.Sprintf("; no rail labels (NCCL %s < %s)", v, RailLabels)
	}
	return Setting{Name: "NCCL_IB_HCA", Value: "=" + strings.Join(entries, ","), Why: why,
		Source: srcEnv + " NCCL_IB_HCA; src/misc/utils.cc parseStringList"}, nil
}

// Fabric says how a cluster's rails meet, as the cabling shows it.
type Fabric int

const (
	// OneSwitch: every rail of every host ends on one switch (or a host has
	// one NIC), as in rdggen's single-switch fabric.
	OneSwitch Fabric = iota + 1
	// RailsJoined: each rail has its own leaf (or leaves), and spines join
	// the rails, so a NIC of rail r reaches a NIC of rail s.
	RailsJoined
	// RailsSeparate: each rail is its own network and nothing joins them.
	RailsSeparate
)

// CrossNIC is NCCL_CROSS_NIC for VMs with rails NICs each on fabric f
// (NVIDIA/nccl docs/userguide/source/env.rst NCCL_CROSS_NIC; default 2
// since NCCL 2.5, src/graph/search.cc):
//
//   - one rail: unset ("This has no effect on systems with only one NIC");
//   - OneSwitch: 1, "all NICs from a node are connected to the same switch,
//     hence trying to communicate across the same NICs does not help
//     avoiding flow collisions";
//   - RailsJoined: 2, NCCL's default, written out: "Try to use the same NIC
//     for the same ring/tree, but still allow for the use of different NICs
//     if it would result in a better performance" — safe because the
//     spines carry what crosses rails, which NCCL gives no guarantee
//     against (sjeaugey, NVIDIA/nccl#836: "Not connecting rails at the top
//     is taking a significant risk");
//   - RailsSeparate: 0, "Always use the same NIC for the same ring/tree, to
//     avoid crossing network rails"; env.rst adds that a communicator
//     without the same GPUs on each node may still need to cross NICs,
//     which such a fabric cannot carry, so every job must use all of a
//     VM's GPUs. With NCCL ≥ RailLabels and IBHCA's labels NCCL keeps
//     rings on one rail by label, else by "same NIC" (GUID and port).
//
// An error is rails < 1 or an unknown f.
func CrossNIC(rails int, f Fabric) (Setting, error) {
	s := Setting{Name: "NCCL_CROSS_NIC", Source: srcEnv + " NCCL_CROSS_NIC"}
	if rails < 1 {
		return Setting{}, fmt.Errorf("NCCL_CROSS_NIC: %d rails", rails)
	}
	switch f {
	case OneSwitch, RailsJoined, RailsSeparate:
	default:
		return Setting{}, fmt.Errorf("NCCL_CROSS_NIC: unknown fabric %d", f)
	}
	switch {
	case rails == 1:
		s.Why = "one NIC per VM: NCCL_CROSS_NIC has no effect"
	case f == OneSwitch:
		s.Value, s.Why = "1", "every rail ends on one switch: crossing NICs costs nothing"
	case f == RailsJoined:
		s.Value, s.Why = "2", "rails on their own leaves, joined by the spines: same NIC preferred, crossing allowed (NCCL's default)"
		s.Source += "; NVIDIA/nccl#836"
	case f == RailsSeparate:
		s.Value, s.Why = "0", "no path between rails: a ring never leaves its rail"
	}
	return s, nil
}

// RailOrder checks that a VM's rail NICs, busIDs[r] for rail r (the guest's
// bus IDs), are in the order NCCL numbers RDMA devices: by PCI address,
// ascending (src/transport/net_ib/init.cc ncclIbCompareDevs with
// NCCL_IB_DEVICE_PCI_ORDER=1, the default), comparing each address with
// its device and function set to 00.0 (ncclIbGetPciPath). Only then is NCCL
// device r rail r on every VM, which is what keeps a ring on its rail
// across VMs without rail labels. An error names the first rail out of
// order, two rails NCCL takes for one card, or a bus ID that does not parse.
func RailOrder(busIDs []string) error {
	var prev BusID
	for r, s := range busIDs {
		b, err := ParseBusID(s)
		if err != nil {
			return fmt.Errorf("rail %d: %v", r, err)
		}
		m := b.ncclNICAddress()
		if r > 0 {
			switch p := prev.ncclNICAddress(); {
			case m == p:
				return fmt.Errorf("rails %d and %d (%s, %s) are one PCI device %s to NCCL, which merges ports and VFs", r-1, r, prev, b, m)
			case m.int64() < p.int64():
				return fmt.Errorf("rail %d's NIC %s comes before rail %d's %s in PCI order: NCCL numbers it first", r, b, r-1, prev)
			}
		}
		prev = b
	}
	return nil
}
