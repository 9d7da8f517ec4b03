package inventory

// The host rules: inherited defaults, OS, data interface, GPUs and the NIC,
// and what VMs on one ESXi host share.

import (
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
)

// base is the resolved form of the keys a host inherits from defaults; each
// field remembers the path it came from so findings point at the right line.
type base struct {
	os, iface, mtu, gpus, nic string // source paths; "" = unset
	tmpl                      string
	OS                        OS
	DataInterface             string
	DataMTU                   int
	GPUs                      []GPU
	NIC                       NIC
	Template                  *Template
}

func (c *checker) base(r *HostDefaults, p string) base {
	var b base
	if r.OS != nil {
		b.os = p + ".os"
		if m := reOS.FindStringSubmatch(*r.OS); m != nil {
			b.OS = OS{Distro: "ubuntu", Version: MustVersion(m[1])}
			if !b.OS.Version.AtLeast(16, 4) {
				c.errf(b.os, "%s is older than the guide's Ubuntu 16.04", *r.OS)
			}
		} else {
			c.errf(b.os, "%q is not a supported OS; write ubuntu-16.04, ubuntu-18.04, ubuntu-20.04, ubuntu-22.04 or ubuntu-24.04", *r.OS)
		}
	}
	if r.DataInterface != nil {
		b.iface, b.DataInterface = p+".data_interface", *r.DataInterface
		switch {
		case !reIface.MatchString(b.DataInterface):
			c.errf(b.iface, "%q is not a Linux interface name (1–15 letters, digits, '_', '.', '-')", b.DataInterface)
		case b.DataInterface == "lo" || b.DataInterface == "docker0":
			c.errf(b.iface, "%q is the VM's %s, not the data network's VF", b.DataInterface,
				map[string]string{"lo": "loopback interface", "docker0": "Docker bridge"}[b.DataInterface])
		}
	}
	if r.DataMTU != nil {
		b.mtu = p + ".data_mtu"
		b.DataMTU = c.intIn(b.mtu, r.DataMTU, 0, MinDataMTU, MaxDataMTU, "bytes; vSphere's standard and distributed switches carry at most 9000")
	}
	if r.GPUs != nil {
		b.gpus = p + ".gpus"
		if len(r.GPUs) == 0 {
			c.errf(b.gpus, "is empty; every training VM needs at least one GPU (slots = GPU count)")
		}
		if len(r.GPUs) > MaxGPUsPerVM {
			c.errf(b.gpus, "%d GPUs: a VM takes at most %d PCI passthrough devices (ESXi 8.0 U2, hardware version 21; Broadcom KB 309986)", len(r.GPUs), MaxGPUsPerVM)
		}
		for i, g := range r.GPUs {
			b.GPUs = append(b.GPUs, c.gpu(g, fmt.Sprintf("%s[%d]", b.gpus, i)))
		}
	}
	if r.NIC != nil {
		b.nic = p + ".nic"
		b.NIC = c.nic(r.NIC, b.nic)
	}
	if r.Template != nil {
		b.tmpl = p + ".template"
		b.Template = c.template(r.Template, b.tmpl)
	}
	return b
}

func (c *checker) gpu(r GPUSpec, p string) GPU {
	g := GPU{Model: r.Model, PCI: strings.ToLower(r.PCI)}
	if r.Model == "" {
		c.missing(p, "model", " (e.g. V100-PCIE-16GB)")
	} else if !textOK(r.Model, 64) {
		c.errf(p+".model", "%q is not a GPU model name like V100-PCIE-16GB (up to 64 letters, digits, spaces and ._+()/:,#@-, starting with a letter or digit and ending with one or ')')", r.Model)
	}
	if r.MemoryGB == nil {
		c.missing(p, "memory_gb", " (frame-buffer memory in GB; it sizes the 64-bit MMIO window)")
	} else {
		g.MemoryGB = *r.MemoryGB
		switch {
		case g.MemoryGB <= 0:
			c.errf(p+".memory_gb", "%d GB: GPU memory must be more than 0", g.MemoryGB)
		case g.MemoryGB > MaxGPUMemoryGB:
			c.errf(p+".memory_gb", "%d GB is more than any GPU has (at most %d GB)", g.MemoryGB, MaxGPUMemoryGB)
		}
	}
	if r.BAR1GB != nil {
		g.BAR1GB = *r.BAR1GB
		switch {
		case g.BAR1GB <= 0 || bits.OnesCount(uint(g.BAR1GB)) != 1:
			c.errf(p+".bar1_gb", "%d GB: a BAR size is a power of two (1, 2, 4, … GB)", g.BAR1GB)
		case g.BAR1GB > MaxGPUMemoryGB:
			c.errf(p+".bar1_gb", "%d GB is larger than any GPU's BAR1 (at most %d GB)", g.BAR1GB, MaxGPUMemoryGB)
		case g.MemoryGB > 0 && g.BAR1GB < g.MemoryGB:
			c.errf(p+".bar1_gb", "%d GB is less than memory_gb %d: a passed-through GPU's BAR1 maps all of its memory (the next power of two at least)", g.BAR1GB, g.MemoryGB)
		}
	}
	if r.PCI != "" && !rePCI.MatchString(g.PCI) {
		c.errf(p+".pci", "%q is not a PCI address like 0000:3b:00.0 (domain:bus:device.function)", r.PCI)
	}
	return g
}

func (c *checker) nic(r *NICSpec, p string) NIC {
	n := NIC{Model: r.Model, PF: r.PF, PortGroup: DefaultPortGroup, SpeedGbps: DefaultNICSpeedGbps}
	if r.SpeedGbps != nil {
		n.SpeedGbps = *r.SpeedGbps
		if !slices.Contains(ethernetSpeeds, n.SpeedGbps) {
			c.errf(p+".speed_gbps", "%d is not an Ethernet link speed in Gb/s (%s)", n.SpeedGbps, intList(ethernetSpeeds))
		}
	}
	if r.PortGroup != nil {
		n.PortGroup = *r.PortGroup
		switch {
		case strings.TrimSpace(n.PortGroup) == "":
			c.errf(p+".portgroup", "is empty; name the port group of the VM's SR-IOV adapter")
		case !textOK(n.PortGroup, 80):
			c.errf(p+".portgroup", "%q is not a port group name rdggen can write safely (up to 80 letters, digits, spaces and ._+()/:,#@-, starting with a letter or digit and ending with one or ')')", n.PortGroup)
		}
	}
	if r.Model == "" {
		c.missing(p, "model", " (e.g. ConnectX-5)")
	} else if _, ok := nicMaxVFs[r.Model]; !ok {
		c.errf(p+".model", "unknown NIC model %q (known: %s)", r.Model, knownKeys(nicMaxVFs))
	}
	// The link runs at most at the NIC model's fastest speed; left out, the
	// speed is that when it is below the default.
	if max := n.MaxSpeedGbps(); max > 0 {
		switch {
		case r.SpeedGbps == nil:
			n.SpeedGbps = min(n.SpeedGbps, max)
		case n.SpeedGbps > max && slices.Contains(ethernetSpeeds, n.SpeedGbps):
			c.errf(p+".speed_gbps", "%d Gb/s is above %s's %d Gb/s per port (its fastest Ethernet speed): set speed_gbps to the speed the link runs at, at most %d",
				n.SpeedGbps, n.Model, max, max)
		}
	}
	if r.PF == "" {
		c.missing(p, "pf", " (the physical function's ESXi uplink, e.g. vmnic4)")
	} else if !reVmnic.MatchString(r.PF) {
		c.errf(p+".pf", "%q is not an ESXi uplink name like vmnic4", r.PF)
	}
	if r.VFs == nil {
		c.missing(p, "vfs", " (SR-IOV virtual functions on the PF)")
	} else {
		n.VFs = *r.VFs
		if maxVF := n.MaxVFs(); maxVF > 0 && (n.VFs < 1 || n.VFs > maxVF) {
			c.errf(p+".vfs", "%d VFs is outside %s's range 1–%d", n.VFs, n.Model, maxVF)
		}
	}
	return n
}

func (c *checker) hosts(raw []HostSpec, defaults *base) {
	if len(raw) == 0 {
		c.missing("", "hosts", " (at least one host)")
	}
	fast := map[string]bool{} // NIC setting and switch already reported by switchSpeed
	for i, r := range raw {
		p := fmt.Sprintf("hosts[%d]", i)
		h := Host{Index: i, Name: r.Name, ESXi: r.ESXi, VM: r.VM, Mgmt: r.Mgmt}
		vmLimit := fmt.Sprintf("vSphere limits a VM name to %d (VMware KB 2051649)", MaxVMNameLen)
		switch {
		case r.Name == "":
			c.missing(p, "name", " (the VM's hostname)")
		case hostnameRule(r.Name) != "":
			c.errf(p+".name", "%q is not a host name: %s", r.Name, hostnameRule(r.Name))
		case r.VM == "" && len(r.Name) > MaxVMNameLen:
			c.errf(p+".name", "%q is %d characters, and it is also the VM name (vm defaults to name); %s: set vm", r.Name, len(r.Name), vmLimit)
		}
		switch {
		case r.ESXi == "":
			c.missing(p, "esxi", " (the ESXi host as vCenter knows it)")
		case hostnameRule(r.ESXi) != "":
			c.errf(p+".esxi", "%q is not a host name: %s", r.ESXi, hostnameRule(r.ESXi))
		case len(r.ESXi) > MaxESXiNameLen:
			c.errf(p+".esxi", "%q is %d characters; at most %d, so that esxi/<esxi>.sh fits a file name (255 bytes)", r.ESXi, len(r.ESXi), MaxESXiNameLen)
		}
		if h.VM == "" {
			h.VM = h.Name
		} else if rule := fileNameRule(h.VM, MaxVMNameLen, vmLimit); rule != "" {
			c.errf(p+".vm", "%q %s (it names esxi/<vm>.vmx)", h.VM, rule)
		}
		if h.Mgmt == "" {
			h.Mgmt = h.Name
		} else if !validMgmt(h.Mgmt) {
			c.errf(p+".mgmt", "%q is not an IP address or host name, optionally with :port", h.Mgmt)
		}
		own := c.base(&r.HostDefaults, p)
		c.inherit(&h, own, *defaults, p)
		c.data(&h, r.Data, p)
		if r.GPUs != nil {
			c.gpuRails(&h, r.GPUs, own.gpus) // rails.go
		} else if c.raw != nil && c.raw.Defaults != nil {
			c.gpuRails(&h, c.raw.Defaults.GPUs, defaults.gpus)
		}
		nicPath := own.nic
		if nicPath == "" {
			nicPath = defaults.nic
		}
		if c.nicPaths == nil {
			c.nicPaths = map[int]string{}
		}
		c.nicPaths[h.Index] = nicPath
		c.switchSpeed(&h, nicPath, fast)
		if r.Docker != nil && r.Docker.Subnet != "" {
			s, err := netip.ParsePrefix(r.Docker.Subnet)
			switch {
			case err != nil || !s.Addr().Is4():
				c.errf(p+".docker.subnet", "%q is not an IPv4 network like 172.16.41.0/24", r.Docker.Subnet)
			case s.Masked() != s:
				c.errf(p+".docker.subnet", "%s has host bits set; the network is %s", s, s.Masked())
			case s.Bits() > 30:
				c.errf(p+".docker.subnet", "/%d leaves no address for docker0's bip and a container (at most /30)", s.Bits())
			default:
				h.Subnet = s
			}
		} else if h.Data.Address.IsValid() {
			h.Subnet = c.deriveSubnet(h.Data.Address, c.railPath(i, 0)+".address")
		}
		c.inv.Hosts = append(c.inv.Hosts, h)
	}
}

// switchSpeed refuses a link speed above what the switch model of one of
// h's rails runs a whole port at, once per NIC setting (nicPath, where h's
// nic comes from) and switch: hosts sharing a setting share the finding.
// Every rail is a port of the same NIC model, so each is held to its own
// switch. Unknown switch models, and an unknown switch, have their own
// findings; a lane runs at its breakout's share and is checked with the
// breakouts (breakout.go).
func (c *checker) switchSpeed(h *Host, nicPath string, reported map[string]bool) {
	if nicPath == "" || !slices.Contains(ethernetSpeeds, h.NIC.SpeedGbps) {
		return
	}
	for _, r := range h.Rails {
		sw := c.switchNamed(r.Switch)
		if sw == nil || r.Port.Lane > 0 {
			continue
		}
		max := sw.PortSpeedGbps(r.Port)
		key := nicPath + "\x00" + sw.Name
		if max == 0 || h.NIC.SpeedGbps <= max || reported[key] {
			continue
		}
		reported[key] = true
		port := "the data port"
		if len(h.Rails) > 1 {
			port = fmt.Sprintf("rail %d's port", r.Index)
		}
		c.errf(nicPath+".speed_gbps", "%d Gb/s is above %s's %d Gb/s per port (switch %s, %s of hosts[%d] %s): set speed_gbps to the speed the link runs at, at most %d",
			h.NIC.SpeedGbps, sw.Model, max, sw.Name, port, h.Index, h.Name, max)
	}
}

// inherit fills h from the host's own keys, else from defaults, and reports
// required keys that neither sets.
func (c *checker) inherit(h *Host, own, def base, p string) {
	pick := func(ownSrc, defSrc string) (useOwn, ok bool) { return ownSrc != "", ownSrc != "" || defSrc != "" }
	// With a merge key in defaults the key may well be there: the merge
	// key's finding is the one to fix.
	missing := func(p, key, hint string) {
		if !c.merged["defaults"] {
			c.missing(p, key, hint)
		}
	}
	if o, ok := pick(own.os, def.os); !ok {
		missing(p, "os", " (here or in defaults; e.g. ubuntu-16.04)")
	} else if o {
		h.OS = own.OS
	} else {
		h.OS = def.OS
	}
	if o, ok := pick(own.iface, def.iface); !ok {
		missing(p, "data_interface", " (here or in defaults; the VF's interface in the VM, e.g. enp1f0)")
	} else if o {
		h.DataInterface = own.DataInterface
	} else {
		h.DataInterface = def.DataInterface
	}
	switch {
	case own.mtu != "":
		h.DataMTU = own.DataMTU
	case def.mtu != "":
		h.DataMTU = def.DataMTU
	default:
		h.DataMTU = DefaultDataMTU
	}
	if o, ok := pick(own.gpus, def.gpus); !ok {
		missing(p, "gpus", " (here or in defaults; at least one GPU)")
	} else if o {
		h.GPUs = own.GPUs
	} else {
		h.GPUs = slices.Clone(def.GPUs)
	}
	if o, ok := pick(own.nic, def.nic); !ok {
		missing(p, "nic", " (here or in defaults; e.g. {model: ConnectX-5, pf: vmnic4, vfs: 8})")
	} else if o {
		h.NIC = own.NIC
	} else {
		h.NIC = def.NIC
	}
	tp := own.tmpl
	switch {
	case own.tmpl != "":
		h.Template = own.Template
	case def.tmpl != "":
		t := *def.Template
		h.Template, tp = &t, def.tmpl
	}
	if t := h.Template; t != nil && t.CloudInit && h.OS.Distro == "ubuntu" && !h.OS.Version.AtLeast(MinCloudInitUbuntu[0], MinCloudInitUbuntu[1]) {
		// A finding per template, not per host that inherits it.
		path := tp + ".cloud_init"
		if !slices.ContainsFunc(c.rep.Findings, func(f Finding) bool { return f.Path == path }) {
			c.errf(path, "template %q runs cloud-init, but %s (%s's os) has none with the VMware datasource (cloud-init 21.3, backported to Ubuntu 18.04 and later, never 16.04): the clone would keep the template's identity. Use an 18.04+ template and os, or set cloud_init: false (docs/inventory.md#template-prerequisites)",
				t.Name, h.OS, h.Name)
		}
	}
	if h.Template != nil {
		c.staticMgmt(h, h.Template, p, tp)
	}
	c.mgmtNameFit(h, tp)
	if h.Template != nil && h.DataInterface != "" && h.Template.MgmtInterface == h.DataInterface {
		path := tp + ".mgmt_interface"
		if !slices.ContainsFunc(c.rep.Findings, func(f Finding) bool { return f.Path == path }) {
			c.errf(path, "%q is also the data_interface of %s: the management NIC and the data VF are two interfaces", h.DataInterface, h.Name)
		}
	}
}

// esxiShared checks the VMs that share one ESXi host: one NIC, enough VFs,
// and no GPU passed to two VMs.
func (c *checker) esxiShared() {
	for _, g := range c.esxiGroups() {
		e, hosts := g.name, g.hosts
		if e == "" {
			continue
		}
		first := hosts[0]
		pcis := map[string]string{}
		for _, h := range hosts {
			p := fmt.Sprintf("hosts[%d]", h.Index)
			if h != first && h.NIC != first.NIC {
				c.errf(p+".nic", "%s shares ESXi host %s with %s but names a different NIC (%s %s, %d VFs vs %s %s, %d VFs)",
					h.Name, e, first.Name, h.NIC.Model, h.NIC.PF, h.NIC.VFs, first.NIC.Model, first.NIC.PF, first.NIC.VFs)
			}
			for k, g := range h.GPUs {
				if g.PCI == "" {
					continue
				}
				gp := fmt.Sprintf("%s.gpus[%d].pci", p, k)
				if c.hostSpec(h.Index).GPUs == nil { // the host inherits the defaults' list
					gp = fmt.Sprintf("defaults.gpus[%d].pci", k)
				}
				if other, ok := pcis[g.PCI]; ok {
					c.errf(gp, "GPU %s on ESXi host %s is already passed through to %s (a device serves one VM)", g.PCI, e, other)
					continue
				}
				pcis[g.PCI] = h.Name
			}
		}
		if first.NIC.VFs > 0 && len(hosts) > first.NIC.VFs {
			c.errf(fmt.Sprintf("hosts[%d].nic", hosts[len(hosts)-1].Index), "ESXi host %s runs %d VMs but its NIC has only %d VFs (one VF per VM)", e, len(hosts), first.NIC.VFs)
		}
	}
}
