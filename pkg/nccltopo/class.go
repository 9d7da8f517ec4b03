package nccltopo

import (
	"fmt"
	"strconv"
	"strings"
)

// Class is a 24-bit PCI class code (base class, subclass, programming
// interface), as sysfs prints it: 0x030200 is a 3D controller.
type Class uint32

// Class codes (PCI Code and ID Assignment Specification) that matter here.
const (
	ClassVGA        Class = 0x030000 // display, VGA-compatible: a GPU in graphics mode
	Class3D         Class = 0x030200 // display, 3D controller: a datacenter GPU
	ClassEthernet   Class = 0x020000 // network, Ethernet: a RoCE NIC or VF
	ClassInfiniBand Class = 0x020700 // network, InfiniBand
	ClassBridge     Class = 0x060400 // bridge, PCI-to-PCI: a PCIe switch port
)

// String is the class as sysfs prints it and NCCL reads it, "0x030200".
func (c Class) String() string { return fmt.Sprintf("0x%06x", uint32(c)) }

// isGPU says whether Generate accepts c for a GPU: base class 03 with
// subclass 00 (VGA) or 02 (3D controller), the classes NVIDIA GPUs show.
func (c Class) isGPU() bool { return c>>8 == 0x0300 || c>>8 == 0x0302 }

// isNIC says whether Generate accepts c for a rail NIC: base class 02 with
// subclass 00 (Ethernet) or 07 (InfiniBand), the classes ConnectX PFs and
// VFs show.
func (c Class) isNIC() bool { return c>>8 == 0x0200 || c>>8 == 0x0207 }

// nodeType is what NCCL makes of a <pci> element from its class.
type nodeType int

const (
	typePCI nodeType = iota // a PCI switch (also NCCL's fallback for an unknown class)
	typeGPU
	typeNIC
	typeNVS // NVSwitch
	typeCPU // a CPU seen as a PCI device
)

func (t nodeType) String() string {
	return [...]string{"PCI switch", "GPU", "NIC", "NVSwitch", "CPU"}[t]
}

// ncclClasses is NCCL's class table in its order: each entry is compared
// as a prefix of the class attribute and the first match wins; no match
// means a PCI switch (NVIDIA/nccl src/graph/topo.cc kvDictPciClass).
var ncclClasses = []struct {
	prefix string
	t      nodeType
}{
	{"0x060400", typePCI},
	{"0x080100", typePCI}, // ConnectX-8 data direct
	{"0x068000", typeNVS},
	{"0x068001", typeCPU},
	{"0x03", typeGPU},
	{"0x02", typeNIC},
}

// ncclClassType is the node type NCCL gives a class attribute, and whether
// a table entry matched (false: NCCL's fallback, a PCI switch).
func ncclClassType(class string) (nodeType, bool) {
	for _, e := range ncclClasses {
		if strings.HasPrefix(class, e.prefix) {
			return e.t, true
		}
	}
	return typePCI, false
}

// parseClass reads a class attribute in the form sysfs writes it:
// "0x" and 6 hex digits.
func parseClass(s string) (Class, error) {
	if len(s) != 8 || !strings.HasPrefix(s, "0x") {
		return 0, fmt.Errorf("class %q is not 0x and 6 hex digits (sysfs's form, e.g. 0x030200)", clip(s))
	}
	v, err := strconv.ParseUint(s[2:], 16, 32)
	if err != nil {
		return 0, fmt.Errorf("class %q is not 0x and 6 hex digits (sysfs's form, e.g. 0x030200)", s)
	}
	return Class(v), nil
}

// NormalizeClass reads a PCI class as tools print it: "0x030200" (sysfs),
// "030200", or the 4-digit class of `lspci -n` ("0302", programming
// interface 00). The result's String is sysfs's form.
func NormalizeClass(s string) (Class, error) {
	h := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X"))
	if len(h) == 4 {
		h += "00"
	}
	if len(h) != 6 {
		return 0, fmt.Errorf("PCI class %q is not 4 or 6 hex digits", clip(s))
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("PCI class %q is not 4 or 6 hex digits", clip(s))
	}
	return Class(v), nil
}
