package hostapply

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/quote"
)

// peermemProbe appends pm (scripts/peermem.sh; probe.sh runs it as result
// "peermem"), the read of GPUDirect RDMA's peer-memory module: one
// line per fact (drivers/nvidia-peermem and MLNX_OFED's peer-memory API,
// docs/rules.md#nvidia-peermem): "loaded" (/sys/module/nvidia_peermem),
// "legacy" (nv_peer_mem, drivers before R470, is loaded), "memory_peers"
// (/sys/kernel/mm/memory_peers/nv_mem/version, where NCCL ≤ 2.22.3 looks),
// "version V" (the loaded module's), "module" (the module is installed:
// modinfo, or under a root prefix a nvidia-peermem.ko below $R/lib/modules);
// and DMA-BUF's prerequisites (docs/rules.md#gpudirect-rdma-through-dma-buf):
// "driver V" (/sys/module/nvidia/version), "open" (/proc/driver/nvidia/version
// names the open GPU kernel module), "kernel R" (/proc/sys/kernel/osrelease),
// "model M" per GPU the driver took (the Model: line of
// /proc/driver/nvidia/gpus/BDF/information).
func peermemProbe(w *remote.Script) {
	w.Set("pm_sysfs", hostqos.PeermemSysfs)
	w.Set("pm_legacy", hostqos.LegacyPeerModule)
	w.Set("pm_module", hostqos.PeermemModule)
	w.Text(script("peermem.sh"))
}

// peermemState is what peermemProbe read.
type peermemState struct {
	Loaded, Legacy, MemoryPeers, Module bool
	Version                             string
	// Driver is the NVIDIA driver's version ("" when not loaded), Open
	// whether it is the open GPU kernel module, Kernel the kernel's
	// release, Models the models the driver reports for its GPUs.
	Driver, Kernel string
	Open           bool
	Models         []string
}

func parsePeermem(out string) peermemState {
	var s peermemState
	for _, l := range strings.Split(out, "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 0:
		case f[0] == "driver" && len(f) > 1:
			s.Driver = quote.Line(f[1])
		case f[0] == "open":
			s.Open = true
		case f[0] == "kernel" && len(f) > 1:
			s.Kernel = quote.Line(f[1])
		case f[0] == "model" && len(f) > 1:
			s.Models = append(s.Models, quote.Line(strings.TrimSpace(strings.TrimPrefix(l, "model "))))
		case f[0] == "loaded":
			s.Loaded = true
		case f[0] == "legacy":
			s.Legacy = true
		case f[0] == "memory_peers":
			s.MemoryPeers = true
		case f[0] == "module":
			s.Module = true
		case f[0] == "version" && len(f) > 1:
			s.Version = f[1]
		}
	}
	return s
}

// loadFunc is the script's load_module NAME.
func loadFunc(mode string) string {
	return remote.Assign("load_mode", mode) + "\n" + script("load.sh")
}

// loadHint is what a failed load of nvidia-peermem means, from modprobe's
// own message (NVIDIA's nvidia-peermem returns -EINVAL when it was built
// without MLNX_OFED's peer-memory symbols; a module built against another
// OFED has unknown symbols: Mellanox/nv_peer_memory#84).
func loadHint(out string) string {
	switch {
	case strings.Contains(out, "Invalid argument"):
		return "the NVIDIA driver was built without MLNX_OFED's peer-memory API (installed before MLNX_OFED?): reinstall the NVIDIA driver after MLNX_OFED, then rdggen apply --target hosts"
	case strings.Contains(out, "Unknown symbol"):
		return "MLNX_OFED changed after the NVIDIA driver was built: reinstall the NVIDIA driver, then rdggen apply --target hosts"
	}
	return ""
}

// planPeermem plans the peer-memory module and returns the desired files
// less those left out for it.
func (p *plan) planPeermem(st *hostState, po planOpts) []fileSpec {
	h := p.d.Host
	d := p.d
	// GPUDirect RDMA's peer-memory module: persisted by its modules-load.d
	// file (one of the files below), loaded now when it is installed. The
	// file names a module, so it is written only where the module is
	// there: systemd-modules-load fails at every boot on a module it cannot
	// find (modules-load.d(5), systemd-modules-load.service(8)). Where
	// DMA-BUF carries GPUDirect RDMA, neither is needed.
	pm := parsePeermem(st.Peermem.Out)
	files := d.Files
	withoutPeermem := func() []fileSpec {
		return slices.DeleteFunc(slices.Clone(d.Files), func(f fileSpec) bool { return f.Path == hostqos.PeermemPath })
	}
	switch {
	case pm.Legacy && st.Files[hostqos.PeermemPath].Kind == "absent":
		// Only one peer-memory module may be loaded: leave nv_peer_mem's setup.
		files = withoutPeermem()
		p.notes = append(p.notes, fmt.Sprintf("%s (the peer-memory module of NVIDIA drivers before R470) is loaded: rdggen neither loads %s nor writes %s (only one of them may be loaded)",
			hostqos.LegacyPeerModule, hostqos.PeermemModule, hostqos.PeermemPath))
	case pm.Loaded || pm.Legacy:
	case dmabufPath(h, pm).ok:
		// GPUDirect RDMA goes through DMA-BUF here (NVIDIA's recommended
		// path, no MLNX_OFED needed; without MLNX_OFED nvidia-peermem
		// cannot even load): nothing to load or persist.
		files = withoutPeermem()
		p.notes = append(p.notes, fmt.Sprintf("GPUDirect RDMA through DMA-BUF (%s): rdggen neither loads %s nor writes %s (docs/rules.md#gpudirect-rdma-through-dma-buf)",
			dmabufPath(h, pm).found, hostqos.PeermemModule, hostqos.PeermemPath))
	case !pm.Module:
		// Neither written nor changed; one from an earlier apply stays.
		files = withoutPeermem()
		then := fmt.Sprintf("writes %s, which it leaves out until then (systemd-modules-load would fail at every boot)", hostqos.PeermemPath)
		if st.Files[hostqos.PeermemPath].Kind != "absent" {
			then = fmt.Sprintf("keeps %s, which makes systemd-modules-load fail at every boot until the module is installed (remove the file if it will not be)", hostqos.PeermemPath)
		}
		p.notes = append(p.notes, fmt.Sprintf("%s is not installed (NVIDIA driver < 470, or none yet): GPUDirect RDMA needs it. "+
			"Install the NVIDIA driver ≥ 470 (it ships %s) after MLNX_OFED, then rdggen apply --target hosts again: it loads the module and %s",
			hostqos.PeermemModule, hostqos.PeermemModule, then))
	case po.modules:
		p.loadPeermem = true
	default:
		p.notes = append(p.notes, fmt.Sprintf("%s is installed but not loaded, and loading is off (--module-load none or --host-root): load it with modprobe %s",
			hostqos.PeermemModule, hostqos.PeermemModule))
	}
	return files
}

// applyPeermem appends the module's load (scripts/load.sh).
func (p *plan) applyPeermem(w *remote.Script, o *Options) {
	if p.loadPeermem {
		w.Text(loadFunc(o.loadMode()))
		w.Line("step peermem load_module ", hostqos.PeermemModule)
	}
}
