// Package cloudinit computes the first-boot identity of a VM that
// `rdggen apply --target esxi` cloned from its template (inventory.Template):
// the cloud-init meta-data (instance id, hostname), user-data (the login
// user and its SSH keys) and network config, version 2: the management
// interface by DHCP (the guide's; or statically: StaticMgmt) and the data VF
// with its address, the data MTU and the same container routes `apply
// --target hosts` installs (dockernet.Routes). A VM with several rails also
// gets every rail in the network config, with its policy routing
// (pkg/railnet), and its rails' sysctls and NCCL topology file in the
// user-data (RailFiles, RailCommands; pkg/railguest).
//
// cloud-init's VMware datasource reads them from the VM's guestinfo keys
// (GuestInfo): guestinfo.metadata with the network config under its
// "network" key, guestinfo.userdata, and each one's ".encoding"
// (https://cloudinit.readthedocs.io/en/latest/reference/datasources/vmware.html).
// The output tree has the same documents for review under vms/<vm>/ in the
// layout cloud-init's NoCloud datasource reads (meta-data, user-data,
// network-config), matching the interfaces by name; apply matches them by the
// MAC addresses vCenter gave the VM's adapters, which exist only once the VF
// is attached.
//
// Everything here is a pure function of a valid inventory and never fails.
// The documents are Go values that yaml.v3 writes (the network config is a
// netplan.Config); only their comment lines are text. Every inventory
// string written is held to a grammar at validation (host names, interface
// names, the user name, SSH public key lines) and, for a Go caller who
// builds an Inventory without validation, safe where it is written besides:
// yaml.v3 quotes a value that would read as something else and writes one
// with a line break as a block scalar, and a comment escapes it
// (quote.Line), so no string adds a key or a line.
package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"iter"
	"net"
	"net/netip"
	"slices"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/netplan"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/railguest"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// The guestinfo keys of cloud-init's VMware datasource and the encoding
// rdggen writes (gzip, then base64: the datasource decodes "base64" and
// "gzip+base64"; gzip keeps the routes of thousands of hosts small).
const (
	KeyMetadata         = "guestinfo.metadata"
	KeyMetadataEncoding = "guestinfo.metadata.encoding"
	KeyUserdata         = "guestinfo.userdata"
	KeyUserdataEncoding = "guestinfo.userdata.encoding"
	Encoding            = "gzip+base64"
)

// MACs are the MAC addresses vCenter assigned to a VM's adapters, as
// "00:50:56:aa:bb:cc": Mgmt the management adapter's (the template's first
// non-SR-IOV adapter), Data the SR-IOV adapter's (rail 0's), and, for a VM
// with several rails, Rails[r] the SR-IOV adapter of rail r (Rails[0],
// when Data is empty, is rail 0's). An empty MAC matches the interface by
// its inventory name instead (the review copy).
type MACs struct {
	Mgmt, Data string
	Rails      []string
}

// Rail is rail r's MAC address: Data for rail 0 when set, else Rails[r];
// "" when neither gives one.
func (m MACs) Rail(r int) string {
	if r == 0 && m.Data != "" {
		return m.Data
	}
	if r >= 0 && r < len(m.Rails) {
		return m.Rails[r]
	}
	return ""
}

// rails are the MAC addresses of h's rails in rail order (MACs.Rail).
func (m MACs) rails(h *inventory.Host) []string {
	out := make([]string, len(h.Rails))
	for r := range out {
		out[r] = m.Rail(r)
	}
	return out
}

// Enabled reports whether h's VM gets a cloud-init identity: it has a
// template whose cloud_init is on.
func Enabled(h *inventory.Host) bool { return h.Template != nil && h.Template.CloudInit }

// InstanceID is h's cloud-init instance id, "<cluster>-<vm>": cloud-init runs
// its once-per-instance modules again when the id changes.
func InstanceID(inv *inventory.Inventory, h *inventory.Host) string { return inv.Name + "-" + h.VM }

// MetaData is h's meta-data document (YAML): instance-id and local-hostname.
func MetaData(inv *inventory.Inventory, h *inventory.Host) []byte {
	return document(header("meta-data", inv, h), meta(inv, h))
}

// document is head (comment lines) followed by v as yaml.v3 writes it,
// with the 2-space indentation of the network config (netplan.Marshal).
func document(head string, v any) []byte { return append([]byte(head), netplan.Marshal(v)...) }

// header is a document's first comment line, "# rdggen: cloud-init
// <what> of <host> (VM <vm>), cluster <name>.": the names go through
// quote.Line, so a name a Go caller built with a newline (which validation
// refuses in an inventory file) stays inside the comment instead of
// starting a YAML key of its own.
func header(what string, inv *inventory.Inventory, h *inventory.Host) string {
	return "# rdggen: cloud-init " + what + " of " + quote.Line(h.Name) + " (VM " + quote.Line(h.VM) + "), cluster " + quote.Line(inv.Name) + ".\n"
}

// metaData is the meta-data document's keys (the VMware datasource reads
// the same keys from guestinfo.metadata).
type metaData struct {
	InstanceID    string `yaml:"instance-id"`
	LocalHostname string `yaml:"local-hostname"`
}

func meta(inv *inventory.Inventory, h *inventory.Host) metaData {
	return metaData{InstanceID: InstanceID(inv, h), LocalHostname: h.Name}
}

// SudoRule is the sudoers rule of the login user: rdggen's hosts target runs
// its privileged steps with `sudo -n`, which needs it without a password.
const SudoRule = "ALL=(ALL) NOPASSWD:ALL"

// loginShell is the login user's shell.
const loginShell = "/bin/bash"

// userData is a #cloud-config document's keys that rdggen sets ("Module
// reference": hostname in set_hostname, users in users_groups,
// https://cloudinit.readthedocs.io/en/latest/reference/modules.html).
type userData struct {
	Hostname         string      `yaml:"hostname"`
	PreserveHostname bool        `yaml:"preserve_hostname"`
	Users            []user      `yaml:"users,omitempty"`
	WriteFiles       []writeFile `yaml:"write_files,omitempty"`
	RunCmd           [][]string  `yaml:"runcmd,omitempty"`
}

// writeFile is one entry of write_files (module write_files): a file
// cloud-init writes at first boot, owned by root.
type writeFile struct {
	Path        string `yaml:"path"`
	Permissions string `yaml:"permissions"`
	Content     string `yaml:"content"`
}

// RailFiles are the files a VM with several rails gets at first boot
// (write_files), macs as for GuestInfo: the rails' sysctl.d file
// (railnet.SysctlPath), and, when the VM's topology file can be written
// (railguest.Skeleton), its skeleton, boot script and unit. Its netplan
// file is not among them: the network config carries the rails. None for a
// VM with one rail.
func RailFiles(inv *inventory.Inventory, h *inventory.Host, macs MACs) []railguest.File {
	fs, _ := railguest.Files(inv, h, macs.rails(h))
	var out []railguest.File
	for _, f := range fs {
		if f.Path != "" && f.Path != railnet.NetplanPath {
			out = append(out, f)
		}
	}
	return out
}

// RailCommands are the first-boot commands (runcmd, run once at the end of
// the first boot) of a VM with several rails: the sysctls now (`sysctl -p`
// of the file RailFiles wrote; systemd-sysctl has run before cloud-init
// wrote it), and, with a topology file, `systemctl daemon-reload` and
// `systemctl enable --now` of its unit, which writes the file now and at
// every boot. None for a VM with one rail.
func RailCommands(inv *inventory.Inventory, h *inventory.Host) [][]string {
	if !h.MultiRail() {
		return nil
	}
	cmds := [][]string{{"sysctl", "-p", railnet.SysctlPath}}
	if _, err := railguest.Skeleton(inv, h); err == nil {
		cmds = append(cmds, []string{"systemctl", "daemon-reload"}, []string{"systemctl", "enable", "--now", railguest.UnitName})
	}
	return cmds
}

// user is one entry of users: a login user cloud-init creates.
type user struct {
	Name              string   `yaml:"name"`
	Sudo              string   `yaml:"sudo"`
	Shell             string   `yaml:"shell"`
	LockPasswd        bool     `yaml:"lock_passwd"`
	SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys"`
}

// UserData is h's user-data, a #cloud-config document: the hostname and,
// when the template lists ssh_keys, the login user with those keys,
// passwordless sudo (SudoRule) and a locked password. Without keys the
// template's users are left as they are. A VM with several rails also gets
// its rails' files (RailFiles) and the commands that start them (RailCommands),
// its rails found by name; GuestInfo's copy finds them by MAC address.
func UserData(inv *inventory.Inventory, h *inventory.Host) []byte {
	return userDataFor(inv, h, MACs{})
}

func userDataFor(inv *inventory.Inventory, h *inventory.Host, macs MACs) []byte {
	t := h.Template
	ud := userData{Hostname: h.Name}
	keys := t != nil && len(t.SSHKeys) > 0
	if keys {
		ud.Users = []user{{Name: t.User, Sudo: SudoRule, Shell: loginShell, LockPasswd: true, SSHAuthorizedKeys: t.SSHKeys}}
	}
	if h.MultiRail() {
		for _, f := range RailFiles(inv, h, macs) {
			ud.WriteFiles = append(ud.WriteFiles, writeFile{Path: f.Path, Permissions: fmt.Sprintf("%04o", uint32(f.Mode.Perm())), Content: string(f.Data)})
		}
		ud.RunCmd = RailCommands(inv, h)
	}
	b := document("#cloud-config\n"+header("user-data", inv, h), ud)
	if !keys {
		b = append(b, "# no template.ssh_keys in the inventory: the template's users and keys are kept\n"...)
	}
	return b
}

// NetworkConfig is h's network config, version 2 (netplan's format, which
// cloud-init renders to netplan, networkd or ENI): the management interface
// by DHCP (or, StaticMgmt, with its address, a default route via the
// template's mgmt_gateway and its mgmt_dns) and the data interface with its address, the data MTU and
// dockernet.Routes. Each interface is matched by macs' address with
// set-name giving it its inventory name, or by that name when the MAC is "".
//
// A VM with several rails gets every rail as pkg/railnet defines it
// (railguest.Guest): rail 0's policy routing after its container routes,
// and each other rail matched by macs.Rail(r) (or its name), with its
// address, the data MTU, its routes (metric, table, scope) and its
// routing-policy rule. cloud-init hands a version 2 config to netplan as it
// is (its netplan renderer, Ubuntu's); its other renderers keep only each
// route's to and via (cloudinit/net/network_state.py, 22.4), so such a VM
// needs netplan, as rdggen's OS (Ubuntu 18.04 and later) has.
func NetworkConfig(inv *inventory.Inventory, h *inventory.Host, macs MACs) []byte {
	return network(inv, h, macs).AppendYAML([]byte(header("network config", inv, h)))
}

// network is NetworkConfig's document: the management interface's
// definition, then the data interface's.
func network(inv *inventory.Inventory, h *inventory.Host, macs MACs) netplan.Config {
	mgmtIf := inventory.DefaultMgmtInterface
	if h.Template != nil {
		mgmtIf = h.Template.MgmtInterface
	}
	mgmt := matched(mgmtIf, macs.Mgmt)
	if a, ok := StaticMgmt(h); ok {
		t := h.Template
		mgmt.DHCP4 = new(false)
		mgmt.Addresses = []netip.Prefix{a}
		if t.MgmtGateway.IsValid() {
			mgmt.Routes = netplan.NewRoutes(netplan.Route{To: netip.PrefixFrom(netip.IPv4Unspecified(), 0), Via: t.MgmtGateway})
		}
		if len(t.MgmtDNS) > 0 {
			mgmt.Nameservers = &netplan.Nameservers{Addresses: t.MgmtDNS}
		}
	} else {
		mgmt.DHCP4 = new(true)
	}
	data := matched(h.DataInterface, macs.Rail(0))
	data.DHCP4 = new(false)
	data.Addresses = []netip.Prefix{h.Data.Address}
	data.MTU = h.DataMTU
	routes := dockernet.Routes(inv, h)
	rs := make([]netplan.Route, len(routes))
	for i, r := range routes {
		rs[i] = netplan.Route{To: r.Dst, Via: r.Via}
	}
	es := netplan.Ethernets{mgmt, data}
	var rails netplan.Ethernets
	if h.MultiRail() {
		if g, err := railguest.Guest(inv, h, macs.rails(h)); err == nil {
			rails = g.Ethernets()
		}
	}
	for r, e := range rails {
		if r == 0 {
			rs = append(rs, slices.Collect(e.Routes.All())...)
			es[1].RoutingPolicy = e.RoutingPolicy
			continue
		}
		d := matched(h.Rails[r].Interface, "")
		if e.Match != nil { // by MAC, in railnet's canonical form
			d.Match, d.SetName = e.Match, e.SetName
		}
		d.DHCP4 = new(false)
		d.Addresses, d.MTU, d.Routes, d.RoutingPolicy = e.Addresses, e.MTU, e.Routes, e.RoutingPolicy
		es = append(es, d)
	}
	es[1].Routes = netplan.NewRoutes(rs...)
	return netplan.Config{Version: netplan.Version, Ethernets: es}
}

// matched is the definition of the interface name, matched by mac with
// set-name giving it its name, or by its name when mac is "".
func matched(name, mac string) netplan.Ethernet {
	if mac == "" {
		return netplan.Ethernet{ID: name, Match: &netplan.Match{Name: name}}
	}
	return netplan.Ethernet{ID: name, Match: &netplan.Match{MACAddress: mac}, SetName: name}
}

// StaticMgmt is the management address with its prefix that h's clone
// gets statically: h's mgmt when it is an IPv4 address (with or without a
// port) and its template sets mgmt_prefix. False: the management interface
// is configured by DHCP (the guide's).
func StaticMgmt(h *inventory.Host) (netip.Prefix, bool) {
	if h.Template == nil || h.Template.MgmtPrefix == 0 {
		return netip.Prefix{}, false
	}
	m := h.Mgmt
	if host, _, err := net.SplitHostPort(m); err == nil {
		m = host
	}
	a, err := netip.ParseAddr(m)
	if err != nil || !a.Is4() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, h.Template.MgmtPrefix), true
}

// GuestData is h's metadata as the VMware datasource reads it from
// guestinfo.metadata: MetaData's keys plus the network config (matched by
// macs) under "network", one YAML document.
func GuestData(inv *inventory.Inventory, h *inventory.Host, macs MACs) []byte {
	return netplan.Marshal(guestData{metaData: meta(inv, h), Network: network(inv, h, macs)})
}

// guestData is GuestData's document.
type guestData struct {
	metaData `yaml:",inline"`
	Network  netplan.Config `yaml:"network"`
}

// Setting is one guestinfo key and its value.
type Setting struct{ Key, Value string }

// GuestInfo is the ExtraConfig that gives h's VM its identity at first
// boot, in this order: guestinfo.metadata (GuestData), its encoding,
// guestinfo.userdata (UserData, its rails' boot script finding each rail
// by macs.Rail(r) where given), its encoding; each value gzip-compressed
// (deterministically: no name, no time) and base64-encoded.
func GuestInfo(inv *inventory.Inventory, h *inventory.Host, macs MACs) []Setting {
	return []Setting{
		{KeyMetadata, Encode(GuestData(inv, h, macs))},
		{KeyMetadataEncoding, Encoding},
		{KeyUserdata, Encode(userDataFor(inv, h, macs))},
		{KeyUserdataEncoding, Encoding},
	}
}

// Encode is data as Encoding: gzip (best compression, empty header), then
// standard base64.
func Encode(data []byte) string {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = w.Write(data)
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(z.Bytes())
}

// Artifacts returns this package's part of the output tree, for every host
// whose template runs cloud-init (Enabled): vms/<vm>/meta-data,
// vms/<vm>/user-data and vms/<vm>/network-config (matched by name), mode
// 0644. It collects Stream.
func Artifacts(inv *inventory.Inventory) []artifact.File { return slices.Collect(Stream(inv)) }

// Stream yields Artifacts' files one at a time, host by host in inventory order.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		for i := range inv.Hosts {
			h := &inv.Hosts[i]
			if !Enabled(h) {
				continue
			}
			dir := "vms/" + h.VM + "/"
			for _, f := range []artifact.File{
				{Path: dir + "meta-data", Mode: 0o644, Data: MetaData(inv, h)},
				{Path: dir + "user-data", Mode: 0o644, Data: UserData(inv, h)},
				{Path: dir + "network-config", Mode: 0o644, Data: NetworkConfig(inv, h, MACs{})},
			} {
				if !yield(f) {
					return
				}
			}
		}
	}
}
