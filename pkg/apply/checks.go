package apply

import (
	"slices"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/engines/workerapply"
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckConnect is the check every target reports, as a machine's only
// result (Unknown, with why), when the machine could not be reached or
// read; `rdggen check` also reports it for a target that failed before
// any result.
const CheckConnect = driver.CheckConnect

// CheckInfo is one check of a target: its name, as readiness.Result.Check
// carries it, and what it reads and wants, in a line for a person.
type CheckInfo struct {
	Name string
	What string
}

// checks are the targets' checks but the switch's (each switch OS's, in
// internal/switchos), grouped as each target reports them (the ESXi
// host's before its VMs'); the rules behind them are the Check constants'
// documentation in internal/engines/esxiapply, internal/engines/hostapply
// (check.go, guest.go; docs/rules.md#the-guest-ready-for-gpudirect-rdma)
// and internal/engines/workerapply.
var checks = map[applyplan.TargetName][]CheckInfo{
	readiness.TargetESXi: {
		{esxiapply.CheckExists, "the ESXi host or VM is in vCenter, once (shown when not)"},
		{esxiapply.CheckRead, "vCenter answered the host's reads (shown when not)"},
		{esxiapply.CheckNIC, "per host: nic.pf exists, SR-IOV capable, takes nic.vfs"},
		{esxiapply.CheckPassthrough, "per host: GPU passthrough, PF SR-IOV enabled and active"},
		{esxiapply.CheckSRIOV, "per host: the PF's VFs requested (nic.vfs) and present"},
		{esxiapply.CheckModuleParams, "per host: nmlx5_core parameters as apply sets them"},
		{esxiapply.CheckMTU, "per host: the PF's virtual switch MTU ≥ data_mtu"},
		{esxiapply.CheckReboot, "per host: no reboot pending"},
		{esxiapply.CheckPlacement, "per VM: on the ESXi host the inventory names"},
		{esxiapply.CheckConfig, "per VM: firmware, 64-bit MMIO, reservation, backings"},
		{esxiapply.CheckPower, "per VM: powered on"},
		{esxiapply.CheckDevices, "per VM: GPUs and SR-IOV adapter attached, connected"},
		{esxiapply.CheckP2P, "per VM: the PCIe peer-to-peer keys GPUDirect RDMA needs"},
		{esxiapply.CheckNUMA, "per VM: each GPU on the NUMA node of the NIC's PF (per rail: its VF with its GPUs)"},
		{esxiapply.CheckDeviceGroups, "per VM of several rails: the host's vendor device groups (a report)"},
	},
	readiness.TargetHosts: {
		{hostapply.CheckRDMADevice, "the RDMA device horovod.hca exists"},
		{hostapply.CheckPortState, "its port ACTIVE, link layer Ethernet"},
		{hostapply.CheckGID, "a RoCE v2 GID of the data address (its index)"},
		{hostapply.CheckRDMAMTU, "the port's active MTU (ibv_devinfo, when installed)"},
		{hostapply.CheckEFI, "booted with EFI firmware"},
		{hostapply.CheckGPUs, "the inventory's GPUs on the PCI bus, taken by the driver"},
		{hostapply.CheckBAR1, "per GPU: BAR1 as large as the inventory's"},
		{hostapply.CheckDriver, "the NVIDIA kernel module loaded, its version"},
		{hostapply.CheckPeermem, "nvidia-peermem (or nv_peer_mem) loaded, only one; or GPUDirect RDMA through DMA-BUF (open GPU kernel module, Linux ≥ 5.12, Turing or later)"},
		{hostapply.CheckVerbs, "ibv_devices (or the kernel's verbs devices) lists the HCA"},
		{hostapply.CheckRuntime, "Docker can give the workers their GPUs (NVIDIA runtime)"},
		{hostapply.CheckMTU, "the data interface's MTU"},
		{hostapply.CheckRoCEQoS, "the RoCE ToS, traffic class and TCP ECN the script sets"},
		{hostapply.CheckDocker0, "docker0 carries bip"},
		{hostapply.CheckDocker, "daemon.json has rdggen's keys"},
		{hostapply.CheckForwarding, "IPv4 forwarding on"},
		{hostapply.CheckRoutes, "routes to the other hosts' container subnets (or pool)"},
		{hostapply.CheckFirewall, "RDGGEN-CONTAINERS first in DOCKER-USER"},
		{hostapply.CheckNAT, "RDGGEN-POSTROUTING first in nat POSTROUTING"},
		{hostapply.CheckFiles, "the scripts and units apply installs, as generated"},
		{hostapply.CheckConfig, "apply cannot plan the VM: why (instead of mtu … files)"},
		{hostapply.CheckRailLink, "several rails, per rail: its interface up, carrier, address, MTU"},
		{hostapply.CheckRailRouting, "per rail: its rule, its table, its routes in the main table"},
		{hostapply.CheckRailGateway, "per rail: its gateway answers ping -I from its interface"},
		{hostapply.CheckRailSysctl, "arp_ignore, arp_announce, rp_filter at 2"},
		{hostapply.CheckTopology, "NCCL's topology file valid, of this guest's bus IDs and classes"},
		{hostapply.CheckGPUOrder, "per GPU: on the vNUMA node of its pciPassthru (when given)"},
	},
	readiness.TargetWorkers: {
		{workerapply.CheckWorker, "the container as apply leaves it"},
		{workerapply.CheckSSHD, "sshd on the worker port with the cluster's host key"},
		{workerapply.CheckInterfaces, "NCCL_SOCKET_IFNAME's interfaces in the container"},
		{workerapply.CheckDevices, "/dev/infiniband in the container has the verbs device"},
		{workerapply.CheckMemlock, "ulimit -l unlimited in the container"},
		{workerapply.CheckGDRLevel, "NCCL_NET_GDR_LEVEL in the container as rdggen sets it"},
		{workerapply.CheckSource, "per login (a ring; every pair with --all-pairs): the peer's sshd sees this worker's address"},
		{workerapply.CheckPeerRules, "NAT exemption, routes and accept rules admit every peer's worker"},
		{workerapply.CheckRendezvous, "torchrun only: a connection to the rendezvous endpoint on the first worker"},
	},
}

// SwitchOSChecks are the switch target's checks on the switches of one
// OS, as its engine reports them.
type SwitchOSChecks struct {
	// OS is the switch OS (Name: "Cumulus Linux"); How says how its
	// switches are read ("through the NVUE REST API (GET requests only)").
	OS  inventory.SwitchOS
	How string
	// Checks are its checks, except CheckConnect.
	Checks []CheckInfo
}

// SwitchChecks lists, per switch OS rdggen has an engine for (in the order
// of inventory.SwitchOSes), the checks the switch target reports on its
// switches. The slice is the caller's.
func SwitchChecks() []SwitchOSChecks {
	var out []SwitchOSChecks
	for _, os := range switchos.All() {
		c := SwitchOSChecks{OS: os.OS, How: os.Checks.How}
		for _, x := range os.Checks.List {
			c.Checks = append(c.Checks, CheckInfo(x))
		}
		out = append(out, c)
	}
	return out
}

// Checks lists every check target (readiness.TargetSwitch, TargetESXi,
// TargetHosts or TargetWorkers) reports, with what each reads, except
// CheckConnect, which every target has; nil for another target. For the
// switch target, each check once, as the first OS that reports it
// describes it (SwitchChecks lists them per OS). The slice is the
// caller's.
func Checks(target applyplan.TargetName) []CheckInfo {
	if target != readiness.TargetSwitch {
		return append([]CheckInfo(nil), checks[target]...)
	}
	var out []CheckInfo
	for _, os := range SwitchChecks() {
		for _, c := range os.Checks {
			if !slices.ContainsFunc(out, func(x CheckInfo) bool { return x.Name == c.Name }) {
				out = append(out, c)
			}
		}
	}
	return out
}
