package vmx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// VM-side desired state. Every value below is produced by exactly one
// function or constant; the .vmx artifact and the apply engine
// (internal/engines/esxiapply) both read them, so the file a user reviews and what
// apply sets cannot drift apart.

// Firmware is the VM firmware DirectPath I/O of large-BAR GPUs needs: EFI
// (VMware, "How to enable NVIDIA V100 GPU in passthrough mode on vSphere",
// 2018: the guest must boot and be installed in EFI mode).
const Firmware = "efi"

// ExtraConfig keys of the 64-bit MMIO window (docs/rules.md#64-bit-mmio-window).
const (
	KeyUse64bitMMIO = "pciPassthru.use64bitMMIO"
	KeyMMIOSizeGB   = "pciPassthru.64bitMMIOSizeGB"
)

// ExtraConfig keys of PCIe peer-to-peer between a VM's passthrough devices,
// which GPUDirect RDMA needs: the VF's DMA reads and writes GPU memory
// directly instead of bouncing through host memory
// (docs/rules.md#gpudirect-rdma-p2p-keys). NVIDIA documents both, set to true
// beside the two MMIO keys, as the vSphere prerequisites of GPUDirect RDMA
// (GPU Operator, "GPUDirect RDMA and GPUDirect Storage", vSphere
// prerequisites; NVIDIA AI Enterprise with OpenShift on vSphere), and
// VMware's Private AI design relaxes ACS in the VM's configuration for
// peer-to-peer between devices on one root complex. They are VM-wide (no
// device index). No public source says whether they also govern an SR-IOV
// VF attached as a network adapter exactly as a DirectPath device; rdggen
// sets them anyway and `rdggen bench` proves GPUDirect RDMA by NCCL's
// /GDRDMA channels.
const (
	// KeyAllowP2P lets the VM's passthrough devices do PCIe peer-to-peer.
	KeyAllowP2P = "pciPassthru.allowP2P"
	// KeyRelaxACSforP2P relaxes Access Control Services on the peer-to-peer
	// path, so peer traffic is not redirected through the root complex.
	KeyRelaxACSforP2P = "pciPassthru.RelaxACSforP2P"
)

// Option is one VMX / ExtraConfig entry, key = "value".
type Option struct {
	Key, Value string
}

// Matches reports whether v, a VM's current value of o.Key, already means
// o.Value: the same string, or for a boolean the same truth value in any
// case ("true" for "TRUE": VMX booleans are case-insensitive, and NVIDIA's
// documents write them in lower case).
func (o Option) Matches(v string) bool {
	if v == o.Value {
		return true
	}
	if o.Value == "TRUE" || o.Value == "FALSE" {
		return strings.EqualFold(v, o.Value)
	}
	return false
}

// IsP2P reports whether key is one of the peer-to-peer keys (KeyAllowP2P,
// KeyRelaxACSforP2P).
func IsP2P(key string) bool { return key == KeyAllowP2P || key == KeyRelaxACSforP2P }

// ExtraConfig returns the VM's desired ExtraConfig entries, in .vmx order:
// pciPassthru.use64bitMMIO = "TRUE" and pciPassthru.64bitMMIOSizeGB = "N"
// with N = MMIOSizeGB(h.GPUs), then pciPassthru.allowP2P = "TRUE" and
// pciPassthru.RelaxACSforP2P = "TRUE" for GPUDirect RDMA between the GPUs
// and the VF (every VM of a valid inventory has both). Apply sets exactly
// these keys and leaves every other ExtraConfig key alone.
func ExtraConfig(h *inventory.Host) []Option {
	return []Option{
		{Key: KeyUse64bitMMIO, Value: "TRUE"},
		{Key: KeyMMIOSizeGB, Value: strconv.Itoa(MMIOSizeGB(h.GPUs))},
		{Key: KeyAllowP2P, Value: "TRUE"},
		{Key: KeyRelaxACSforP2P, Value: "TRUE"},
	}
}

// ReserveAllMemory is true: DirectPath I/O requires all guest memory
// reserved ("Invalid memory setting: memory reservation (sched.mem.min)
// should be equal to memsize"). Apply sends memoryReservationLockedToMax =
// true with reservation = the VM's memoryMB, read from vCenter because the
// inventory does not hold the VM's memory size.
const ReserveAllMemory = true

// Adapter is the VM's SR-IOV network adapter: a virtual function of the
// ConnectX physical function PF, connected to PortGroup.
type Adapter struct {
	// NICModel is the ConnectX model, e.g. "ConnectX-5".
	NICModel string
	// PF is the ESXi uplink of the physical function, e.g. "vmnic4"; apply
	// resolves it to the PF's PCI address through the host's pnic list.
	PF string
	// PortGroup is the port group the adapter connects to, e.g. "VM Network".
	PortGroup string
}

// SRIOVAdapter returns the VM's desired SR-IOV adapter.
func SRIOVAdapter(h *inventory.Host) Adapter {
	return Adapter{NICModel: h.NIC.Model, PF: h.NIC.PF, PortGroup: h.NIC.PortGroup}
}

// Host-side desired state.

// NICModule is the ESXi driver module of ConnectX-4/5/6 NICs.
const NICModule = "nmlx5_core"

// nmlx5_core module parameter names (NVIDIA "ConnectX-4/ConnectX-5 NATIVE ESXi
// Driver for VMware vSphere" user manual, "Module Parameters" table,
// docs.nvidia.com/networking/display/VMwareUMv419711/Module+Parameters and
// …/VMwarev4171516/Introduction for ESXi 6.7):
const (
	// ParamMaxVFs: "max_vfs" — number of SR-IOV VFs to open; a comma
	// separated list gives one value per port of the devices in PCI order,
	// a single value applies to the first port. 0 disables SR-IOV (default);
	// the driver accepts up to 127 per port (inventory nicMaxVFs). rdggen
	// sets the PF's own value and keeps the others' (MaxVFs, NICPortIndex).
	ParamMaxVFs = "max_vfs"
	// ParamPFCTx: "pfctx" — priority flow control policy on TX, an 8-bit
	// bitmask (0–255) of priorities 0–7; a set bit generates pause frames for
	// that priority. Must equal pfcrx.
	ParamPFCTx = "pfctx"
	// ParamPFCRx: "pfcrx" — priority flow control policy on RX, the same
	// bitmask; a set bit honours received pause frames for that priority.
	// VMware documents `-p "pfctx=0x08 pfcrx=0x08"` for priority 3.
	ParamPFCRx = "pfcrx"
	// ParamTrustState: "trust_state" — what the port classifies ingress
	// traffic by: 1 = PCP (default), 2 = DSCP.
	ParamTrustState = "trust_state"
	// ParamECN: "ecn" — 1 enables the ECN feature (DCQCN congestion control),
	// 0 disables it (default).
	ParamECN = "ecn"
)

// TrustDSCP is the trust_state value of DSCP-based QoS (docs/rules.md#switch-onyx: lossless
// RoCE in DSCP mode).
const TrustDSCP = 2

// Param is one module parameter, name=value.
type Param struct {
	Name, Value string
}

// PFCMask is the pfctx/pfcrx bitmask that enables PFC on one priority, written
// as the driver documents it: 0x08 for priority 3 (bit 3).
func PFCMask(priority int) string {
	return fmt.Sprintf("0x%02x", 1<<priority)
}

// ModuleParams returns the nmlx5_core parameters rdggen manages on an ESXi host
// whose NIC is nic, when its PF is the host's first nmlx5_core port and the
// module has no parameters yet: HostModuleParams(nic, roce, 0, "").
func ModuleParams(nic inventory.NIC, roce inventory.RoCE) []Param {
	return HostModuleParams(nic, roce, 0, "")
}

// HostModuleParams returns the nmlx5_core parameters rdggen manages on an
// ESXi host whose NIC is nic, in the order they are written: max_vfs,
// pfctx and pfcrx (PFC on the RoCE priority), trust_state (DSCP) and ecn.
// They must be set in one `-p` string (see MergeParams). port is the PF's
// position (0 = first) among the host's nmlx5_core ports in PCI address
// order (NICPort), current the module's current parameter string: max_vfs
// is MaxVFs of current's value, which gives the PF nic.VFs and keeps every
// other port's value.
func HostModuleParams(nic inventory.NIC, roce inventory.RoCE, port int, current string) []Param {
	mask := PFCMask(roce.Priority)
	cur := ""
	for _, p := range ParseParams(current) {
		if p.Name == ParamMaxVFs {
			cur = p.Value // the first, as MergeParams keeps it
			break
		}
	}
	return []Param{
		{Name: ParamMaxVFs, Value: MaxVFs(cur, port, nic.VFs)},
		{Name: ParamPFCTx, Value: mask},
		{Name: ParamPFCRx, Value: mask},
		{Name: ParamTrustState, Value: strconv.Itoa(TrustDSCP)},
		{Name: ParamECN, Value: "1"},
	}
}

// MaxVFs returns the max_vfs value that gives the port at position port
// (0 = first nmlx5_core port in PCI order) vfs VFs and every other port the
// VFs current (the parameter's value now, "" when unset) gives it: the
// driver reads one comma-separated value per port, a port without a value
// gets none (0), so the list is padded with 0 up to port (VMware, vSphere
// Networking 6.5, enabling SR-IOV with an ESXCLI command: "each entry
// indicates the number of virtual functions for a port",
// max_vfs=0,10,10,10; ParamMaxVFs). When current already gives port vfs it
// is returned as it is, so a second apply changes nothing. E.g.
// MaxVFs("", 1, 8) = "0,8", MaxVFs("4", 1, 8) = "4,8", MaxVFs("8,8", 0, 8)
// = "8,8".
func MaxVFs(current string, port, vfs int) string {
	if n, ok := PortMaxVFs(current, port); ok && n == vfs {
		return current
	}
	var vals []string
	if strings.TrimSpace(current) != "" {
		vals = strings.Split(current, ",")
	}
	for len(vals) <= port {
		vals = append(vals, "0")
	}
	vals[port] = strconv.Itoa(vfs)
	return strings.Join(vals, ",")
}

// PortMaxVFs is the VF count a max_vfs value gives the port at position
// port (see MaxVFs): its own entry of the list, 0 when the list is shorter
// (or empty); ok is false when that entry is not a number.
func PortMaxVFs(value string, port int) (int, bool) {
	if strings.TrimSpace(value) == "" {
		return 0, true
	}
	vals := strings.Split(value, ",")
	if port >= len(vals) {
		return 0, true
	}
	n, ok := parseNumber(strings.TrimSpace(vals[port]))
	return int(n), ok
}

// NICPort is a physical NIC of an ESXi host as NICPortIndex reads it:
// its uplink name (vmnic4), PCI address (0000:d8:00.0) and driver.
type NICPort struct {
	Device, PCI, Driver string
}

// NICPortIndex is the position (0 = first) of the uplink pf among the
// host's NICModule ports in PCI address order — the order of max_vfs's
// values (ParamMaxVFs). A port whose driver is not reported counts as
// NICModule's only when it is pf itself. ok is false when pf is not among
// ports or its driver is another module (then nmlx5_core's parameters do
// not reach it).
func NICPortIndex(ports []NICPort, pf string) (int, bool) {
	var mine []NICPort
	found := false
	for _, p := range ports {
		if p.Device == pf {
			if p.Driver != "" && p.Driver != NICModule {
				return 0, false
			}
			found = true
			mine = append(mine, p)
			continue
		}
		if p.Driver == NICModule {
			mine = append(mine, p)
		}
	}
	if !found {
		return 0, false
	}
	slices.SortFunc(mine, func(a, b NICPort) int { return strings.Compare(strings.ToLower(a.PCI), strings.ToLower(b.PCI)) })
	return slices.IndexFunc(mine, func(p NICPort) bool { return p.Device == pf }), true
}

// HostNIC is the NIC of an ESXi host: every VM placed on it names the same
// one (inventory.Validate checks that). ok is false for an unknown host.
func HostNIC(inv *inventory.Inventory, esxi string) (inventory.NIC, bool) {
	vms := inv.HostsOnESXi(esxi)
	if len(vms) == 0 {
		return inventory.NIC{}, false
	}
	return vms[0].NIC, true
}

// HostGPUs returns every GPU passed through from the ESXi host, VM by VM in
// file order, with the VM it goes to.
func HostGPUs(inv *inventory.Inventory, esxi string) []HostGPU {
	return hostGPUs(inv.HostsOnESXi(esxi))
}

// hostGPUs is HostGPUs of the VMs of one ESXi host.
func hostGPUs(vms []*inventory.Host) []HostGPU {
	var out []HostGPU
	for _, h := range vms {
		for i, g := range h.GPUs {
			out = append(out, HostGPU{VM: h.VM, Index: i, GPU: g})
		}
	}
	return out
}

// HostGPU is one GPU of an ESXi host and the VM it is passed through to.
type HostGPU struct {
	VM    string
	Index int // position in the VM's gpus list
	GPU   inventory.GPU
}
