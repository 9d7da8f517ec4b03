package nccltopo

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Gen is a PCIe generation: 1 (2.5 GT/s per lane) to 6 (64 GT/s).
type Gen int

// Link is a device's PCIe link as NCCL reads it from link_speed and
// link_width.
type Link struct {
	// Gen is the PCIe generation, 1 to 6.
	Gen Gen
	// Width is the lane count: 1, 2, 4, 8, 12, 16 or 32.
	Width int
}

// pciGens maps a generation to the link_speed string Generate writes (the
// form Linux ≥ 5.7 prints in sysfs max_link_speed, which NCCL's table
// lists) and to the per-lane value NCCL gives it, in units of 100 Mb/s
// (NVIDIA/nccl src/graph/topo.cc kvDictPciGen at NCCLCommit; Gen6's string
// is in that table since NCCL 2.30).
var pciGens = [...]struct {
	speed   string
	perLane int
}{
	1: {"2.5 GT/s PCIe", 15},
	2: {"5.0 GT/s PCIe", 30},
	3: {"8.0 GT/s PCIe", 60},
	4: {"16.0 GT/s PCIe", 120},
	5: {"32.0 GT/s PCIe", 240},
	6: {"64.0 GT/s PCIe", 480},
}

// ncclSpeeds is NCCL's whole link_speed table, in NCCL's order: the strings
// of Linux ≤ 5.6 ("8 GT/s") and of later kernels ("8.0 GT/s PCIe"), each
// with its per-lane value in 100 Mb/s. NCCL compares each entry as a
// prefix of the attribute (kvConvertToInt: strncmp with the entry's
// length) and takes the first that matches; an attribute no entry
// prefixes becomes ncclSpeedFallback. Source: NVIDIA/nccl
// src/graph/topo.cc kvDictPciGen, src/graph/xml.h kvConvertToInt.
var ncclSpeeds = []struct {
	s       string
	perLane int
}{
	{"2.5 GT/s", 15},
	{"5 GT/s", 30},
	{"8 GT/s", 60},
	{"16 GT/s", 120},
	{"32 GT/s", 240},
	{"2.5 GT/s PCIe", 15},
	{"5.0 GT/s PCIe", 30},
	{"8.0 GT/s PCIe", 60},
	{"16.0 GT/s PCIe", 120},
	{"32.0 GT/s PCIe", 240},
	{"64.0 GT/s PCIe", 480},
}

// ncclSpeedFallback is what NCCL takes for a link_speed no table entry
// prefixes: 60 (× 100 Mb/s per lane, PCIe Gen3), silently (an INFO line).
const ncclSpeedFallback = 60

// ncclSpeed returns the per-lane value NCCL reads from a link_speed
// attribute (100 Mb/s units), whether an entry matched, and whether the
// attribute is exactly one of the table's strings.
func ncclSpeed(s string) (perLane int, matched, exact bool) {
	perLane = ncclSpeedFallback
	for _, e := range ncclSpeeds {
		if strings.HasPrefix(s, e.s) && !matched {
			perLane, matched = e.perLane, true
		}
		exact = exact || s == e.s
	}
	return perLane, matched, exact
}

// ncclGBps is a PCI link's bandwidth as NCCL computes it, GB/s:
// width × per-lane / 80, a width of 0 counting as 16 (NVIDIA/nccl
// src/graph/topo.cc ncclTopoAddPci).
func ncclGBps(width, perLane int) float64 {
	if width == 0 {
		width = 16
	}
	return float64(width*perLane) / 80
}

// Speed is the link_speed string Generate writes for l, e.g. "32.0 GT/s
// PCIe"; "" for a generation outside 1–6.
func (l Link) Speed() string {
	if l.Gen < 1 || int(l.Gen) >= len(pciGens) {
		return ""
	}
	return pciGens[l.Gen].speed
}

// GBps is the link's bandwidth as NCCL computes it from the file, GB/s
// (width × per-lane speed / 80: Gen4 ×16 is 24, Gen5 ×16 is 48); 0 for a
// link Validate would refuse.
func (l Link) GBps() float64 {
	if l.check() != nil {
		return 0
	}
	return ncclGBps(l.Width, pciGens[l.Gen].perLane)
}

// String is "Gen5 x16".
func (l Link) String() string { return fmt.Sprintf("Gen%d x%d", l.Gen, l.Width) }

// check says what is wrong with l: a generation outside 1–6 or a width
// PCIe does not define (x1, x2, x4, x8, x12, x16, x32; PCI Express Base
// Specification, "Link Width").
func (l Link) check() error {
	if l.Gen < 1 || int(l.Gen) >= len(pciGens) {
		return fmt.Errorf("PCIe generation %d is not 1–6", l.Gen)
	}
	switch l.Width {
	case 1, 2, 4, 8, 12, 16, 32:
		return nil
	}
	return fmt.Errorf("link width x%d is not 1, 2, 4, 8, 12, 16 or 32", l.Width)
}

// widest is the link a bridge needs above devices with links ls: the
// highest generation and the widest width among them, so that NCCL never
// sees the bridge slower than a device under it.
func widest(ls ...Link) Link {
	var w Link
	for _, l := range ls {
		w.Gen = max(w.Gen, l.Gen)
		w.Width = max(w.Width, l.Width)
	}
	return w
}

// gpuLinks is the host interface of NVIDIA's PCIe datacenter GPUs, keyed by
// the family vmx.ParseModel returns ("v100", "a100", "h100nvl"…), from each
// card's product brief or datasheet ("PCI Express Gen3 ×16", "PCIe Gen4:
// 64GB/s", "PCIe Gen5: 128GB/s"): P100, P40, V100, V100S and T4 are Gen3
// ×16; A10, A30, A40, A100 PCIe, L4, L40 and L40S Gen4 ×16; H100 PCIe,
// H800 PCIe, H100 NVL and H200 NVL Gen5 ×16.
var gpuLinks = map[string]Link{
	"p100": {3, 16}, "p40": {3, 16}, "v100": {3, 16}, "v100s": {3, 16}, "t4": {3, 16},
	"a10": {4, 16}, "a30": {4, 16}, "a40": {4, 16}, "a100": {4, 16}, "l4": {4, 16}, "l40": {4, 16}, "l40s": {4, 16},
	"h100": {5, 16}, "h800": {5, 16}, "h100nvl": {5, 16}, "h200": {5, 16},
}

// nicLinks is the host interface of NVIDIA's ConnectX adapters, keyed by
// the inventory's NIC model names, from each adapter's user manual
// ("Specifications"): ConnectX-4 Gen3 ×16, ConnectX-4 Lx Gen3 ×8,
// ConnectX-5 Gen3 ×16, ConnectX-5 Ex Gen4 ×16, ConnectX-6 and ConnectX-6 Dx
// Gen4 ×16, ConnectX-7 and BlueField-3 Gen5 ×16, ConnectX-8 Gen6 ×16. A
// card sold in other widths (Socket Direct ×32, some OCP ×8) is given by
// the caller's own Link instead. A VF's link is its PF's.
var nicLinks = map[string]Link{
	"ConnectX-4": {3, 16}, "ConnectX-4 Lx": {3, 8},
	"ConnectX-5": {3, 16}, "ConnectX-5 Ex": {4, 16},
	"ConnectX-6": {4, 16}, "ConnectX-6 Dx": {4, 16},
	"ConnectX-7": {5, 16}, "BlueField-3": {5, 16}, "ConnectX-8": {6, 16},
}

// GPULink returns the PCIe link of a GPU family as vmx.ParseModel names it
// ("a100", "h100nvl"); false for a family not in the table (gpuLinks).
func GPULink(family string) (Link, bool) {
	l, ok := gpuLinks[family]
	return l, ok
}

// NICLink returns the PCIe link of a NIC model as the inventory names it
// ("ConnectX-7"); false for a model not in the table (nicLinks).
func NICLink(model string) (Link, bool) {
	l, ok := nicLinks[model]
	return l, ok
}

// GPUFamilies are the GPU families GPULink knows ("a10", "a100", …,
// "v100s"), sorted: for a message naming the models rdggen can describe.
func GPUFamilies() []string { return slices.Sorted(maps.Keys(gpuLinks)) }

// NICModels are the NIC models NICLink knows, as the inventory names them
// ("BlueField-3", "ConnectX-4", …), sorted.
func NICModels() []string { return slices.Sorted(maps.Keys(nicLinks)) }
