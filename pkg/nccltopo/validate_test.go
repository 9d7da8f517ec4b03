package nccltopo

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rdggen/rdggen/internal/golden"
)

// Azure's published files are accepted as they are; the layouts of
// NVIDIA/nccl#749 and #439 are refused, each for its reason, which the
// golden files under testdata/golden/findings show in full.
func TestValidateFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"azure-ndv4-topo.xml", nil},
		{"azure-ndv5-topo.xml", nil},
		{"nccl749-slow-bridge.xml", []string{"error bridge-bottleneck 3:132"}},
		{"nccl439-nics-one-link.xml", []string{"error shared-nic-link 10:50"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fs := Validate(fixture(t, tc.file))
			if diff := cmp.Diff(tc.want, summary(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, lines(tc.file, fs))
			}
			if tc.want != nil {
				golden.Check(t, filepath.Join("testdata", "golden", "findings", strings.TrimSuffix(tc.file, ".xml")+".txt"), []byte(lines(tc.file, fs)))
			}
		})
	}
}

// The reasons name the numbers NCCL computes.
func TestValidateReasons(t *testing.T) {
	fs := Validate(fixture(t, "nccl749-slow-bridge.xml"))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "(2.5 GT/s ×1 = 0.1875 GB/s) is slower than 10 of the 10 devices under it (fastest 0000:01:00.0, 16 GT/s ×16 = 24 GB/s)") ||
		!strings.Contains(fs[0].Source, "NVIDIA/nccl#749") || fs[0].Path != "system/cpu[numaid=0]/pci[busid=ffff:ff:00.0]" {
		t.Errorf("nccl#749: %v", fs)
	}
	fs = Validate(fixture(t, "nccl439-nics-one-link.xml"))
	if len(fs) != 1 || !strings.Contains(fs[0].Message, "2 NICs (0000:54:00.0, 0000:55:00.0, 48.0 GB/s together) sit behind this one link (16.0 GT/s PCIe ×16 = 24 GB/s)") ||
		!strings.Contains(fs[0].Source, "NVIDIA/nccl#439") {
		t.Errorf("nccl#439: %v", fs)
	}
}

// base is a small valid file: one CPU, one bridge, a GPU and a NIC.
const base = `<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="ffff:ff:01.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:03:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>
      <pci busid="0000:04:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>
    </pci>
  </cpu>
</system>
`

const (
	gpuLine    = `<pci busid="0000:03:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>`
	nicLine    = `<pci busid="0000:04:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>`
	bridgeLine = `<pci busid="ffff:ff:01.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">`
	cpuLine    = `<cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`
)

// edit applies old→new replacements (each must occur) to base.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	s := base
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("base has no %q", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// Each rule on a small file: what it finds, as "severity rule" sorted.
func TestValidateRules(t *testing.T) {
	nics2 := func(uplink string) string {
		return edit(t, "    </pci>\n  </cpu>", "    </pci>\n    <pci busid=\"ffff:ff:02.0\" class=\"0x060400\" link_speed=\""+uplink+"\" link_width=\"16\">\n"+
			"      <pci busid=\"0000:05:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"+
			"      <pci busid=\"0000:06:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"+
			"    </pci>\n  </cpu>")
	}
	for _, tc := range []struct {
		name string
		file string
		want []string
	}{
		{"base", base, nil},
		// version
		{"version 2", edit(t, `version="1"`, `version="2"`), []string{"error version"}},
		{"no version", edit(t, `<system version="1">`, `<system>`), []string{"error version"}},
		{"version 1.0", edit(t, `version="1"`, `version="1.0"`), []string{"warning version"}},
		{"version 01", edit(t, `version="1"`, `version="01"`), []string{"warning version"}},
		{"version 0x1", edit(t, `version="1"`, `version="0x1"`), []string{"warning version"}},
		{"no system", "<topology/>\n", []string{"error system", "warning unknown"}},
		{"two systems", base + base, []string{"error duplicate", "error duplicate", "error duplicate", "error duplicate", "error system", "warning affinity"}},
		// link speed and width
		{"speed not in the table", edit(t, gpuLine, strings.Replace(gpuLine, "32.0 GT/s PCIe", "16.0 GT/s", 1)), []string{"error link-speed"}},
		{"2.5 GT/s PCIe is in the table", edit(t, gpuLine, strings.Replace(gpuLine, "32.0 GT/s PCIe", "2.5 GT/s PCIe", 1)), nil},
		{"speed by prefix", edit(t, bridgeLine, strings.Replace(bridgeLine, "32.0 GT/s PCIe", "32 GT/s PCIe", 1)), []string{"warning link-speed"}},
		{"Gen6 old form", edit(t, bridgeLine, strings.Replace(bridgeLine, "32.0 GT/s PCIe", "64 GT/s", 1)), []string{"error bridge-bottleneck", "error link-speed"}},
		{"empty speed", edit(t, nicLine, strings.Replace(nicLine, "32.0 GT/s PCIe", "", 1)), []string{"error link-speed"}},
		{"no speed", edit(t, nicLine, strings.Replace(nicLine, ` link_speed="32.0 GT/s PCIe"`, "", 1)), []string{"error link-speed"}},
		{"no width", edit(t, nicLine, strings.Replace(nicLine, ` link_width="16"`, "", 1)), []string{"error link-width"}},
		{"width 0", edit(t, nicLine, strings.Replace(nicLine, `link_width="16"`, `link_width="0"`, 1)), []string{"warning link-width"}},
		{"width x16", edit(t, nicLine, strings.Replace(nicLine, `link_width="16"`, `link_width="x16"`, 1)), []string{"error link-width"}},
		{"width 6", edit(t, nicLine, strings.Replace(nicLine, `link_width="16"`, `link_width="6"`, 1)), []string{"warning link-width"}},
		// NVIDIA/nccl#749
		{"narrow bridge", edit(t, bridgeLine, strings.Replace(bridgeLine, `link_width="16"`, `link_width="8"`, 1)), []string{"error bridge-bottleneck"}},
		{"slow bridge", edit(t, bridgeLine, strings.Replace(bridgeLine, "32.0 GT/s PCIe", "16.0 GT/s PCIe", 1)), []string{"error bridge-bottleneck"}},
		{"wider but slower bridge", edit(t, bridgeLine, strings.Replace(strings.Replace(bridgeLine, "32.0 GT/s PCIe", "16.0 GT/s PCIe", 1), `link_width="16"`, `link_width="32"`, 1)), nil},
		// NVIDIA/nccl#439
		{"two NICs, one link that holds both", nics2("32.0 GT/s PCIe"), nil},
		{"two NICs, one link too narrow", nics2("16.0 GT/s PCIe"), []string{"error shared-nic-link"}},
		{"two NICs, two links too narrow", edit(t, "    </pci>\n  </cpu>", "    </pci>\n"+
			"    <pci busid=\"ffff:ff:02.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"+
			"      <pci busid=\"ffff:ff:03.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"+
			"        <pci busid=\"0000:05:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"+
			"        <pci busid=\"0000:06:00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\"/>\n"+
			"      </pci>\n    </pci>\n  </cpu>"), []string{"error shared-nic-link"}},
		// bus IDs
		{"upper case", edit(t, "0000:03:00.0", "0000:0A:00.0"), []string{"error bus-id"}},
		{"short", edit(t, "0000:03:00.0", "03:00.0"), []string{"error bus-id"}},
		{"function 8", edit(t, "0000:03:00.0", "0000:03:00.8"), []string{"error bus-id"}},
		{"no busid", edit(t, `<pci busid="0000:03:00.0" `, `<pci `), []string{"error bus-id"}},
		{"twice", edit(t, "0000:04:00.0", "0000:03:00.0"), []string{"error duplicate"}},
		{"NIC at function 1", edit(t, "0000:04:00.0", "0000:04:00.1"), []string{"error nic-address"}},
		{"NIC at device 01", edit(t, "0000:04:00.0", "0000:04:01.0"), []string{"error nic-address"}},
		// classes
		{"no class", edit(t, ` class="0x030200"`, ""), []string{"error class"}},
		{"class in capitals", edit(t, `class="0x030200"`, `class="0X030200"`), []string{"error class"}},
		{"short class", edit(t, `class="0x030200"`, `class="0x0302"`), []string{"error class"}},
		{"unknown class", edit(t, `class="0x030200"`, `class="0x010802"`), []string{"warning class"}},
		{"devices under a GPU", edit(t, gpuLine, strings.TrimSuffix(gpuLine, "/>")+`><pci busid="0000:07:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/></pci>`), []string{"error class"}},
		{"empty bridge", edit(t, "  </cpu>", `    <pci busid="ffff:ff:02.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16"/>`+"\n  </cpu>"), []string{"warning class"}},
		// CPUs
		{"no numaid", edit(t, `numaid="0" `, ""), []string{"error cpu"}},
		{"numaid text", edit(t, `numaid="0"`, `numaid="zero"`), []string{"error cpu"}},
		{"same numaid twice", edit(t, "</system>", `  <cpu numaid="0" affinity="00ff0000" arch="arm64"/>`+"\n</system>"), []string{"error duplicate"}},
		{"arch unknown", edit(t, `arch="x86_64"`, `arch="sparc"`), []string{"error cpu"}},
		{"arch by prefix", edit(t, `arch="x86_64"`, `arch="x86_64_v3"`), []string{"warning cpu"}},
		{"no arch", edit(t, `arch="x86_64" `, ""), []string{"warning cpu"}},
		{"vendor unknown", edit(t, `vendor="GenuineIntel"`, `vendor="HygonGenuine"`), []string{"error cpu"}},
		{"no vendor", edit(t, `vendor="GenuineIntel" `, ""), []string{"warning cpu"}},
		{"family without model", edit(t, ` modelid="143"`, ""), []string{"error cpu"}},
		{"family in words", edit(t, `familyid="6"`, `familyid="six"`), []string{"error cpu"}},
		{"model with a leading 0 and 8", edit(t, `modelid="143"`, `modelid="085"`), []string{"error cpu"}},
		{"no family, no model", edit(t, ` familyid="6" modelid="143"`, ""), []string{"warning cpu"}},
		{"AMD needs no ids", edit(t, `vendor="GenuineIntel" familyid="6" modelid="143"`, `vendor="AuthenticAMD"`), nil},
		{"host_hash", edit(t, `numaid="0"`, `host_hash="0x1234" numaid="0"`), []string{"warning runtime-filled"}},
		{"host_hash and an unknown arch", edit(t, `numaid="0"`, `host_hash="0x1234" numaid="0"`, `arch="x86_64"`, `arch="riscv64"`), []string{"error cpu", "warning runtime-filled"}},
		// affinity
		{"no affinity", edit(t, ` affinity="0000ffff"`, ""), []string{"warning affinity"}},
		{"empty affinity", edit(t, `affinity="0000ffff"`, `affinity=""`), []string{"warning affinity"}},
		{"affinity group too long", edit(t, `affinity="0000ffff"`, `affinity="ffffffffff"`), []string{"error affinity"}},
		{"affinity empty group", edit(t, `affinity="0000ffff"`, `affinity="ff,,ff"`), []string{"error affinity"}},
		{"affinity as a list", edit(t, `affinity="0000ffff"`, `affinity="0-15"`), []string{"error affinity"}},
		{"affinity with 0x", edit(t, `affinity="0000ffff"`, `affinity="0x0000ffff"`), nil},
		{"affinity 33 groups", edit(t, `affinity="0000ffff"`, `affinity="`+strings.Repeat("0,", 32)+`1"`), []string{"error affinity"}},
		{"affinities overlap", edit(t, "</system>", `  <cpu numaid="1" affinity="00ff0000,0000ff00" arch="arm64"/>`+"\n</system>"), []string{"warning affinity"}},
		// what NCCL ignores or fills in
		{"unknown element", edit(t, "  </cpu>", "    <memory size=\"1\"/>\n  </cpu>"), []string{"warning unknown"}},
		{"element in the wrong place", edit(t, "  </cpu>", "    <gpu dev=\"0\"/>\n  </cpu>"), []string{"warning unknown"}},
		{"unknown attribute", edit(t, `<pci busid="0000:04:00.0" `, `<pci numa="0" busid="0000:04:00.0" `), []string{"warning unknown"}},
		{"attribute twice", edit(t, `<pci busid="0000:04:00.0" `, `<pci busid="0000:04:00.0" busid="0000:05:00.0" `), []string{"error duplicate"}},
		{"a <gpu> in the file", edit(t, gpuLine, strings.TrimSuffix(gpuLine, "/>")+`><gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:05:00.0" count="4" tclass="0x068000"/></gpu></pci>`), []string{"warning runtime-filled"}},
		{"a <nic> in the file", edit(t, nicLine, strings.TrimSuffix(nicLine, "/>")+`><nic><net name="mlx5_0" dev="0" speed="400000" port="1" guid="0x1" rail="0"/></nic></pci>`), []string{"warning runtime-filled"}},
		{"GPU without NIC", edit(t, "      "+nicLine+"\n", ""), []string{"warning gpu-without-nic"}},
		{"GPU with a NIC under the CPU", edit(t, "      "+nicLine+"\n", "", "  </cpu>", "    <nic><net name=\"eth0\" dev=\"0\"/></nic>\n  </cpu>"), []string{"warning runtime-filled"}},
		// the reader
		{"comments", "<!-- a -- b --><!---->\n" + edit(t, "  </cpu>", "  <!--\n x=1 -->  </cpu>"), nil},
		{"CR LF", strings.ReplaceAll(base, "\n", "\r\n"), nil},
		{"extra spaces", edit(t, `link_width="16"/>`, `link_width="16"   />`), nil},
		{"single quotes", edit(t, `numaid="0"`, `numaid='0'`), []string{"warning quote"}},
		{"a tab", edit(t, "  <cpu", "\t<cpu"), []string{"error parse"}},
		{"XML declaration", `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + base, []string{"error parse"}},
		{"DOCTYPE", "<!DOCTYPE system>\n" + base, []string{"error parse"}},
		{"line break in a tag", edit(t, `numaid="0" affinity`, "numaid=\"0\"\n    affinity"), []string{"error parse"}},
		{"text", edit(t, "  </cpu>", "  GPUs\n  </cpu>"), []string{"error parse"}},
		{"unquoted value", edit(t, `numaid="0"`, `numaid=0`), []string{"error parse"}},
		{"valueless attribute", edit(t, `<system version="1">`, `<system version="1" debug>`), []string{"error parse"}},
		{"mismatched close", edit(t, "</cpu>", "</cpus>"), []string{"error parse"}},
		{"unclosed", strings.TrimSuffix(base, "</system>\n"), []string{"error parse"}},
		{"unterminated comment", base + "<!-- the end", []string{"error parse"}},
		{"= in a comment's first word", base + "<!--a=b -->", []string{"error parse"}},
		{"stray close", base + "</system>", []string{"error parse"}},
		{"NUL", edit(t, `version="1"`, "version=\"1\x00\""), []string{"error parse"}},
		{"space before >", edit(t, "</cpu>", "</cpu >"), []string{"error parse"}},
		{"/ then space", edit(t, `link_width="16"/>`, `link_width="16"/ >`), []string{"error parse"}},
		{"empty", "", []string{"error system"}},
		// limits
		{"value of 253", edit(t, `<system version="1">`, `<system version="1" name="`+strings.Repeat("a", 253)+`">`), nil},
		{"value of 254", edit(t, `<system version="1">`, `<system version="1" name="`+strings.Repeat("a", 254)+`">`), []string{"error limit"}},
		{"name of 253", edit(t, "</cpu>", "</cpu><"+strings.Repeat("x", 253)+"/>"), []string{"warning unknown"}},
		{"name of 254", edit(t, "</cpu>", "</cpu><"+strings.Repeat("x", 254)+"/>"), []string{"error limit"}},
		{"attribute name of 254", edit(t, `<system version="1">`, `<system version="1" `+strings.Repeat("k", 254)+`="">`), []string{"warning unknown"}},
		{"attribute name of 255", edit(t, `<system version="1">`, `<system version="1" `+strings.Repeat("k", 255)+`="">`), []string{"error limit"}},
		{"16 attributes", edit(t, `link_width="16"/>`, `link_width="16"`+strings.Repeat(" ", 12)+`/>`), nil},
		{"17 attributes", edit(t, `link_width="16"/>`, `link_width="16"`+strings.Repeat(" ", 13)+`/>`), []string{"error limit"}},
		{"17th is busid", edit(t, gpuLine, `<pci`+strings.Repeat(" ", 14)+`class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16" busid="0000:03:00.0"/>`), []string{"error bus-id", "error limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := Validate([]byte(tc.file))
			if diff := cmp.Diff(tc.want, kinds(fs)); diff != "" {
				t.Errorf("findings (-want +got):\n%s\n%s", diff, lines("", fs))
			}
		})
	}
}

// count is how many findings have this severity and rule.
func count(fs []Finding, sev Severity, rule Rule) int {
	n := 0
	for _, f := range fs {
		if f.Severity == sev && f.Rule == rule {
			n++
		}
	}
	return n
}

// NCCL keeps 255 elements of a file (its 256th read fails) and 640
// children of one; NCCL's own additions at run time must fit in 256.
func TestValidateLimits(t *testing.T) {
	gpus := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "      <pci busid=\"0001:%02x:%02x.%d\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>\n", i/256, i/8%32, i%8)
		}
		return b.String()
	}
	// system, cpu, bridge, GPU, NIC: 5; n more GPUs.
	file := func(n int) []byte { return []byte(edit(t, "      "+nicLine+"\n", "      "+nicLine+"\n"+gpus(n))) }

	fs := Validate(file(250)) // 255 elements
	if count(fs, Error, RuleLimit) != 0 || count(fs, Warning, RuleLimit) != 2 {
		t.Errorf("255 elements: want the run-time budget and the 32-children warnings:\n%s", lines("", fs))
	}
	fs = Validate(file(251)) // 256 elements
	if n := count(fs, Error, RuleLimit); n != 1 || !slices.ContainsFunc(fs, func(f Finding) bool {
		return f.Rule == RuleLimit && f.Severity == Error && strings.HasPrefix(f.Message, "the 256th element NCCL keeps") && f.Line == 256
	}) {
		t.Errorf("256 elements: want one limit error on line 256:\n%s", lines("", fs))
	}
	fs = Validate(file(27)) // the bridge has 29 children: no limit
	if count(fs, Warning, RuleLimit)+count(fs, Error, RuleLimit) != 0 {
		t.Errorf("29 children:\n%s", lines("", fs))
	}
	fs = Validate(file(31)) // 33 children
	if count(fs, Warning, RuleLimit) != 1 || count(fs, Error, RuleLimit) != 0 {
		t.Errorf("33 children:\n%s", lines("", fs))
	}
	fs = Validate(file(639)) // 641 children, 644 elements
	if count(fs, Error, RuleLimit) != 2 {
		t.Errorf("641 children: want the children and the element errors:\n%s", lines("", fs))
	}
	deep := strings.Repeat("<a>", maxDepth+1) + strings.Repeat("</a>", maxDepth+1)
	if fs := Validate([]byte(deep)); !slices.Equal(kinds(fs), []string{"error limit"}) {
		t.Errorf("deep nesting: %v", fs)
	}
}

// Positions point at the attribute; Format gives file:line:col and
// escapes what came from the file.
func TestValidatePositionsAndFormat(t *testing.T) {
	fs := Validate([]byte(edit(t, `link_width="16">`, `link_width="8">`)))
	if len(fs) != 1 || fs[0].Line != 3 || fs[0].Col != 48 {
		t.Fatalf("%v", summary(fs))
	}
	fs = Validate([]byte(edit(t, `numaid="0"`, `numaid="0" a`+"\x1b[31m"+`b="1"`)))
	got := fs[0].Format("virtualTopology.xml")
	if strings.ContainsRune(got, 0x1b) || !strings.HasPrefix(got, `virtualTopology.xml:2:19: warning: system/cpu[numaid=0]: NCCL reads no attribute "a\x1b[31mb" on <cpu>`) {
		t.Errorf("%s", got)
	}
	if !HasErrors(Validate([]byte("<system/>"))) || HasErrors(Validate([]byte(base))) {
		t.Error("HasErrors")
	}
	f := Finding{Severity: Error, Rule: RuleSystem, Message: "m", Source: "s"}
	if got := f.String(); got != "error: m [system; s]" {
		t.Errorf("%q", got)
	}
}

// Every fixture has its source in testdata/README.md.
func TestFixturesHaveSources(t *testing.T) {
	readme := string(fixture(t, "README.md"))
	names, _ := filepath.Glob("testdata/*.xml")
	if len(names) < 4 {
		t.Fatalf("fixtures: %v", names)
	}
	for _, n := range names {
		if !strings.Contains(readme, "`"+filepath.Base(n)+"`") {
			t.Errorf("testdata/README.md does not name %s", filepath.Base(n))
		}
	}
}
