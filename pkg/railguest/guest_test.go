package railguest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// guest is a vSphere guest's sysfs and procfs as topo_facts reads them,
// staged under a directory (stage) for the boot script and read back for
// TopologyFile.
type guest struct {
	cpuinfo string         // /proc/cpuinfo
	online  string         // /sys/devices/system/cpu/online
	nodes   map[int]string // /sys/devices/system/node/nodeN/cpulist
	devices []Device       // /sys/bus/pci/devices
}

const intelCPU = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\nflags\t\t: fpu vme\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n"

// vm8 is the rails golden case's first VM as its guest shows it: VMware's
// SVGA adapter (a VGA-class device of vendor 0x15ad, not a GPU of the VM),
// the management vmxnet3, PCIe root ports, 8 H100s (3D controllers) and 4
// VFs (rails 0–3, named as netplan's set-name leaves them). With numa the
// guest has two nodes, GPUs 0–3 and rails 0–1 on node 0; else one node.
func vm8(numa bool) guest {
	g := guest{cpuinfo: intelCPU, online: "0-63", nodes: map[int]string{0: "0-63"}}
	node := func(n int) int {
		if !numa {
			return -1
		}
		return n
	}
	if numa {
		g.nodes = map[int]string{0: "0-31", 1: "32-63"}
	}
	g.devices = append(g.devices,
		Device{BusID: "0000:00:0f.0", Vendor: "0x15ad", Class: "0x030000", NUMA: -1},
		Device{BusID: "0000:00:15.0", Vendor: "0x15ad", Class: "0x060400", NUMA: -1},
		Device{BusID: "0000:03:00.0", Vendor: "0x15ad", Class: "0x020000", NUMA: -1, Net: []NetInterface{{"ens192", "00:50:56:8a:00:01"}}},
	)
	for i, b := range []string{"13", "14", "15", "16", "17", "18", "19", "1a"} {
		g.devices = append(g.devices, Device{BusID: "0000:" + b + ":00.0", Vendor: NVIDIAVendor, Class: "0x030200", NUMA: node(i / 4)})
	}
	for r, b := range []string{"0b", "1b", "1c", "1d"} {
		name := "rail" + strconv.Itoa(r)
		if r == 0 {
			name = "enp1f0"
		}
		g.devices = append(g.devices, Device{BusID: "0000:" + b + ":00.0", Vendor: "0x15b3", Class: "0x020000", NUMA: node(r / 2),
			Net: []NetInterface{{name, fmt.Sprintf("00:50:56:8a:10:%02x", r)}}})
	}
	return g
}

// facts is what topo_facts prints for g (on an x86_64 machine): the CPU
// from the first block of cpuinfo.
func (g guest) facts() Facts {
	f := Facts{Machine: "x86_64", Online: g.online, Devices: g.devices}
	for _, line := range strings.Split(g.cpuinfo, "\n") {
		if strings.TrimSpace(line) == "" {
			break
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.Join(strings.Fields(v), "_")
		switch strings.TrimSpace(k) {
		case "vendor_id":
			f.Vendor = v
		case "cpu family":
			f.Family = v
		case "model":
			f.Model = v
		}
	}
	for id := range 64 {
		if l, ok := g.nodes[id]; ok && l != "" {
			f.Nodes = append(f.Nodes, Node{ID: id, CPUList: l})
		}
	}
	return f
}

// stage writes g under root, with skel as the VM's skeleton when not nil.
func (g guest) stage(t *testing.T, root string, skel []byte) {
	t.Helper()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if g.cpuinfo != "" {
		write("proc/cpuinfo", g.cpuinfo)
	}
	if g.online != "" {
		write("sys/devices/system/cpu/online", g.online+"\n")
	}
	for id, l := range g.nodes {
		write(fmt.Sprintf("sys/devices/system/node/node%d/cpulist", id), l+"\n")
	}
	for _, d := range g.devices {
		dir := "sys/bus/pci/devices/" + d.BusID + "/"
		write(dir+"vendor", d.Vendor+"\n")
		write(dir+"class", d.Class+"\n")
		write(dir+"numa_node", strconv.Itoa(d.NUMA)+"\n")
		for _, n := range d.Net {
			write(dir+"net/"+n.Name+"/address", n.MAC+"\n")
		}
	}
	if skel != nil {
		write(SkeletonPath, string(skel))
	}
}
