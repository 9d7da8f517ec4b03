package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// checkCluster runs `rdggen check` in-process against a namespace cluster
// with the flags a user would pass plus the test's root prefix.
func checkCluster(t *testing.T, c *netnstest.Cluster, extra ...string) (int, string, string) {
	t.Helper()
	args := []string{"check", "-f", c.InventoryPath, "--ssh-user", "root", "--identity", c.Identity,
		"--known-hosts", c.KnownHosts, "--host-root", c.RootTemplate(), "--keys", filepath.Join(c.Dir, "keys")}
	args = append(args, extra...)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen check %s → exit %d in %.2fs\n%s%s", strings.Join(extra, " "), code, time.Since(start).Seconds(), out.String(), errb.String())
	return code, out.String(), errb.String()
}

// gidEntry is one staged GID table slot: the GID as the kernel prints it
// (eight groups, %pI6) and its type; an empty type is an unused slot.
type gidEntry struct{ gid, typ string }

// mappedGID is the RoCE GID of an IPv4 address in the kernel's text form.
func mappedGID(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3])
}

// stageRDMA writes, under host h's root, the sysfs tree of a mlx5 RoCE
// device behind the data interface, laid out as the kernel's
// drivers/infiniband/core/sysfs.c shows it: /sys/class/infiniband/<dev>/
// ports/1/{state,phys_state,link_layer,rate,gids/<i>,gid_attrs/types/<i>,
// gid_attrs/ndevs/<i>}, with the attributes of an unused (zero) slot
// absent (the kernel fails their read), and the net device's
// device/infiniband/<dev> directory the RoCE script looks up.
func stageRDMA(t *testing.T, h *netnstest.Host, dev, iface string, table []gidEntry) {
	t.Helper()
	port := h.File("/sys/class/infiniband/" + dev + "/ports/1")
	if err := os.RemoveAll(filepath.Join(port, "..", "..")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"state": "4: ACTIVE\n", "phys_state": "5: LinkUp\n", "link_layer": "Ethernet\n", "rate": "100 Gb/sec (4X EDR)\n",
	}
	for i, e := range table {
		files[fmt.Sprintf("gids/%d", i)] = e.gid + "\n"
		if e.typ != "" {
			files[fmt.Sprintf("gid_attrs/types/%d", i)] = e.typ + "\n"
			files[fmt.Sprintf("gid_attrs/ndevs/%d", i)] = iface + "\n"
		}
	}
	for name, content := range files {
		p := filepath.Join(port, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(h.File("/sys/class/net/"+iface+"/device/infiniband/"+dev), 0o755); err != nil {
		t.Fatal(err)
	}
}

// guest is what stageGuest lays out under a host's root: a VM's view of
// its GPUs and GPU stack, as the kernel shows it in sysfs and procfs.
type guest struct {
	// GPUs on the PCI bus; Taken of them by the NVIDIA driver (the first
	// ones), the others with BAR1 unassigned (too small an MMIO window).
	GPUs, Taken int
	// BAR1MB of each GPU the kernel assigned it to (MiB).
	BAR1MB int
	BIOS   bool // no /sys/firmware/efi
	// NoDriver: no NVIDIA kernel module.
	NoDriver bool
	// Peermem: nvidia_peermem loaded (and MLNX_OFED's memory_peers file);
	// else the module is installed but not loaded.
	Peermem bool
	// Open: the driver is NVIDIA's open GPU kernel module (its
	// /proc/driver/nvidia/version says so); else the proprietary one.
	Open bool
	// Kernel is /proc/sys/kernel/osrelease, absent when "".
	Kernel string
	// Model is what the driver reports for each GPU; "" is the guide's
	// "Tesla V100-PCIE-16GB".
	Model string
}

// healthyGuest is a VM with n V100 16 GB, ready for GPUDirect RDMA.
func healthyGuest(n int) guest { return guest{GPUs: n, Taken: n, BAR1MB: 16 << 10, Peermem: true} }

// stageGuest writes g under host h's root as drivers/pci/pci-sysfs.c,
// the NVIDIA driver (/proc/driver/nvidia/gpus/<bdf>, /sys/module/nvidia),
// nvidia-peermem and MLNX_OFED's peer-memory API show it, plus the verbs
// device of the RDMA device dev and the NVIDIA Container Toolkit's hook.
// A GPU's resource file has a line per BAR ("start end flags", hex):
// BAR0 16 MiB registers, BAR1 the frame buffer (zero when unassigned),
// BAR3 32 MiB.
func stageGuest(t *testing.T, h *netnstest.Host, dev string, g guest) {
	t.Helper()
	for _, d := range []string{"/sys/bus/pci", "/sys/firmware", "/sys/module", "/sys/kernel/mm", "/sys/class/infiniband_verbs", "/proc/driver", "/proc/sys", "/usr/bin", "/lib/modules"} {
		if err := os.RemoveAll(h.File(d)); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"/sys/class/infiniband_verbs/uverbs0/ibdev":         dev + "\n",
		"/usr/bin/nvidia-container-runtime-hook":            "#!/bin/sh\n",
		"/lib/modules/6.1.0/updates/dkms/nvidia-peermem.ko": "",
	}
	if !g.BIOS {
		files["/sys/firmware/efi/fw_platform_size"] = "64\n"
	}
	if !g.NoDriver {
		files["/sys/module/nvidia/version"] = "535.183.06\n"
		files["/proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.06  Wed Jun 26 06:51:59 UTC 2024\n"
		if g.Open {
			files["/proc/driver/nvidia/version"] = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.183.06  Release Build  (dvs-builder@U16-I3-B03-4-3)  Wed Jun 26 06:51:59 UTC 2024\n"
		}
	}
	if g.Kernel != "" {
		files["/proc/sys/kernel/osrelease"] = g.Kernel + "\n"
	}
	model := g.Model
	if model == "" {
		model = "Tesla V100-PCIE-16GB"
	}
	if g.Peermem {
		files["/sys/module/nvidia_peermem/version"] = "535.183.06\n"
		files["/sys/kernel/mm/memory_peers/nv_mem/version"] = "1.3\n"
	}
	for i := 0; i < g.GPUs; i++ {
		bdf := fmt.Sprintf("0000:%02x:00.0", 0x0b+8*i)
		base := uint64(0xf000000000) + uint64(i)<<36
		bar1 := fmt.Sprintf("0x%016x 0x%016x 0x000000000014220c", base, base+uint64(g.BAR1MB)<<20-1)
		if i >= g.Taken {
			bar1 = "0x0000000000000000 0x0000000000000000 0x0000000000000000"
		} else if !g.NoDriver {
			files["/proc/driver/nvidia/gpus/"+bdf+"/information"] = "Model: \t\t " + model + "\nBus Location: \t " + bdf + "\n"
		}
		dir := "/sys/bus/pci/devices/" + bdf + "/"
		files[dir+"vendor"] = "0x10de\n"
		files[dir+"device"] = "0x1db4\n"
		files[dir+"class"] = "0x030200\n"
		files[dir+"resource"] = fmt.Sprintf("0x%016x 0x%016x 0x0000000000040200\n%s\n", 0xfd000000+i<<24, 0xfdffffff+i<<24, bar1) +
			"0x0000000000000000 0x0000000000000000 0x0000000000000000\n" +
			fmt.Sprintf("0x%016x 0x%016x 0x000000000014220c\n", base+1<<35, base+1<<35+32<<20-1) +
			strings.Repeat("0x0000000000000000 0x0000000000000000 0x0000000000000000\n", 3)
	}
	// A non-GPU NVIDIA function (the GPU's audio or USB controller) and a
	// VMware bridge, which the check skips.
	files["/sys/bus/pci/devices/0000:0b:00.1/vendor"] = "0x10de\n"
	files["/sys/bus/pci/devices/0000:0b:00.1/class"] = "0x040300\n"
	files["/sys/bus/pci/devices/0000:00:15.0/vendor"] = "0x15ad\n"
	files["/sys/bus/pci/devices/0000:00:15.0/class"] = "0x060400\n"
	for name, content := range files {
		p := h.File(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := exefile.Write(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// roceTable is a mlx5 port's GID table with RoCE v1 and v2 enabled, as
// NCCL's documentation describes the usual order: link-local v1 and v2,
// then the IPv4 address as v1 and v2 (index v2At), the rest unused.
func roceTable(addr netip.Addr, v2At int) []gidEntry {
	const zero = "0000:0000:0000:0000:0000:0000:0000:0000"
	ll := "fe80:0000:0000:0000:0250:56ff:fe00:0001"
	t := make([]gidEntry, 16)
	for i := range t {
		t[i] = gidEntry{gid: zero}
	}
	t[0], t[1] = gidEntry{ll, "IB/RoCE v1"}, gidEntry{ll, "RoCE v2"}
	t[2] = gidEntry{mappedGID(addr), "IB/RoCE v1"}
	t[v2At] = gidEntry{mappedGID(addr), "RoCE v2"}
	return t
}

// `rdggen check --target hosts` on 3 namespace hosts with real sshd and a
// staged mlx5 sysfs tree each: after an apply every check passes (exit 0);
// with ns-02's IPv4 RoCE v2 GID at index 5 instead of 3, exactly one check
// fails, on ns-02, naming index 5 and the fix; a route removed on ns-03 fails
// its routes check with the fix; nothing is changed by the checks.
func TestCheckHosts(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	// The GPU stack is there before apply, which writes nvidia-peermem's
	// modules-load.d file only where the module is installed.
	for _, h := range c.Hosts {
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(1))
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
	}
	code, out, errOut := checkCluster(t, c, "--target", "hosts")
	if code != exitOK || !strings.Contains(errOut, "rdggen check: all ") || strings.Contains(out, "FAILED") || strings.Contains(out, "COULD NOT TELL") {
		t.Fatalf("healthy cluster: exit %d", code)
	}
	for i, h := range c.Hosts {
		for _, want := range []string{
			fmt.Sprintf("%s: gid mlx5_0 port 1: passed (index 3: RoCE v2 %s on %s)", h.Name, h.Data.Addr(), inv.Hosts[i].DataInterface),
			h.Name + ": port-state mlx5_0 port 1: passed (4: ACTIVE, link layer Ethernet)",
			h.Name + ": routes: passed (2 route(s) to the other hosts' container subnets via " + inv.Hosts[i].DataInterface + ")",
			h.Name + ": nat: passed", h.Name + ": firewall: passed", h.Name + ": forwarding: passed", h.Name + ": mtu: passed",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the healthy output lacks %q", want)
			}
		}
	}
	if !strings.Contains(out, "hosts: 57 passed, 0 failed, 0 could not tell") {
		t.Errorf("the tally is not 19 checks × 3 hosts")
	}

	// ns-02: the IPv4 RoCE v2 GID at index 5 (index 3 unused) is fine — the
	// launch reads it — but an address with a RoCE v1 GID only is not.
	h2 := c.Hosts[1]
	stageRDMA(t, h2, inv.Horovod.HCA, inv.Hosts[1].DataInterface, roceTable(h2.Data.Addr(), 5))
	if code, out, _ := checkCluster(t, c, "--target", "hosts"); code != exitOK ||
		!strings.Contains(out, fmt.Sprintf("ns-02: gid mlx5_0 port 1: passed (index 5: RoCE v2 %s on data0)", h2.Data.Addr())) {
		t.Errorf("GID at index 5: exit %d", code)
	}
	v1only := roceTable(h2.Data.Addr(), 3)
	v1only[3] = gidEntry{"0000:0000:0000:0000:0000:0000:0000:0000", ""}
	stageRDMA(t, h2, inv.Horovod.HCA, inv.Hosts[1].DataInterface, v1only)
	code, out, errOut = checkCluster(t, c, "--target", "hosts", "-o", "json")
	if code != exitInvalid {
		t.Fatalf("no RoCE v2 GID: exit %d, want %d", code, exitInvalid)
	}
	var doc readiness.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	var failed []readiness.Result
	for _, r := range doc.Results {
		if r.Status != readiness.Passed {
			failed = append(failed, r)
		}
	}
	want := readiness.Result{Target: "hosts", Machine: "ns-02", Check: "gid", Subject: "mlx5_0 port 1", Status: readiness.Failed,
		Found: fmt.Sprintf("no RoCE v2 GID of %s (GID table: index 0: IB/RoCE v1 fe80::250:56ff:fe00:1 on data0, index 1: RoCE v2 fe80::250:56ff:fe00:1 on data0, index 2: IB/RoCE v1 %s on data0)",
			h2.Data.Addr(), h2.Data.Addr()),
		Expected: fmt.Sprintf("a RoCE v2 GID of %s (rdggen run and run.sh read its index at launch for NCCL_IB_GID_INDEX)", h2.Data.Addr()),
		Fix:      "give data0 the address " + h2.Data.String() + " (the GID table follows the interface's addresses), and enable RoCE v2 on mlx5_0"}
	if len(failed) != 1 || failed[0] != want {
		t.Errorf("failures %+v\nwant exactly %+v", failed, want)
	}
	if doc.Schema != readiness.SchemaCheck || doc.OK || len(doc.Targets) != 1 || doc.Targets[0].Failed != 1 || doc.Targets[0].Passed != 56 {
		t.Errorf("document: %+v", doc.Targets)
	}
	if !strings.Contains(errOut, "ns-02: gid mlx5_0 port 1: FAILED: found no RoCE v2 GID of "+h2.Data.Addr().String()) ||
		!strings.Contains(errOut, "rdggen check: not ready: ns-02 gid mlx5_0 port 1") {
		t.Errorf("the text (stderr with -o json) does not name the failure")
	}
	stageRDMA(t, h2, inv.Horovod.HCA, inv.Hosts[1].DataInterface, roceTable(h2.Data.Addr(), 3))

	// ns-03 loses its route to ns-01's containers.
	h3 := c.Hosts[2]
	dst := inv.Hosts[0].Subnet.String()
	if out, err := c.Exec(h3.NS, "ip", "route", "del", dst); err != nil {
		t.Fatalf("ip route del: %v %s", err, out)
	}
	code, out, _ = checkCluster(t, c, "--target", "hosts")
	wantLine := fmt.Sprintf("ns-03: routes route %s: FAILED: found absent; expected via %s dev %s; fix: rdggen apply --target hosts (or run hosts/ns-03/routes.sh on ns-03)",
		dst, c.Hosts[0].Data.Addr(), inv.Hosts[2].DataInterface)
	if code != exitInvalid || !strings.Contains(out, wantLine) || strings.Count(out, "FAILED") != 1 {
		t.Errorf("missing route: exit %d, want one failure %q", code, wantLine)
	}
	// The check changed nothing: the route is still missing.
	if routes, _ := c.Exec(h3.NS, "ip", "-4", "route", "show", dst); strings.TrimSpace(routes) != "" {
		t.Errorf("check put the route back: %s", routes)
	}
}

// The guest checks of `rdggen check --target hosts` on 3 namespace VMs
// with 2 GPUs each and staged sysfs/procfs trees: a healthy VM whose RoCE v2
// GID is at index 5 passes; a VM whose second GPU the kernel could not give
// its BAR1 (the driver took one of two), a VM where nvidia-peermem is
// installed but not loaded, a VM booted BIOS and a VM whose GPUs have a
// larger BAR1 than the inventory assumes each fail exactly their check,
// with the fix.
func TestCheckGuest(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3, GPUs: 2})
	inv := c.Inventory
	for _, h := range c.Hosts { // the driver before apply (see TestCheckHosts)
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(2))
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	stage := func(i, gidAt int, g guest) {
		h := c.Hosts[i]
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), gidAt))
		stageGuest(t, h, inv.Horovod.HCA, g)
	}
	failures := func(want ...string) {
		t.Helper()
		code, out, _ := checkCluster(t, c, "--target", "hosts")
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ": FAILED: ") || strings.Contains(l, "COULD NOT TELL") {
				got = append(got, strings.TrimPrefix(l, "[hosts] "))
			}
		}
		if diff := cmp.Diff(want, got); diff != "" || (code == exitOK) != (len(want) == 0) {
			t.Errorf("exit %d; failures (-want +got):\n%s", code, diff)
		}
	}
	stage(0, 5, healthyGuest(2))
	hidden := healthyGuest(2)
	hidden.Taken = 1
	stage(1, 3, hidden)
	noPeermem := healthyGuest(2)
	noPeermem.Peermem = false
	stage(2, 3, noPeermem)
	failures(
		"ns-02: gpus: FAILED: found 2 NVIDIA GPU(s) on the PCI bus (0000:0b:00.0, 0000:13:00.0), 1 taken by the driver; BAR1 unassigned on 0000:13:00.0; "+
			"expected 2 (the inventory's gpus), each taken by the NVIDIA driver; "+
			"fix: the 64-bit MMIO window may be too small (pciPassthru.64bitMMIOSizeGB = 64): check the VM's keys and firmware (rdggen check --target esxi, then rdggen apply --target esxi)",
		"ns-03: peermem: FAILED: found nvidia-peermem installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: "+
			"Tesla V100-PCIE-16GB is Volta (the open GPU kernel modules drive Turing and later)); "+
			"expected nvidia_peermem loaded (nv_peer_mem with drivers before 470), only one of them; or DMA-BUF (open GPU kernel modules, Turing or later, Linux ≥ 5.12); "+
			"fix: rdggen apply --target hosts (loads it and keeps it loaded at boot through /etc/modules-load.d/60-rdggen-nvidia-peermem.conf)",
	)
	code, out, _ := checkCluster(t, c, "--target", "hosts")
	for _, want := range []string{
		"ns-01: gid mlx5_0 port 1: passed (index 5: RoCE v2 " + c.Hosts[0].Data.Addr().String() + " on data0)",
		"ns-01: efi: passed (/sys/firmware/efi present: EFI firmware)",
		"ns-01: gpus: passed (2 NVIDIA GPU(s) on the PCI bus (0000:0b:00.0, 0000:13:00.0), 2 taken by the driver)",
		"ns-01: bar1 0000:13:00.0: passed (BAR1 16 GB)",
		"ns-01: driver: passed (NVIDIA driver 535.183.06)",
		"ns-01: peermem: passed (nvidia_peermem loaded (version 535.183.06); /sys/kernel/mm/memory_peers/nv_mem/version present: every NCCL sees it)",
		"ns-01: rdma-verbs mlx5_0: passed (/sys/class/infiniband_verbs lists mlx5_0)",
		"ns-01: nvidia-runtime: passed (NVIDIA Container Toolkit hook /usr/bin/nvidia-container-runtime-hook (docker run --gpus))",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("exit %d; no line %q", code, want)
		}
	}

	// Round two: ns-03 booted BIOS; ns-02's GPUs have a 32 GB BAR1 where
	// the inventory's V100-PCIE-16GB has 16 GB, and one did not get it.
	bios := healthyGuest(2)
	bios.BIOS = true
	stage(2, 3, bios)
	big := healthyGuest(2)
	big.Taken, big.BAR1MB = 1, 32<<10
	stage(1, 3, big)
	failures(
		"ns-02: gpus: FAILED: found 2 NVIDIA GPU(s) on the PCI bus (0000:0b:00.0, 0000:13:00.0), 1 taken by the driver; BAR1 unassigned on 0000:13:00.0; "+
			"expected 2 (the inventory's gpus), each taken by the NVIDIA driver; "+
			"fix: the 64-bit MMIO window may be too small (pciPassthru.64bitMMIOSizeGB = 64, needs 128): check the VM's keys and firmware (rdggen check --target esxi, then rdggen apply --target esxi), and set gpus[].bar1_gb to the BAR1 the GPUs have",
		"ns-02: bar1 0000:0b:00.0: FAILED: found BAR1 32 GB; expected BAR1 16 GB (V100-PCIE-16GB, known): the MMIO window is sized for the smaller one; "+
			"fix: set gpus[0].bar1_gb: 32 in the inventory (pciPassthru.64bitMMIOSizeGB becomes 128), then rdggen apply --target esxi",
		"ns-03: efi: FAILED: found no /sys/firmware/efi: the VM booted with BIOS firmware; "+
			"expected EFI firmware (on BIOS the 64-bit MMIO window is never mapped, so the GPUs' BAR1 has no room); "+
			"fix: set the VM's firmware to EFI (rdggen check --target esxi, then rdggen apply --target esxi); a guest installed in BIOS mode must be reinstalled in EFI mode",
	)

	// No NVIDIA driver at all: the GPU checks fail with the driver's fix,
	// and the check still needs no GPU to run.
	stage(2, 3, guest{GPUs: 2, Taken: 2, BAR1MB: 16 << 10, NoDriver: true})
	stage(1, 3, healthyGuest(2))
	failures(
		"ns-03: gpus: FAILED: found 2 NVIDIA GPU(s) on the PCI bus (0000:0b:00.0, 0000:13:00.0), no NVIDIA driver loaded; "+
			"expected 2 (the inventory's gpus), each taken by the NVIDIA driver; fix: install the NVIDIA driver (≥ 470, after MLNX_OFED: see the driver check)",
		"ns-03: driver: FAILED: found no NVIDIA kernel module loaded (/sys/module/nvidia); expected the NVIDIA driver loaded (≥ 470 ships nvidia-peermem); "+
			"fix: install the NVIDIA driver after MLNX_OFED (its nvidia-peermem needs MLNX_OFED's peer-memory API), then reboot or modprobe nvidia",
		"ns-03: peermem: FAILED: found nvidia-peermem installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: V100-PCIE-16GB is Volta (the open GPU kernel modules drive Turing and later)); "+
			"expected nvidia_peermem loaded (nv_peer_mem with drivers before 470), only one of them; or DMA-BUF (open GPU kernel modules, Turing or later, Linux ≥ 5.12); "+
			"fix: rdggen apply --target hosts (loads it and keeps it loaded at boot through /etc/modules-load.d/60-rdggen-nvidia-peermem.conf)",
	)
}

// `rdggen check` of the whole cluster at once, the way a user runs it:
// the switch (onyxsim), vCenter (vcsim over HTTPS, hosts that need a reboot)
// and 3 namespace VMs over real sshd with staged mlx5 sysfs trees. Brought up
// with apply (switch, esxi and hosts), the ESXi hosts rebooted, the VMs on:
// every check passes and check exits 0. Then one ESXi host is left pending
// and PFC is switched off on one switch port: exit 1, exactly those
// failures, each with its fix; nothing was changed by the checks.
func TestCheckWholeCluster(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	sw := onyxsim.Start(t, onyxsim.Options{Hostname: "sw"})
	sim, err := vcsimtest.New(inv, vcsimtest.Options{NeedReboot: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	esxiModules = sim.Modules
	t.Cleanup(func() { esxiModules = nil })

	dir := t.TempDir()
	b, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), "onyx: 3.6.8190}", "onyx: 3.6.8190, mgmt: 127.0.0.1}", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	kh := filepath.Join(dir, "known_hosts")
	hosts, _ := os.ReadFile(c.KnownHosts)
	if err := os.WriteFile(kh, append(hosts, []byte("\n"+sw.KnownHostsLine()+"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(sw.Addr, ":")
	env := map[string]string{envSwitchPassword: "admin", "GOVC_URL": sim.URL.String(), "GOVC_USERNAME": vcsimtest.Username,
		"GOVC_PASSWORD": vcsimtest.Password, "GOVC_TLS_CA_CERTS": sim.CAFile}
	rdggen := func(args ...string) (int, string, string) {
		t.Helper()
		args = append(args, "-f", file, "--switch-ssh-port", port, "--ssh-user", "root", "--identity", c.Identity,
			"--known-hosts", kh, "--host-root", c.RootTemplate())
		var out, errb bytes.Buffer
		start := time.Now()
		code := run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
		t.Logf("rdggen %s → exit %d in %.2fs\n%s%s", args[0], code, time.Since(start).Seconds(), out.String(), errb.String())
		return code, out.String(), errb.String()
	}
	for _, h := range c.Hosts { // the driver before apply (see TestCheckHosts)
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(1))
	}
	apply := func() {
		t.Helper()
		if code, _, _ := rdggen("apply", "--yes", "--target", "switch,esxi,hosts", "--backup-dir", filepath.Join(dir, "bk"),
			"--docker-restart", c.DockerRestartCommand(), "--docker-validate", c.DockerValidateCommand()); code != exitOK {
			t.Fatalf("apply: exit %d", code)
		}
	}
	apply()
	for _, h := range inv.ESXiHosts() {
		sim.Reboot(h)
	}
	apply() // the devices that waited for the reboot
	for i := range inv.Hosts {
		if err := sim.PowerOn(context.Background(), inv.Hosts[i].VM); err != nil {
			t.Fatal(err)
		}
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(1))
	}

	start := time.Now()
	code, out, errOut := rdggen("check", "--target", "switch,esxi,hosts", "-o", "json")
	secs := time.Since(start).Seconds()
	var doc readiness.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	var tally readiness.Tally
	tally.Add(doc.Results...)
	t.Logf("healthy cluster: %s in %.2fs (targets: %+v)", tally, secs, doc.Targets)
	if code != exitOK || !doc.OK || !tally.OK() || len(doc.Targets) != 3 {
		t.Fatalf("healthy cluster: exit %d, %s", code, tally)
	}
	for _, tg := range doc.Targets {
		if tg.Passed == 0 || tg.Error != "" {
			t.Errorf("target %+v", tg)
		}
	}
	if !strings.Contains(errOut, fmt.Sprintf("rdggen check: all %d check(s) passed", tally.Passed)) {
		t.Errorf("no final line saying all passed")
	}

	// Broken: ns-02's ESXi host pending a reboot (vCenter says so), PFC off
	// on ns-03's switch port.
	pending := inv.Hosts[1].ESXi
	sim.SetRebootRequired(pending, true)
	p3 := inv.Hosts[2].Data.Port.String()
	if err := sw.Configure("interface ethernet " + p3 + " no dcb priority-flow-control mode force"); err != nil {
		t.Fatal(err)
	}
	received := len(sw.Received())
	code, out, _ = rdggen("check", "--target", "switch,esxi,hosts")
	if code != exitInvalid {
		t.Errorf("broken cluster: exit %d, want %d", code, exitInvalid)
	}
	var failedLines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "FAILED") || strings.Contains(l, "COULD NOT TELL") {
			failedLines = append(failedLines, l)
		}
	}
	pfcFix := "interface ethernet " + p3 + " dcb priority-flow-control mode on force"
	var sawPFC, sawReboot bool
	for _, l := range failedLines {
		switch {
		case strings.HasPrefix(l, "[switch] sw: pfc Eth"+p3+": FAILED") && strings.Contains(l, "fix: "+pfcFix):
			sawPFC = true
		case strings.HasPrefix(l, "[switch] sw: config "):
			if !strings.Contains(l, pfcFix) {
				t.Errorf("switch drift line without the fix: %s", l)
			}
		case strings.HasPrefix(l, "[esxi] "+pending+": reboot: FAILED"):
			sawReboot = strings.Contains(l, "reboot ESXi host "+pending+" (reboot needed")
		default:
			t.Errorf("unexpected failure: %s", l)
		}
	}
	if !sawPFC || !sawReboot {
		t.Errorf("failures %q: want PFC on Eth%s with %q and %s's pending reboot", failedLines, p3, pfcFix, pending)
	}
	if n := len(sw.Received()); n != received {
		t.Errorf("check sent %d configuration command(s) to the switch", n-received)
	}
}

// check's usage errors come before anything is read or contacted: -f is
// required, apply-only flags are refused, unknown targets and formats too;
// its help lists every target with what it reads and its checks, and hides
// apply's flags.
func TestCheckUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check"}, "rdggen: check needs -f cluster.yaml"},
		{[]string{"check", "-f", "x.yaml", "--backup-dir", "b"}, "rdggen: --backup-dir is a flag of apply: check changes nothing"},
		{[]string{"check", "-f", "x.yaml", "--docker-restart", "none"}, "rdggen: --docker-restart is a flag of apply"},
		{[]string{"check", "-f", "x.yaml", "--vm-tools-timeout", "1m"}, "rdggen: --vm-tools-timeout is a flag of apply: check changes nothing"},
		{[]string{"check", "-f", "x.yaml", "-o", "yaml"}, `rdggen: -o "yaml": check's -o is the output format: text or json`},
		{[]string{"check", "-f", "x.yaml", "--target", "fabric"}, `rdggen: unknown target "fabric"`},
		{[]string{"check", "-f", "x.yaml", "--parallel", "0"}, "rdggen: --parallel must be at least 1"},
		{[]string{"check", "-f", "x.yaml", "--dry-run"}, "unknown flag: --dry-run"},
	} {
		code, _, stderr := rdggen(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("rdggen %s: exit %d, stderr %q, want %d and %q", strings.Join(tc.args, " "), code, stderr, exitUsage, tc.want)
		}
	}
	code, stdout, _ := rdggen(t, "check", "--help")
	if code != exitOK {
		t.Fatalf("check --help: exit %d", code)
	}
	for _, want := range []string{"  switch   each switch, read-only", "   ONYX, over SSH (show commands only):", "    pfc             per data port and fabric uplink: PFC on",
		"   Cumulus Linux, through the NVUE REST API (GET requests only):", "    qos-roce        qos roce operational = applied", "  esxi     vCenter's view of each ESXi host",
		"    p2p             per VM: the PCIe peer-to-peer keys", "  hosts    each VM over SSH", "    peermem         nvidia-peermem", "  workers  each worker container",
		"    gdr-level       NCCL_NET_GDR_LEVEL", "--switch-timeout", "--vcenter-timeout", "--host-root", "--keys"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check --help lacks %q", want)
		}
	}
	for _, hidden := range []string{"--backup-dir", "--docker-restart", "--worker-timeout", "--vm-tools-timeout", "--yes", "--dry-run"} {
		if strings.Contains(stdout, hidden) {
			t.Errorf("check --help shows %s", hidden)
		}
	}
}

// checkSources are the packages whose results `rdggen check` prints, by
// the target they serve ("" for every target).
var checkSources = map[string]string{
	"../../internal/engines/onyxapply":   readiness.TargetSwitch.String(),
	"../../internal/engines/esxiapply":   readiness.TargetESXi.String(),
	"../../internal/engines/hostapply":   readiness.TargetHosts.String(),
	"../../internal/engines/workerapply": readiness.TargetWorkers.String(),
	"../../internal/engines/nvueapply":   readiness.TargetSwitch.String(),
	"../../internal/transport/remote":    "",
	".":                                  "",
}

// emittedChecks reads the check names the code can emit from its source:
// every exported Check… string constant of the packages of checkSources,
// and the Check field of every readiness.Result literal there that is
// written as a string literal. Test files are skipped.
func emittedChecks(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	add := func(target, name string) {
		if !slices.Contains(out[target], name) {
			out[target] = append(out[target], name)
		}
	}
	for dir, target := range checkSources {
		fset := token.NewFileSet()
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		var files []*ast.File
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GenDecl:
					if n.Tok != token.CONST {
						return true
					}
					for _, spec := range n.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, id := range vs.Names {
							if !strings.HasPrefix(id.Name, "Check") || !id.IsExported() || i >= len(vs.Values) {
								continue
							}
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								add(target, v)
							}
						}
					}
				case *ast.CompositeLit:
					sel, ok := n.Type.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "readiness" || sel.Sel.Name != "Result" {
						return true
					}
					for _, e := range n.Elts {
						kv, ok := e.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						if key, ok := kv.Key.(*ast.Ident); !ok || key.Name != "Check" {
							continue
						}
						if lit, ok := kv.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, _ := strconv.Unquote(lit.Value)
							t.Errorf("%s: check name %q written as a literal: make it a Check constant", fset.Position(lit.Pos()), v)
							add(target, v)
						}
					}
				}
				return true
			})
		}
	}
	return out
}

// `rdggen check --help` lists every check name the code can emit (read
// from the Check constants of the packages that emit them) under the
// target that emits it, and no name the code does not emit; connect,
// which every target has, is named once for all of them. The table of
// checks in docs/check.md names every one as well.
func TestCheckHelpNamesEveryCheck(t *testing.T) {
	code, help, _ := rdggen(t, "check", "--help")
	if code != exitOK {
		t.Fatalf("check --help: exit %d", code)
	}
	// The help's check lines, by target: "    NAME  what" under "  TARGET  …".
	listed := map[string][]string{}
	target := ""
	for _, l := range strings.Split(help, "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 0:
		case strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "    ") && strings.HasSuffix(l, ":") && target != "":
			// a switch OS's heading ("   Cumulus Linux, …:") within the target
		case strings.HasPrefix(l, "    ") && target != "":
			listed[target] = append(listed[target], f[0])
		case strings.HasPrefix(l, "  ") && slices.Contains(applyplan.Targets, applyplan.TargetName(f[0])):
			target = f[0]
		default:
			target = ""
		}
	}
	emitted := emittedChecks(t)
	n := 0
	for tg, names := range emitted {
		for _, name := range names {
			n++
			everyTarget := strings.Contains(help, "Every target also reports "+name+" ")
			switch {
			case tg == "" && !everyTarget:
				t.Errorf("check --help does not say that every target reports %q", name)
			case tg != "" && !everyTarget && !slices.Contains(listed[tg], name):
				t.Errorf("check --help does not list %s's check %q (it lists %v)", tg, name, listed[tg])
			}
		}
	}
	for tg, names := range listed {
		for _, name := range names {
			if !slices.Contains(emitted[tg], name) {
				t.Errorf("check --help lists %s's check %q, which no code emits", tg, name)
			}
		}
	}
	// docs/check.md's table of checks names them too, under their target (any: all).
	readme, err := os.ReadFile("../../docs/check.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(readme), "\n") {
		for _, tg := range []string{"switch", "esxi", "hosts", "workers", "any"} {
			// "| switch | `…`" or, per switch OS, "| switch (ONYX) | `…`"
			if strings.HasPrefix(l, "| "+tg+" | `") || strings.HasPrefix(l, "| "+tg+" (") {
				_, rest, _ := strings.Cut(strings.TrimPrefix(l, "| "), " | ")
				cell, _, _ := strings.Cut(rest, " | ")
				rows[tg] += cell + " "
			}
		}
	}
	for tg, names := range emitted {
		for _, name := range names {
			if !strings.Contains(rows[tg]+rows["any"], "`"+name+"`") {
				t.Errorf("docs/check.md's table of checks lacks %q (target %q; \"\" is every target)", name, tg)
			}
		}
	}
	t.Logf("%d check name(s) emitted, %d target(s) listed", n, len(listed))
	if len(listed) != 4 || n < 40 {
		t.Errorf("read %d check names and %d targets: the source or the help was not read as expected", n, len(listed))
	}
}

// The end of a check that did not pass names the probable cause first: a
// line per cause with its result and how many findings follow from it,
// then the final line, causes before what follows from them; findings
// that follow from nothing are listed as before.
func TestWriteNotReady(t *testing.T) {
	res := func(machine, check, subject string, st readiness.Status, after ...readiness.Ref) readiness.Result {
		return readiness.Result{Target: readiness.TargetSwitch, Machine: machine, Check: check, Subject: subject, Status: st,
			Found: "x", Expected: "y", Fix: "z", After: readiness.DependsOn(after...)}
	}
	dead := readiness.Ref{Machine: "leaf2", Check: "bgp", Subject: "swp63"}
	rs := []readiness.Result{
		res("spine1", "bgp", "swp2", readiness.Failed, dead),
		res("spine1", "mtu", "swp1", readiness.Failed),
		res("leaf2", "bgp", "swp63", readiness.Failed),
		res("leaf2", "bgp", "swp64", readiness.Failed, dead),
		res("leaf2", "link", "swp63", readiness.Passed),
	}
	doc := &readiness.Document{Results: rs, Causes: readiness.Causes(rs)}
	var b strings.Builder
	writeNotReady(&b, doc)
	want := "rdggen check: probable cause of 2 more finding(s): leaf2: bgp swp63: FAILED: found x; expected y; fix: z\n" +
		"rdggen check: not ready: spine1 mtu swp1; leaf2 bgp swp63 (2 follow from it); then: spine1 bgp swp2; leaf2 bgp swp64\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeNotReady(&b, &readiness.Document{Results: rs[1:2]})
	if b.String() != "rdggen check: not ready: spine1 mtu swp1\n" {
		t.Errorf("no cause: %q", b.String())
	}
}
