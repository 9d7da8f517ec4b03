package hostqos

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// GID types as the kernel names them in
// /sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>
// (drivers/infiniband/core/cache.c, gid_type_str; rdma-core treats both
// strings as ABI). "IB/RoCE v1" serves InfiniBand and RoCE v1 alike.
const (
	GIDTypeRoCEv1 = "IB/RoCE v1"
	GIDTypeRoCEv2 = "RoCE v2"
)

// GID is one entry of an RDMA port's GID table, read from sysfs
// (drivers/infiniband/core/sysfs.c): gids/<Index> holds the GID in the full
// eight-group IPv6 form the kernel prints with %pI6, gid_attrs/types/<Index>
// its type and gid_attrs/ndevs/<Index> the network device it belongs to.
// An unused slot reads as the all-zero GID and its attributes cannot be read.
type GID struct {
	Index int
	// GID is the 128-bit GID; an IPv4 RoCE GID is the IPv4-mapped IPv6
	// address (0000:…:ffff:0a0a:0a2a for 10.10.10.42).
	GID netip.Addr
	// Type is GIDTypeRoCEv1 or GIDTypeRoCEv2; "" when the slot is unused.
	Type string
	// NetDev is the network device of the GID, e.g. "ens224"; "" when unused.
	NetDev string
}

// IPv4 is the IPv4 address a RoCE GID maps, if it maps one.
func (g GID) IPv4() (netip.Addr, bool) {
	if g.GID.Is4In6() {
		return g.GID.Unmap(), true
	}
	return netip.Addr{}, false
}

// Used reports whether the slot holds a GID (not the all-zero one).
func (g GID) Used() bool { return g.GID.IsValid() && !g.GID.IsUnspecified() }

// String is "index 3: RoCE v2 10.10.10.42 on ens224", or "index 0: RoCE
// v1 fe80::… on ens224" for a GID that maps no IPv4 address.
func (g GID) String() string {
	if !g.Used() {
		return fmt.Sprintf("index %d: unused", g.Index)
	}
	addr := g.GID.String()
	if v4, ok := g.IPv4(); ok {
		addr = v4.String()
	}
	typ, dev := g.Type, ""
	if typ == "" {
		typ = "type unknown"
	}
	if g.NetDev != "" {
		dev = " on " + g.NetDev
	}
	return fmt.Sprintf("index %d: %s %s%s", g.Index, typ, addr, dev)
}

// ParseGIDTable reads GID table lines "INDEX<TAB>GID<TAB>TYPE<TAB>NDEV" (the
// form of hostapply's probe; TYPE and NDEV empty for an unused slot) into
// entries sorted by index. Lines that do not parse are skipped.
func ParseGIDTable(out []byte) []GID {
	var gs []GID
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 4 {
			continue
		}
		i, err := strconv.Atoi(f[0])
		if err != nil || i < 0 {
			continue
		}
		a, err := netip.ParseAddr(strings.TrimSpace(f[1]))
		if err != nil || !a.Is6() {
			continue
		}
		gs = append(gs, GID{Index: i, GID: a, Type: strings.TrimSpace(f[2]), NetDev: strings.TrimSpace(f[3])})
	}
	// Shell globbing sorts 10 before 2: order by index.
	slices.SortFunc(gs, func(a, b GID) int { return a.Index - b.Index })
	return gs
}

// FindRoCEv2 returns the RoCE v2 GID that maps addr (the host's data
// address), the entry NCCL_IB_GID_INDEX must name for RoCE v2 over IPv4.
func FindRoCEv2(table []GID, addr netip.Addr) (GID, bool) {
	for _, g := range table {
		if v4, ok := g.IPv4(); ok && v4 == addr && g.Type == GIDTypeRoCEv2 {
			return g, true
		}
	}
	return GID{}, false
}

// RoCE headers within an Ethernet frame's payload, bytes, as the kernel
// counts them for a RoCE port's active MTU (include/rdma/ib_addr.h,
// iboe_get_mtu): GRH 40, UDP 8, BTH 12, XRC extension 4, AtomicETH 28,
// ICRC 4.
const roceOverhead = 40 + 8 + 12 + 4 + 28 + 4

// RoCEPathMTU is the active MTU, bytes, of a RoCE port on a network device
// with Ethernet MTU ethMTU: the largest IB MTU (256, 512, 1024, 2048,
// 4096) that fits ethMTU minus the RoCE headers (iboe_get_mtu), e.g. 1024
// for 1500 and 4096 for 9000; 0 when none fits.
func RoCEPathMTU(ethMTU int) int {
	for m := 4096; m >= 256; m /= 2 {
		if ethMTU-roceOverhead >= m {
			return m
		}
	}
	return 0
}
