package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// The layers a cause can be in.
const (
	// LayerContainerRDMA: the worker container cannot use the RDMA device
	// (no /dev/infiniband, memlock too low, no RDMA userspace, no RoCE
	// GID), so NCCL falls back to TCP sockets or perftest cannot run.
	LayerContainerRDMA = "container RDMA"
	// LayerGPUDirect: GPUDirect RDMA is off (no peer-memory module, no
	// P2P VMX keys, NCCL_NET_GDR_LEVEL too strict for the VM's topology).
	LayerGPUDirect = "GPUDirect RDMA"
	// LayerRDMAConfig: the RDMA settings differ from the inventory's
	// (MTU, GID index, device, link layer).
	LayerRDMAConfig = "RDMA configuration"
	// LayerNCCLEnv: the launch environment turned RDMA off.
	LayerNCCLEnv = "NCCL environment"
	// LayerFabric: the network between hosts (switch ports, PFC, ECN,
	// link speed).
	LayerFabric = "fabric"
	// LayerNetworkPath: the hosts cannot reach each other's out-of-band
	// port (perftest's TCP exchange).
	LayerNetworkPath = "network path"
	// LayerGPU: the GPUs are not usable where the test runs (not passed
	// through, no driver, no nvidia runtime in Docker).
	LayerGPU = "GPU"
	// LayerBenchmark: the benchmark itself was run in a way that cannot
	// be judged (too small, one host, built without MPI).
	LayerBenchmark = "benchmark"
	// LayerParameters is what the file was judged against: the link
	// speed, NICs per node or MTU given to the judge (flags, inventory or
	// defaults), when the file's own figures contradict them.
	LayerParameters = "judge parameters"
	// LayerPairing: which NIC NCCL gives each GPU on a host with several
	// rails, decided by the PCI topology NCCL sees (in a VM, the topology
	// file): a GPU whose channels leave through another rail's NIC than
	// the one beside it.
	LayerPairing = "GPU–NIC pairing"
)

// The `rdggen check` results (readiness.Result.Check, by target) that
// explain a symptom, as evidence in [Expect.Evidence].
const (
	// hosts target
	EvidenceRDMADevice    = "rdma-device"    // horovod.hca exists
	EvidencePortState     = "port-state"     // its port is ACTIVE, link layer Ethernet
	EvidenceGID           = "gid"            // the data address has a RoCE v2 GID (its index is read at launch)
	EvidenceRDMAMTU       = "rdma-mtu"       // the port's active MTU fits data_mtu
	EvidenceGPUs          = "gpus"           // the passed-through GPUs are visible
	EvidenceBAR1          = "bar1"           // BAR1 is mapped at its size
	EvidenceEFI           = "efi"            // the VM boots EFI (the MMIO keys are inert on BIOS)
	EvidenceDriver        = "driver"         // the GPU driver is loaded
	EvidencePeermem       = "peermem"        // nvidia_peermem is loaded and visible to NCCL
	EvidenceRDMAVerbs     = "rdma-verbs"     // the RDMA userspace (libibverbs, provider) is installed
	EvidenceNvidiaRuntime = "nvidia-runtime" // Docker has the nvidia runtime
	// workers target
	EvidenceDevices  = "devices"   // /dev/infiniband inside the container
	EvidenceMemlock  = "memlock"   // ulimit -l unlimited inside the container
	EvidenceGDRLevel = "gdr-level" // NCCL_NET_GDR_LEVEL in the launch environment
	// esxi target
	EvidenceP2P  = "p2p"  // pciPassthru.allowP2P and RelaxACSforP2P on the VM
	EvidenceNUMA = "numa" // GPU and NIC share a NUMA node / root complex
	// switch target
	EvidenceLink = "link" // the data port is up at its speed
	EvidencePFC  = "pfc"  // PFC on the RoCE priority, oper Enabled
	EvidenceECN  = "ecn"  // ECN on the RoCE traffic class
)

// failedEvidence returns the failed results of check on target (any target
// when target is "").
func failedEvidence(ev []readiness.Result, target applyplan.TargetName, check string) []readiness.Result {
	var out []readiness.Result
	for _, r := range ev {
		if r.Check == check && r.Status == readiness.Failed && (target == "" || r.Target == target) {
			out = append(out, r)
		}
	}
	return out
}

// evidenceCause turns failed check results into one cause naming the
// machines, with what check found and its fix.
func evidenceCause(layer, what string, rs []readiness.Result) Cause {
	var hosts, found []string
	fix := ""
	for _, r := range rs {
		if !slices.Contains(hosts, r.Machine) {
			hosts = append(hosts, r.Machine)
		}
		if r.Found != "" && !slices.Contains(found, r.Found) && len(found) < 2 {
			found = append(found, r.Found)
		}
		if fix == "" {
			fix = r.Fix
		}
	}
	f := fmt.Sprintf("%s on %s (rdggen check %s: %s)", what, Names(hosts), rs[0].Check, namesSep(found, "; "))
	return Cause{Layer: layer, Finding: f, Fix: fix, Hosts: hosts}
}

// socketCauses explains a fallback to TCP sockets, most specific first.
func socketCauses(l *NCCLLog, e Expect, hosts []string) []Cause {
	var cs []Cause
	if v, ok := l.EnvValue("NCCL_IB_DISABLE"); ok && v == "1" {
		cs = append(cs, Cause{Layer: LayerNCCLEnv, Hosts: hosts,
			Finding: "NCCL_IB_DISABLE=1 was set, so NCCL never tried the RDMA device",
			Fix:     "remove NCCL_IB_DISABLE=1 from the launch environment (rdggen's launch lines do not set it)"})
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidenceRDMAVerbs); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerContainerRDMA, "the RDMA userspace (libibverbs and its provider) is missing", rs))
	} else if len(l.NoVerbs) > 0 {
		cs = append(cs, Cause{Layer: LayerContainerRDMA, Hosts: nonEmpty(hostsOf(l.NoVerbs, textHost)),
			Finding: "NCCL could not load libibverbs (\"" + l.NoVerbs[0].Text + "\"): the image has no RDMA userspace",
			Fix:     "install rdma-core and ibverbs-providers (or MLNX_OFED's user space) in the worker image"})
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceDevices); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerContainerRDMA, "the container has no /dev/infiniband", rs))
	} else if len(l.OpenFailed) > 0 {
		cs = append(cs, Cause{Layer: LayerContainerRDMA, Hosts: nonEmpty(hostsOf(l.OpenFailed, textHost)),
			Finding: "NCCL sees the RDMA device but cannot open it (\"" + l.OpenFailed[0].Text + "\"): the container has no /dev/infiniband (NVIDIA/nccl#451)",
			Fix:     "start the worker container with --device=/dev/infiniband (rdggen apply --target workers does)"})
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceMemlock); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerContainerRDMA, "the container's locked-memory limit is too low", rs))
	}
	for _, c := range []struct{ check, what string }{
		{EvidenceRDMADevice, "the VF's RDMA device is missing"},
		{EvidencePortState, "the RDMA port is not ACTIVE on Ethernet"},
		{EvidenceGID, "the RoCE v2 GID of the data address is not at the launch index"},
	} {
		if rs := failedEvidence(e.Evidence, readiness.TargetHosts, c.check); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerContainerRDMA, c.what, rs))
		}
	}
	if len(cs) == 0 {
		what := "NCCL found no usable RDMA device"
		if len(l.NoIBDevice) > 0 {
			what += " (\"NET/IB : No device found\")"
		}
		c := Cause{Layer: LayerContainerRDMA, Hosts: hosts,
			Finding: what + ": the container lacks /dev/infiniband, memlock, the RDMA libraries, or the RoCE GID, and neither the log nor check results say which",
			Fix:     "run `rdggen check --target hosts,workers -o json > check.json` and judge again with --evidence check.json"}
		if !e.rdggenCluster() {
			c.Finding = what + ": where NCCL ran there was no /dev/infiniband (a container started without it), too low a locked-memory limit, no RDMA userspace (rdma-core) or no RoCE GID, and the log does not say which"
			c.Fix = "where NCCL runs, check ls /dev/infiniband, ulimit -l, ibv_devices and the RoCE v2 GID (show_gids)"
		}
		cs = append(cs, c)
	}
	return cs
}

// hostsOf lists the hosts of xs, each once, in order of appearance.
func hostsOf[T any](xs []T, host func(T) string) []string {
	var out []string
	for _, x := range xs {
		if h := host(x); !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

func textHost(h HostText) string { return h.Host }
func gpuHost(g GDRGPU) string    { return g.Host }

// gdrCauses explains inter-node channels without GPUDirect RDMA; on and off
// are the hosts (or ranks) with and without it when the use is
// asymmetric.
//
// A cause names a vSphere VM's settings (the P2P VMX keys, a passed-through
// device's PHB path) and `rdggen check` only when e says the log comes
// from an rdggen (vSphere) cluster, and the peer-memory module only when
// the channels are NCCL's own verbs transport (NET/IB): over a network
// plugin's ([NCCLLog.PluginNet]) the plugin decides.
func gdrCauses(l *NCCLLog, e Expect, on, off []string) []Cause {
	var cs []Cause
	vsphere, plugin := e.rdggenCluster(), l.PluginNet()
	if len(on) > 0 && len(off) > 0 && plugin != "" {
		cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: off,
			Finding: fmt.Sprintf("GPUDirect RDMA works on %s but not on %s over NET/%s, a network plugin's transport: the plugin could not register GPU memory with the NIC there", Names(on), Names(off), plugin),
			Fix:     "compare the plugin's own NCCL_DEBUG=INFO lines (NET/OFI … for aws-ofi-nccl) of " + Names(off) + " with those of " + Names(on) + ": its version, its provider and the NIC it chose"})
	} else if len(on) > 0 && len(off) > 0 {
		cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: off,
			Finding: fmt.Sprintf("GPUDirect RDMA works on %s but not on %s: the peer-memory module is missing there (sjeaugey in NVIDIA/nccl#897: \"Perhaps the nv_peer_mem or nvidia-peermem module is not installed/loaded on the second node?\")",
				Names(on), Names(off)),
			Fix: "on " + Names(off) + ": modprobe nvidia-peermem, and persist it in /etc/modules-load.d/nvidia-peermem.conf"})
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidencePeermem); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerGPUDirect, "nvidia_peermem is not loaded or not visible to NCCL", rs))
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetESXi, EvidenceP2P); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerGPUDirect, "the VM lacks the P2P passthrough keys (pciPassthru.allowP2P, pciPassthru.RelaxACSforP2P)", rs))
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceGDRLevel); len(rs) > 0 {
		cs = append(cs, evidenceCause(LayerGPUDirect, "NCCL_NET_GDR_LEVEL is too strict for the VM's PCI topology", rs))
	}
	for _, c := range []struct {
		target      applyplan.TargetName
		check, what string
	}{
		{readiness.TargetHosts, EvidenceBAR1, "BAR1 is not mapped at the GPU's size (GPUDirect RDMA needs BAR space)"},
		{readiness.TargetHosts, EvidenceEFI, "the VM boots BIOS, where the 64-bit MMIO keys are inert"},
		{readiness.TargetESXi, EvidenceNUMA, "GPU and NIC are on different NUMA nodes / root complexes"},
	} {
		if rs := failedEvidence(e.Evidence, c.target, c.check); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerGPUDirect, c.what, rs))
		}
	}
	level, levelSet := l.EnvValue("NCCL_NET_GDR_LEVEL")
	var far []GDRGPU
	for _, g := range l.GDRGPU {
		if !g.Enabled && !g.NoModule && g.Distance > g.Limit {
			far = append(far, g)
		}
	}
	if len(far) > 0 {
		better := "better, pass through a GPU and NIC under the same root complex"
		if !vsphere {
			better = "better, a GPU and NIC under the same PCIe switch or root complex"
		}
		if levelSet {
			fix := "set NCCL_NET_GDR_LEVEL=SYS, or give NCCL the host's PCI topology with NCCL_TOPO_FILE (sjeaugey in NVIDIA/nccl#1151 and NVIDIA/nccl-tests#86); " + better
			if strings.EqualFold(level, "SYS") { // the run already allowed every path: only the topology is left
				fix = "give NCCL the host's PCI topology with NCCL_TOPO_FILE (sjeaugey in NVIDIA/nccl#1151 and NVIDIA/nccl-tests#86); " + better
			}
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: nonEmpty(hostsOf(far, gpuHost)),
				Finding: fmt.Sprintf("NCCL_NET_GDR_LEVEL=%s is set, but the GPU–NIC path is longer than it allows: %s", level, gpuList(far)),
				Fix:     fix})
		} else if !vsphere {
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: nonEmpty(hostsOf(far, gpuHost)),
				Finding: fmt.Sprintf("NCCL_NET_GDR_LEVEL is not set and NCCL's default limit is stricter than the GPU–NIC path (%s)", gpuList(far)),
				Fix:     "launch with NCCL_NET_GDR_LEVEL set to that path's type (PHB for a path through the CPU's root complex; NCCL_TOPO_DUMP_FILE writes the topology NCCL sees), or give NCCL the host's PCI topology with NCCL_TOPO_FILE (sjeaugey in NVIDIA/nccl#1151 and NVIDIA/nccl-tests#86); " + better})
		} else {
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: nonEmpty(hostsOf(far, gpuHost)),
				Finding: fmt.Sprintf("NCCL_NET_GDR_LEVEL is not set and NCCL's default limit is stricter than the VM's GPU–NIC path (%s): in a vSphere VM each passthrough device sits behind its own root port, a PHB path", gpuList(far)),
				Fix:     "launch with NCCL_NET_GDR_LEVEL=PHB (-x NCCL_NET_GDR_LEVEL=PHB with mpirun)"})
		}
	}
	var hcaOff []GDRHCA
	for _, h := range l.GDRHCA {
		if !h.Enabled {
			hcaOff = append(hcaOff, h)
		}
	}
	var noModule []GDRGPU
	for _, g := range l.GDRGPU {
		if g.NoModule {
			noModule = append(noModule, g)
		}
	}
	if len(hcaOff) > 0 || len(noModule) > 0 {
		var hosts []string
		for _, h := range hcaOff {
			if h.Host != "" && !slices.Contains(hosts, h.Host) {
				hosts = append(hosts, h.Host)
			}
		}
		f := "NCCL found no peer-memory support for the HCA: nvidia-peermem is not loaded, or NCCL 2.22 and older cannot see it (they look only under /sys/kernel/mm/memory_peers/, which only MLNX_OFED's peer-memory API creates; 2.23 also checks /sys/module/nvidia_peermem/version)"
		if old, ok := versionBefore(l.Version, 2, 23); ok && old {
			f += "; this run's NCCL " + l.Version + " is one of those"
		}
		where := "in the VM (not the container)"
		if !vsphere {
			where = "on the host (not in the container)"
		}
		cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: hosts,
			Finding: f,
			Fix:     "modprobe nvidia-peermem " + where + " and persist it; with a stack that has no memory_peers directory use NCCL 2.23 or later"})
	}
	if len(cs) == 0 {
		levelText := "; the log shows no NCCL_NET_GDR_LEVEL setting"
		if levelSet {
			levelText = fmt.Sprintf("; the log shows NCCL_NET_GDR_LEVEL=%s", level)
		}
		switch {
		case plugin != "":
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: off,
				Finding: fmt.Sprintf("the channels over NET/%s go through host memory: that network plugin, not NCCL's own NET/IB, decides whether the NIC reads and writes GPU memory (aws-ofi-nccl asks its libfabric provider: src/nccl_ofi_net.c support_gdr), and here it did not (nvidia-peermem is a prerequisite of NET/IB, not of the plugin)", plugin),
				Fix:     "read the plugin's own NCCL_DEBUG=INFO lines (NET/OFI … for aws-ofi-nccl) for its GPU memory support, and whether the NIC of this machine type offers GPUDirect RDMA at all"})
		case vsphere:
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: off,
				Finding: "the channels go through host memory: nvidia_peermem is not loaded, the P2P VMX keys (pciPassthru.allowP2P, pciPassthru.RelaxACSforP2P) are missing, or NCCL_NET_GDR_LEVEL is too strict for the VM's PHB topology" + levelText,
				Fix:     "run `rdggen check` (hosts peermem, esxi p2p, workers gdr-level) and judge again with --evidence; NCCL_DEBUG_SUBSYS=INIT,NET,ENV prints NCCL's per-GPU decision"})
		default:
			cs = append(cs, Cause{Layer: LayerGPUDirect, Hosts: off,
				Finding: "the channels go through host memory: there is no peer-memory support for the NIC (nvidia-peermem not loaded, no DMA-BUF), or NCCL_NET_GDR_LEVEL is stricter than the GPU–NIC PCI path" + levelText,
				Fix:     "lsmod | grep peermem on each host (modprobe nvidia-peermem); NCCL_DEBUG_SUBSYS=INIT,NET,ENV prints NCCL's per-GPU decision (GPU Direct RDMA Enabled or Disabled, with the path's distance)"})
		}
	}
	return cs
}

// ncclErrorCauses explains failed verbs calls and completion errors.
func ncclErrorCauses(hits []HostText, e Expect, hosts []string) []Cause {
	var cs []Cause
	memory, completion := false, false
	for _, h := range hits {
		memory = memory || strings.Contains(h.Text, "Cannot allocate memory")
		completion = completion || strings.Contains(h.Text, "Got completion with error")
	}
	if memory {
		if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceMemlock); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerContainerRDMA, "the container's locked-memory limit is too low", rs))
		} else {
			cs = append(cs, Cause{Layer: LayerContainerRDMA, Hosts: hosts,
				Finding: "registering memory or creating queues failed with ENOMEM: the locked-memory limit (ulimit -l) is too low where NCCL runs (sjeaugey in NVIDIA/nccl-tests#206: check ulimit -l \"even within mpirun\")",
				Fix:     "run the container with --ulimit memlock=-1 (rdggen's worker does) and set memlock unlimited in /etc/security/limits.conf; check with mpirun … sh -c 'ulimit -l'"})
		}
	}
	if completion {
		if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidenceGID); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerRDMAConfig, "the RoCE v2 GID is not at the launch index", rs))
		}
		c := Cause{Layer: LayerRDMAConfig, Hosts: hosts,
			Finding: "an RDMA operation completed with an error: commonly a GID index that is not RoCE v2 on one side, a lossy (no PFC) path, or ACS blocking GPUDirect RDMA peer traffic",
			Fix:     "run `rdggen check --target hosts,switch` (gid, pfc); if GPUDirect RDMA is on, check ACS on the PCIe path"}
		if !e.rdggenCluster() {
			c.Fix = "check each host's RoCE v2 GID index (show_gids) against the one NCCL used, and PFC on the switch ports between them; if GPUDirect RDMA is on, check ACS on the PCIe path"
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		cs = append(cs, Cause{Layer: LayerContainerRDMA, Hosts: hosts,
			Finding: "a verbs call failed: " + hits[0].Text,
			Fix:     checkRDMAFix(e)})
	}
	return cs
}

// checkRDMAFix is the fix that checks the RDMA device, memlock and the
// GID where the benchmark runs: `rdggen check` on an rdggen cluster, the
// commands themselves elsewhere.
func checkRDMAFix(e Expect) string {
	if e.rdggenCluster() {
		return "run `rdggen check --target hosts,workers` for the RDMA device, memlock and GID"
	}
	return "where it runs, check the RDMA device (ibv_devices), the locked-memory limit (ulimit -l) and the RoCE v2 GID (show_gids)"
}

// perftestFailureCauses explains a perftest error message.
func perftestFailureCauses(r *Perftest, e Expect) []Cause {
	all := strings.Join(r.Failures, "\n")
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.Contains(all, x) {
				return true
			}
		}
		return false
	}
	var cs []Cause
	switch {
	case has("Couldn't allocate MR", "Failed to create MR"):
		if r.CUDA {
			if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidencePeermem); len(rs) > 0 {
				cs = append(cs, evidenceCause(LayerGPUDirect, "nvidia_peermem is not loaded", rs))
			} else {
				where := "in the VM"
				if !e.rdggenCluster() {
					where = "on the host"
				}
				fix := "modprobe nvidia-peermem " + where + " and persist it; if modprobe fails with Invalid argument, reinstall the GPU driver after MLNX_OFED (or use --use_cuda_dmabuf with the open kernel modules)"
				if strings.Contains(r.Command, "--use_cuda_dmabuf") { // the run already tried DMA-BUF
					fix = "the run used --use_cuda_dmabuf: DMA-BUF needs the GPU driver's open kernel modules and a kernel and rdma-core with DMA-BUF support; or, without it, modprobe nvidia-peermem " + where + " and persist it"
				}
				cs = append(cs, Cause{Layer: LayerGPUDirect,
					Finding: "perftest could not register the GPU buffer with the NIC (--use_cuda): no peer-memory support, i.e. nvidia-peermem not loaded, or built against a driver installed before MLNX_OFED (linux-rdma/perftest#126)",
					Fix:     fix})
			}
		} else if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceMemlock); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerContainerRDMA, "the container's locked-memory limit is too low", rs))
		} else {
			cs = append(cs, Cause{Layer: LayerContainerRDMA,
				Finding: "perftest could not register host memory with the NIC: the locked-memory limit (ulimit -l) is too low where it runs",
				Fix:     "run the container with --ulimit memlock=-1 (rdggen's worker does), or raise memlock in /etc/security/limits.conf"})
		}
	case has("No IB devices found") || reIBDeviceNotFound.MatchString(all):
		if rs := failedEvidence(e.Evidence, readiness.TargetWorkers, EvidenceDevices); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerContainerRDMA, "the container has no /dev/infiniband", rs))
		}
		if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidenceRDMADevice); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerContainerRDMA, "the VF's RDMA device is missing", rs))
		}
		if len(cs) == 0 {
			cs = append(cs, Cause{Layer: LayerContainerRDMA,
				Finding: "perftest found no such RDMA device here: /dev/infiniband is not passed to the container, or the VF's device has another name",
				Fix:     "start the container with --device=/dev/infiniband, and pass -d the data VF's device (horovod.hca; ibv_devices lists them)"})
		}
	case has("Couldn't connect to", "Unable to open file descriptor", "Failed to exchange data", "Unable to init the socket connection", "Failed to connect RDMA CM", "Unable to perform rdma_client"):
		cs = append(cs, Cause{Layer: LayerNetworkPath,
			Finding: "the client could not exchange QP data with the server over TCP (port 18515 unless -p): the server was not running yet, or a firewall or route blocks the port",
			Fix:     "start ib_write_bw on the server first, then the client with the server's data address; open the port between the hosts"})
	default:
		cs = append(cs, Cause{Layer: LayerContainerRDMA,
			Finding: "perftest could not set up its RDMA resources: " + r.Failures[0],
			Fix:     checkRDMAFix(e)})
	}
	return cs
}

// PerftestAdviceBytes is the message size from which the advice to retry
// with larger messages is not given: 8 MiB, "please try with larger msg
// size (>8MB) and with more QP's (try 4)" (perftest maintainers in
// linux-rdma/perftest#252).
const PerftestAdviceBytes = 8 << 20

// PerftestAdviceQPs is the QP count from which the advice to retry with
// more QPs is not given: 4, as in linux-rdma/perftest#252.
const PerftestAdviceQPs = 4

// lowRDMACauses explains an ib_write_bw below its pass line. Its advice
// names only what the run did not already do, read from the report
// itself: more QPs when its header shows fewer than PerftestAdviceQPs
// (or none), larger messages when its largest is below
// PerftestAdviceBytes, a larger MTU when its header shows less than
// RoCE's 4096 B and no expected MTU explains it.
func lowRDMACauses(r *Perftest, e Expect) []Cause {
	var cs []Cause
	if e.MTU > 0 && r.MTU > 0 && r.MTU < e.MTU {
		cs = append(cs, mtuCause(r.MTU, e))
	}
	for _, c := range []struct{ check, what string }{
		{EvidenceLink, "the switch port is down or below its speed"},
		{EvidencePFC, "PFC is not operational on the RoCE priority"},
		{EvidenceECN, "ECN is not configured on the RoCE traffic class"},
	} {
		if rs := failedEvidence(e.Evidence, readiness.TargetSwitch, c.check); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerFabric, c.what, rs))
		}
	}
	var own, retry []string // what the run's settings may have limited; what to change
	switch {
	case r.QPs == 0:
		own = append(own, "perhaps a single QP (the header shows no 'Number of qps')")
		retry = append(retry, fmt.Sprintf("-q %d", PerftestAdviceQPs))
	case r.QPs < PerftestAdviceQPs:
		own = append(own, fmt.Sprintf("%s (Number of qps : %d)", count(r.QPs, "QP", "QPs"), r.QPs))
		retry = append(retry, fmt.Sprintf("-q %d (this run: %d)", PerftestAdviceQPs, r.QPs))
	}
	if row, ok := r.Largest(); ok && row.Bytes < PerftestAdviceBytes {
		own = append(own, fmt.Sprintf("messages of at most %s", sizeText(row.Bytes)))
		retry = append(retry, fmt.Sprintf("-s %d or larger (this run's largest: %d B)", PerftestAdviceBytes, row.Bytes))
	}
	if r.MTU > 0 && r.MTU < 4096 && e.MTU == 0 {
		own = append(own, fmt.Sprintf("RDMA MTU %d B", r.MTU))
		retry = append(retry, fmt.Sprintf("an interface MTU above 4096 so that RoCE runs MTU 4096 (this run: %d B)", r.MTU))
	}
	f := "below 90 % of the link with no error: a slow or congested path (port speed, PFC pauses, ECN marks)"
	if len(own) > 0 {
		f += ", or the run's own settings: " + strings.Join(own, ", ")
	} else {
		f += fmt.Sprintf("; not the run's settings: it already used %s and messages of %s, as perftest's maintainers advise (linux-rdma/perftest#252)", count(r.QPs, "QP", "QPs"), sizeTextOf(r))
	}
	fix := "run the pairs with `rdggen bench` to see which hosts and ports the slow pairs share and whether PFC pauses rose"
	if !e.rdggenCluster() {
		fix = "measure each pair of hosts alone and read the PFC pause and ECN counters of the switch ports between them"
	}
	if len(retry) > 0 {
		fix += "; retry with " + strings.Join(retry, " and ") + " (perftest maintainers in linux-rdma/perftest#252)"
	}
	cs = append(cs, Cause{Layer: LayerFabric, Finding: f, Fix: fix})
	return cs
}

// sizeTextOf is the size of r's largest row as sizeText says it, "" without
// rows.
func sizeTextOf(r *Perftest) string {
	if row, ok := r.Largest(); ok {
		return sizeText(row.Bytes)
	}
	return ""
}

// lowBusBWCauses explains a busbw below its pass line, from the log's
// verdicts first; on a multi-rail cluster from the rails' ib_write_bw
// verdicts next ([railBusBWCauses]).
func lowBusBWCauses(t *NCCLTests, e Expect, logVs []Verdict) []Cause {
	var cs []Cause
	for _, v := range logVs {
		if v.Status != StatusPass {
			cs = append(cs, v.Causes...)
		}
	}
	if len(cs) > 0 {
		return cs
	}
	var rails []Cause // after the causes below, unless they replace them
	if e.multiRail() {
		rc, only := railBusBWCauses(t.Log, e)
		if only {
			return rc
		}
		rails = rc
	}
	rdma := false
	for _, v := range logVs {
		if v.Check == CheckTransport && v.Status == StatusPass {
			rdma = true
		}
	}
	pairs := "run `rdggen bench` for ib_write_bw pair by pair and the switch counters"
	if !e.rdggenCluster() {
		pairs = "run ib_write_bw between each pair of hosts and read the switch ports' PFC and ECN counters"
	}
	switch {
	case t.Log.Empty():
		cs = append(cs, Cause{Layer: LayerBenchmark,
			Finding: "the output has no NCCL log, so the transport and GPUDirect RDMA cannot be checked",
			Fix:     "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV (-x with mpirun) and judge the whole output"})
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "busbw below the line, and the file does not show which transport carried it: TCP sockets, a slow host pair, a congested or lossy port, or one NIC per node fewer than the pass line assumes",
			Fix:     "judge the run's NCCL log; " + pairs + "; check --nics-per-node"})
	case rdma:
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "busbw below the line with RDMA in use (the log's transport verdict): a slow host pair, a congested or lossy port, or one NIC per node fewer than the pass line assumes",
			Fix:     pairs + "; check --nics-per-node"})
	default:
		cs = append(cs, Cause{Layer: LayerFabric,
			Finding: "busbw below the line; the NCCL log does not say which transport NCCL chose: a slow host pair, a congested or lossy port, or one NIC per node fewer than the pass line assumes",
			Fix:     "run with NCCL_DEBUG_SUBSYS=INIT,NET to see the transport; " + pairs + "; check --nics-per-node"})
	}
	return append(cs, rails...)
}

// gpuCauses are the failed GPU checks of the evidence.
func gpuCauses(e Expect) []Cause {
	var cs []Cause
	for _, c := range []struct {
		target      applyplan.TargetName
		check, what string
	}{
		{readiness.TargetHosts, EvidenceGPUs, "the passed-through GPUs are not all visible"},
		{readiness.TargetHosts, EvidenceDriver, "the GPU driver is not loaded"},
		{readiness.TargetHosts, EvidenceNvidiaRuntime, "Docker has no nvidia runtime, so the container gets no GPU"},
	} {
		if rs := failedEvidence(e.Evidence, c.target, c.check); len(rs) > 0 {
			cs = append(cs, evidenceCause(LayerGPU, c.what, rs))
		}
	}
	return cs
}

// failureCauses explains a failed nccl-tests run from its log and the
// GPU checks.
func failureCauses(t *NCCLTests, e Expect, logVs []Verdict) []Cause {
	var cs []Cause
	for _, v := range logVs {
		if v.Status != StatusPass {
			cs = append(cs, v.Causes...)
		}
	}
	if len(t.Failures) > 0 {
		cs = append(cs, gpuCauses(e)...)
	}
	if len(cs) == 0 && len(t.Failures) > 0 {
		cs = append(cs, Cause{Layer: LayerBenchmark,
			Finding: "the test stopped with an error and the output has no NCCL warning that explains it",
			Fix:     "rerun with NCCL_DEBUG=INFO and judge the whole output"})
	}
	return cs
}

func mtuCause(got int, e Expect) Cause {
	c := Cause{Layer: LayerRDMAConfig}
	data := "the data network's MTU"
	if e.DataMTU > 0 {
		data = fmt.Sprintf("data_mtu %d", e.DataMTU)
	}
	if got > e.MTU {
		c.Finding = fmt.Sprintf("the RDMA port runs MTU %d B, more than %s fits (%d B): the host's interface MTU is above the inventory's, or perftest was given -m %d", got, data, e.MTU, got)
		c.Fix = "make the inventory's data_mtu the network's real MTU (every hop) and `rdggen apply --target hosts`; or run ib_write_bw without -m"
		if !e.rdggenCluster() {
			c.Finding = fmt.Sprintf("the RDMA port runs MTU %d B, more than %s fits (%d B): the host's interface MTU is above the one given, or perftest was given -m %d", got, data, e.MTU, got)
			c.Fix = "judge with --mtu set to the network's real MTU (every hop); or run ib_write_bw without -m"
		}
	} else {
		c.Finding = fmt.Sprintf("the RDMA port runs MTU %d B, below the %d B that %s allows: the VF's interface MTU was not raised, or perftest was given -m %d", got, e.MTU, data, got)
		c.Fix = "`rdggen apply --target hosts` sets the data interface's MTU (rdggen check's rdma-mtu shows the port's active MTU)"
		if !e.rdggenCluster() {
			c.Finding = fmt.Sprintf("the RDMA port runs MTU %d B, below the %d B that %s allows: the data interface's MTU was not raised, or perftest was given -m %d", got, e.MTU, data, got)
			c.Fix = "set the data interface's MTU to the network's (ibv_devinfo shows the port's active MTU)"
		}
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidenceRDMAMTU); len(rs) > 0 {
		c.Hosts = evidenceCause(LayerRDMAConfig, "", rs).Hosts
	}
	return c
}

// gidCause explains a GID index other than e's. gid is the GID the file
// shows at that index (perftest's "GID:" line), "" when it shows none: an
// IPv4-mapped GID is the data address's, so only its RoCE version can be
// wrong, which the file does not show.
func gidCause(got int, e Expect, gid string) Cause {
	c := Cause{Layer: LayerRDMAConfig,
		Finding: fmt.Sprintf("perftest used GID index %d, not the RoCE v2 GID of the data address at index %d (mlx5's table for one IPv4 address: 0 and 1 link-local RoCE v1 and v2, 2 and 3 IPv4 RoCE v1 and v2): RoCE v1 frames carry no IP header, so no DSCP for the lossless class, and a link-local GID does not route between subnets", got, e.GIDIndex),
		Fix:     fmt.Sprintf("run ib_write_bw with -x %d (rdggen check's gid names the index each host has)", e.GIDIndex)}
	if !e.rdggenCluster() {
		c.Fix = fmt.Sprintf("run ib_write_bw with -x %d (show_gids names each host's RoCE v2 index)", e.GIDIndex)
	}
	if a := gidIPv4(gid); a.IsValid() {
		c.Finding = fmt.Sprintf("perftest used GID index %d, whose GID in the file is IPv4-mapped (%s, the data address's), not index %d: the file does not show that GID's RoCE version (v1 frames carry no IP header, so no DSCP for the lossless class); on this host the RoCE v2 GID of that address may simply sit at index %d", got, a, e.GIDIndex, got)
		c.Fix = fmt.Sprintf("check the host's GID table (show_gids, or rdggen check's gid): if index %d is RoCE v2, judge with --gid-index %d; otherwise run ib_write_bw with -x set to its RoCE v2 index", got, got)
	} else if strings.HasPrefix(gid, "254:128:") {
		c.Finding = fmt.Sprintf("perftest used GID index %d, whose GID in the file is link-local (%s), not the RoCE v2 GID of the data address at index %d: a link-local GID does not route between subnets", got, gid, e.GIDIndex)
	}
	if rs := failedEvidence(e.Evidence, readiness.TargetHosts, EvidenceGID); len(rs) > 0 {
		ec := evidenceCause(LayerRDMAConfig, "the RoCE v2 GID is at another index", rs)
		c.Hosts = ec.Hosts
		c.Finding += "; " + ec.Finding
	}
	return c
}

// versionBefore reports whether the NCCL version v ("2.9.6+cuda11.2") is
// below major.minor; ok is false when v does not parse.
func versionBefore(v string, major, minor int) (before, ok bool) {
	v, _, _ = strings.Cut(v, "+")
	p := strings.Split(v, ".")
	if len(p) < 2 {
		return false, false
	}
	a, err1 := strconv.Atoi(p[0])
	b, err2 := strconv.Atoi(p[1])
	if err1 != nil || err2 != nil {
		return false, false
	}
	return a < major || (a == major && b < minor), true
}
