package railguest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// The skeleton of the rails golden case's first VM is a file NCCL's reader
// takes without a finding: one bridge per rail, the rail's two GPUs and its
// VF under it, placeholders for every bus ID, the note that says so.
func TestSkeleton(t *testing.T) {
	inv := load(t, "rails")
	skel, err := Skeleton(inv, &inv.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "skeleton-rails4-gpus8.xml"), skel)
	if fs := nccltopo.Validate(skel); len(fs) != 0 {
		t.Errorf("Validate(skeleton):\n%v", fs)
	}
	s := string(skel)
	for _, w := range []string{
		`<system version="1" name="gpu1">`,
		"    <pci busid=\"ffff:ff:03.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" +
			"      <pci busid=\"fffe:04:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 4 -->\n" +
			"      <pci busid=\"fffe:05:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 5 -->\n" +
			"      <pci busid=\"fffd:02:00.0\" class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- rail 2 mlx5_2 -->\n" +
			"    </pci>\n",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("no\n%s\nin\n%s", w, s)
		}
	}
	// One header, the skeleton's: nccltopo's, which calls the file NCCL's,
	// is the boot script's to write.
	head, _, _ := strings.Cut(s, "<system ")
	if !strings.HasPrefix(s, "<!-- Skeleton of this VM's NCCL topology file") || strings.Count(head, "<!--") != 1 || strings.Contains(s, nccltopo.Header) {
		t.Errorf("the skeleton's header is not its one comment:\n%s", head)
	}
	// rails-shared: A100s (Gen4) and ConnectX-6 (Gen4), 2 GPUs per rail.
	shared := load(t, "rails-shared")
	skel, err = Skeleton(shared, &shared.Hosts[2])
	if err != nil {
		t.Fatal(err)
	}
	if fs := nccltopo.Validate(skel); len(fs) != 0 || strings.Count(string(skel), `link_speed="16.0 GT/s PCIe"`) != 8 ||
		!strings.Contains(string(skel), "<!-- rail 1 mlx5_1 -->") {
		t.Errorf("rails-shared skeleton (%v):\n%s", fs, skel)
	}
}

// No skeleton, with the reason, for a VM with one rail and for models
// whose PCIe link rdggen does not know.
func TestSkeletonRefused(t *testing.T) {
	ref := load(t, "reference")
	if _, err := Skeleton(ref, &ref.Hosts[0]); err == nil || !strings.Contains(err.Error(), "has one rail") || !errors.Is(err, ErrNotNeeded) {
		t.Errorf("one rail: %v", err)
	}
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	h.GPUs[3].Model = "B200-SXM-180GB"
	_, err := Skeleton(inv, h)
	var me *ModelError
	if err == nil || !strings.Contains(err.Error(), `no PCIe link for GPU model "B200-SXM-180GB"`) || errors.Is(err, ErrNotNeeded) ||
		!errors.As(err, &me) || *me != (ModelError{Host: h.Name, GPU: 3, Model: "B200-SXM-180GB"}) {
		t.Errorf("unknown GPU: %v", err)
	}
	inv = load(t, "rails")
	h = &inv.Hosts[0]
	h.NIC.Model = "ConnectX-9"
	_, err = Skeleton(inv, h)
	if err == nil || !strings.Contains(err.Error(), `NIC model "ConnectX-9"`) || !errors.As(err, &me) || *me != (ModelError{Host: h.Name, GPU: -1, Model: "ConnectX-9"}) {
		t.Errorf("unknown NIC: %v", err)
	}
	if fs, err := Files(inv, h, nil); err == nil || len(fs) != 3 {
		t.Errorf("Files without a topology: %d files, %v", len(fs), err)
	}
	// A VM with rails and no GPU: nothing to pair, no file needed.
	inv = load(t, "rails")
	h = &inv.Hosts[0]
	h.GPUs = nil
	for r := range h.Rails {
		h.Rails[r].GPUs = nil
	}
	if _, err := Skeleton(inv, h); err == nil || !strings.Contains(err.Error(), "has no GPU") || !errors.Is(err, ErrNotNeeded) || errors.As(err, &me) {
		t.Errorf("no GPU: %v", err)
	}
}

// ParseFacts reads topo_facts' lines, "-" as absent, and names a line it
// cannot read.
func TestParseFacts(t *testing.T) {
	f, err := ParseFacts([]byte("machine aarch64\ncpu - - -\nonline 0-7\nnode 0 0-3\nnode 1 4-7\nnode 2\n" +
		"pci 0000:01:00.0 0x10de 0x030200 1\npci 0000:02:00.0 0x15b3 0x020000 -1\nnet 0000:02:00.0 rail1 00:50:56:AA:00:11\n" +
		"pci 0000:03:00.0 - - -1\npci 0000:3B:00.0 0x10de 0x030200 0\nnet 0000:3B:00.0 x 00:00:00:00:00:01\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Machine != "aarch64" || f.Vendor != "" || f.Family != "" || f.Online != "0-7" || len(f.Nodes) != 2 || f.Nodes[1] != (Node{1, "4-7"}) {
		t.Errorf("facts %+v", f)
	}
	if len(f.Devices) != 3 || f.Devices[1].Net[0] != (NetInterface{"rail1", "00:50:56:AA:00:11"}) || f.Devices[2].Vendor != "" {
		t.Errorf("devices %+v", f.Devices)
	}
	if d, ok := f.Rail("", "00:50:56:aa:00:11"); !ok || d.BusID != "0000:02:00.0" {
		t.Errorf("by MAC: %+v %v", d, ok)
	}
	if d, ok := f.Rail("rail1", ""); !ok || d.BusID != "0000:02:00.0" {
		t.Errorf("by name: %+v %v", d, ok)
	}
	if _, ok := f.Rail("rail1", "00:50:56:aa:00:12"); ok {
		t.Error("a MAC that is not there found a device by name")
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no machine line"},
		{"machine x86_64\ncpu GenuineIntel 6\n", `line 2 "cpu GenuineIntel 6": want cpu <vendor> <family> <model>`},
		{"machine x86_64\npci 0000:01:00.0 0x10de 0x030200 x\n", "line 2 \"pci 0000:01:00.0 0x10de 0x030200 x\": the NUMA node is not a number"},
		{"machine x86_64\nnet 0000:01:00.0 a 00:00:00:00:00:01\n", "no pci line before it for 0000:01:00.0"},
		{"machine x86_64\nnode x 0-3\n", "the node id is not a number"},
		{"machine x86_64\nbogus 1\n", `unknown kind "bogus"`},
	} {
		if _, err := ParseFacts([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

// TopologyFile places the guest's devices in the skeleton's structure:
// GPUs in bus order, each rail's VF by name or MAC, one <cpu> per NUMA node
// when every GPU has one, else one <cpu> with every CPU.
func TestTopologyFile(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	out, err := TopologyFile(inv, h, nil, vm8(true).facts())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "rails4-gpus8-numa2.xml"), out)
	s := string(out)
	for _, w := range []string{
		`  <cpu numaid="0" affinity="00000000,ffffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`,
		`  <cpu numaid="1" affinity="ffffffff,00000000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`,
		"    <pci busid=\"ffff:ff:03.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" +
			"      <pci busid=\"0000:17:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 4 -->\n" +
			"      <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 5 -->\n" +
			"      <pci busid=\"0000:1c:00.0\" class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- rail 2 mlx5_2 -->\n",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("no\n%s\nin\n%s", w, s)
		}
	}
	if strings.Contains(s, "Skeleton") || strings.Contains(s, "fffe:") {
		t.Errorf("the skeleton's note or a placeholder is in the file:\n%s", s)
	}
	// The guest's own 3D controllers are all named; the VGA adapter is not
	// a GPU of the VM.
	if fs, err := nccltopo.CheckGuest(out, guestMap(vm8(true).facts())); err != nil || len(fs) != 0 {
		t.Errorf("CheckGuest: %v %v", fs, err)
	}

	// No device NUMA node: one <cpu> with every CPU.
	out, err = TopologyFile(inv, h, nil, vm8(false).facts())
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); strings.Count(s, "<cpu ") != 1 || !strings.Contains(s, `<cpu numaid="0" affinity="ffffffff,ffffffff" arch="x86_64"`) || strings.Count(s, "<pci busid=\"ffff:ff:") != 4 {
		t.Errorf("one CPU:\n%s", s)
	}
	// Two nodes, but a GPU without one: one <cpu> too.
	f := vm8(true).facts()
	f.Devices[5].NUMA = -1
	if out, err := TopologyFile(inv, h, nil, f); err != nil || strings.Count(string(out), "<cpu ") != 1 {
		t.Errorf("a GPU without a node: %v\n%s", err, out)
	}

	// By MAC: the guest names rail 1 ens256; its MAC finds it.
	f = vm8(false).facts()
	for i := range f.Devices {
		if len(f.Devices[i].Net) > 0 && f.Devices[i].Net[0].Name == "rail1" {
			f.Devices[i].Net[0].Name = "ens256"
		}
	}
	if _, err := TopologyFile(inv, h, nil, f); err == nil || !strings.Contains(err.Error(), "rail 1: no network interface is named rail1") {
		t.Errorf("by name, renamed: %v", err)
	}
	if out, err := TopologyFile(inv, h, []string{"", "00:50:56:8A:10:01"}, f); err != nil || !strings.Contains(string(out), `<pci busid="0000:1b:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>  <!-- rail 1 mlx5_1 -->`) {
		t.Errorf("by MAC: %v\n%s", err, out)
	}

	// arm64: no vendor, family or model.
	f = vm8(false).facts()
	f.Machine, f.Vendor, f.Family, f.Model = "aarch64", "", "", ""
	if out, err := TopologyFile(inv, h, nil, f); err != nil || !strings.Contains(string(out), `<cpu numaid="0" affinity="ffffffff,ffffffff" arch="arm64">`) {
		t.Errorf("arm64: %v\n%s", err, out)
	}
	// AMD without family and model: written without them.
	f = vm8(false).facts()
	f.Vendor, f.Family = "AuthenticAMD", ""
	if out, err := TopologyFile(inv, h, nil, f); err != nil || !strings.Contains(string(out), `arch="x86_64" vendor="AuthenticAMD">`) {
		t.Errorf("AMD: %v\n%s", err, out)
	}
}

func guestMap(f Facts) map[string]string {
	m := map[string]string{}
	for _, d := range f.Devices {
		m[d.BusID] = d.Class
	}
	return m
}

// TopologyFile refuses what it cannot fill, and says why.
func TestTopologyFileRefused(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			g := vm8(true)
			tc.edit(&g)
			f := g.facts()
			if tc.machine != "" {
				f.Machine = tc.machine
			}
			if out, err := TopologyFile(inv, h, nil, f); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v, want %q\n%s", err, tc.want, out)
			}
		})
	}
}

// refusals are guests no file can be written for, with the reason the Go
// side and the boot script give (the script's words after
// "rdggen-nccl-topology: ").
var refusals = []struct {
	name    string
	edit    func(*guest)
	machine string
	want    string
}{
	{"a GPU less", func(g *guest) { g.devices = append(g.devices[:4], g.devices[5:]...) }, "",
		"this guest shows 7 NVIDIA GPUs (vendor 0x10de, class 0x03xxxx), the VM has 8"},
	{"a rail missing", func(g *guest) { g.devices = g.devices[:len(g.devices)-1] }, "",
		"rail 3: no network interface is named rail3 on a PCI device"},
	{"a VF that is a function", func(g *guest) { g.devices[len(g.devices)-1].BusID = "0000:1d:00.1" }, "",
		"rail 3: 0000:1d:00.1 (rail3) is not device and function 00.0"},
	{"a rail on a GPU's interface", func(g *guest) { g.devices[len(g.devices)-1].Class = "0x030200" }, "",
		"rail 3: 0000:1d:00.0 (rail3) has class 0x030200, not an Ethernet or InfiniBand NIC"},
	{"an unknown vendor", func(g *guest) { g.cpuinfo = strings.ReplaceAll(g.cpuinfo, "GenuineIntel", "HygonGenuine") }, "",
		"CPU vendor HygonGenuine (/proc/cpuinfo vendor_id) is not GenuineIntel, AuthenticAMD or CentaurHauls"},
	{"Intel without a model", func(g *guest) { g.cpuinfo = "vendor_id\t: GenuineIntel\ncpu family\t: 6\n" }, "",
		"GenuineIntel CPUs need their family and model (/proc/cpuinfo cpu family, model), which NCCL reads: found 6 and -"},
	{"a node list that does not parse", func(g *guest) { g.nodes[1] = "32-x" }, "",
		"NUMA node 1: cpulist 32-x is not a list of CPUs 0-1023"},
	{"a CPU in two nodes", func(g *guest) { g.nodes[1] = "31-63" }, "",
		"NUMA node 1: cpulist 31-63 is not a list of CPUs 0-1023 apart from the other nodes"},
	{"an unknown machine", func(g *guest) {}, "riscv64", "machine riscv64 is not x86_64, aarch64 or ppc64le"},
}

// A rail without GPUs (6 GPUs on 4 rails: rail 3 has none, a warning of
// validation) has no bridge: its VF is left to NCCL, which places it from
// sysfs, and the boot script does not look for it.
func TestRailWithoutGPUs(t *testing.T) {
	src, err := os.ReadFile("../../testdata/golden/rails/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	gpu := "    - {model: H100-PCIE-80GB, memory_gb: 80, bar1_gb: 128}\n"
	inv, err := inventory.Load("six.yaml", []byte(strings.Replace(string(src), gpu+gpu, "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	h := &inv.Hosts[0]
	skel, err := Skeleton(inv, h)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(skel); strings.Count(s, `busid="ffff:ff:`) != 3 || strings.Contains(s, "fffd:03:00.0") || !strings.Contains(s, "fffe:05:00.0") {
		t.Errorf("skeleton:\n%s", s)
	}
	g := vm8(false)
	g.devices = slices.DeleteFunc(slices.Clone(g.devices), func(d Device) bool { return d.BusID == "0000:19:00.0" || d.BusID == "0000:1a:00.0" })
	g.devices = g.devices[:len(g.devices)-1] // and rail 3's VF is not there either
	out, err := TopologyFile(inv, h, nil, g.facts())
	if err != nil || strings.Count(string(out), `busid="ffff:ff:`) != 3 {
		t.Errorf("%v\n%s", err, out)
	}
}
