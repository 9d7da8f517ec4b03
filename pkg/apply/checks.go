package apply

import (
	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/engines/nvueapply"
	"github.com/rdggen/rdggen/internal/engines/onyxapply"
	"github.com/rdggen/rdggen/internal/engines/workerapply"
	"github.com/rdggen/rdggen/pkg/applyplan"
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

// checks are the targets' checks, grouped as each target reports them
// (the ESXi host's before its VMs'); the rules behind them are the Check constants' documentation in
// internal/engines/onyxapply, internal/engines/esxiapply, internal/engines/hostapply (check.go,
// guest.go; docs/rules.md#the-guest-ready-for-gpudirect-rdma) and
// internal/engines/workerapply.
var checks = map[applyplan.TargetName][]CheckInfo{
	readiness.TargetSwitch: {
		{onyxapply.CheckConfig, "the running-config against the inventory (apply's plan)"},
		{onyxapply.CheckLink, "per data port and fabric uplink: the link up; its speed as found"},
		{onyxapply.CheckMTU, "per data port and fabric uplink: MTU ≥ 9216 (jumbo data network, fabric) or 1500"},
		{onyxapply.CheckPFC, "per data port and fabric uplink: PFC on, on roce.priority, oper Enabled"},
		{onyxapply.CheckPauseCounters, "per data port and fabric uplink: pause frames on roce.priority (never fails)"},
		{onyxapply.CheckECN, "per data port and fabric uplink: ECN on the RoCE class at roce.ecn_min/max_kb"},
		{onyxapply.CheckLLDP, "per fabric uplink: the LLDP neighbor is the switch and port fabric.links plans"},
		{onyxapply.CheckBGP, "per planned BGP session of a fabric switch: ESTABLISHED (show ip bgp summary)"},
	},
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
		{esxiapply.CheckNUMA, "per VM: each GPU on the NUMA node of the NIC's PF"},
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

// cumulusChecks are the switch target's checks on a Cumulus Linux switch,
// read through the NVUE REST API with GET requests only (the rules are the
// Check constants' documentation in internal/engines/nvueapply; docs/nvue.md).
var cumulusChecks = []CheckInfo{
	{nvueapply.CheckConfig, "the applied configuration against the inventory (apply's plan)"},
	{nvueapply.CheckRoCE, "qos roce operational = applied: mode, PFC priority, ECN, traffic class"},
	{nvueapply.CheckLink, "per data port and fabric uplink: the link up"},
	{nvueapply.CheckMTU, "per data port and fabric uplink: the operational MTU as apply sets it (9216)"},
	{nvueapply.CheckPauseCounters, "per data port and fabric uplink: PFC pause frames on roce.priority (never fails)"},
	{nvueapply.CheckLLDP, "per fabric uplink: the LLDP neighbor is the switch and port fabric.links plans"},
	{nvueapply.CheckBGP, "per planned BGP session of a fabric switch: established"},
	{nvueapply.CheckRoutes, "per prefix another fabric switch advertises: installed by BGP, a next hop over each planned uplink (ECMP across the spines)"},
}

// CumulusSwitchChecks lists the checks the switch target reports for a
// Cumulus Linux switch (Checks(readiness.TargetSwitch) lists an ONYX
// switch's), except CheckConnect. The slice is the caller's.
func CumulusSwitchChecks() []CheckInfo {
	return append([]CheckInfo(nil), cumulusChecks...)
}

// Checks lists every check target (readiness.TargetSwitch, TargetESXi,
// TargetHosts or TargetWorkers) reports, with what each reads, except
// CheckConnect, which every target has; nil for another target. The slice
// is the caller's.
func Checks(target applyplan.TargetName) []CheckInfo {
	return append([]CheckInfo(nil), checks[target]...)
}
