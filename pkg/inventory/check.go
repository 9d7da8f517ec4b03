package inventory

import (
	"fmt"
	"math/bits"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// checker resolves raw values into the Inventory and reports every broken
// rule at the position of the value that breaks it.
type checker struct {
	inv *Inventory
	rep *Report
}

func (c *checker) errf(path, format string, args ...any) {
	c.rep.Findings = append(c.rep.Findings, Finding{
		File: c.inv.File, Pos: c.inv.pos.lookup(path), Path: path, Rule: fmt.Sprintf(format, args...),
	})
}

// missing reports a required key at the position of its parent mapping.
func (c *checker) missing(parent, key, hint string) {
	p := key
	if parent != "" {
		p = parent + "." + key
	}
	for _, f := range c.rep.Findings {
		if f.Path == p {
			return // present but invalid: that finding is already reported
		}
	}
	c.errf(p, "is required%s", hint)
}

var (
	reLabel  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	reFile   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)
	reIface  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)
	rePort   = regexp.MustCompile(`^(\d+)/(\d+)$`)
	rePCI    = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	reVmnic  = regexp.MustCompile(`^vmnic[0-9]+$`)
	reOS     = regexp.MustCompile(`^ubuntu-(\d{2}\.\d{2})$`)
	reSwName = reLabel
	reHCA    = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)
)

// validHostname reports whether s is an RFC 1123 host name (dot-separated labels).
func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !reLabel.MatchString(l) {
			return false
		}
	}
	return true
}

func (c *checker) build(raw *rawInventory) {
	inv := c.inv
	inv.Name = raw.Name
	switch {
	case raw.Name == "":
		c.missing("", "name", " (the cluster name, e.g. clx-mld)")
	case !reFile.MatchString(raw.Name):
		c.errf("name", "%q must be letters, digits, '.', '_' or '-' (it names files)", raw.Name)
	}
	c.roce(raw.RoCE)
	c.switches(raw.Switches)
	c.vcenter(raw.VCenter)
	c.docker(raw.Docker)
	c.horovod(raw.Horovod)
	var defaults base
	if raw.Defaults != nil {
		defaults = c.base(raw.Defaults, "defaults")
	}
	c.hosts(raw.Hosts, &defaults)
	c.crossHost()
}

func (c *checker) intIn(path string, p *int, def, lo, hi int, what string) int {
	if p == nil {
		return def
	}
	if *p < lo || *p > hi {
		c.errf(path, "%d is outside %d–%d (%s)", *p, lo, hi, what)
	}
	return *p
}

func (c *checker) roce(r *rawRoCE) {
	if r == nil {
		r = &rawRoCE{}
	}
	q := &c.inv.RoCE
	q.DSCP = c.intIn("roce.dscp", r.DSCP, DefaultDSCP, 0, 63, "DSCP is 6 bits")
	q.Priority = c.intIn("roce.priority", r.Priority, DefaultPriority, 0, 7, "switch priorities are 0–7")
	q.CNPDSCP = c.intIn("roce.cnp_dscp", r.CNPDSCP, DefaultCNPDSCP, 0, 63, "DSCP is 6 bits")
	q.CNPPriority = c.intIn("roce.cnp_priority", r.CNPPriority, DefaultCNPPriority, 0, 7, "switch priorities are 0–7")
	q.ECNMinKB = c.intIn("roce.ecn_min_kb", r.ECNMinKB, DefaultECNMinKB, 1, 1<<20, "KB")
	q.ECNMaxKB = c.intIn("roce.ecn_max_kb", r.ECNMaxKB, DefaultECNMaxKB, 1, 1<<20, "KB")
	q.BufferPercent = DefaultBufferPercent
	if r.BufferPercent != nil {
		q.BufferPercent = *r.BufferPercent
		if q.BufferPercent < 1 || q.BufferPercent > 100 {
			c.errf("roce.buffer_percent", "%g is outside 1–100 (percent of switch buffer memory)", q.BufferPercent)
		}
	}
	if q.CNPPriority == q.Priority {
		c.errf("roce.cnp_priority", "%d equals roce.priority: CNPs need their own strict-priority class apart from the lossless RoCE class", q.CNPPriority)
	}
	if q.ECNMinKB > q.ECNMaxKB {
		c.errf("roce.ecn_min_kb", "%d KB is above ecn_max_kb %d KB (ECN marking starts at the minimum)", q.ECNMinKB, q.ECNMaxKB)
	}
	// ONYX (trust L3) and mlx5 map DSCP to switch priority as DSCP/8 by default;
	// rdggen does not rewrite that map, so the pair must agree.
	if q.DSCP>>3 != q.Priority && inRange(q.DSCP, 0, 63) && inRange(q.Priority, 0, 7) {
		c.errf("roce.dscp", "DSCP %d maps to switch priority %d by default (DSCP/8), not roce.priority %d; use a DSCP in %d–%d",
			q.DSCP, q.DSCP>>3, q.Priority, q.Priority*8, q.Priority*8+7)
	}
	if q.CNPDSCP>>3 != q.CNPPriority && q.CNPPriority != q.Priority && inRange(q.CNPDSCP, 0, 63) && inRange(q.CNPPriority, 0, 7) {
		c.errf("roce.cnp_dscp", "DSCP %d maps to switch priority %d by default (DSCP/8), not roce.cnp_priority %d; use a DSCP in %d–%d",
			q.CNPDSCP, q.CNPDSCP>>3, q.CNPPriority, q.CNPPriority*8, q.CNPPriority*8+7)
	}
}

func inRange(v, lo, hi int) bool { return v >= lo && v <= hi }

func knownKeys(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

func (c *checker) switches(raw []rawSwitch) {
	if len(raw) == 0 {
		c.missing("", "switches", " (at least one switch)")
	}
	seen := map[string]int{}
	for i, r := range raw {
		p := fmt.Sprintf("switches[%d]", i)
		sw := Switch{Name: r.Name, Model: r.Model, Mgmt: r.Mgmt}
		switch {
		case r.Name == "":
			c.missing(p, "name", "")
		case !reSwName.MatchString(r.Name):
			c.errf(p+".name", "%q is not a valid switch hostname", r.Name)
		default:
			if j, dup := seen[r.Name]; dup {
				c.errf(p+".name", "duplicate switch name %q (also switches[%d])", r.Name, j)
			}
			seen[r.Name] = i
		}
		if r.Model == "" {
			c.missing(p, "model", " (e.g. SN2700; it decides the port count)")
		} else if n, ok := switchPorts[strings.ToUpper(r.Model)]; ok {
			sw.Model, sw.Ports = strings.ToUpper(r.Model), n
		} else {
			c.errf(p+".model", "unknown switch model %q (known: %s)", r.Model, knownKeys(switchPorts))
		}
		if r.ONYX == nil {
			c.missing(p, "onyx", " (the ONYX version, e.g. 3.6.8190; it decides explicit commands vs `roce`)")
		} else {
			sw.ONYX = *r.ONYX
			if !sw.ONYX.IsZero() && !sw.ONYX.AtLeast(3, 6, 5000) {
				c.errf(p+".onyx", "ONYX %s has no `traffic pool` commands (from 3.6.5000; the guide needs 3.6.8190 or later)", sw.ONYX)
			}
		}
		if r.Mgmt != "" && !validMgmt(r.Mgmt) {
			c.errf(p+".mgmt", "%q is not an IP address or host name, optionally with :port", r.Mgmt)
		}
		c.inv.Switches = append(c.inv.Switches, sw)
	}
}

// specialRanges are IPv4 ranges that can be neither data addresses nor
// container subnets (RFC 6890): "this network", loopback, link-local,
// multicast and reserved.
var specialRanges = []struct {
	p    netip.Prefix
	name string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "127.0.0.0/8 (loopback)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "169.254.0.0/16 (link-local)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "224.0.0.0/4 (multicast)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "240.0.0.0/4 (reserved)"},
}

// specialRange names the special range p overlaps, or "".
func specialRange(p netip.Prefix) string {
	for _, r := range specialRanges {
		if r.p.Overlaps(p) {
			return r.name
		}
	}
	return ""
}

// validMgmt accepts host, IP, host:port, IPv4:port and [IPv6]:port.
func validMgmt(s string) bool {
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return false
		}
		host = h
	}
	_, err := netip.ParseAddr(host)
	return err == nil || validHostname(host)
}

// mgmtAddr returns the IP address of a management endpoint written as an IP
// literal (with or without a port).
func mgmtAddr(s string) (netip.Addr, bool) {
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	a, err := netip.ParseAddr(s)
	return a, err == nil
}

func (c *checker) vcenter(s string) {
	c.inv.VCenter = s
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		c.errf("vcenter", "%q is not a vSphere SDK URL like https://vcenter.example/sdk", s)
		return
	}
	if u.User != nil {
		c.errf("vcenter", "must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead")
	}
}

func (c *checker) docker(r *rawDocker) {
	if r == nil {
		r = &rawDocker{}
	}
	d := &c.inv.Docker
	d.Version = MustVersion(DefaultDockerVersion)
	if r.Version != nil {
		d.Version = *r.Version
	}
	d.Pool = netip.MustParsePrefix(DefaultPool)
	poolOK := true
	if r.Pool != nil {
		p, err := netip.ParsePrefix(*r.Pool)
		switch {
		case err != nil || !p.Addr().Is4():
			c.errf("docker.pool", "%q is not an IPv4 network like 172.16.0.0/16", *r.Pool)
			poolOK = false
		case p.Masked() != p:
			c.errf("docker.pool", "%s has host bits set; the network is %s", p, p.Masked())
			poolOK = false
		case p.Bits() < 8:
			c.errf("docker.pool", "%s is larger than /8; container subnets come from a private range such as 172.16.0.0/12", p)
			poolOK = false
		default:
			if r := specialRange(p); r != "" {
				c.errf("docker.pool", "%s overlaps %s, which cannot hold container subnets", p, r)
				poolOK = false
			} else {
				d.Pool = p
			}
		}
	}
	d.Prefix = DefaultPrefix
	if r.Prefix != nil {
		d.Prefix = *r.Prefix
		switch {
		case d.Prefix > 30:
			c.errf("docker.prefix", "/%d leaves no address for docker0's bip and a container (at most /30)", d.Prefix)
		case poolOK && d.Prefix < d.Pool.Bits():
			c.errf("docker.prefix", "/%d is larger than the pool %s", d.Prefix, d.Pool)
		case d.Prefix < 8:
			c.errf("docker.prefix", "/%d is outside /8–/30", d.Prefix)
		}
	}
	d.MTU = c.intIn("docker.mtu", r.MTU, DefaultDockerMTU, 68, 9216, "docker0 MTU, bytes")
	dns := r.DNS
	if dns == nil {
		dns = DefaultDNS
	}
	for i, s := range dns {
		a, err := netip.ParseAddr(s)
		if err != nil {
			c.errf(fmt.Sprintf("docker.dns[%d]", i), "%q is not an IP address (dockerd accepts only addresses here)", s)
			continue
		}
		d.DNS = append(d.DNS, a)
	}
}

func (c *checker) horovod(r *rawHorovod) {
	if r == nil {
		r = &rawHorovod{}
	}
	h := &c.inv.Horovod
	h.Network = NetworkBridge
	if r.Network != nil {
		h.Network = *r.Network
		if h.Network != NetworkBridge && h.Network != NetworkHost {
			c.errf("horovod.network", "%q is neither %q (routed docker0, the guide's) nor %q", h.Network, NetworkBridge, NetworkHost)
		}
	}
	h.SSHPort = c.intIn("horovod.ssh_port", r.SSHPort, DefaultSSHPort, 1, 65535, "TCP port")
	h.Image = DefaultImage
	if r.Image != nil {
		h.Image = *r.Image
		if strings.TrimSpace(h.Image) == "" || strings.ContainsAny(h.Image, " \t'\"$`") {
			c.errf("horovod.image", "%q is not a container image reference", h.Image)
		}
	}
	h.HCA = DefaultHCA
	if r.HCA != nil {
		h.HCA = *r.HCA
		if !reHCA.MatchString(h.HCA) {
			c.errf("horovod.hca", "%q is not an RDMA device name like mlx5_0", h.HCA)
		}
	}
}

// base is the resolved form of the keys a host inherits from defaults; each
// field remembers the path it came from so findings point at the right line.
type base struct {
	os, iface, mtu, gpus, nic string // source paths; "" = unset
	OS                        OS
	DataInterface             string
	DataMTU                   int
	GPUs                      []GPU
	NIC                       NIC
}

func (c *checker) base(r *rawHostBase, p string) base {
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
		if !reIface.MatchString(b.DataInterface) {
			c.errf(b.iface, "%q is not a Linux interface name (1–15 letters, digits, '_', '.', '-')", b.DataInterface)
		}
	}
	if r.DataMTU != nil {
		b.mtu = p + ".data_mtu"
		b.DataMTU = c.intIn(b.mtu, r.DataMTU, 0, 576, 9216, "data link MTU, bytes")
	}
	if r.GPUs != nil {
		b.gpus = p + ".gpus"
		if len(r.GPUs) == 0 {
			c.errf(b.gpus, "is empty; every training VM needs at least one GPU (slots = GPU count)")
		}
		if len(r.GPUs) > MaxGPUsPerVM {
			c.errf(b.gpus, "%d GPUs: a VM takes at most %d PCI passthrough devices (vSphere)", len(r.GPUs), MaxGPUsPerVM)
		}
		for i, g := range r.GPUs {
			b.GPUs = append(b.GPUs, c.gpu(g, fmt.Sprintf("%s[%d]", b.gpus, i)))
		}
	}
	if r.NIC != nil {
		b.nic = p + ".nic"
		b.NIC = c.nic(r.NIC, b.nic)
	}
	return b
}

func (c *checker) gpu(r rawGPU, p string) GPU {
	g := GPU{Model: r.Model, PCI: strings.ToLower(r.PCI)}
	if r.Model == "" {
		c.missing(p, "model", " (e.g. V100-PCIE-16GB)")
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
		}
	}
	if r.PCI != "" && !rePCI.MatchString(g.PCI) {
		c.errf(p+".pci", "%q is not a PCI address like 0000:3b:00.0 (domain:bus:device.function)", r.PCI)
	}
	return g
}

func (c *checker) nic(r *rawNIC, p string) NIC {
	n := NIC{Model: r.Model, PF: r.PF, PortGroup: DefaultPortGroup}
	if r.PortGroup != nil {
		n.PortGroup = *r.PortGroup
		if strings.TrimSpace(n.PortGroup) == "" {
			c.errf(p+".portgroup", "is empty; name the port group of the VM's SR-IOV adapter")
		}
	}
	if r.Model == "" {
		c.missing(p, "model", " (e.g. ConnectX-5)")
	} else if _, ok := nicMaxVFs[r.Model]; !ok {
		c.errf(p+".model", "unknown NIC model %q (known: %s)", r.Model, knownKeys(nicMaxVFs))
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

func (c *checker) hosts(raw []rawHost, defaults *base) {
	if len(raw) == 0 {
		c.missing("", "hosts", " (at least one host)")
	}
	for i, r := range raw {
		p := fmt.Sprintf("hosts[%d]", i)
		h := Host{Index: i, Name: r.Name, ESXi: r.ESXi, VM: r.VM, Mgmt: r.Mgmt}
		switch {
		case r.Name == "":
			c.missing(p, "name", " (the VM's hostname)")
		case !validHostname(r.Name) || !reFile.MatchString(r.Name):
			c.errf(p+".name", "%q is not a valid host name", r.Name)
		}
		if r.ESXi == "" {
			c.missing(p, "esxi", " (the ESXi host as vCenter knows it)")
		} else if !reFile.MatchString(r.ESXi) {
			c.errf(p+".esxi", "%q must be letters, digits, '.', '_' or '-' (it names esxi/<esxi>.sh)", r.ESXi)
		}
		if h.VM == "" {
			h.VM = h.Name
		} else if !reFile.MatchString(h.VM) {
			c.errf(p+".vm", "%q must be letters, digits, '.', '_' or '-' (it names esxi/<vm>.vmx)", h.VM)
		}
		if h.Mgmt == "" {
			h.Mgmt = h.Name
		} else if !validMgmt(h.Mgmt) {
			c.errf(p+".mgmt", "%q is not an IP address or host name, optionally with :port", h.Mgmt)
		}
		own := c.base(&r.rawHostBase, p)
		c.inherit(&h, own, *defaults, p)
		c.data(&h, r.Data, p)
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
			h.Subnet = c.deriveSubnet(h.Data.Address, p+".data.address")
		}
		c.inv.Hosts = append(c.inv.Hosts, h)
	}
}

// inherit fills h from the host's own keys, else from defaults, and reports
// required keys that neither sets.
func (c *checker) inherit(h *Host, own, def base, p string) {
	pick := func(ownSrc, defSrc string) (useOwn, ok bool) { return ownSrc != "", ownSrc != "" || defSrc != "" }
	if o, ok := pick(own.os, def.os); !ok {
		c.missing(p, "os", " (here or in defaults; e.g. ubuntu-16.04)")
	} else if o {
		h.OS = own.OS
	} else {
		h.OS = def.OS
	}
	if o, ok := pick(own.iface, def.iface); !ok {
		c.missing(p, "data_interface", " (here or in defaults; the VF's interface in the VM, e.g. enp1f0)")
	} else if o {
		h.DataInterface = own.DataInterface
	} else {
		h.DataInterface = def.DataInterface
	}
	if own.mtu != "" {
		h.DataMTU = own.DataMTU
	} else {
		h.DataMTU = def.DataMTU
	}
	if o, ok := pick(own.gpus, def.gpus); !ok {
		c.missing(p, "gpus", " (here or in defaults; at least one GPU)")
	} else if o {
		h.GPUs = own.GPUs
	} else {
		h.GPUs = slices.Clone(def.GPUs)
	}
	if o, ok := pick(own.nic, def.nic); !ok {
		c.missing(p, "nic", " (here or in defaults; e.g. {model: ConnectX-5, pf: vmnic4, vfs: 8})")
	} else if o {
		h.NIC = own.NIC
	} else {
		h.NIC = def.NIC
	}
}

func (c *checker) data(h *Host, r *rawData, p string) {
	if r == nil {
		c.missing(p, "data", " (address, switch and port of the data link)")
		return
	}
	p += ".data"
	if r.Address == "" {
		c.missing(p, "address", " (e.g. 31.31.31.41/24)")
	} else if a, err := netip.ParsePrefix(r.Address); err != nil || !a.Addr().Is4() {
		c.errf(p+".address", "%q is not an IPv4 address with its prefix length, like 31.31.31.41/24", r.Address)
	} else if a.Bits() < 31 && (a.Addr() == a.Masked().Addr() || a.Addr() == lastAddr(a)) {
		c.errf(p+".address", "%s is the network or broadcast address of %s, not a host address", a.Addr(), a.Masked())
	} else if r := specialRange(netip.PrefixFrom(a.Addr(), 32)); r != "" {
		c.errf(p+".address", "%s is in %s, not a routable data address", a.Addr(), r)
	} else {
		h.Data.Address = a
	}
	h.Data.Switch = r.Switch
	if r.Switch == "" {
		if len(c.inv.Switches) == 1 {
			h.Data.Switch = c.inv.Switches[0].Name
		} else {
			c.missing(p, "switch", " (the switch the data port is cabled to)")
		}
	}
	sw := c.inv.Switch(h.Data.Switch)
	if h.Data.Switch != "" && sw == nil {
		c.errf(p+".switch", "unknown switch %q (switches: %s)", h.Data.Switch, c.switchNames())
	}
	if r.Port == "" {
		c.missing(p, "port", " (the switch port, e.g. 1/1)")
		return
	}
	m := rePort.FindStringSubmatch(r.Port)
	if m == nil {
		c.errf(p+".port", "%q is not a switch port like 1/1", r.Port)
		return
	}
	mod, _ := strconv.Atoi(m[1])
	num, _ := strconv.Atoi(m[2])
	h.Data.Port = Port{mod, num}
	if sw != nil && sw.Ports > 0 && (mod != 1 || num < 1 || num > sw.Ports) {
		c.errf(p+".port", "%s is outside %s ports 1/1-1/%d", r.Port, sw.Model, sw.Ports)
	}
}

func (c *checker) switchNames() string {
	var names []string
	for _, s := range c.inv.Switches {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// lastAddr is the broadcast address of p's network.
func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n |= 1<<(32-p.Bits()) - 1
	return addr4(n)
}

func addr4(n uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// deriveSubnet applies the guide's convention: the host's offset inside its
// data network (41 for 31.31.31.41/24) picks the prefix-sized block of the pool
// (172.16.41.0/24).
func (c *checker) deriveSubnet(addr netip.Prefix, path string) netip.Prefix {
	d := c.inv.Docker
	if d.Prefix < d.Pool.Bits() || d.Prefix > 30 {
		return netip.Prefix{} // already reported at docker.prefix
	}
	offset := u32(addr.Addr()) - u32(addr.Masked().Addr())
	blocks := uint64(1) << (d.Prefix - d.Pool.Bits())
	if uint64(offset) >= blocks {
		c.errf(path, "offset %d of %s in %s does not fit the pool %s, which holds %d /%d subnets (offsets 0–%d); set hosts[].docker.subnet or widen docker.pool",
			offset, addr.Addr(), addr.Masked(), d.Pool, blocks, d.Prefix, blocks-1)
		return netip.Prefix{}
	}
	return netip.PrefixFrom(addr4(u32(d.Pool.Addr())+offset<<(32-d.Prefix)), d.Prefix)
}

// subnetPath is where a host's container subnet came from.
func subnetPath(inv *Inventory, i int) string {
	p := fmt.Sprintf("hosts[%d].docker.subnet", i)
	if _, ok := inv.pos[p]; ok {
		return p
	}
	return fmt.Sprintf("hosts[%d].data.address", i)
}

// crossHost checks the rules that relate hosts to each other and to the cluster.
func (c *checker) crossHost() {
	inv := c.inv
	type first struct {
		i    int
		path string
	}
	// dup reports a key seen before, at whichever of the two places the user
	// wrote explicitly (prefer), else at the later one.
	dup := func(kind string, explicit func(path string) bool) func(key string, i int, path string) {
		seen := map[string]first{}
		return func(key string, i int, path string) {
			if key == "" {
				return
			}
			if f, ok := seen[key]; ok {
				at, other := path, f.i
				if explicit != nil && explicit(f.path) && !explicit(path) {
					at, other = f.path, i
				}
				c.errf(at, "duplicate %s %s (also hosts[%d])", kind, key, other)
				return
			}
			seen[key] = first{i, path}
		}
	}
	written := func(path string) bool { _, ok := inv.pos[path]; return ok }
	names, vms, addrs, subnets := dup("host name", nil), dup("VM name", nil), dup("data address", nil), dup("container subnet", written)
	mgmt, dataNets := c.mgmtAddrs(), c.dataNets()
	c.subnetOverlaps()
	c.ports()
	c.mgmtEndpoints()
	dataNet, dataFrom := c.majorityDataNet()
	var shortMTU []string
	for i, h := range inv.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		names(h.Name, i, p+".name")
		vmPath := p + ".vm"
		if !written(vmPath) {
			vmPath = p + ".name"
		}
		vms(h.VM, i, vmPath)
		if h.Data.Address.IsValid() {
			addrs(h.Data.Address.Addr().String(), i, p+".data.address")
			if h.Data.Address.Masked() != dataNet {
				c.errf(p+".data.address", "%s is not on the data network %s of hosts[%d] and the others: all data addresses must share one directly connected network (routes need an on-link next hop)",
					h.Data.Address, dataNet, dataFrom)
			}
		}
		if h.Subnet.IsValid() {
			sp := subnetPath(inv, i)
			subnets(h.Subnet.String(), i, sp)
			if !inv.Docker.Pool.Contains(h.Subnet.Addr()) || h.Subnet.Bits() < inv.Docker.Pool.Bits() {
				c.errf(sp, "container subnet %s is outside the pool %s", h.Subnet, inv.Docker.Pool)
			}
			for _, m := range mgmt {
				if h.Subnet.Contains(m.addr) {
					c.errf(sp, "container subnet %s contains the management address %s of %s", h.Subnet, m.addr, m.owner)
				}
			}
			for _, n := range dataNets {
				if h.Subnet.Overlaps(n.net) {
					c.errf(sp, "container subnet %s overlaps the data network %s (hosts[%d])", h.Subnet, n.net, n.host)
				}
			}
		}
		if inv.Docker.MTU > h.EffectiveDataMTU() {
			shortMTU = append(shortMTU, fmt.Sprintf("%s (%d)", h.Name, h.EffectiveDataMTU()))
		}
	}
	if len(shortMTU) > 0 {
		list := shortMTU
		if len(list) > 4 {
			list = append(list[:4:4], fmt.Sprintf("and %d more", len(shortMTU)-4))
		}
		c.errf("docker.mtu", "%d is above the data link MTU of %s; set data_mtu (the link's MTU as configured on the VF, the ESXi vSwitch and the switch) or lower docker.mtu",
			inv.Docker.MTU, strings.Join(list, ", "))
	}
	if inv.Horovod.Network == NetworkHost && inv.Horovod.SSHPort == 22 {
		c.errf("horovod.ssh_port", "22 is the VM's own sshd: with host networking the workers' sshd must listen on another port (e.g. 12345)")
	}
	c.esxiShared()
}

// majorityDataNet is the data network most hosts are on (the first host's on
// a tie), so that one stray address is what gets reported, not the others.
func (c *checker) majorityDataNet() (netip.Prefix, int) {
	count := map[netip.Prefix]int{}
	var order []netip.Prefix
	first := map[netip.Prefix]int{}
	for i, h := range c.inv.Hosts {
		if !h.Data.Address.IsValid() {
			continue
		}
		n := h.Data.Address.Masked()
		if count[n] == 0 {
			order = append(order, n)
			first[n] = i
		}
		count[n]++
	}
	best := netip.Prefix{}
	for _, n := range order {
		if !best.IsValid() || count[n] > count[best] {
			best = n
		}
	}
	return best, first[best]
}

// ports checks that no two hosts share a switch port, unless they are VMs on
// one ESXi host (their VFs share the physical function's cable), and that VMs
// on one ESXi host name the same port.
func (c *checker) ports() {
	inv := c.inv
	seen := map[string]int{}
	for i, h := range inv.Hosts {
		if h.Data.Port.Number == 0 {
			continue
		}
		key := h.Data.Switch + " " + h.Data.Port.String()
		if j, ok := seen[key]; ok && inv.Hosts[j].ESXi != h.ESXi {
			c.errf(fmt.Sprintf("hosts[%d].data.port", i), "duplicate switch port %s (also hosts[%d]); only VMs on one ESXi host share a port", key, j)
			continue
		} else if !ok {
			seen[key] = i
		}
	}
	for _, e := range inv.ESXiHosts() {
		hosts := inv.HostsOnESXi(e)
		for _, h := range hosts[1:] {
			if h.Data.Port.Number > 0 && hosts[0].Data.Port.Number > 0 && (h.Data.Switch != hosts[0].Data.Switch || h.Data.Port != hosts[0].Data.Port) {
				c.errf(fmt.Sprintf("hosts[%d].data.port", h.Index), "%s shares ESXi host %s (and its uplink %s) with %s, so its data port is %s %s, not %s %s",
					h.Name, e, h.NIC.PF, hosts[0].Name, hosts[0].Data.Switch, hosts[0].Data.Port, h.Data.Switch, h.Data.Port)
			}
		}
	}
}

// mgmtEndpoints checks that no two machines (hosts and switches) share a
// management endpoint, and that no host is managed through another host's
// data address: apply would push two configurations to one machine.
func (c *checker) mgmtEndpoints() {
	inv := c.inv
	type owner struct{ path, name string }
	seen := map[string]owner{}
	add := func(endpoint, path, name string) {
		if endpoint == "" {
			return
		}
		key := strings.ToLower(endpoint)
		if o, ok := seen[key]; ok {
			c.errf(path, "management address %s is also %s's (%s): apply would configure one machine twice", endpoint, o.name, o.path)
			return
		}
		seen[key] = owner{path, name}
	}
	for j, s := range inv.Switches {
		add(s.Mgmt, fmt.Sprintf("switches[%d].mgmt", j), s.Name)
	}
	data := map[netip.Addr]int{}
	for j, h := range inv.Hosts {
		if h.Data.Address.IsValid() {
			data[h.Data.Address.Addr()] = j
		}
	}
	for i, h := range inv.Hosts {
		p := fmt.Sprintf("hosts[%d].mgmt", i)
		if _, ok := inv.pos[p]; !ok {
			p = fmt.Sprintf("hosts[%d].name", i)
		}
		add(h.Mgmt, p, h.Name)
		if a, ok := mgmtAddr(h.Mgmt); ok {
			if j, ok := data[a]; ok && j != i {
				c.errf(p, "management address %s is hosts[%d]'s (%s) data address", a, j, inv.Hosts[j].Name)
			}
		}
	}
}

type ownedAddr struct {
	addr  netip.Addr
	owner string
}

// mgmtAddrs lists the management addresses written as IP literals.
func (c *checker) mgmtAddrs() []ownedAddr {
	var out []ownedAddr
	for j, h := range c.inv.Hosts {
		if a, ok := mgmtAddr(h.Mgmt); ok {
			out = append(out, ownedAddr{a, fmt.Sprintf("hosts[%d]", j)})
		}
	}
	for j, s := range c.inv.Switches {
		if a, ok := mgmtAddr(s.Mgmt); ok {
			out = append(out, ownedAddr{a, fmt.Sprintf("switches[%d]", j)})
		}
	}
	return out
}

type dataNet struct {
	net  netip.Prefix
	host int
}

// dataNets lists the distinct data networks with the first host on each.
func (c *checker) dataNets() []dataNet {
	var out []dataNet
	seen := map[netip.Prefix]bool{}
	for j, h := range c.inv.Hosts {
		if n := h.Data.Address.Masked(); h.Data.Address.IsValid() && !seen[n] {
			seen[n] = true
			out = append(out, dataNet{n, j})
		}
	}
	return out
}

// subnetOverlaps reports container subnets that overlap without being equal
// (equal ones are duplicates), in O(n log n): sorted by first address, a subnet
// overlaps an earlier one exactly when it starts before the furthest end so far.
func (c *checker) subnetOverlaps() {
	inv := c.inv
	idx := make([]int, 0, len(inv.Hosts))
	for i, h := range inv.Hosts {
		if h.Subnet.IsValid() {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := inv.Hosts[idx[a]].Subnet, inv.Hosts[idx[b]].Subnet
		if x.Addr() != y.Addr() {
			return x.Addr().Less(y.Addr())
		}
		return x.Bits() < y.Bits()
	})
	widest := -1 // the host whose subnet reaches furthest so far
	for _, i := range idx {
		s := inv.Hosts[i].Subnet
		if widest >= 0 {
			w := inv.Hosts[widest].Subnet
			if w != s && w.Overlaps(s) {
				j, k := min(i, widest), max(i, widest)
				c.errf(subnetPath(inv, k), "container subnet %s overlaps hosts[%d]'s %s", inv.Hosts[k].Subnet, j, inv.Hosts[j].Subnet)
			}
			if u32(lastAddr(s)) <= u32(lastAddr(w)) {
				continue
			}
		}
		widest = i
	}
}

// esxiShared checks the VMs that share one ESXi host: one NIC, enough VFs,
// and no GPU passed to two VMs.
func (c *checker) esxiShared() {
	inv := c.inv
	for _, e := range inv.ESXiHosts() {
		if e == "" {
			continue
		}
		hosts := inv.HostsOnESXi(e)
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
				if _, ok := inv.pos[gp]; !ok {
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
