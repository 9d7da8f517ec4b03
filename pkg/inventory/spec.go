package inventory

// The Spec types are an inventory as written: the YAML file's keys
// (docs/inventory.md#keys) as Go fields, before defaults and derivations.
// Load decodes a file into a Spec, keeping each value's position; Build
// takes a Spec a program made itself. Both then apply the same defaults,
// derivations and validation. A nil pointer or slice is "not set": the
// default applies (write new(26) for a set int in Go 1.26, or &v).

// Spec is a whole inventory.
type Spec struct {
	// Name is the cluster's name (required), e.g. "clx-mld".
	Name string `yaml:"name"`
	// RoCE holds the lossless RoCE values; nil for every default.
	RoCE *RoCESpec `yaml:"roce"`
	// Switches are the data switches (at least one).
	Switches []SwitchSpec `yaml:"switches"`
	// VCenter is the vCenter SDK URL apply uses when GOVC_URL is unset.
	VCenter string `yaml:"vcenter"`
	// Docker holds the container networking; nil for every default.
	Docker *DockerSpec `yaml:"docker"`
	// Horovod holds the launch settings; nil for every default.
	Horovod *HorovodSpec `yaml:"horovod"`
	// Defaults are inherited by every host that does not set the key.
	Defaults *HostDefaults `yaml:"defaults"`
	// Hosts are the training VMs, one per line of the hostfile.
	Hosts []HostSpec `yaml:"hosts"`
	// Fabric is the leaf-spine cabling and addressing (fabric.go); nil for
	// an inventory without inter-switch links.
	Fabric *FabricSpec `yaml:"fabric"`
}

// RoCESpec is the `roce` section: DSCP-based lossless RoCE v2.
type RoCESpec struct {
	// DSCP of RoCE data (default 26) and its switch priority (default 3).
	DSCP     *int `yaml:"dscp"`
	Priority *int `yaml:"priority"`
	// CNPDSCP and CNPPriority are those of congestion notification packets
	// (default 48 and 6).
	CNPDSCP     *int `yaml:"cnp_dscp"`
	CNPPriority *int `yaml:"cnp_priority"`
	// ECNMinKB and ECNMaxKB are the ECN marking thresholds on the RoCE
	// traffic class, KB (default 150 and 1500).
	ECNMinKB *int `yaml:"ecn_min_kb"`
	ECNMaxKB *int `yaml:"ecn_max_kb"`
	// BufferPercent is the switch buffer share of the lossless pool,
	// percent (default 50).
	BufferPercent *float64 `yaml:"buffer_percent"`
}

// SwitchSpec is one entry of `switches`.
type SwitchSpec struct {
	// Name is the switch's hostname; Model its SKU (e.g. "SN2700"), which
	// decides the ports.
	Name  string `yaml:"name"`
	Model string `yaml:"model"`
	// ONYX is the switch's ONYX version (e.g. 3.6.8190); Cumulus its
	// Cumulus Linux version (e.g. 5.9.1). A switch names exactly one: the
	// key that is set is the switch's operating system.
	ONYX    *Version `yaml:"onyx"`
	Cumulus *Version `yaml:"cumulus"`
	// Other holds the version of an OS beyond ONYX and Cumulus Linux,
	// keyed by the OS's key (a SwitchOS of SwitchOSes, e.g. `sonic:
	// 202305` gives Other["sonic"]); a key that is no such OS is refused
	// as an unknown key.
	Other map[string]*Version `yaml:",inline"`
	// Mgmt is where apply connects (ONYX: SSH; Cumulus: the NVUE REST
	// API); "" when apply does not.
	Mgmt string `yaml:"mgmt"`
	// Breakout splits front-panel ports: port (swpN or 1/N) → mode ("2x",
	// "4x", "8x"); a port not named here is split when the inventory
	// cables its lanes, in the smallest mode that holds them (breakout.go).
	Breakout map[string]string `yaml:"breakout"`
	// SwitchFabricSpec holds the leaf-spine keys (role, asn, loopback,
	// subnet, gateway) and the port scope (ports); fabric.go.
	SwitchFabricSpec `yaml:",inline"`
}

// DockerSpec is the `docker` section.
type DockerSpec struct {
	// Version is the Docker engine on the VMs (default 18.09).
	Version *Version `yaml:"version"`
	// Pool is the range container subnets are carved from (default
	// 172.16.0.0/16); Prefix their length (default 24).
	Pool   *string `yaml:"pool"`
	Prefix *int    `yaml:"prefix"`
	// MTU is docker0's MTU in bytes (default: the data MTU).
	MTU *int `yaml:"mtu"`
	// DNS servers of the containers (default 8.8.8.8, 8.8.4.4).
	DNS []string `yaml:"dns"`
	// Routing is "hosts" (default: a route per other host) or "switch"
	// (the switch routes the pool via Gateway).
	Routing *string `yaml:"routing"`
	// Gateway is the switch's address on the data network in switch
	// routing (default: the data network's last host address).
	Gateway *string `yaml:"gateway"`
}

// HorovodSpec is the `horovod` section.
type HorovodSpec struct {
	// Network is "bridge" (default) or "host".
	Network *string `yaml:"network"`
	// SSHPort is the workers' sshd port (default 12345).
	SSHPort *int `yaml:"ssh_port"`
	// Image is the worker image; HCA the VF's RDMA device (default mlx5_0).
	Image *string `yaml:"image"`
	HCA   *string `yaml:"hca"`
	// Launcher is "horovod" (default) or "torchrun".
	Launcher *string `yaml:"launcher"`
	// NprocPerNode is torchrun's processes per worker (default: the host's
	// GPU count); RdzvPort its rendezvous port (default 29400); RdzvID its
	// job id (default: the cluster's name).
	NprocPerNode *int    `yaml:"nproc_per_node"`
	RdzvPort     *int    `yaml:"rdzv_port"`
	RdzvID       *string `yaml:"rdzv_id"`
}

// HostDefaults are the keys a host inherits from `defaults`.
type HostDefaults struct {
	// OS is the guest OS, e.g. "ubuntu-16.04".
	OS *string `yaml:"os"`
	// DataInterface is the VF's interface in the VM, e.g. "enp1f0".
	DataInterface *string `yaml:"data_interface"`
	// DataMTU is the data network's MTU in bytes (default 1500).
	DataMTU *int `yaml:"data_mtu"`
	// GPUs passed through to the VM.
	GPUs []GPUSpec `yaml:"gpus"`
	// NIC is the ConnectX adapter providing the VF.
	NIC *NICSpec `yaml:"nic"`
	// Template is where apply clones the VM from when it does not exist.
	Template *TemplateSpec `yaml:"template"`
}

// GPUSpec is one GPU.
type GPUSpec struct {
	// Model, e.g. "V100-PCIE-16GB"; MemoryGB its memory, GB.
	Model    string `yaml:"model"`
	MemoryGB *int   `yaml:"memory_gb"`
	// BAR1GB overrides the model's BAR1 size, GB.
	BAR1GB *int `yaml:"bar1_gb"`
	// PCI pins the device address on the ESXi host, e.g. "0000:3b:00.0".
	PCI string `yaml:"pci"`
	// Rail is the rail (0 first) whose NIC the GPU is paired with, on a
	// host whose data is a list of rails; nil shares the GPUs out over the
	// rails in order (docs/inventory.md#rails). Either every GPU of a list
	// names its rail or none does.
	Rail *int `yaml:"rail"`
}

// NICSpec is the ConnectX adapter.
type NICSpec struct {
	// Model, e.g. "ConnectX-5"; PF its uplink on ESXi, e.g. "vmnic4".
	Model string `yaml:"model"`
	PF    string `yaml:"pf"`
	// VFs is the SR-IOV virtual function count.
	VFs *int `yaml:"vfs"`
	// PortGroup is the VM's SR-IOV adapter's port group (default "VM Network").
	PortGroup *string `yaml:"portgroup"`
	// SpeedGbps is the data port's link speed, Gb/s (default 100).
	SpeedGbps *int `yaml:"speed_gbps"`
}

// HostSpec is one entry of `hosts`.
type HostSpec struct {
	// Name is the guest's hostname; ESXi the ESXi host as vCenter knows it.
	Name string `yaml:"name"`
	ESXi string `yaml:"esxi"`
	// VM is the vSphere VM name (default Name); Mgmt where apply connects
	// over SSH (default Name).
	VM   string `yaml:"vm"`
	Mgmt string `yaml:"mgmt"`
	// HostDefaults are the host's own values of the inheritable keys.
	HostDefaults `yaml:",inline"`
	// Data is the data network attachment (required).
	Data *DataSpec `yaml:"data"`
	// Docker overrides the derived container subnet.
	Docker *HostDockerSpec `yaml:"docker"`
}

// DataSpec is a host's `data`: in a file either a mapping (one rail: the
// Address, Switch and Port fields) or a list of mappings, one per rail in
// rail order (Rails; docs/inventory.md#rails). In Go, set either the three
// fields or Rails, never both.
type DataSpec struct {
	// Address is the data address with its prefix length, e.g.
	// "31.31.31.41/24"; Switch and Port where it is cabled ("1/1").
	Address string `yaml:"address"`
	Switch  string `yaml:"switch"`
	Port    string `yaml:"port"`
	// Rails is the list form: the host's rails in rail order, rail 0
	// first; nil for the mapping form. The decoder fills it when `data` is
	// a YAML list, with each entry's findings at hosts[i].data[r].
	Rails []RailSpec `yaml:"-"`
}

// RailSpec is one entry of a host's `data` list: one rail, the VF of one
// NIC port (docs/inventory.md#rails).
type RailSpec struct {
	// Address is the rail's address with its prefix length, inside its
	// (leaf, rail) subnet, e.g. "10.0.1.11/24"; Switch and Port where the
	// rail's NIC port is cabled.
	Address string `yaml:"address"`
	Switch  string `yaml:"switch"`
	Port    string `yaml:"port"`
	// PF is the ESXi uplink of the rail's NIC port (the VF's physical
	// function), e.g. "vmnic5"; rail 0's defaults to nic.pf and, when
	// written, must be it.
	PF string `yaml:"pf"`
	// Interface is the guest's name of the rail's VF (1–15 characters);
	// rail 0's is data_interface, rail r's defaults to "rail<r>".
	Interface string `yaml:"interface"`
}

// HostDockerSpec is a host's `docker`.
type HostDockerSpec struct {
	// Subnet overrides the host's derived container subnet.
	Subnet string `yaml:"subnet"`
}

// Build checks an inventory a program made, exactly as Load checks a file:
// the same defaults, derivations and rules. Findings carry the field path
// ("hosts[1].data.address") and, having no file, no position; name is what
// they are prefixed with (e.g. "cluster-a"). The error is a *Report. Every
// value a file can hold is checked as in a file; values only Go can make
// are held to the same rules (a NaN buffer_percent, a zero Version: what a
// file spells .nan or "" and Load refuses). A nil Spec is a finding.
func Build(name string, s *Spec, opts ...Option) (*Inventory, error) {
	name = DisplayName(name)
	if s == nil {
		return nil, &Report{Findings: []Finding{{File: name, Rule: "no inventory (a nil *Spec)"}}}
	}
	return build(name, s, positions{}, nil, &Report{}, newOptions(opts))
}

// build is the one path from a Spec to an Inventory, for Load and Build:
// defaults, derivations and every rule; pos gives the findings' positions
// (empty for a Spec made in Go), merged the mappings that held a YAML
// merge key (their required keys are not reported missing), rep may
// already hold findings.
func build(name string, s *Spec, pos positions, merged map[string]bool, rep *Report, opts options) (*Inventory, error) {
	inv := &Inventory{File: name, pos: pos}
	c := &checker{inv: inv, rep: rep, raw: s, merged: merged, opts: opts}
	c.build(s)
	if rep.Count() > 0 {
		rep.sort()
		return nil, rep
	}
	return inv, nil
}
