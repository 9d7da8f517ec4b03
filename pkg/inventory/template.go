package inventory

// The template key: where a VM that does not exist yet is cloned from, where
// the clone is placed, and the identity cloud-init gives it at first boot.

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
)

// Template says how `rdggen apply --target esxi` creates a host's VM when
// vCenter has none of that name: a clone of the template (a vSphere template
// or a powered-off VM), placed on the host's ESXi host, then reconfigured like
// every VM (EFI, MMIO keys, reservation, GPUs, VF) and, with CloudInit, given
// its hostname, addresses, routes and login key through cloud-init's VMware
// datasource (guestinfo.metadata and guestinfo.userdata; docs/rules.md#vm-clones).
// A VM that exists is never cloned again.
type Template struct {
	// Name is the template's (or VM's) name in vCenter.
	Name string
	// Datastore is the clone's datastore; "" for the template's own, when
	// the ESXi host mounts it.
	Datastore string
	// Folder is the VM folder of the clone, an inventory path
	// ("/DC0/vm/training") or a folder name; "" for the template's folder.
	Folder string
	// ResourcePool is the resource pool of the clone (an inventory path or
	// a name), Cluster a cluster whose root pool it goes to; both "" for the
	// root pool of the ESXi host's own compute resource. At most one is set.
	ResourcePool, Cluster string
	// CPUs and MemoryGB size the clone (0: the template's). They apply to
	// the clone only; an existing VM keeps its size.
	CPUs, MemoryGB int
	// CloudInit says the template runs cloud-init (default true). Without
	// it apply writes no guestinfo and the guest's network is left to
	// `rdggen apply --target hosts`.
	CloudInit bool
	// User is the login user cloud-init creates with SSH keys SSHKeys and
	// passwordless sudo (default DefaultTemplateUser).
	User    string
	SSHKeys []string
	// MgmtInterface is the guest's name of the management NIC (the
	// template's first non-SR-IOV adapter), configured by DHCP (the guide);
	// default DefaultMgmtInterface.
	MgmtInterface string
	// MgmtPrefix, when > 0, gives a clone whose host's mgmt is an IPv4
	// address that address statically, with this prefix length (bits),
	// instead of DHCP; MgmtGateway (invalid: none) is its default route and
	// MgmtDNS its name servers. A host whose mgmt is a name keeps DHCP.
	MgmtPrefix  int
	MgmtGateway netip.Addr
	MgmtDNS     []netip.Addr
}

// MinCloudInitUbuntu is the first Ubuntu release whose cloud-init has the
// VMware datasource (guestinfo), which a template with cloud_init needs:
// DataSourceVMware arrived in cloud-init 21.3 (canonical/cloud-init#953)
// and Ubuntu's updates brought it to 18.04, 20.04 and 21.04
// (canonical/cloud-init#975–977), never to 16.04 (docs/inventory.md#template-prerequisites).
var MinCloudInitUbuntu = [2]int{18, 4}

// Defaults and bounds of the template keys.
const (
	// DefaultTemplateUser is Ubuntu's cloud image login user.
	DefaultTemplateUser = "ubuntu"
	// DefaultMgmtInterface is the guide's management interface (VM interface eno0, DHCP).
	DefaultMgmtInterface = "eno0"
	// MaxVMCPUs and MaxVMMemoryGB are vSphere 8's per-VM maximums (768
	// vCPUs, 24 TB; VMware Configuration Maximums, configmax.broadcom.com).
	MaxVMCPUs     = 768
	MaxVMMemoryGB = 24 << 10
)

// TemplateSpec is the `template` key (here or in defaults).
type TemplateSpec struct {
	// Name is the template or VM in vCenter (required).
	Name string `yaml:"name"`
	// Datastore, Folder, ResourcePool and Cluster place the clone.
	Datastore    string `yaml:"datastore"`
	Folder       string `yaml:"folder"`
	ResourcePool string `yaml:"resource_pool"`
	Cluster      string `yaml:"cluster"`
	// CPUs and MemoryGB size the clone (default: the template's).
	CPUs     *int `yaml:"cpus"`
	MemoryGB *int `yaml:"memory_gb"`
	// CloudInit: the template runs cloud-init (default true).
	CloudInit *bool `yaml:"cloud_init"`
	// User and SSHKeys are the login user and its authorized keys.
	User    *string  `yaml:"user"`
	SSHKeys []string `yaml:"ssh_keys"`
	// MgmtInterface is the management NIC's guest name (default eno0).
	MgmtInterface *string `yaml:"mgmt_interface"`
	// MgmtPrefix (bits, 1–32), MgmtGateway (an IPv4 address) and MgmtDNS
	// (IPv4 addresses): the static management network of clones whose
	// host's mgmt is an IPv4 address (default: DHCP).
	MgmtPrefix  *int     `yaml:"mgmt_prefix"`
	MgmtGateway string   `yaml:"mgmt_gateway"`
	MgmtDNS     []string `yaml:"mgmt_dns"`
}

var (
	// reUser is a portable Linux user name (useradd's default NAME_REGEX,
	// at most 32 characters).
	reUser = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	// reSSHKey is one OpenSSH authorized_keys public key: a key type, the
	// base64 key and an optional comment of reText's characters (sshd(8),
	// AUTHORIZED_KEYS FILE FORMAT; no options, which rdggen never writes).
	reSSHKey = regexp.MustCompile(`^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com) [A-Za-z0-9+/]+={0,2}( [\p{L}\p{N}._+()/:,#@-]{1,100})?$`)
)

// template checks a template key at path p.
func (c *checker) template(r *TemplateSpec, p string) *Template {
	t := &Template{Name: r.Name, Datastore: r.Datastore, Folder: r.Folder, ResourcePool: r.ResourcePool, Cluster: r.Cluster,
		CloudInit: true, User: DefaultTemplateUser, SSHKeys: r.SSHKeys, MgmtInterface: DefaultMgmtInterface}
	name := func(key, v, what string) {
		if key == "folder" || key == "resource_pool" {
			v = strings.TrimPrefix(v, "/") // an inventory path: /DC0/vm/training
		}
		if v != "" && !textOK(v, MaxVMNameLen) {
			c.errf(p+"."+key, "%q is not a %s rdggen can write safely (up to %d letters, digits, spaces and ._+()/:,#@-, starting with a letter or digit and ending with one or ')')", v, what, MaxVMNameLen)
		}
	}
	if r.Name == "" {
		c.missing(p, "name", " (the template or VM in vCenter the VMs are cloned from)")
	}
	name("name", r.Name, "vCenter template name")
	name("datastore", r.Datastore, "datastore name")
	name("folder", r.Folder, "VM folder")
	name("resource_pool", r.ResourcePool, "resource pool")
	name("cluster", r.Cluster, "cluster name")
	if r.ResourcePool != "" && r.Cluster != "" {
		c.errf(p+".cluster", "set resource_pool or cluster, not both: a clone goes to one resource pool (a cluster's is its root pool)")
	}
	if r.CPUs != nil {
		t.CPUs = c.intIn(p+".cpus", r.CPUs, 0, 1, MaxVMCPUs, "vCPUs; vSphere 8 gives a VM at most 768")
	}
	if r.MemoryGB != nil {
		t.MemoryGB = c.intIn(p+".memory_gb", r.MemoryGB, 0, 1, MaxVMMemoryGB, "GB; vSphere 8 gives a VM at most 24 TB")
	}
	if r.CloudInit != nil {
		t.CloudInit = *r.CloudInit
	}
	if r.User != nil {
		t.User = *r.User
		if !reUser.MatchString(t.User) || t.User == "root" {
			c.errf(p+".user", "%q is not a login user cloud-init can create (a Linux user name: a lower-case letter or '_', then up to 31 lower-case letters, digits, '_' or '-'; not root)", t.User)
		}
	}
	for i, k := range r.SSHKeys {
		if !reSSHKey.MatchString(k) {
			c.errf(fmt.Sprintf("%s.ssh_keys[%d]", p, i), "%q is not one OpenSSH public key line (TYPE BASE64 [COMMENT], e.g. the contents of ~/.ssh/id_ed25519.pub; no options)", clip(k, 40))
		}
	}
	if r.MgmtInterface != nil {
		if c.mgmtSet == nil {
			c.mgmtSet = map[string]bool{}
		}
		c.mgmtSet[p] = true
		t.MgmtInterface = *r.MgmtInterface
		if !reIface.MatchString(t.MgmtInterface) {
			c.errf(p+".mgmt_interface", "%q is not a Linux interface name (1–15 letters, digits, '_', '.', '-')", t.MgmtInterface)
		}
	}
	if r.MgmtPrefix != nil {
		t.MgmtPrefix = c.intIn(p+".mgmt_prefix", r.MgmtPrefix, 0, 1, 32, "bits of the management network's prefix, e.g. 24")
	}
	unicast := func(a netip.Addr) bool {
		return a.Is4() && !a.IsUnspecified() && !a.IsLoopback() && !a.IsMulticast() && a != netip.AddrFrom4([4]byte{255, 255, 255, 255})
	}
	if r.MgmtGateway != "" {
		if a, err := netip.ParseAddr(r.MgmtGateway); err == nil && unicast(a) {
			t.MgmtGateway = a
		} else {
			c.errf(p+".mgmt_gateway", "%q is not an IPv4 unicast address like 10.0.0.1", clip(r.MgmtGateway, 40))
		}
	}
	for i, d := range r.MgmtDNS {
		if a, err := netip.ParseAddr(d); err == nil && unicast(a) {
			t.MgmtDNS = append(t.MgmtDNS, a)
		} else {
			c.errf(fmt.Sprintf("%s.mgmt_dns[%d]", p, i), "%q is not an IPv4 unicast address like 10.0.0.2", clip(d, 40))
		}
	}
	if r.MgmtPrefix == nil && (r.MgmtGateway != "" || len(r.MgmtDNS) > 0) {
		key := "mgmt_gateway"
		if r.MgmtGateway == "" {
			key = "mgmt_dns"
		}
		c.errf(p+"."+key, "needs mgmt_prefix: the static management network (address from hosts[].mgmt, prefix, gateway, DNS) is used only with mgmt_prefix set")
	}
	return t
}

// staticMgmt checks the static management network of template t (at path
// tp) for host h (at path p), when t sets one and h's mgmt is an IPv4
// address: the gateway must be on the host's management network and not
// its address.
func (c *checker) staticMgmt(h *Host, t *Template, p, tp string) {
	a, ok := mgmtAddr(h.Mgmt)
	if t.MgmtPrefix == 0 || !ok || !a.Is4() || !t.MgmtGateway.IsValid() {
		return
	}
	n := netip.PrefixFrom(a, t.MgmtPrefix).Masked()
	path := tp + ".mgmt_gateway"
	if slices.ContainsFunc(c.rep.Findings, func(f Finding) bool { return f.Path == path }) {
		return
	}
	switch {
	case !n.Contains(t.MgmtGateway):
		c.errf(path, "%s is not on %s's management network %s (%s.mgmt %s, mgmt_prefix %d): a default route needs an on-link gateway", t.MgmtGateway, h.Name, n, p, a, t.MgmtPrefix)
	case t.MgmtGateway == a:
		c.errf(path, "%s is %s's own management address (%s.mgmt)", t.MgmtGateway, h.Name, p)
	}
}

// clip shortens s to n bytes for a finding.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
