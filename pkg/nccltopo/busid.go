package nccltopo

import (
	"fmt"
	"strconv"
)

// BusID is a PCI address, domain:bus:device.function.
type BusID struct {
	Domain   uint16
	Bus      uint8
	Device   uint8 // 0–0x1f
	Function uint8 // 0–7
}

// ParseBusID reads a bus ID in the one form NCCL can match: 12 characters
// dddd:bb:dd.f, lower-case hex, device ≤ 1f, function ≤ 7. NCCL finds a
// GPU's or NIC's node in the file by comparing this string with the one it
// prints itself (int64ToBusId, "%04lx:%02lx:%02lx.%01lx") or reads from
// sysfs, both lower-case, so "0000:3B:00.0" never matches
// (NVIDIA/nccl src/graph/xml.cc ncclTopoGetPciNode, checkBDFFormat;
// src/misc/utils.cc int64ToBusId).
func ParseBusID(s string) (BusID, error) {
	if len(s) != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' {
		return BusID{}, fmt.Errorf("bus ID %q is not 12 characters dddd:bb:dd.f", clip(s))
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11} {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			if 'A' <= c && c <= 'F' {
				return BusID{}, fmt.Errorf("bus ID %q has upper-case hex; NCCL compares bus IDs as lower-case strings, so it never matches", s)
			}
			return BusID{}, fmt.Errorf("bus ID %q is not hex dddd:bb:dd.f", s)
		}
	}
	d, _ := strconv.ParseUint(s[0:4], 16, 16)
	b, _ := strconv.ParseUint(s[5:7], 16, 8)
	dev, _ := strconv.ParseUint(s[8:10], 16, 8)
	fn, _ := strconv.ParseUint(s[11:12], 16, 8)
	if dev > 0x1f || fn > 7 {
		return BusID{}, fmt.Errorf("bus ID %q has device %02x or function %x beyond PCI's 1f and 7: no device has it", s, dev, fn)
	}
	return BusID{Domain: uint16(d), Bus: uint8(b), Device: uint8(dev), Function: uint8(fn)}, nil
}

// String is the bus ID in NCCL's form, "0000:3b:00.0".
func (b BusID) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", b.Domain, b.Bus, b.Device, b.Function)
}

// ncclNICAddress is the address under which NCCL's IB transport files an
// RDMA device in the topology: its sysfs PCI address with the function set
// to 0 (ports of one card merged) and, with NCCL_IB_MERGE_VFS=1 (the
// default), the device set to 00 too (VFs merged with their parent
// device) (NVIDIA/nccl src/transport/net_ib/init.cc ncclIbGetPciPath).
// NCCL looks the NIC up in the file under this address only.
func (b BusID) ncclNICAddress() BusID {
	b.Device, b.Function = 0, 0
	return b
}

// int64 is the bus ID as NCCL numbers it (busIdToInt64: the hex digits
// read as one number), which orders RDMA devices (ncclIbCompareDevs).
func (b BusID) int64() int64 {
	return int64(b.Domain)<<20 | int64(b.Bus)<<12 | int64(b.Device)<<4 | int64(b.Function)
}

// bridgeBusID is the bus ID Generate gives the n-th bridge (1-based):
// ffff:ff:NN.0, the form Azure's published files use. Domain ffff exists
// in no vSphere guest (its PCI tree is all domain 0000), so NCCL finds no
// sysfs entry for it and keeps the file's values; NVIDIA's advice for a VM
// is to "re-create [PCI switches] using Bus IDs which don't exist inside
// the VM" (sjeaugey, NVIDIA/nccl#1843).
func bridgeBusID(n int) BusID {
	return BusID{Domain: 0xffff, Bus: 0xff, Device: uint8(n)}
}

// maxBridges is how many bridges Generate can number: devices 01–1f of bus
// ffff:ff.
const maxBridges = 0x1f

// clip shortens s for a message: at most 64 bytes, then "…".
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
