package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// `rdggen check --target hosts` never passes what it could not read: on 3
// namespace VMs over real sshd, an ACTIVE port whose link_layer is empty
// (ns-01) or absent (ns-02) is "could not tell" on port-state, and a RoCE
// v2 GID of the data address whose network device (gid_attrs/ndevs) is
// unreadable (ns-03) is "could not tell" on gid; each with what passes and
// how to read it, and check exits non-zero.
func TestCheckHostsCouldNotTell(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	for _, h := range c.Hosts {
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(1))
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
	}
	port := func(i int, name string) string {
		return c.Hosts[i].File("/sys/class/infiniband/" + inv.Horovod.HCA + "/ports/1/" + name)
	}
	if err := os.WriteFile(port(0, "link_layer"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(port(1, "link_layer")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(port(2, "gid_attrs/ndevs/3")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := checkCluster(t, c, "--target", "hosts")
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ": FAILED: ") || strings.Contains(l, "COULD NOT TELL") {
			got = append(got, strings.TrimPrefix(l, "[hosts] "))
		}
	}
	layer := "/sys/class/infiniband/mlx5_0/ports/1/link_layer"
	want := []string{
		"ns-01: port-state mlx5_0 port 1: COULD NOT TELL: 4: ACTIVE, link layer not read (link_layer is empty); expected link layer Ethernet (RoCE); " +
			"fix: read it on ns-01: cat " + layer + " (or ibv_devinfo -d mlx5_0); it must say Ethernet",
		"ns-02: port-state mlx5_0 port 1: COULD NOT TELL: 4: ACTIVE, link layer not read (cat: " + c.Hosts[1].File(layer) + ": No such file or directory); expected link layer Ethernet (RoCE); " +
			"fix: read it on ns-02: cat " + layer + " (or ibv_devinfo -d mlx5_0); it must say Ethernet",
		fmt.Sprintf("ns-03: gid mlx5_0 port 1: COULD NOT TELL: index 3: RoCE v2 %s: its network device could not be read (gid_attrs/ndevs/3); "+
			"expected a RoCE v2 GID of %s (rdggen run and run.sh read its index at launch for NCCL_IB_GID_INDEX) on data0; "+
			"fix: read it on ns-03: cat /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3 (or show_gids); it must say data0",
			c.Hosts[2].Data.Addr(), c.Hosts[2].Data.Addr()),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code == exitOK || !strings.Contains(out, "hosts: 54 passed, 0 failed, 3 could not tell") {
		t.Errorf("exit %d: three checks that could not tell must not pass", code)
	}
}

// GPUDirect RDMA through DMA-BUF (NVIDIA GPU Operator: recommended over
// nvidia-peermem; needs the open GPU kernel modules, Turing or later, Linux
// ≥ 5.12), on 3 namespace VMs over real sshd, none with nvidia-peermem
// loaded (it is installed): with A100s in the inventory, ns-01 (open
// module, Linux 6.1) passes the peermem check through DMA-BUF and says so;
// ns-02 (open module, Linux 5.4) and ns-03 (the proprietary module) fail,
// each naming what DMA-BUF lacks there. With the guide's V100s, an open
// module is no way out: peermem is required, and the V100's architecture
// is the reason. apply --target hosts does not load nvidia-peermem where
// DMA-BUF is the path.
func TestCheckGuestDMABUF(t *testing.T) {
	t.Parallel()
	c := netnstest.New(t, netnstest.Options{Hosts: 3, GPUs: 2})
	inv := c.Inventory
	for _, h := range c.Hosts {
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(2))
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	src, err := os.ReadFile(c.InventoryPath)
	if err != nil {
		t.Fatal(err)
	}
	a100 := strings.ReplaceAll(string(src), "{model: V100-PCIE-16GB, memory_gb: 16}", "{model: A100-PCIE-40GB, memory_gb: 40}")
	if a100 == string(src) {
		t.Fatal("the namespace inventory has no V100s to replace")
	}
	a100Path := filepath.Join(c.Dir, "a100.yaml")
	if err := os.WriteFile(a100Path, []byte(a100), 0o644); err != nil {
		t.Fatal(err)
	}
	stage := func(i int, g guest) {
		h := c.Hosts[i]
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
		stageGuest(t, h, inv.Horovod.HCA, g)
	}
	a := func(open bool, kernel string) guest {
		g := guest{GPUs: 2, Taken: 2, BAR1MB: 64 << 10, Open: open, Kernel: kernel, Model: "NVIDIA A100-PCIE-40GB"}
		return g
	}
	stage(0, a(true, "6.1.0-18-amd64"))
	stage(1, a(true, "5.4.0-150-generic"))
	stage(2, a(false, "6.1.0-18-amd64"))
	peermem := func(out string) []string {
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ": peermem: ") || strings.Contains(l, ": FAILED: ") || strings.Contains(l, "COULD NOT TELL") {
				got = append(got, strings.TrimPrefix(l, "[hosts] "))
			}
		}
		return got
	}
	const expected = "expected nvidia_peermem loaded (nv_peer_mem with drivers before 470), only one of them; or DMA-BUF (open GPU kernel modules, Turing or later, Linux ≥ 5.12); " +
		"fix: rdggen apply --target hosts (loads it and keeps it loaded at boot through /etc/modules-load.d/60-rdggen-nvidia-peermem.conf)"
	code, out, _ := checkCluster(t, c, "--target", "hosts", "-f", a100Path)
	want := []string{
		"ns-01: peermem: passed (GPUDirect RDMA through DMA-BUF, no nvidia_peermem needed: NVIDIA open GPU kernel module 535.183.06, Linux 6.1.0-18-amd64, NVIDIA A100-PCIE-40GB (Ampere); " +
			"NCCL ≥ 2.19 registers GPU memory through it (NVIDIA GPU Operator: DMA-BUF is recommended over nvidia-peermem))",
		"ns-02: peermem: FAILED: found nvidia-peermem installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: Linux 5.4.0-150-generic is older than 5.12); " + expected,
		"ns-03: peermem: FAILED: found nvidia-peermem installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: the NVIDIA driver is the proprietary kernel module (/proc/driver/nvidia/version names no Open Kernel Module)); " + expected,
	}
	if got := peermem(out); strings.Join(got, "\n") != strings.Join(want, "\n") || code == exitOK {
		t.Errorf("A100s: exit %d; got\n%s\nwant\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// apply --target hosts loads nvidia-peermem where it is the path, and
	// not where DMA-BUF is: a module that refuses to load (no MLNX_OFED, as
	// on a DMA-BUF VM with the inbox rdma-core) fails ns-02 and ns-03 only.
	refuse := `echo "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument" >&2; exit 1`
	code, out, _ = applyHosts(t, c, "-f", a100Path, "--module-load", refuse)
	if code != exitFailed || !strings.Contains(out, "hosts: 0 changed, 1 up to date, 2 failed (ns-02, ns-03)") ||
		!strings.Contains(out, "! GPUDirect RDMA through DMA-BUF (NVIDIA open GPU kernel module 535.183.06, Linux 6.1.0-18-amd64, NVIDIA A100-PCIE-40GB (Ampere)): rdggen neither loads nvidia-peermem nor writes /etc/modules-load.d/60-rdggen-nvidia-peermem.conf") {
		t.Errorf("apply on A100s: exit %d\n%s", code, out)
	}

	// The guide's V100s: an open module (which the V100 cannot have) does
	// not make DMA-BUF a way; peermem stays required.
	v := healthyGuest(2)
	v.Peermem, v.Open, v.Kernel = false, true, "6.1.0-18-amd64"
	stage(0, v)
	stage(1, healthyGuest(2))
	stage(2, healthyGuest(2))
	code, out, _ = checkCluster(t, c, "--target", "hosts")
	want = []string{
		"ns-01: peermem: FAILED: found nvidia-peermem installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: Tesla V100-PCIE-16GB is Volta (the open GPU kernel modules drive Turing and later)); " + expected,
		"ns-02: peermem: passed (nvidia_peermem loaded (version 535.183.06); /sys/kernel/mm/memory_peers/nv_mem/version present: every NCCL sees it)",
		"ns-03: peermem: passed (nvidia_peermem loaded (version 535.183.06); /sys/kernel/mm/memory_peers/nv_mem/version present: every NCCL sees it)",
	}
	if got := peermem(out); strings.Join(got, "\n") != strings.Join(want, "\n") || code == exitOK {
		t.Errorf("V100s: exit %d; got\n%s\nwant\n%s", code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
