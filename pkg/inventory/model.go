// Package inventory is the cluster model of rdggen: one YAML file (docs/inventory.md#keys) decoded
// strictly, with defaults inherited, values derived and every rule checked.
//
// Load returns either a complete, valid *Inventory or a *Report that lists every
// finding as file:line:col: path: rule. Generators (pkg/onyx, pkg/vmx,
// pkg/dockernet, pkg/horovod) take only a valid *Inventory and never fail.
package inventory

import (
	"fmt"
	"iter"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
)

// Inventory is a loaded, validated cluster. All slices are in file order.
type Inventory struct {
	// File is the name the inventory was loaded from ("<embedded>" for the
	// reference cluster); findings and generated headers name it.
	File string
	// Name is the cluster name, e.g. "clx-mld".
	Name string
	// RoCE holds the lossless RoCE (DSCP-based QoS) parameters, defaults filled in.
	RoCE RoCE
	// Switches are the switches the data ports connect to, on ONYX or
	// Cumulus Linux (Switch.OS).
	Switches []Switch
	// VCenter is the vSphere SDK URL from the file ("" when unset); GOVC_URL
	// overrides it at apply time.
	VCenter string
	// Docker is the container network plan shared by all hosts.
	Docker Docker
	// Horovod holds the launch settings.
	Horovod Horovod
	// Hosts are the training VMs, each with defaults resolved and values derived.
	Hosts []Host
	// Fabric is the leaf-spine cabling and addressing (fabric.go); the zero
	// Fabric for an inventory whose switches have no roles.
	Fabric Fabric
	// Warnings are things that are valid but probably not what was meant
	// (a docker.gateway that routing: hosts does not use, per-host routes
	// at a size where they fill gigabytes), in the shape of findings
	// (Finding.String: file:line:col: path: text), at most MaxFindings.
	// They never make an inventory invalid; the CLI prints them on stderr.
	Warnings []Finding

	pos positions
}

// RoCE is lossless RoCE v2 in DSCP-based QoS mode (docs/rules.md#switch-onyx; NVIDIA's DSCP
// recommendations). ONYX's default DSCP→switch-priority map is DSCP/8, which is
// why Validate requires DSCP/8 == priority for the data class; the CNP class is
// the NIC's DSCP 48 and priority 6 (docs/rules.md#cnp-dscp-and-priority), which
// agree, and the data class may not be priority 6.
type RoCE struct {
	// DSCP of RoCE data packets (0–63), default 26.
	DSCP int
	// Priority is the switch priority and traffic class of RoCE data (0–7),
	// lossless with PFC, default 3.
	Priority int
	// CNPDSCP is the DSCP of congestion notification packets (0–63), default 48.
	CNPDSCP int
	// CNPPriority is the strict-ETS switch priority/traffic class of CNPs (0–7),
	// default 6.
	CNPPriority int
	// ECNMinKB and ECNMaxKB are the ECN marking thresholds on the RoCE traffic
	// class, in KB (defaults 150 and 1500).
	ECNMinKB, ECNMaxKB int
	// BufferPercent is the share of switch buffer memory given to the lossless
	// pool, in percent (1–100), default 50.
	BufferPercent float64
}

// ToS is the IPv4 ToS byte of RoCE data packets: DSCP << 2 | ECT(0), i.e. 106
// for DSCP 26 (NVIDIA's recipe; docs/rules.md#tos-dscp-and-traffic-class).
func (r RoCE) ToS() int { return r.DSCP<<2 | 2 }

// Switch is one NVIDIA Spectrum switch, on ONYX, on Cumulus Linux or on
// a registered OS (exactly one of ONYX, Cumulus and OtherOS is set; OS
// says which).
type Switch struct {
	// Name is the switch hostname, e.g. "swx-mld-1-2".
	Name string
	// Model is the Spectrum model, e.g. "SN2700"; it decides Ports.
	Model string
	// ONYX is the ONYX version (the zero Version on a Cumulus switch);
	// from 3.8.2000 the `roce` command exists.
	ONYX Version
	// Cumulus is the Cumulus Linux version (the zero Version on an ONYX
	// switch), e.g. 5.9.1; it decides the NVUE forms (pkg/cumulus).
	Cumulus Version
	// OtherOS is the switch's OS when it is neither ONYX nor Cumulus
	// Linux (an OS of SwitchOSes beyond those two, SwitchSpec.Other), and
	// Other its version; "" and the zero Version otherwise.
	OtherOS SwitchOS
	Other   Version
	// Mgmt is where apply connects (ONYX over SSH, Cumulus through the
	// NVUE REST API): a host name or IP address, optionally with ":port"
	// ("" when unset).
	Mgmt string
	// Ports is the number of front-panel ports of Model (1/1 … 1/Ports).
	Ports int
	// Breakouts are the split front-panel ports: port number → breakout
	// mode (2, 4 or 8), written in switches[].breakout or derived from the
	// lanes the inventory cables (breakout.go); nil when no port is split.
	Breakouts map[int]int
	// Fabric holds the switch's place in a leaf-spine fabric (its role,
	// ASN, loopback and, on a leaf, the hosts' data subnet and gateway) and
	// which ports rdggen configures (fabric.go); the zero value for a switch
	// of an inventory without roles.
	Fabric SwitchFabric
}

// MaxSpeedGbps is the fastest Ethernet speed, Gb/s, a front-panel port of
// the switch model runs at (0 for unknown models): 100 for the Spectrum
// SN2000 models, the SN3420, SN3700C, SN3800 and SN4600C, 200 for the SN3700
// and SN4600, 400 for the SN4700 (NVIDIA's switch systems hardware user
// manuals; docs/rules.md#models-and-ports).
func (s Switch) MaxSpeedGbps() int { return switchMaxSpeedGbps[s.Model] }

// HasRoCECommand reports whether the switch takes the one-command `roce lossless`
// form (ONYX ≥ 3.8.2000, NVIDIA ONYX manual "RoCE commands"); false on Cumulus.
func (s Switch) HasRoCECommand() bool { return !s.ONYX.IsZero() && s.ONYX.AtLeast(3, 8, 2000) }

// SwitchOS is a switch's operating system, as the inventory names it: the
// key that gives the switch's version (`onyx:`, `cumulus:`, or the key of
// an OS registered with RegisterSwitchOS).
type SwitchOS string

// Switch operating systems, the values of Switch.OS.
const (
	OSONYX    SwitchOS = "onyx"
	OSCumulus SwitchOS = "cumulus"
)

// SwitchOSes are the switch operating systems rdggen knows, in the order
// their engines run: the table's, then those registered with
// RegisterSwitchOS, in the order they were registered.
var SwitchOSes = []SwitchOS{OSONYX, OSCumulus}

// SwitchOSTraits is what validation, the generators and the engines ask
// of a switch OS: the one row per OS of the model's table (switchOSTraits
// below for ONYX and Cumulus Linux), or what an OS registered with
// RegisterSwitchOS brings. Every function field must be set.
type SwitchOSTraits struct {
	// Name is the OS as a person writes it ("Cumulus Linux"); Short the
	// word for it in the picture and the lab's messages ("Cumulus").
	Name, Short string
	// OverSSH: apply reaches the switch's mgmt address over SSH (ONYX's
	// CLI, so known_hosts is needed); else over another transport (the
	// NVUE REST API over HTTPS).
	OverSSH bool
	// PortExample is a port in the OS's spelling, for messages.
	PortExample string
	// PortName is the OS's own name of a front-panel port.
	PortName func(p Port) string
	// PortRange names the front-panel ports 1 … n, for messages.
	PortRange func(n int) string
	// ShownPrefix is what the OS's show output and LLDP port ids put
	// before a port's name: "Eth" on ONYX ("Eth1/1"), nothing on Cumulus.
	ShownPrefix string
	// SwpPorts: the inventory may name the OS's ports swpN (swpNsL for a
	// lane) as well as 1/N: Linux's switch port names, which Cumulus Linux
	// uses. Without it swpN is refused on the OS's switches.
	SwpPorts bool
	// GlobalQoS: the RoCE QoS is switch-global, so it cannot be set on
	// every front-panel port (`ports: all`) apart from the cabled ones.
	GlobalQoS bool
	// Unnumbered: BGP between two switches of this OS needs no /31 (BGP
	// unnumbered on the link's IPv6 link-local addresses).
	Unnumbered bool
	// CheckVersion, when set, refuses a version of a registered OS the
	// OS cannot serve (its error is the finding's text); ONYX's and
	// Cumulus Linux's rules are validation's own (check_switch.go).
	CheckVersion func(v Version) error
}

var switchOSTraits = map[SwitchOS]SwitchOSTraits{
	OSONYX: {Name: "ONYX", Short: "ONYX", OverSSH: true, PortExample: "1/1", PortName: Port.String, ShownPrefix: "Eth",
		PortRange: func(n int) string { return fmt.Sprintf("1/1-1/%d", n) }},
	OSCumulus: {Name: "Cumulus Linux", Short: "Cumulus", PortExample: "swp1 (or 1/1)", SwpPorts: true, GlobalQoS: true, Unnumbered: true,
		PortName: func(p Port) string {
			if p.Lane > 0 {
				// Cumulus numbers the lanes of a broken-out port from 0
				// (swp1s0 … swp1s3; "Switch Port Attributes", breakout ports).
				return fmt.Sprintf("swp%ds%d", p.Number, p.Lane-1)
			}
			return fmt.Sprintf("swp%d", p.Number)
		},
		PortRange: func(n int) string { return fmt.Sprintf("swp1-swp%d (1/1-1/%d)", n, n) }},
}

// RegisterSwitchOS makes os a switch OS of the model, with traits t, for a
// switch OS that brings its own implementation (internal/switchos
// registers it with the rest of the OS): its key then gives a switch's
// version (`os: VERSION`, SwitchSpec.Other) and its switches are
// validated with t. os is a lower-case key (a letter, then letters,
// digits, '_' or '-'; at most 32), not already an OS and not a key of a
// switch's mapping. Register before loading any inventory (at
// initialization, or at the start of a test): registering is not safe
// together with Load or Build.
func RegisterSwitchOS(os SwitchOS, t SwitchOSTraits) error {
	switch {
	case !reOSKey.MatchString(string(os)):
		return fmt.Errorf("switch OS %q: not a key (a lower-case letter, then letters, digits, '_' or '-'; at most 32)", os)
	case slices.Contains(SwitchOSes, os):
		return fmt.Errorf("switch OS %q is already known", os)
	case t.Name == "" || t.Short == "" || t.PortExample == "" || t.PortName == nil || t.PortRange == nil:
		return fmt.Errorf("switch OS %q: its traits need Name, Short, PortExample, PortName and PortRange", os)
	}
	if fields, _ := fieldsOf(reflect.TypeFor[SwitchSpec]()); fields[string(os)] != nil {
		return fmt.Errorf("switch OS %q: a switch's mapping already has that key", os)
	}
	switchOSTraits[os] = t
	SwitchOSes = append(SwitchOSes, os)
	return nil
}

// reOSKey is the grammar of a registered OS's key.
var reOSKey = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// Known reports whether o is a switch OS of the model: in the table or
// registered.
func (o SwitchOS) Known() bool { _, ok := switchOSTraits[o]; return ok }

// Traits are o's row of the model's table (ONYX's for an unknown o).
func (o SwitchOS) Traits() SwitchOSTraits {
	if t, ok := switchOSTraits[o]; ok {
		return t
	}
	return switchOSTraits[OSONYX]
}

// String is the OS as the inventory names it: "onyx", "cumulus".
func (o SwitchOS) String() string { return string(o) }

// Name is the OS as a person writes it: "ONYX", "Cumulus Linux".
func (o SwitchOS) Name() string { return o.Traits().Name }

// Short is the OS's short name: "ONYX", "Cumulus".
func (o SwitchOS) Short() string { return o.Traits().Short }

// OverSSH reports whether apply reaches a switch of this OS over SSH (the
// ONYX CLI); else it goes through another transport (the NVUE REST API of
// Cumulus Linux, over HTTPS).
func (o SwitchOS) OverSSH() bool { return o.Traits().OverSSH }

// PortName is the OS's own name of front-panel port p: "1/8" on ONYX
// (module/port), "swp8" on Cumulus Linux (switch port 8; Cumulus numbers
// the front-panel ports swp1 … swpN in the order ONYX numbers 1/1 … 1/N).
func (o SwitchOS) PortName(p Port) string { return o.Traits().PortName(p) }

// ShownPortName is port p as the OS's show output, counters and LLDP
// port ids name it: "Eth1/8" (Eth1/8/2 for a lane) on ONYX (`show
// interfaces ethernet`), "swp8" on Cumulus Linux.
func (o SwitchOS) ShownPortName(p Port) string { return o.Traits().ShownPrefix + o.PortName(p) }

// ShownPrefix is what ShownPortName puts before PortName: "Eth" on ONYX,
// "" on Cumulus Linux.
func (o SwitchOS) ShownPrefix() string { return o.Traits().ShownPrefix }

// PortRange names the front-panel ports 1 … n of a switch of this OS, for
// messages: "1/1-1/32", "swp1-swp32 (1/1-1/32)".
func (o SwitchOS) PortRange(n int) string { return o.Traits().PortRange(n) }

// PortExample is a port in the OS's spelling, for messages: "1/1".
func (o SwitchOS) PortExample() string { return o.Traits().PortExample }

// GlobalQoS reports whether the OS's RoCE QoS is switch-global (Cumulus
// Linux's `qos roce`), so that `ports: all` has no meaning there.
func (o SwitchOS) GlobalQoS() bool { return o.Traits().GlobalQoS }

// Unnumbered reports whether BGP between two switches of this OS runs
// unnumbered (IPv6 link-local, no /31 on the link).
func (o SwitchOS) Unnumbered() bool { return o.Traits().Unnumbered }

// OS is the switch's operating system: OtherOS when set (an OS beyond
// ONYX and Cumulus Linux), OSCumulus when the inventory gives `cumulus:`,
// else OSONYX. It is the one place rdggen decides a switch's OS;
// everything else asks the SwitchOS it returns.
func (s Switch) OS() SwitchOS {
	switch {
	case s.OtherOS != "":
		return s.OtherOS
	case !s.Cumulus.IsZero():
		return OSCumulus
	}
	return OSONYX
}

// Version is the version of the OS the switch runs: ONYX, Cumulus or
// Other.
func (s Switch) Version() Version {
	switch s.OS() {
	case OSONYX:
		return s.ONYX
	case OSCumulus:
		return s.Cumulus
	}
	return s.Other
}

// Release is the switch's OS and version as a person writes it:
// "ONYX 3.6.8190" or "Cumulus Linux 5.9.1".
func (s Switch) Release() string {
	return s.OS().Name() + " " + s.Version().String()
}

// PortName is the switch's own name of front-panel port p
// (SwitchOS.PortName).
func (s Switch) PortName(p Port) string { return s.OS().PortName(p) }

// SwitchesOf are the inventory's switches that run os, in inventory order.
func (inv *Inventory) SwitchesOf(os SwitchOS) []Switch {
	var out []Switch
	for _, sw := range inv.Switches {
		if sw.OS() == os {
			out = append(out, sw)
		}
	}
	return out
}

// Docker is the container network plan (docs/rules.md#docker-networking).
type Docker struct {
	// Version is the Docker engine version on the VMs, e.g. "18.09"; from 28.2
	// daemon.json also needs "allow-direct-routing": true.
	Version Version
	// Pool is the range container subnets are carved from, e.g. 172.16.0.0/16.
	Pool netip.Prefix
	// Prefix is the length of each host's container subnet, e.g. 24.
	Prefix int
	// MTU of docker0 and container interfaces, bytes (68–9000); the data
	// MTU unless the inventory sets it lower.
	MTU int
	// DNS servers written to containers' resolv.conf.
	DNS []netip.Addr
	// Routing says who routes between the hosts' container subnets:
	// RoutingHosts (default, the guide's design: every host has a route to
	// every other host's subnet) or RoutingSwitch (every host has one route
	// for Pool via Gateway, and the switch has one route per host's subnet).
	Routing RoutingMode
	// Gateway is the switch's address on the data network in RoutingSwitch
	// mode: docker.gateway, or by default the data network's last host
	// address (31.31.31.254 in 31.31.31.0/24). It is set in both modes when
	// it is valid (apply uses it to recognise a gateway rdggen configured
	// before), and the zero Addr when the data network has no free address
	// for it.
	Gateway netip.Addr
}

// AllowDirectRouting reports whether the engine needs "allow-direct-routing"
// (Docker ≥ 28.2, moby/moby#49832) for routed traffic to container addresses.
func (d Docker) AllowDirectRouting() bool { return d.Version.AtLeast(28, 2) }

// Horovod network modes.
const (
	NetworkBridge = "bridge" // the guide's routed docker0: workers use container addresses
	NetworkHost   = "host"   // containers share the VM's stack: workers use data addresses
)

// Horovod holds the launch settings (docs/rules.md#horovod-launch).
type Horovod struct {
	// Network is NetworkBridge (default) or NetworkHost.
	Network string
	// SSHPort is the port of sshd inside the worker containers, default 12345.
	SSHPort int
	// Image is the Horovod container image.
	Image string
	// HCA is the RDMA device of the data VF inside the VM (NCCL_IB_HCA),
	// default "mlx5_0".
	HCA string
	// Launcher is the job's launcher: LauncherHorovod (default: horovodrun
	// or mpirun from the first worker, ranks started over the workers' SSH)
	// or LauncherTorchrun (one torchrun per worker, docs/rules.md#torchrun).
	Launcher Launcher
	// NprocPerNode is torchrun's --nproc_per_node, the processes of each
	// worker; 0 (the default) means each host's GPU count (Host.Slots).
	NprocPerNode int
	// RdzvPort is the TCP port of torchrun's rendezvous store on the first
	// worker (--master_port), default 29400 (DefaultRdzvPort).
	RdzvPort int
	// RdzvID is torchrun's job id (--rdzv_id): 1–64 letters, digits, '.',
	// '_' and '-', starting with a letter or digit; default the cluster's name.
	RdzvID string
}

// Launcher is what starts the training job's ranks: the value of
// horovod.launcher.
type Launcher string

// String is the launcher as the inventory writes it.
func (l Launcher) String() string { return string(l) }

// Job launchers (horovod.launcher).
const (
	LauncherHorovod  Launcher = "horovod"  // horovodrun (or mpirun) from the first worker, the guide's
	LauncherTorchrun Launcher = "torchrun" // PyTorch's torchrun in every worker
)

// Host is one training VM on one ESXi host, defaults resolved.
type Host struct {
	// Index is the position in the file's hosts list (0-based).
	Index int
	// Name of the VM's guest (its hostname), e.g. "clx-mld-41".
	Name string
	// ESXi is the ESXi host as vCenter knows it, e.g. "esx-41.example".
	ESXi string
	// VM is the vSphere VM name; default Name.
	VM string
	// Mgmt is where apply connects over SSH: a host name or IP address,
	// optionally with ":port"; default Name.
	Mgmt string
	// OS is the guest OS, e.g. ubuntu 16.04; it decides persistent routes.
	OS OS
	// DataInterface is the guest interface of the SR-IOV VF, e.g. "enp1f0".
	DataInterface string
	// DataMTU is the data network's MTU in bytes (1280–9000, default 1500),
	// the same for every host: rdggen sets it on the VM's data interface,
	// the ESXi vSwitch of the PF and (with its margin, pkg/onyx) the switch
	// ports, and docker.mtu follows it.
	DataMTU int
	// GPUs passed through to the VM; len(GPUs) is the Horovod slot count.
	GPUs []GPU
	// NIC is the ConnectX adapter on the ESXi host that provides the VF.
	NIC NIC
	// Data is the host's data network attachment: rail 0's, Rails[0]'s
	// DataLink. Everything that knows one rail reads it.
	Data DataLink
	// Rails are the host's data links in rail order, one VF each (rail.go):
	// Rails[0] is Data with NIC.PF and DataInterface; a host whose data is
	// a mapping has that one rail. Every host of an inventory has as many.
	Rails []Rail
	// Subnet is the host's container subnet (derived or overridden), e.g. 172.16.41.0/24.
	Subnet netip.Prefix
	// Template is where apply clones the VM from when vCenter has no VM of
	// that name; nil when the inventory names none (the VM must exist).
	Template *Template
}

// Slots is the number of Horovod/MPI slots of the host: one per GPU.
func (h Host) Slots() int { return len(h.GPUs) }

// Bridge is docker0's `bip`: the first host address of Subnet with its prefix
// length, e.g. 172.16.41.1/24 (a host address, never the network address).
func (h Host) Bridge() netip.Prefix {
	return netip.PrefixFrom(h.Subnet.Addr().Next(), h.Subnet.Bits())
}

// DataMTU is the data network's MTU (every host's data_mtu, which
// validation holds equal), in bytes.
func (inv *Inventory) DataMTU() int {
	if len(inv.Hosts) == 0 {
		return DefaultDataMTU
	}
	return inv.Hosts[0].DataMTU
}

// OS is a guest operating system such as ubuntu-16.04.
type OS struct {
	// Distro is the lower-case distribution name, "ubuntu".
	Distro string
	// Version is its release, e.g. 16.04.
	Version Version
}

// String gives the inventory spelling, e.g. "ubuntu-16.04".
func (o OS) String() string { return o.Distro + "-" + o.Version.String() }

// UsesNetplan reports whether persistent network settings go to netplan
// (Ubuntu ≥ 18.04) rather than /etc/network/interfaces (16.04).
func (o OS) UsesNetplan() bool { return o.Version.AtLeast(18, 4) }

// GPU is one GPU passed through with DirectPath I/O.
type GPU struct {
	// Model, e.g. "V100-PCIE-16GB"; known models have a known BAR1 size.
	Model string
	// MemoryGB is the frame-buffer memory, GB (> 0).
	MemoryGB int
	// BAR1GB overrides the model's BAR1 size, GB; 0 when unset.
	BAR1GB int
	// PCI is the device address on the ESXi host, e.g. "0000:3b:00.0"; "" when
	// apply should pick a matching NVIDIA device.
	PCI string
	// Rail is the rail (index into Host.Rails) whose NIC the GPU is paired
	// with: gpus[].rail, else by position (Host.Rails, rail.go); 0 on a
	// host with one rail.
	Rail int
}

// NIC is the ConnectX adapter on the ESXi host.
type NIC struct {
	// Model, e.g. "ConnectX-5"; it decides the VF range.
	Model string
	// PF is the physical function's ESXi uplink name, e.g. "vmnic4".
	PF string
	// VFs is the SR-IOV virtual function count (nmlx5_core max_vfs).
	VFs int
	// PortGroup is the port group of the VM's SR-IOV adapter; default "VM Network".
	PortGroup string
	// SpeedGbps is the data port's Ethernet link speed, Gb/s (10^9 bit/s):
	// what the VF and its switch port run at, default 100 (the guide's
	// ConnectX-5 on an SN2700), or MaxSpeedGbps when that is lower. It is
	// at most MaxSpeedGbps and the switch's Switch.MaxSpeedGbps.
	// `rdggen bench` derives its pass lines from it.
	SpeedGbps int
}

// MaxVFs is the largest VF count for the NIC model (0 for unknown models).
func (n NIC) MaxVFs() int { return nicMaxVFs[n.Model] }

// MaxSpeedGbps is the fastest Ethernet speed, Gb/s, a port of the NIC model
// runs at (0 for unknown models): 50 for the ConnectX-4 Lx, 100 for the
// ConnectX-4, ConnectX-5 and ConnectX-5 Ex, 200 for the ConnectX-6 and
// ConnectX-6 Dx (NVIDIA's adapter card user manuals; docs/rules.md#models-and-ports).
func (n NIC) MaxSpeedGbps() int { return nicMaxSpeedGbps[n.Model] }

// DataLink is a host's data network attachment.
type DataLink struct {
	// Address is the data address with its network's prefix length, e.g. 31.31.31.41/24.
	Address netip.Prefix
	// Switch is the name of the switch the data port is cabled to.
	Switch string
	// Port is the switch port.
	Port Port
}

// Port is a front-panel Ethernet port such as 1/8 (module/port), written
// 1/8 for ONYX and 1/8 or swp8 for Cumulus Linux; Switch.PortName spells
// it for the switch's OS. Lane is the sub-port of a broken-out (split)
// port, counted from 1 as ONYX does (1/8/2, which Cumulus calls swp8s1),
// 1 to the port's breakout mode (Switch.Breakout), and 0 for a port that
// is not split.
type Port struct{ Module, Number, Lane int }

// String gives the ONYX spelling, "1/8" (or "1/8/2" for a lane of a
// split port).
func (p Port) String() string {
	if p.Lane > 0 {
		return fmt.Sprintf("%d/%d/%d", p.Module, p.Number, p.Lane)
	}
	return fmt.Sprintf("%d/%d", p.Module, p.Number)
}

// Switch returns the switch named name, or nil.
func (inv *Inventory) Switch(name string) *Switch {
	for i := range inv.Switches {
		if inv.Switches[i].Name == name {
			return &inv.Switches[i]
		}
	}
	return nil
}

// ESXiHosts returns the ESXi host names in order of first appearance.
func (inv *Inventory) ESXiHosts() []string {
	var out []string
	seen := map[string]bool{}
	for _, h := range inv.Hosts {
		if !seen[h.ESXi] {
			seen[h.ESXi] = true
			out = append(out, h.ESXi)
		}
	}
	return out
}

// HostsOnESXi returns the hosts (VMs) placed on the named ESXi host, in file order.
func (inv *Inventory) HostsOnESXi(esxi string) []*Host {
	var out []*Host
	for i := range inv.Hosts {
		if inv.Hosts[i].ESXi == esxi {
			out = append(out, &inv.Hosts[i])
		}
	}
	return out
}

// ByESXi yields each ESXi host with the VMs placed on it: the ESXi hosts in
// ESXiHosts' order, each with HostsOnESXi's list. It groups the hosts in
// one pass before the first yield, so the whole loop costs O(hosts), where
// calling HostsOnESXi for every ESXi host costs O(hosts × ESXi hosts).
func (inv *Inventory) ByESXi() iter.Seq2[string, []*Host] {
	return func(yield func(string, []*Host) bool) {
		at := map[string]int{}
		var names []string
		var vms [][]*Host
		for i := range inv.Hosts {
			h := &inv.Hosts[i]
			g, ok := at[h.ESXi]
			if !ok {
				g = len(names)
				at[h.ESXi] = g
				names = append(names, h.ESXi)
				vms = append(vms, nil)
			}
			vms[g] = append(vms[g], h)
		}
		for g, name := range names {
			if !yield(name, vms[g]) {
				return
			}
		}
	}
}

// HostsOnSwitch returns the hosts whose data port is on the named switch.
func (inv *Inventory) HostsOnSwitch(sw string) []*Host {
	var out []*Host
	for i := range inv.Hosts {
		if inv.Hosts[i].Data.Switch == sw {
			out = append(out, &inv.Hosts[i])
		}
	}
	return out
}

// Pos returns the position in the file of the value at path (e.g.
// "hosts[3].data.address"), falling back to the deepest existing parent; the
// zero Pos when nothing is known (e.g. the embedded reference).
func (inv *Inventory) Pos(path string) Pos { return inv.pos.lookup(path) }
