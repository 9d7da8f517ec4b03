// Package cloudinit computes the first-boot identity of a VM that
// `rdggen apply --target esxi` cloned from its template (inventory.Template):
// the cloud-init meta-data (instance id, hostname), user-data (the login
// user and its SSH keys) and network config, version 2: the management
// interface by DHCP (the guide's; or statically: StaticMgmt) and the data VF
// with its address, the data MTU and the same container routes `apply
// --target hosts` installs (dockernet.Routes).
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
// Every inventory string written is held to a grammar at validation (host
// names, interface names, the user name, SSH public key lines) and, for a
// Go caller who builds an Inventory without validation, made safe where it
// is written besides: quoted as a YAML scalar (quote.YAML) in a value, and
// escaped (quote.Line) in a comment, so no string adds a key or a line.
package cloudinit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"iter"
	"net"
	"net/netip"
	"slices"
	"strconv"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
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
// non-SR-IOV adapter), Data the SR-IOV adapter's. An empty MAC matches the
// interface by its inventory name instead (the review copy).
type MACs struct{ Mgmt, Data string }

// Enabled reports whether h's VM gets a cloud-init identity: it has a
// template whose cloud_init is on.
func Enabled(h *inventory.Host) bool { return h.Template != nil && h.Template.CloudInit }

// InstanceID is h's cloud-init instance id, "<cluster>-<vm>": cloud-init runs
// its once-per-instance modules again when the id changes.
func InstanceID(inv *inventory.Inventory, h *inventory.Host) string { return inv.Name + "-" + h.VM }

// MetaData is h's meta-data document (YAML): instance-id and local-hostname.
func MetaData(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	b.WriteString(header("meta-data", inv, h))
	writeMeta(&b, inv, h)
	return b.Bytes()
}

// header is a document's first comment line, "# rdggen: cloud-init
// <what> of <host> (VM <vm>), cluster <name>.": the names go through
// quote.Line, so a name a Go caller built with a newline (which validation
// refuses in an inventory file) stays inside the comment instead of
// starting a YAML key of its own.
func header(what string, inv *inventory.Inventory, h *inventory.Host) string {
	return "# rdggen: cloud-init " + what + " of " + quote.Line(h.Name) + " (VM " + quote.Line(h.VM) + "), cluster " + quote.Line(inv.Name) + ".\n"
}

func writeMeta(b *bytes.Buffer, inv *inventory.Inventory, h *inventory.Host) {
	b.WriteString("instance-id: " + quote.YAML(InstanceID(inv, h)) + "\n")
	b.WriteString("local-hostname: " + quote.YAML(h.Name) + "\n")
}

// SudoRule is the sudoers rule of the login user: rdggen's hosts target runs
// its privileged steps with `sudo -n`, which needs it without a password.
const SudoRule = "ALL=(ALL) NOPASSWD:ALL"

// UserData is h's user-data, a #cloud-config document: the hostname and,
// when the template lists ssh_keys, the login user with those keys,
// passwordless sudo (SudoRule) and a locked password. Without keys the
// template's users are left as they are.
func UserData(inv *inventory.Inventory, h *inventory.Host) []byte {
	t := h.Template
	var b bytes.Buffer
	b.WriteString("#cloud-config\n")
	b.WriteString(header("user-data", inv, h))
	b.WriteString("hostname: " + quote.YAML(h.Name) + "\n")
	b.WriteString("preserve_hostname: false\n")
	if t == nil || len(t.SSHKeys) == 0 {
		b.WriteString("# no template.ssh_keys in the inventory: the template's users and keys are kept\n")
		return b.Bytes()
	}
	b.WriteString("users:\n")
	b.WriteString("  - name: " + quote.YAML(t.User) + "\n")
	b.WriteString("    sudo: " + quote.YAML(SudoRule) + "\n")
	b.WriteString("    shell: /bin/bash\n")
	b.WriteString("    lock_passwd: true\n")
	b.WriteString("    ssh_authorized_keys:\n")
	for _, k := range t.SSHKeys {
		b.WriteString("      - " + quote.YAML(k) + "\n")
	}
	return b.Bytes()
}

// NetworkConfig is h's network config, version 2 (netplan's format, which
// cloud-init renders to netplan, networkd or ENI): the management interface
// by DHCP (or, StaticMgmt, with its address, a default route via the
// template's mgmt_gateway and its mgmt_dns) and the data interface with its address, the data MTU and
// dockernet.Routes. Each interface is matched by macs' address with
// set-name giving it its inventory name, or by that name when the MAC is "".
func NetworkConfig(inv *inventory.Inventory, h *inventory.Host, macs MACs) []byte {
	var b bytes.Buffer
	b.WriteString(header("network config", inv, h))
	writeNetwork(&b, inv, h, macs, "")
	return b.Bytes()
}

// writeNetwork writes the version 2 document, each line indented by in.
func writeNetwork(b *bytes.Buffer, inv *inventory.Inventory, h *inventory.Host, macs MACs, in string) {
	mgmt := inventory.DefaultMgmtInterface
	if h.Template != nil {
		mgmt = h.Template.MgmtInterface
	}
	b.WriteString(in + "version: 2\n" + in + "ethernets:\n")
	match := func(name, mac string) {
		b.WriteString(in + "  " + quote.YAML(name) + ":\n" + in + "    match:\n")
		if mac == "" {
			b.WriteString(in + "      name: " + quote.YAML(name) + "\n")
			return
		}
		b.WriteString(in + "      macaddress: " + quote.YAML(mac) + "\n")
		b.WriteString(in + "    set-name: " + quote.YAML(name) + "\n")
	}
	match(mgmt, macs.Mgmt)
	if a, ok := StaticMgmt(h); ok {
		t := h.Template
		b.WriteString(in + "    dhcp4: false\n")
		b.WriteString(in + "    addresses:\n" + in + "      - " + a.String() + "\n")
		if t.MgmtGateway.IsValid() {
			b.WriteString(in + "    routes:\n" + in + "      - to: 0.0.0.0/0\n" + in + "        via: " + t.MgmtGateway.String() + "\n")
		}
		if len(t.MgmtDNS) > 0 {
			b.WriteString(in + "    nameservers:\n" + in + "      addresses:\n")
			for _, d := range t.MgmtDNS {
				b.WriteString(in + "        - " + d.String() + "\n")
			}
		}
	} else {
		b.WriteString(in + "    dhcp4: true\n")
	}
	match(h.DataInterface, macs.Data)
	b.WriteString(in + "    dhcp4: false\n")
	b.WriteString(in + "    addresses:\n" + in + "      - " + h.Data.Address.String() + "\n")
	b.WriteString(in + "    mtu: " + strconv.Itoa(h.DataMTU) + "\n")
	routes := dockernet.Routes(inv, h)
	if len(routes) == 0 {
		return
	}
	b.WriteString(in + "    routes:\n")
	for _, r := range routes {
		b.WriteString(in + "      - to: " + r.Dst.String() + "\n" + in + "        via: " + r.Via.String() + "\n")
	}
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
	var b bytes.Buffer
	writeMeta(&b, inv, h)
	b.WriteString("network:\n")
	writeNetwork(&b, inv, h, macs, "  ")
	return b.Bytes()
}

// Setting is one guestinfo key and its value.
type Setting struct{ Key, Value string }

// GuestInfo is the ExtraConfig that gives h's VM its identity at first
// boot, in this order: guestinfo.metadata (GuestData), its encoding,
// guestinfo.userdata (UserData), its encoding; each value gzip-compressed
// (deterministically: no name, no time) and base64-encoded.
func GuestInfo(inv *inventory.Inventory, h *inventory.Host, macs MACs) []Setting {
	return []Setting{
		{KeyMetadata, Encode(GuestData(inv, h, macs))},
		{KeyMetadataEncoding, Encoding},
		{KeyUserdata, Encode(UserData(inv, h))},
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
