package nccltopo

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// guestOf is the PCI devices of the guest railVM describes, plus what every
// vSphere guest has: the host bridge, its root ports, the SVGA adapter
// (a VGA-class device) and the vmxnet3 management NIC.
func guestOf(t Topology) map[string]string {
	g := map[string]string{
		"0000:00:00.0": "0x060000", // host bridge
		"0000:00:15.0": "0x060400", // a root port
		"0000:00:0f.0": "0x030000", // VMware SVGA II
		"0000:0b:00.0": "0x020000", // vmxnet3
	}
	for _, c := range t.CPUs {
		for _, gr := range c.Groups {
			for _, d := range append(append([]Device{}, gr.GPUs...), gr.NICs...) {
				g[strings.ToUpper(d.BusID)] = d.Class.String()
			}
		}
	}
	return g
}

func TestCheckGuest(t *testing.T) {
	top := railVM("vm03", 8, 4, 2)
	file, err := Generate(top)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		edit  func(map[string]string)
		want  []string
		match string
	}{
		{"the guest it was written for", func(map[string]string) {}, nil, ""},
		{"a GPU gone", func(g map[string]string) { delete(g, "0000:15:00.0") },
			[]string{"error guest-missing 13:12"}, "this guest has no PCI device 0000:15:00.0: NCCL never matches this GPU"},
		{"a VF gone", func(g map[string]string) { delete(g, "0000:1C:00.0") },
			[]string{"error guest-missing 15:12"}, "this guest has no PCI device 0000:1c:00.0: NCCL never matches this NIC"},
		{"a NIC where the file has a GPU", func(g map[string]string) { g["0000:15:00.0"] = "0200" },
			[]string{"error guest-class 13:33"}, "the file has a GPU (class 0x030200) at 0000:15:00.0, this guest a NIC (class 0x020000)"},
		{"a device at a bridge's bus ID", func(g map[string]string) { g["ffff:ff:02.0"] = "0x030200" },
			[]string{"error guest-class 12:31"}, "the file has a PCI switch (class 0x060400) at ffff:ff:02.0, this guest a GPU"},
		{"another class of the same kind", func(g map[string]string) { g["0000:15:00.0"] = "0x030000" },
			[]string{"warning guest-class 13:33"}, "class 0x030200 in the file, 0x030000 in this guest: NCCL takes the guest's"},
		{"a GPU the file does not name", func(g map[string]string) { g["0000:40:00.0"] = "0x030200" },
			[]string{"warning guest-unlisted-gpu 0:0"}, "this guest's GPU 0000:40:00.0 is not in the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guestOf(top)
			tc.edit(g)
			fs, err := CheckGuest(file, g)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, summary(fs)); diff != "" {
				t.Errorf("(-want +got):\n%s\n%s", diff, lines("", fs))
			}
			if tc.match != "" && (len(fs) == 0 || !strings.Contains(fs[0].Message, tc.match)) {
				t.Errorf("want %q in:\n%s", tc.match, lines("", fs))
			}
		})
	}
	// The whole file against an empty guest: every device missing, the
	// bridges not.
	fs, err := CheckGuest(file, nil)
	if err != nil || count(fs, Error, RuleGuestMissing) != 12 || len(fs) != 12 {
		t.Errorf("empty guest: %v\n%s", err, lines("", fs))
	}
	// A file NCCL cannot read: its parse error only.
	fs, err = CheckGuest([]byte("\t"+string(file)), guestOf(top))
	if err != nil || !cmp.Equal(kinds(fs), []string{"error parse"}) {
		t.Errorf("unreadable file: %v %v", err, fs)
	}
	// The guest's own entries must parse.
	for _, bad := range []map[string]string{{"0000:03:00": "0x030200"}, {"0000:03:00.0": "3D controller"}} {
		g := maps.Clone(guestOf(top))
		maps.Copy(g, bad)
		if _, err := CheckGuest(file, g); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestNormalizeClass(t *testing.T) {
	for in, want := range map[string]Class{"0x030200": Class3D, "030200": Class3D, "0302": Class3D, "0X0200": ClassEthernet, " 0x060400\n": ClassBridge} {
		if got, err := NormalizeClass(in); err != nil || got != want {
			t.Errorf("NormalizeClass(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0x03", "0x0302000", "zz0200"} {
		if _, err := NormalizeClass(in); err == nil {
			t.Errorf("NormalizeClass(%q): no error", in)
		}
	}
}
