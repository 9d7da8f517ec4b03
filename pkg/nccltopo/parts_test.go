package nccltopo

import (
	"strings"
	"testing"
)

func TestCPUSet(t *testing.T) {
	s, err := ParseCPUList("32-47, 0-15,15")
	if err == nil {
		t.Errorf("a space inside: %v", s)
	}
	s, err = ParseCPUList("32-47,0-15,15")
	if err != nil || s.String() != "0-15,32-47" || s.Mask(0) != "0000ffff,0000ffff" || s.Mask(3) != "00000000,0000ffff,0000ffff" {
		t.Errorf("%v %v %q", s, err, s.Mask(0))
	}
	if s, _ := ParseCPUList(""); len(s) != 0 || s.Mask(1) != "00000000" {
		t.Errorf("empty: %v", s)
	}
	top, _ := NewCPUSet(MaxCPU, 0)
	m := top.Mask(0)
	if strings.Count(m, ",") != 31 || !strings.HasPrefix(m, "80000000,") || !strings.HasSuffix(m, ",00000001") {
		t.Errorf("CPUs 0 and 1023: %s", m)
	}
	if back, err := parseMask(m); err != nil || back.String() != "0,1023" {
		t.Errorf("parseMask(%s) = %v, %v", m, back, err)
	}
	// Azure's form: fewer digits in a group, as NCCL reads it.
	if back, err := parseMask("0000,00ffffff"); err != nil || back.String() != "0-23" {
		t.Errorf("%v %v", back, err)
	}
	for _, bad := range []string{"1024", "5-3", "a", "-1", "0-", "1,,2"} {
		if s, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) = %v", bad, s)
		}
	}
	if _, err := NewCPUSet(-1); err == nil {
		t.Error("NewCPUSet(-1)")
	}
}

func TestLinks(t *testing.T) {
	for _, tc := range []struct {
		l     Link
		speed string
		gbps  float64
	}{
		{Link{1, 1}, "2.5 GT/s PCIe", 0.1875}, {Link{3, 16}, "8.0 GT/s PCIe", 12}, {Link{4, 16}, "16.0 GT/s PCIe", 24},
		{Link{5, 16}, "32.0 GT/s PCIe", 48}, {Link{6, 16}, "64.0 GT/s PCIe", 96}, {Link{5, 8}, "32.0 GT/s PCIe", 24},
		{Link{0, 16}, "", 0}, {Link{7, 16}, "", 0}, {Link{4, 3}, "16.0 GT/s PCIe", 0},
	} {
		if tc.l.Speed() != tc.speed || tc.l.GBps() != tc.gbps {
			t.Errorf("%v: %q %v", tc.l, tc.l.Speed(), tc.l.GBps())
		}
		// Every string Generate writes is an exact entry of NCCL's table
		// with the same per-lane value.
		if tc.speed != "" {
			if perLane, matched, exact := ncclSpeed(tc.speed); !matched || !exact || perLane != pciGens[tc.l.Gen].perLane {
				t.Errorf("%q: NCCL reads %d %v %v", tc.speed, perLane, matched, exact)
			}
		}
	}
	if l, ok := GPULink("h100nvl"); !ok || l != (Link{5, 16}) {
		t.Errorf("h100nvl: %v", l)
	}
	if l, ok := NICLink("ConnectX-4 Lx"); !ok || l != (Link{3, 8}) {
		t.Errorf("ConnectX-4 Lx: %v", l)
	}
	if _, ok := NICLink("connectx-7"); ok {
		t.Error("NICLink matches the inventory's spelling only")
	}
	if got := strings.Join(GPUFamilies(), " "); got != "a10 a100 a30 a40 h100 h100nvl h200 h800 l4 l40 l40s p100 p40 t4 v100 v100s" {
		t.Errorf("GPUFamilies: %s", got)
	}
	if got := strings.Join(NICModels(), ", "); got != "BlueField-3, ConnectX-4, ConnectX-4 Lx, ConnectX-5, ConnectX-5 Ex, ConnectX-6, ConnectX-6 Dx, ConnectX-7, ConnectX-8" {
		t.Errorf("NICModels: %s", got)
	}
	// NCCL's prefix matching: "16.0 GT/s" (no "PCIe") matches nothing and
	// becomes Gen3; "2.5 GT/s PCIe" matches the older "2.5 GT/s" first.
	if perLane, matched, _ := ncclSpeed("16.0 GT/s"); matched || perLane != 60 {
		t.Errorf("16.0 GT/s: %d %v", perLane, matched)
	}
	if perLane, matched, exact := ncclSpeed("16 GT/s PCIe"); !matched || exact || perLane != 120 {
		t.Errorf("16 GT/s PCIe: %d %v %v", perLane, matched, exact)
	}
}

func TestCInt(t *testing.T) {
	for in, want := range map[string]struct {
		n    int64
		full bool
	}{
		"1": {1, true}, "0x1f": {31, true}, "017": {15, true}, "085": {0, false}, "1.0": {1, false}, " 1": {1, false},
		"-3": {-3, true}, "+4": {4, true}, "": {0, false}, "x": {0, false}, "0x": {0, false}, "99999999999": {99999999999, false},
	} {
		if n, full := cInt(in); n != want.n || full != want.full {
			t.Errorf("cInt(%q) = %d, %v; want %d, %v", in, n, full, want.n, want.full)
		}
	}
}
