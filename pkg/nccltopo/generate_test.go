package nccltopo

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
)

// The file for a VM with 8 GPUs on 4 rails over 2 sockets, as a golden
// file, and the round trip: Validate finds nothing in it.
func TestGenerateGolden(t *testing.T) {
	out, err := Generate(railVM("vm03", 8, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "rails4-gpus8.xml"), out)
	if fs := Validate(out); len(fs) != 0 {
		t.Errorf("Validate(Generate(…)) = \n%s", lines("rails4-gpus8.xml", fs))
	}
	// The pairing the file states: rail r's VF and GPUs 2r, 2r+1 under
	// one bridge, rails 0–1 on NUMA node 0, 2–3 on node 1.
	s := string(out)
	for _, want := range []string{
		`<cpu numaid="0" affinity="00000000,ffffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`,
		`<cpu numaid="1" affinity="ffffffff,00000000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`,
		"    <pci busid=\"ffff:ff:04.0\" class=\"0x060400\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" +
			"      <pci busid=\"0000:19:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 6 -->\n" +
			"      <pci busid=\"0000:1a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- GPU 7 -->\n" +
			"      <pci busid=\"0000:1e:00.0\" class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>  <!-- rail 3 mlx5_3 -->\n" +
			"    </pci>\n  </cpu>\n</system>\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing:\n%s\nin:\n%s", want, s)
		}
	}
}

// Same topology, same bytes; CPUs are written in NUMA order whatever the
// caller's order.
func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate(railVM("vm03", 8, 4, 2))
	if err != nil {
		t.Fatal(err)
	}
	rev := railVM("vm03", 8, 4, 2)
	slices.Reverse(rev.CPUs)
	b, err := Generate(rev)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("CPU order changed the file:\n%s\n---\n%s", a, b)
	}
}

// A bridge gets the highest generation and widest width of its devices,
// and every <cpu> the same number of mask groups.
func TestGenerateBridgeLink(t *testing.T) {
	a100, _ := GPULink("a100")           // Gen4 ×16
	cx4lx, _ := NICLink("ConnectX-4 Lx") // Gen3 ×8
	cx8, _ := NICLink("ConnectX-8")      // Gen6 ×16
	small, _ := NewCPUSet(0, 1)
	big, _ := NewCPUSet(70)
	out, err := Generate(Topology{CPUs: []CPU{
		{NUMA: 0, CPUs: small, Arch: ArchX86, Vendor: VendorAMD, Groups: []Group{{
			GPUs: []Device{{BusID: "0000:03:00.0", Class: ClassVGA, Link: a100}},
			NICs: []Device{{BusID: "0000:04:00.0", Class: ClassInfiniBand, Link: cx4lx}},
		}}},
		{NUMA: 1, CPUs: big, Arch: ArchX86, Vendor: VendorAMD, Groups: []Group{{
			GPUs: []Device{{BusID: "0000:05:00.0", Class: Class3D, Link: Link{Gen: 3, Width: 4}}},
			NICs: []Device{{BusID: "0000:06:00.0", Class: ClassEthernet, Link: cx8}},
		}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<cpu numaid="0" affinity="00000000,00000000,00000003" arch="x86_64" vendor="AuthenticAMD">`,
		`<cpu numaid="1" affinity="00000040,00000000,00000000" arch="x86_64" vendor="AuthenticAMD">`,
		`<pci busid="ffff:ff:01.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">`,
		`<pci busid="0000:03:00.0" class="0x030000" link_speed="16.0 GT/s PCIe" link_width="16"/>`,
		`<pci busid="0000:04:00.0" class="0x020700" link_speed="8.0 GT/s PCIe" link_width="8"/>`,
		`<pci busid="ffff:ff:02.0" class="0x060400" link_speed="64.0 GT/s PCIe" link_width="16">`,
		`<pci busid="0000:05:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="4"/>`,
		`<system version="1">`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	if fs := Validate(out); len(fs) != 0 {
		t.Errorf("Validate: \n%s", lines("", fs))
	}
}

// Every problem of an invalid topology is named with its field, at once.
func TestGenerateRefuses(t *testing.T) {
	h100, _ := GPULink("h100")
	cx7, _ := NICLink("ConnectX-7")
	gpu := func(id string) Device { return Device{BusID: id, Class: Class3D, Link: h100} }
	nic := func(id string) Device { return Device{BusID: id, Class: ClassEthernet, Link: cx7} }
	cpus, _ := NewCPUSet(0, 1, 2, 3)
	good := func() Topology {
		return Topology{Name: "vm", CPUs: []CPU{{NUMA: 0, CPUs: cpus, Arch: ArchX86, Vendor: VendorIntel, Family: 6, Model: 143,
			Groups: []Group{{GPUs: []Device{gpu("0000:03:00.0")}, NICs: []Device{nic("0000:04:00.0")}}}}}}
	}
	if _, err := Generate(good()); err != nil {
		t.Fatalf("the base case: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Topology)
		want []string
	}{
		{"no CPU", func(t *Topology) { t.CPUs = nil }, []string{"cpus: a topology needs at least one CPU"}},
		{"name", func(t *Topology) { t.Name = `vm" onload="x` }, []string{`name: "vm\" onload=\"x" is not a letter or digit`}},
		{"upper-case bus ID", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].BusID = "0000:3B:00.0" },
			[]string{"cpus[0].groups[0].gpus[0].bus_id: bus ID \"0000:3B:00.0\" has upper-case hex"}},
		{"short bus ID", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].BusID = "03:00.0" },
			[]string{"cpus[0].groups[0].gpus[0].bus_id: bus ID \"03:00.0\" is not 12 characters dddd:bb:dd.f"}},
		{"NIC function", func(t *Topology) { t.CPUs[0].Groups[0].NICs[0].BusID = "0000:04:00.2" },
			[]string{"cpus[0].groups[0].nics[0].bus_id: 0000:04:00.2: NCCL files an RDMA device under its address with device and function 00.0 (0000:04:00.0"}},
		{"bridge bus", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].BusID = "ffff:ff:01.0" },
			[]string{"cpus[0].groups[0].gpus[0].bus_id: ffff:ff:01.0 is in ffff:ff, the bus of the file's own bridges"}},
		{"duplicate bus ID", func(t *Topology) { t.CPUs[0].Groups[0].NICs[0].BusID = "0000:03:00.0" },
			[]string{"cpus[0].groups[0].nics[0].bus_id: 0000:03:00.0 is also cpus[0].groups[0].gpus[0]"}},
		{"GPU class", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].Class = ClassEthernet },
			[]string{"cpus[0].groups[0].gpus[0].class: 0x020000 is not a GPU class"}},
		{"NIC class", func(t *Topology) { t.CPUs[0].Groups[0].NICs[0].Class = ClassBridge },
			[]string{"cpus[0].groups[0].nics[0].class: 0x060400 is not a NIC class"}},
		{"link", func(t *Topology) { t.CPUs[0].Groups[0].NICs[0].Link = Link{Gen: 7, Width: 3} },
			[]string{"cpus[0].groups[0].nics[0].link: PCIe generation 7 is not 1–6"}},
		{"width", func(t *Topology) { t.CPUs[0].Groups[0].NICs[0].Link = Link{Gen: 4, Width: 3} },
			[]string{"cpus[0].groups[0].nics[0].link: link width x3 is not 1, 2, 4, 8, 12, 16 or 32"}},
		{"label ends the comment", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].Label = "GPU 0 -->" },
			[]string{`cpus[0].groups[0].gpus[0].label: "GPU 0 -->" is not`}},
		{"label with a line break", func(t *Topology) { t.CPUs[0].Groups[0].GPUs[0].Label = "a\nb" },
			[]string{`cpus[0].groups[0].gpus[0].label: "a\nb" is not`}},
		{"group without GPU", func(t *Topology) { t.CPUs[0].Groups[0].GPUs = nil },
			[]string{"cpus[0].groups[0].gpus: a group holds at least one GPU"}},
		{"no CPUs in the set", func(t *Topology) { t.CPUs[0].CPUs = nil }, []string{"cpus[0].cpus: no CPUs"}},
		{"unsorted CPU set", func(t *Topology) { t.CPUs[0].CPUs = CPUSet{3, 1} }, []string{"cpus[0].cpus: 3,1 is not sorted"}},
		{"same NUMA twice, a CPU twice", func(t *Topology) {
			t.CPUs = append(t.CPUs, CPU{NUMA: 0, CPUs: CPUSet{3, 4}, Arch: ArchARM})
		}, []string{"cpus[1].numa: NUMA node 0 is also cpus[0]'s", "cpus[1].cpus: CPU 3 is also in cpus[0]"}},
		{"arch", func(t *Topology) { t.CPUs[0].Arch = "sparc" }, []string{`cpus[0].arch: "sparc" is not x86_64, arm64 or ppc64`}},
		{"vendor", func(t *Topology) { t.CPUs[0].Vendor = "HygonGenuine" }, []string{`cpus[0].vendor: "HygonGenuine" is not GenuineIntel`}},
		{"Intel without family", func(t *Topology) { t.CPUs[0].Family = 0 }, []string{"cpus[0].family: GenuineIntel CPUs need their CPUID family and model"}},
		{"ARM with a vendor", func(t *Topology) { t.CPUs[0].Arch = ArchARM }, []string{"cpus[0].vendor: vendor, family and model are for x86_64 CPUs"}},
		{"too many bridges", func(t *Topology) {
			for i := range 31 {
				t.CPUs[0].Groups = append(t.CPUs[0].Groups, Group{GPUs: []Device{gpu("0001:" + string("0123456789abcdef"[i/16]) + string("0123456789abcdef"[i%16]) + ":00.0")}})
			}
		}, []string{"cpus: 32 groups; the file numbers its bridges ffff:ff:01.0–ffff:ff:1f.0, at most 31"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := good()
			tc.edit(&top)
			out, err := Generate(top)
			var ie *InputError
			if !errors.As(err, &ie) || out != nil {
				t.Fatalf("Generate = %d bytes, %v; want an *InputError", len(out), err)
			}
			for _, w := range tc.want {
				if !slices.ContainsFunc(ie.Problems, func(p string) bool { return strings.HasPrefix(p, w) }) {
					t.Errorf("no problem starting %q in:\n%s", w, err)
				}
			}
			if len(ie.Problems) != len(tc.want) {
				t.Errorf("%d problems, want %d:\n%s", len(ie.Problems), len(tc.want), err)
			}
		})
	}
}
