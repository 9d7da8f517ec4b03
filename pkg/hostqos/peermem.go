package hostqos

import "github.com/rdggen/rdggen/pkg/inventory"

// GPUDirect RDMA's side in the VM (docs/rules.md#nvidia-peermem): the NIC can
// read and write GPU memory only through a peer-memory client, which for the
// guide's GPUs (P100/V100: no DMA-BUF) is NVIDIA's nvidia-peermem kernel
// module. It ships with the NVIDIA driver from R470 (CUDA 11.4; before it the
// separate nv_peer_mem), is not loaded by the driver package, needs
// MLNX_OFED's peer-memory API (a driver installed before MLNX_OFED must be
// reinstalled, or loading fails with "Invalid argument"), and is loaded once
// in the VM, not in the containers (NVIDIA CUDA documentation, "GPUDirect
// RDMA", Using nvidia-peermem; Mellanox/nv_peer_memory#41). Only one of
// nvidia-peermem and nv_peer_mem may be loaded.
const (
	// PeermemModule is the module's modprobe name.
	PeermemModule = "nvidia-peermem"
	// PeermemSysfs is its name once loaded (/sys/module, /proc/modules).
	PeermemSysfs = "nvidia_peermem"
	// LegacyPeerModule is the module drivers before R470 used instead.
	LegacyPeerModule = "nv_peer_mem"
	// PeermemPath is PeermemConf on the VM: systemd-modules-load loads the
	// modules listed there at boot (modules-load.d(5)).
	PeermemPath = "/etc/modules-load.d/" + PeermemName
	// PeermemName is its name under hosts/<host>/ in the output tree.
	PeermemName = "60-rdggen-nvidia-peermem.conf"
)

// PeermemConf is host h's modules-load.d file: nvidia-peermem, loaded at
// every boot. `apply --target hosts` installs it where the module is
// installed (elsewhere systemd-modules-load would fail at every boot;
// docs/rules.md#nvidia-peermem) and loads the module now.
func PeermemConf(inv *inventory.Inventory, h *inventory.Host) []byte {
	return []byte("# rdggen: GPUDirect RDMA on " + h.Name + " (cluster " + inv.Name + "): load NVIDIA's peer-memory module at boot,\n" +
		"# so the VF reads and writes GPU memory directly (NVIDIA driver >= 470, installed after MLNX_OFED).\n" +
		PeermemModule + "\n")
}
