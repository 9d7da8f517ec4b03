package nccltopo

import (
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]Version{
		"2.30.7": {2, 30, 7}, "2.30.7-1": {2, 30, 7}, "v2.30.7-1": {2, 30, 7}, " 2.18.5+cuda12.2 ": {2, 18, 5},
		"23007": {2, 30, 7}, "21805": {2, 18, 5},
	} {
		if got, err := ParseVersion(in); err != nil || got != want {
			t.Errorf("ParseVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2.30", "2.30.x", "2708", "1.2.3.4", "-2.30.7"} {
		if v, err := ParseVersion(in); err == nil {
			t.Errorf("ParseVersion(%q) = %v, no error", in, v)
		}
	}
	for _, tc := range []struct {
		v, w Version
		want bool
	}{
		{Version{2, 30, 7}, RailLabels, true}, {Version{2, 30, 6}, RailLabels, false}, {Version{2, 31, 0}, RailLabels, true},
		{Version{3, 0, 0}, RailLabels, true}, {Version{2, 29, 9}, RailLabels, false}, {Version{}, RailLabels, false},
	} {
		if got := tc.v.AtLeast(tc.w); got != tc.want {
			t.Errorf("%v.AtLeast(%v) = %v", tc.v, tc.w, got)
		}
	}
	if (Version{}).String() != "unknown" || (Version{2, 30, 7}).String() != "2.30.7" {
		t.Error("String")
	}
}

func TestIBHCA(t *testing.T) {
	hcas := []string{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}
	for _, tc := range []struct {
		v    Version
		want string
	}{
		{Version{}, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"},
		{Version{2, 30, 6}, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"},
		{Version{2, 30, 7}, "=mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2,mlx5_3:1:3"},
		{Version{2, 31, 1}, "=mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2,mlx5_3:1:3"},
	} {
		s, err := IBHCA(hcas, tc.v)
		if err != nil || s.Name != "NCCL_IB_HCA" || s.Value != tc.want || !strings.Contains(s.Source, "env.rst") {
			t.Errorf("IBHCA(%v) = %+v, %v; want %s", tc.v, s, err, tc.want)
		}
	}
	// Rail order is the caller's, not the names' order.
	if s, _ := IBHCA([]string{"mlx5_3", "mlx5_0"}, Version{}); s.Value != "=mlx5_3:1,mlx5_0:1" {
		t.Errorf("%s", s.Value)
	}
	if s, _ := IBHCA([]string{"mlx5_0"}, Version{2, 30, 6}); !strings.Contains(s.Why, "no rail labels (NCCL 2.30.6 < 2.30.7)") {
		t.Errorf("%s", s.Why)
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = "mlx5_" + strings.Repeat("x", i+1)
	}
	for _, bad := range [][]string{nil, {"mlx5_0", "mlx5_0"}, {"mlx5_0,mlx5_1"}, {"mlx5_0:1"}, {"^mlx5"}, {""}, {"mlx5 0"}, {strings.Repeat("m", 64)}, many} {
		if s, err := IBHCA(bad, Version{}); err == nil {
			t.Errorf("IBHCA(%q) = %+v, no error", bad, s)
		}
	}
}

func TestCrossNIC(t *testing.T) {
	for _, tc := range []struct {
		rails int
		f     Fabric
		want  string
	}{
		{1, OneSwitch, ""}, {1, RailsJoined, ""}, {1, RailsSeparate, ""},
		{2, OneSwitch, "1"}, {4, RailsJoined, "2"}, {8, RailsSeparate, "0"},
	} {
		s, err := CrossNIC(tc.rails, tc.f)
		if err != nil || s.Name != "NCCL_CROSS_NIC" || s.Value != tc.want || s.Why == "" || !strings.Contains(s.Source, "NCCL_CROSS_NIC") {
			t.Errorf("CrossNIC(%d, %d) = %+v, %v; want %q", tc.rails, tc.f, s, err, tc.want)
		}
	}
	for _, bad := range []struct {
		rails int
		f     Fabric
	}{{0, OneSwitch}, {2, 0}, {2, 9}} {
		if _, err := CrossNIC(bad.rails, bad.f); err == nil {
			t.Errorf("CrossNIC(%d, %d): no error", bad.rails, bad.f)
		}
	}
}

func TestRailOrder(t *testing.T) {
	for _, ok := range [][]string{
		nil, {"0000:1b:00.0"}, {"0000:1b:00.0", "0000:1c:00.0", "0000:23:00.0"}, {"0000:ff:00.0", "0001:00:00.0"},
	} {
		if err := RailOrder(ok); err != nil {
			t.Errorf("RailOrder(%v) = %v", ok, err)
		}
	}
	for _, tc := range []struct {
		ids  []string
		want string
	}{
		{[]string{"0000:1c:00.0", "0000:1b:00.0"}, "rail 1's NIC 0000:1b:00.0 comes before rail 0's 0000:1c:00.0 in PCI order"},
		{[]string{"0000:1b:00.2", "0000:1b:00.1"}, "rails 0 and 1 (0000:1b:00.2, 0000:1b:00.1) are one PCI device 0000:1b:00.0 to NCCL"},
		{[]string{"0000:1b:01.0", "0000:1b:02.0"}, "are one PCI device 0000:1b:00.0"},
		{[]string{"0000:1b:00.0", "1b:00.0"}, "rail 1: bus ID"},
	} {
		if err := RailOrder(tc.ids); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RailOrder(%v) = %v; want %q", tc.ids, err, tc.want)
		}
	}
}
