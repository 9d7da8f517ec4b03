package railguest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/nccltopo"
)

// sh runs script with /bin/sh and RDGGEN_ROOT=root; it returns stdout,
// stderr and the exit status.
func sh(t *testing.T, root, script string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append(os.Environ(), "RDGGEN_ROOT="+root, "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// readFacts runs the fragment's topo_facts on the guest staged at root, as
// the hosts target does, and parses it.
func readFacts(t *testing.T, root string) Facts {
	t.Helper()
	out, errs, code := sh(t, root, "R=$RDGGEN_ROOT\n"+Fragment()+"topo_facts\n")
	if code != 0 || errs != "" {
		t.Fatalf("topo_facts: %d %s", code, errs)
	}
	f, err := ParseFacts([]byte(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return f
}

// topoFile is where the boot script writes under root.
func topoFile(root string) string { return filepath.Join(root, nccltopo.DefaultPath) }

// The boot script and TopologyFile write the same bytes for the same guest,
// whatever its NUMA layout and however its rails are found; topo_facts
// reads what the guest has.
func TestBootScriptEqualsGo(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	skel, err := Skeleton(inv, h)
	if err != nil {
		t.Fatal(err)
	}
	renamed := func(g guest) guest { // the guest calls rail 1 ens256: found by its MAC
		g.devices = slices.Clone(g.devices)
		for i, d := range g.devices {
			if len(d.Net) > 0 && d.Net[0].Name == "rail1" {
				g.devices[i].Net = []NetInterface{{"ens256", d.Net[0].MAC}}
			}
		}
		return g
	}
	for _, tc := range []struct {
		name   string
		g      guest
		macs   []string
		cpus   int    // <cpu> elements
		marker string // a line of the file
	}{
		{"two NUMA nodes", vm8(true), nil, 2, `<cpu numaid="1" affinity="ffffffff,00000000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`},
		{"one node", vm8(false), nil, 1, `<cpu numaid="0" affinity="ffffffff,ffffffff"`},
		{"two nodes, no device node", func() guest { g := vm8(true); g.devices = slices.Clone(g.devices); g.devices[3].NUMA = -1; return g }(), nil, 1,
			`<cpu numaid="0" affinity="ffffffff,ffffffff"`},
		{"no NUMA nodes at all", func() guest { g := vm8(false); g.nodes = nil; g.online = "0-5,8"; return g }(), nil, 1,
			`<cpu numaid="0" affinity="0000013f"`},
		{"one node numbered 1", func() guest { g := vm8(false); g.nodes = map[int]string{1: "0-3"}; return g }(), nil, 1,
			`<cpu numaid="1" affinity="0000000f"`},
		{"by MAC", renamed(vm8(true)), []string{"00:50:56:8a:10:00", "00:50:56:8A:10:01", "00:50:56:8a:10:02", "00:50:56:8a:10:03"}, 2,
			`<pci busid="0000:1b:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>  <!-- rail 1 mlx5_1 -->`},
		{"AMD, 3 nodes, CPUs above 32", func() guest {
			g := vm8(true)
			g.cpuinfo = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n\n"
			g.nodes = map[int]string{0: "0-15,64-79", 1: "16-31,80-95", 2: "32-63"}
			return g
		}(), nil, 3, `<cpu numaid="2" affinity="00000000,ffffffff,00000000" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="17">`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.g.stage(t, root, skel)
			out, errs, code := sh(t, root, string(BootScript(inv, h, tc.macs)))
			if code != 0 || errs != "" || out != "rdggen-nccl-topology: wrote "+nccltopo.DefaultPath+"\n" {
				t.Fatalf("boot script: %d\n%s\n%s", code, out, errs)
			}
			script, err := os.ReadFile(topoFile(root))
			if err != nil {
				t.Fatal(err)
			}
			f := readFacts(t, root)
			want := tc.g.facts()
			f.Machine = want.Machine // uname -m of this machine, not the guest's
			if diff := cmp.Diff(want, f, cmp.Transformer("nodes", func(ns []Node) []Node {
				ns = slices.Clone(ns)
				slices.SortFunc(ns, func(a, b Node) int { return a.ID - b.ID })
				return ns
			}), cmp.Transformer("devices", func(ds []Device) []Device {
				ds = slices.Clone(ds)
				slices.SortFunc(ds, func(a, b Device) int { return strings.Compare(a.BusID, b.BusID) })
				return ds
			})); diff != "" {
				t.Errorf("topo_facts (-staged +read):\n%s", diff)
			}
			goFile, err := TopologyFile(inv, h, tc.macs, readFacts(t, root))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(goFile), string(script)); diff != "" {
				t.Errorf("boot script's file (-Go +script):\n%s", diff)
			}
			if n := strings.Count(string(script), "<cpu "); n != tc.cpus || !strings.Contains(string(script), tc.marker) {
				t.Errorf("%d <cpu>, want %d; want %q in\n%s", n, tc.cpus, tc.marker, script)
			}
			if fs := nccltopo.Validate(script); len(fs) != 0 {
				t.Errorf("Validate: %v", fs)
			}
		})
	}
}

// A second run leaves the file (and its directory, which a container
// mounts) as they are; a changed guest gets the new file in the same
// directory.
func TestBootScriptAgain(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	skel, _ := Skeleton(inv, h)
	root := t.TempDir()
	vm8(false).stage(t, root, skel)
	script := string(BootScript(inv, h, nil))
	if _, errs, code := sh(t, root, script); code != 0 {
		t.Fatal(errs)
	}
	stat := func(p string) *syscall.Stat_t {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t)
	}
	file, dir := stat(topoFile(root)), stat(filepath.Dir(topoFile(root)))
	out, errs, code := sh(t, root, script)
	if code != 0 || errs != "" || out != "rdggen-nccl-topology: "+nccltopo.DefaultPath+" is up to date\n" {
		t.Errorf("second run: %d %q %q", code, out, errs)
	}
	if again := stat(topoFile(root)); again.Ino != file.Ino || again.Mtim != file.Mtim {
		t.Error("the second run rewrote the file")
	}
	// The guest gains vNUMA: the file changes, in the same directory.
	vm8(true).stage(t, root, nil)
	if out, errs, code := sh(t, root, script); code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("after the change: %d %s %s", code, out, errs)
	}
	if d := stat(filepath.Dir(topoFile(root))); d.Ino != dir.Ino {
		t.Error("the directory was replaced: a container that mounts it would keep the old file")
	}
	b, _ := os.ReadFile(topoFile(root))
	if strings.Count(string(b), "<cpu ") != 2 {
		t.Errorf("after the change:\n%s", b)
	}
	if fi, _ := os.Stat(topoFile(root)); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(topoFile(root)))
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// The boot script refuses what TopologyFile refuses, with the same reason,
// writes nothing and leaves a file already there alone; without its
// skeleton it says where the skeleton comes from.
func TestBootScriptRefuses(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	skel, _ := Skeleton(inv, h)
	script := string(BootScript(inv, h, nil))
	for _, tc := range refusals {
		if tc.machine != "" {
			continue // uname -m is this machine's
		}
		t.Run(tc.name, func(t *testing.T) {
			g := vm8(true)
			g.nodes = map[int]string{0: g.nodes[0], 1: g.nodes[1]}
			g.devices = slices.Clone(g.devices)
			tc.edit(&g)
			root := t.TempDir()
			g.stage(t, root, skel)
			out, errs, code := sh(t, root, script)
			if code != 1 || !strings.Contains(errs, "rdggen-nccl-topology: "+tc.want) || !strings.HasSuffix(errs, "rdggen-nccl-topology: "+nccltopo.DefaultPath+" not written\n") || out != "" {
				t.Errorf("exit %d\nstdout %q\nstderr %q\nwant %q", code, out, errs, tc.want)
			}
			if _, err := os.Stat(topoFile(root)); !os.IsNotExist(err) {
				t.Errorf("a file was written: %v", err)
			}
			ents, _ := os.ReadDir(filepath.Dir(topoFile(root)))
			if len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
			if _, err := TopologyFile(inv, h, nil, readFacts(t, root)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Go: %v", err)
			}
		})
	}
	// A file already there stays as it was.
	root := t.TempDir()
	g := vm8(false)
	g.devices = g.devices[:len(g.devices)-1]
	g.stage(t, root, skel)
	if err := os.MkdirAll(filepath.Dir(topoFile(root)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topoFile(root), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := sh(t, root, script); code != 1 {
		t.Errorf("exit %d", code)
	}
	if b, _ := os.ReadFile(topoFile(root)); string(b) != "before\n" {
		t.Errorf("the file became %q", b)
	}
	// No skeleton.
	root = t.TempDir()
	vm8(false).stage(t, root, nil)
	if _, errs, code := sh(t, root, script); code != 1 || !strings.Contains(errs, "no skeleton "+SkeletonPath+": the VM's first boot or rdggen apply --target hosts installs it") {
		t.Errorf("no skeleton: %d %s", code, errs)
	}
}

// The rails-shared case's VMs (4 A100s, 2 rails named by the inventory,
// ens256) get the file from the boot script as from Go.
func TestBootScriptShared(t *testing.T) {
	inv := load(t, "rails-shared")
	h := &inv.Hosts[0]
	skel, err := Skeleton(inv, h)
	if err != nil {
		t.Fatal(err)
	}
	g := guest{cpuinfo: intelCPU, online: "0-31", nodes: map[int]string{0: "0-31"}}
	for _, b := range []string{"0b", "0c", "13", "14"} {
		g.devices = append(g.devices, Device{BusID: "0000:" + b + ":00.0", Vendor: NVIDIAVendor, Class: "0x030200", NUMA: -1})
	}
	g.devices = append(g.devices,
		Device{BusID: "0000:1b:00.0", Vendor: "0x15b3", Class: "0x020000", NUMA: -1, Net: []NetInterface{{"ens224", "00:50:56:01:00:00"}}},
		Device{BusID: "0000:1c:00.0", Vendor: "0x15b3", Class: "0x020000", NUMA: -1, Net: []NetInterface{{"ens256", "00:50:56:01:00:01"}}})
	root := t.TempDir()
	g.stage(t, root, skel)
	if _, errs, code := sh(t, root, string(BootScript(inv, h, nil))); code != 0 {
		t.Fatal(errs)
	}
	script, _ := os.ReadFile(topoFile(root))
	goFile, err := TopologyFile(inv, h, nil, readFacts(t, root))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(script, goFile) || !strings.Contains(string(script), `<pci busid="0000:1c:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="16"/>  <!-- rail 1 mlx5_1 -->`) {
		t.Errorf("script:\n%s\nGo:\n%s", script, goFile)
	}
}

// A guest whose kernel gives a device no numa_node (no NUMA support) and
// no cpu/online: topo_facts reads the device as on no node and says
// nothing on stderr — the shell's "cannot open" of a missing file must not
// reach the facts the hosts target parses (the redirection of stderr comes
// before the file's).
func TestTopoFactsMissingFiles(t *testing.T) {
	root := t.TempDir()
	g := vm8(true)
	g.online = ""
	g.stage(t, root, nil)
	d := g.devices[0]
	if err := os.Remove(filepath.Join(root, "sys/bus/pci/devices", d.BusID, "numa_node")); err != nil {
		t.Fatal(err)
	}
	f := readFacts(t, root) // fails on any stderr
	for _, fd := range f.Devices {
		if fd.BusID == d.BusID && fd.NUMA != -1 {
			t.Errorf("%s: NUMA %d, want -1 (no numa_node)", fd.BusID, fd.NUMA)
		}
	}
}
