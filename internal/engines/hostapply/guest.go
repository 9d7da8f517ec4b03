package hostapply

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// The guest checks of the hosts target: is the VM ready for GPUDirect RDMA
// (docs/rules.md#the-guest-ready-for-gpudirect-rdma)? Each reads sysfs and
// procfs under the root prefix (so a staged tree can be checked) and needs
// no GPU to run: on a VM without the driver they fail with their fix.
const (
	CheckEFI     = "efi"            // /sys/firmware/efi: booted with EFI firmware
	CheckGPUs    = "gpus"           // the inventory's GPUs on the PCI bus, each taken by the NVIDIA driver
	CheckBAR1    = "bar1"           // each GPU's BAR1 as large as the inventory's (per GPU)
	CheckDriver  = "driver"         // the NVIDIA kernel module is loaded, its version
	CheckPeermem = "peermem"        // nvidia-peermem (or nv_peer_mem) loaded, and only one
	CheckVerbs   = "rdma-verbs"     // ibv_devices (or the kernel's verbs devices) lists horovod.hca
	CheckRuntime = "nvidia-runtime" // Docker can start GPU containers the way the workers are started
)

// nvidiaVendor is the PCI vendor ID of NVIDIA as sysfs prints it.
const nvidiaVendor = "0x10de"

// guestProbe appends the read of the guest's GPUs and GPU stack (all
// read-only):
//   - gpus: per NVIDIA display controller on the PCI bus (vendor 0x10de, class
//     0x0300xx or 0x0302xx) "BDF<TAB>BAR1 resource line<TAB>yes|no", yes when
//     the driver took it (/proc/driver/nvidia/gpus/BDF); line 2 of
//     /sys/bus/pci/devices/BDF/resource is BAR1, "start end flags" in hex
//     (all zero when the kernel could not assign it);
//   - efi: /sys/firmware/efi exists;
//   - nvidia: the loaded driver's version (/sys/module/nvidia/version);
//   - verbs: the RDMA devices userspace sees (ibv_devices when installed and
//     no root prefix; else the kernel's verbs devices,
//     /sys/class/infiniband_verbs/uverbs*/ibdev), one per line, after a
//     "source" line;
//   - runtime: on Docker ≥ 19.03 (the workers use --gpus) whether the NVIDIA
//     Container Toolkit's hook is installed; before it the runtimes of
//     `docker info` (without a root prefix; else daemon.json's, which the
//     probe reads anyway).
func guestProbe(w *remote.Script, inv *inventory.Inventory) {
	w.Set("nvidia_vendor", nvidiaVendor)
	w.Text(script("guest.sh"))
	if inv.Docker.Version.AtLeast(19, 3) {
		w.Text(script("runtime.sh"))
	} else {
		w.Text(script("runtime-old.sh"))
	}
}

// guestGPU is one NVIDIA GPU the guest's PCI bus shows.
type guestGPU struct {
	BDF string
	// BAR1MB is BAR1's size in MiB; 0 when the kernel did not assign it.
	BAR1MB int
	// Driver: the NVIDIA driver took the device.
	Driver bool
}

// guestState is what guestProbe read.
type guestState struct {
	GPUs    []guestGPU
	EFI     bool
	Driver  string // the NVIDIA driver's version, "" when not loaded
	Verbs   []string
	VerbsBy string // "ibv_devices" or the sysfs class
	// Runtime is the runtime result ("" name when not read).
	Runtime remote.Result
}

func parseGuest(rs []remote.Result) guestState {
	var g guestState
	for _, r := range rs {
		switch r.Name {
		case "gpus":
			for _, l := range strings.Split(string(r.Data), "\n") {
				f := strings.Split(l, "\t")
				if len(f) != 3 {
					continue
				}
				g.GPUs = append(g.GPUs, guestGPU{BDF: f[0], BAR1MB: barMB(f[1]), Driver: f[2] == "yes"})
			}
		case "efi":
			g.EFI = r.RC() == 0
		case "nvidia":
			if r.RC() == 0 {
				g.Driver = strings.TrimSpace(string(r.Data))
			}
		case "verbs":
			for i, l := range strings.Split(strings.TrimSpace(string(r.Data)), "\n") {
				if i == 0 {
					g.VerbsBy = strings.TrimPrefix(l, "source ")
				} else if l = strings.TrimSpace(l); l != "" {
					g.Verbs = append(g.Verbs, l)
				}
			}
		case "runtime":
			g.Runtime = r
		}
	}
	return g
}

// barMB is the size in MiB of a sysfs resource line "start end flags"
// (hex); 0 for an unassigned BAR (start and end 0) or a line that does not
// parse.
func barMB(line string) int {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0
	}
	start, err1 := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 64)
	end, err2 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	if err1 != nil || err2 != nil || end <= start {
		return 0
	}
	return int((end - start + 1) >> 20)
}

// sizeText is a BAR size for a person: "16 GB", "256 MB".
func sizeText(mb int) string {
	if mb >= 1024 && mb%1024 == 0 {
		return strconv.Itoa(mb>>10) + " GB"
	}
	return strconv.Itoa(mb) + " MB"
}

// checkGuest judges what guestProbe (g), the peer-memory probe (pm) and
// the probe's daemon.json read say about host h.
func checkGuest(inv *inventory.Inventory, h *inventory.Host, g guestState, pm peermemState, daemon fileState) []readiness.Result {
	const target = readiness.TargetHosts
	var out []readiness.Result
	pass := func(check, subject, found string) {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: check, Subject: subject, Status: readiness.Passed, Found: found})
	}
	fail := func(check, subject, found, expected, fix string) {
		out = append(out, readiness.Result{Target: target, Machine: h.Name, Check: check, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fix})
	}
	fixESXi := "rdggen check --target esxi, then rdggen apply --target esxi"
	mmio := vmx.MMIOSizeGB(h.GPUs)

	// EFI: the 64-bit MMIO window (and so every large-BAR GPU) needs it.
	if g.EFI {
		pass(CheckEFI, "", "/sys/firmware/efi present: EFI firmware")
	} else {
		fail(CheckEFI, "", "no /sys/firmware/efi: the VM booted with BIOS firmware",
			"EFI firmware (on BIOS the 64-bit MMIO window is never mapped, so the GPUs' BAR1 has no room)",
			"set the VM's firmware to EFI ("+fixESXi+"); a guest installed in BIOS mode must be reinstalled in EFI mode")
	}

	// GPUs on the bus, and taken by the driver.
	want := len(h.GPUs)
	var taken, unassigned []string
	var all []string
	for _, x := range g.GPUs {
		all = append(all, x.BDF)
		if x.Driver {
			taken = append(taken, x.BDF)
		}
		if x.BAR1MB == 0 {
			unassigned = append(unassigned, x.BDF)
		}
	}
	found := fmt.Sprintf("%d NVIDIA GPU(s) on the PCI bus", len(g.GPUs))
	if len(all) > 0 {
		found += " (" + strings.Join(all, ", ") + ")"
	}
	switch {
	case g.Driver == "":
		found += ", no NVIDIA driver loaded"
	default:
		found += fmt.Sprintf(", %d taken by the driver", len(taken))
	}
	expected := fmt.Sprintf("%d (the inventory's gpus), each taken by the NVIDIA driver", want)
	needs := mmioNeeded(h, g.GPUs)
	switch {
	case len(g.GPUs) < want:
		fail(CheckGPUs, "", found, expected, fmt.Sprintf("pass the VM its %d GPU(s) with DirectPath I/O (%s)", want, fixESXi))
	case g.Driver == "":
		fail(CheckGPUs, "", found, expected, "install the NVIDIA driver (≥ 470, after MLNX_OFED: see the driver check)")
	case len(taken) < len(g.GPUs):
		fix := fmt.Sprintf("the 64-bit MMIO window may be too small (pciPassthru.64bitMMIOSizeGB = %d", mmio)
		if needs > mmio {
			fix += fmt.Sprintf(", needs %d", needs)
		}
		fix += "): check the VM's keys and firmware (" + fixESXi + ")"
		if len(unassigned) > 0 {
			found += "; BAR1 unassigned on " + strings.Join(unassigned, ", ")
		}
		if needs > mmio {
			fix += ", and set gpus[].bar1_gb to the BAR1 the GPUs have"
		}
		fail(CheckGPUs, "", found, expected, fix)
	default:
		pass(CheckGPUs, "", found)
	}

	// BAR1 of each GPU the kernel assigned it to, against the inventory's.
	for i, x := range g.GPUs {
		if x.BAR1MB == 0 {
			continue // part of the gpus check
		}
		ig := h.GPUs[min(i, len(h.GPUs)-1)]
		exp := vmx.GPUBAR1(ig).MB
		found := "BAR1 " + sizeText(x.BAR1MB)
		expected := fmt.Sprintf("BAR1 %s (%s, %s)", sizeText(exp), ig.Model, vmx.GPUBAR1(ig).Source)
		switch {
		case x.BAR1MB < exp:
			fail(CheckBAR1, x.BDF, found+" (small-BAR mode)", expected,
				"set the GPU's BAR1 to its full size (a data-center GPU exposes BAR1 ≥ its memory; GPUDirect RDMA maps GPU memory through BAR1)")
		case x.BAR1MB > exp:
			fail(CheckBAR1, x.BDF, found, expected+": the MMIO window is sized for the smaller one",
				fmt.Sprintf("set gpus[%d].bar1_gb: %d in the inventory (pciPassthru.64bitMMIOSizeGB becomes %d), then rdggen apply --target esxi", min(i, len(h.GPUs)-1), bar1GB(x.BAR1MB), needs))
		default:
			pass(CheckBAR1, x.BDF, found)
		}
	}

	// The driver.
	if g.Driver == "" {
		fail(CheckDriver, "", "no NVIDIA kernel module loaded (/sys/module/nvidia)", "the NVIDIA driver loaded (≥ 470 ships nvidia-peermem)",
			"install the NVIDIA driver after MLNX_OFED (its nvidia-peermem needs MLNX_OFED's peer-memory API), then reboot or modprobe nvidia")
	} else {
		pass(CheckDriver, "", "NVIDIA driver "+g.Driver)
	}

	// The peer-memory path: nvidia-peermem, or DMA-BUF where it applies.
	db := dmabufPath(h, pm)
	pmExpected := hostqos.PeermemSysfs + " loaded (" + hostqos.LegacyPeerModule + " with drivers before 470), only one of them; or DMA-BUF (open GPU kernel modules, Turing or later, Linux ≥ 5.12)"
	switch {
	case pm.Loaded && pm.Legacy:
		fail(CheckPeermem, "", "both "+hostqos.PeermemSysfs+" and "+hostqos.LegacyPeerModule+" are loaded", pmExpected,
			"only one may be loaded: stop nv_peer_mem (service nv_peer_mem stop; rmmod nv_peer_mem) and keep nvidia-peermem")
	case pm.Loaded || pm.Legacy:
		name := hostqos.PeermemSysfs
		if !pm.Loaded {
			name = hostqos.LegacyPeerModule
		}
		found := name + " loaded"
		if pm.Version != "" {
			found += " (version " + pm.Version + ")"
		}
		if pm.MemoryPeers {
			found += "; /sys/kernel/mm/memory_peers/nv_mem/version present: every NCCL sees it"
		} else {
			found += "; no /sys/kernel/mm/memory_peers/nv_mem/version: NCCL ≤ 2.22.3 does not see it (NVIDIA/nccl#1676), 2.23.4 and later do (/sys/module/nvidia_peermem/version)"
		}
		if db.ok {
			found += "; DMA-BUF possible too (" + db.found + ")"
		}
		pass(CheckPeermem, "", found)
	case db.ok:
		pass(CheckPeermem, "", "GPUDirect RDMA through DMA-BUF, no "+hostqos.PeermemSysfs+" needed: "+db.found+
			"; NCCL ≥ 2.19 registers GPU memory through it (NVIDIA GPU Operator: DMA-BUF is recommended over nvidia-peermem)")
	case pm.Module:
		fail(CheckPeermem, "", hostqos.PeermemModule+" installed, not loaded: NCCL turns GPUDirect RDMA off (no DMA-BUF path: "+db.why+")", pmExpected,
			"rdggen apply --target hosts (loads it and keeps it loaded at boot through "+hostqos.PeermemPath+")")
	default:
		fail(CheckPeermem, "", "no "+hostqos.PeermemModule+" module on the VM (NVIDIA driver < 470, or none; no DMA-BUF path: "+db.why+")", pmExpected,
			"install the NVIDIA driver ≥ 470 after MLNX_OFED (nvidia-peermem comes with it), then rdggen apply --target hosts")
	}

	// The RDMA device as userspace sees it.
	hca := inv.Horovod.HCA
	switch {
	case slices.Contains(g.Verbs, hca):
		pass(CheckVerbs, hca, fmt.Sprintf("%s lists %s", g.VerbsBy, strings.Join(g.Verbs, ", ")))
	case len(g.Verbs) == 0:
		fail(CheckVerbs, hca, g.VerbsBy+" lists no RDMA device", hca+" (NCCL_IB_HCA) in ibv_devices",
			"install the RDMA userspace (MLNX_OFED, or rdma-core's ibverbs-providers and ibverbs-utils) and check that mlx5_ib is loaded")
	default:
		fail(CheckVerbs, hca, g.VerbsBy+" lists "+strings.Join(g.Verbs, ", "), hca+" (NCCL_IB_HCA) in ibv_devices",
			"set horovod.hca to the VF's device")
	}

	// Docker's way to GPUs.
	if inv.Docker.Version.AtLeast(19, 3) {
		if r := g.Runtime; r.Name != "" && r.RC() == 0 {
			pass(CheckRuntime, "", "NVIDIA Container Toolkit hook "+strings.TrimSpace(string(r.Data))+" (docker run --gpus)")
		} else {
			fail(CheckRuntime, "", "no nvidia-container-runtime-hook: docker run --gpus cannot give the worker its GPUs",
				"the NVIDIA Container Toolkit installed (the workers start with --gpus all, docker.version ≥ 19.03)",
				"install nvidia-container-toolkit (NVIDIA's apt repository), then restart Docker")
		}
	} else {
		runtimes, how := dockerRuntimes(g.Runtime, daemon)
		if slices.Contains(runtimes, "nvidia") {
			pass(CheckRuntime, "", "runtime nvidia registered ("+how+")")
		} else {
			fail(CheckRuntime, "", fmt.Sprintf("no runtime nvidia (%s: %s)", how, orNone(runtimes)),
				"the nvidia runtime registered with Docker (the workers start with --runtime=nvidia, docker.version < 19.03)",
				"install nvidia-docker2 (it adds the runtime to "+dockernet.DaemonPath+", which rdggen keeps when it merges), then restart Docker")
		}
	}
	return out
}

// mmioNeeded is the 64-bit MMIO window, GB, that the GPUs the guest shows
// need: the BAR1 the kernel assigned where it did, and for a GPU whose BAR1
// it could not assign the largest BAR1 seen on a GPU of the same model
// (GPUs of one model have one BAR1 size), else the inventory's.
func mmioNeeded(h *inventory.Host, seen []guestGPU) int {
	gpus := slices.Clone(h.GPUs)
	largest := map[string]int{} // model → GB
	for i, x := range seen {
		if i < len(gpus) {
			largest[gpus[i].Model] = max(largest[gpus[i].Model], bar1GB(x.BAR1MB))
		}
	}
	for i := range gpus {
		gb := largest[gpus[i].Model]
		if i < len(seen) && seen[i].BAR1MB > 0 {
			gb = bar1GB(seen[i].BAR1MB)
		}
		if gb > vmx.GPUBAR1(gpus[i]).MB>>10 {
			gpus[i].BAR1GB = gb
		}
	}
	return vmx.MMIOSizeGB(gpus)
}

// bar1GB is a BAR1 of mb MiB as the inventory's bar1_gb takes it: whole
// GB, a power of two (validation's rule), rounded up: 1 for a BAR1 below
// 1 GiB. PCI BARs are powers of two, so a BAR1 of 1 GiB or more stays
// exact.
func bar1GB(mb int) int {
	gb := 1
	for gb<<10 < mb {
		gb <<= 1
	}
	return gb
}

// dockerRuntimes lists Docker's runtimes: `docker info`'s (r, when read)
// or daemon.json's "runtimes" keys, and says which it read.
func dockerRuntimes(r remote.Result, daemon fileState) ([]string, string) {
	var m map[string]json.RawMessage
	how := "docker info"
	if r.Name == "" || r.RC() != 0 || json.Unmarshal(r.Data, &m) != nil {
		how = dockernet.DaemonPath
		var d struct {
			Runtimes map[string]json.RawMessage `json:"runtimes"`
		}
		if daemon.Kind == "file" && json.Unmarshal(daemon.Data, &d) == nil {
			m = d.Runtimes
		}
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, how
}

// orNone joins names, or says "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// dmabuf is whether GPUDirect RDMA can go through DMA-BUF on a guest
// (docs/rules.md#gpudirect-rdma-through-dma-buf): ok with what shows it
// (found), or why not.
type dmabuf struct {
	ok         bool
	found, why string
}

// dmaBufMinKernel is the first Linux release whose RDMA core imports a
// dma-buf as a memory region (ib_umem_dmabuf, Linux 5.12).
var dmaBufMinKernel = [2]int{5, 12}

// dmabufPath judges DMA-BUF's prerequisites (NVIDIA GPU Operator,
// "GPUDirect RDMA and GPUDirect Storage") on host h from what the
// peer-memory probe read (g): the NVIDIA driver's open GPU kernel module,
// Linux ≥ 5.12, and GPUs of Turing or later (the open modules drive no
// older GPU): the models the driver reports, else the inventory's, by
// vmx.Architecture. NCCL ≥ 2.19 in the worker image is the remaining
// condition, which the VM cannot show.
func dmabufPath(h *inventory.Host, g peermemState) dmabuf {
	var why, found []string
	switch {
	case g.Driver == "":
		why = append(why, "no NVIDIA driver loaded")
	case !g.Open:
		why = append(why, "the NVIDIA driver is the proprietary kernel module (/proc/driver/nvidia/version names no Open Kernel Module)")
	default:
		found = append(found, "NVIDIA open GPU kernel module "+g.Driver)
	}
	switch maj, mnr, ok := kernelVersion(g.Kernel); {
	case !ok:
		why = append(why, "the kernel's release could not be read (/proc/sys/kernel/osrelease)")
	case maj < dmaBufMinKernel[0] || maj == dmaBufMinKernel[0] && mnr < dmaBufMinKernel[1]:
		why = append(why, "Linux "+g.Kernel+" is older than 5.12")
	default:
		found = append(found, "Linux "+g.Kernel)
	}
	models := g.Models
	if len(models) == 0 {
		for _, x := range h.GPUs {
			models = append(models, x.Model)
		}
	}
	var archs, archWhy []string
	seen := map[string]bool{}
	for _, m := range models {
		if seen[m] {
			continue
		}
		seen[m] = true
		a, ok := vmx.Architecture(m)
		switch {
		case !ok && g.Open:
			archs = append(archs, m+" (not in rdggen's table; the open module drives only Turing and later)")
		case !ok:
			why = append(why, m+"'s architecture is not in rdggen's table")
		case !vmx.OpenModulesSupport(a):
			archWhy = append(archWhy, m+" is "+a+" (the open GPU kernel modules drive Turing and later)")
		default:
			archs = append(archs, m+" ("+a+")")
		}
	}
	if len(models) == 0 {
		why = append(why, "no GPU model known")
	}
	if len(archWhy) > 0 { // decisive: such a GPU never has the DMA-BUF path
		return dmabuf{why: strings.Join(archWhy, "; ")}
	}
	if len(why) > 0 {
		return dmabuf{why: strings.Join(why, "; ")}
	}
	found = append(found, strings.Join(archs, ", "))
	return dmabuf{ok: true, found: strings.Join(found, ", ")}
}

// kernelVersion is the major and minor number of a kernel release
// ("6.8.0-45-generic" → 6, 8).
func kernelVersion(release string) (major, minor int, ok bool) {
	f := strings.SplitN(release, ".", 3)
	if len(f) < 2 {
		return 0, 0, false
	}
	m := f[1]
	if i := strings.IndexFunc(m, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		m = m[:i] // "12-rc1"
	}
	major, err1 := strconv.Atoi(f[0])
	minor, err2 := strconv.Atoi(m)
	return major, minor, err1 == nil && err2 == nil
}
