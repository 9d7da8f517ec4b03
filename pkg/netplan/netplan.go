// Package netplan is netplan's YAML, network configuration version 2, as Go
// values that yaml.v3 writes: the files netplan reads from /etc/netplan
// ("Netplan YAML configuration reference",
// https://netplan.readthedocs.io/en/stable/netplan-yaml/) and cloud-init's
// network config version 2, the same schema without the top-level network
// key ("Networking config Version 2",
// https://cloudinit.readthedocs.io/en/latest/reference/network-config-format-v2.html).
// rdggen writes a VM's persistent routes and data MTU in one (pkg/dockernet)
// and the first-boot network of a cloned VM in the other (pkg/cloudinit);
// the rails of a VM with several, with their policy routing, in the first
// (pkg/railnet).
//
// yaml.v3 decides how every value is written: a string that a YAML reader
// would take for something else (on, yes, 123, null) is quoted, one with a
// line break is a block scalar, so no string — an interface name, a netplan
// ID read from a host, a MAC address — adds a key or a line. The documents
// are written with 2-space indentation, sequences indented under their key.
//
// A cluster whose hosts route to each other's container subnets (docker
// routing: hosts) has n−1 routes per host, n² in the tree, and yaml.v3
// takes tens of microseconds per route entry (BenchmarkFile: a file of
// 4,095 routes in about 170 ms on 2 cores), so that a 4,096-host tree would
// take over ten minutes. A RouteList therefore holds each route's entry as
// text made once and shared by every document that lists it
// (RouteList.Except), and Config.AppendYAML and File.AppendYAML write those
// entries where yaml.v3 places the list (the same file in about 0.1 ms).
// The result is byte for byte yaml.v3's encoding of the same value
// (Marshal, through Routes.MarshalYAML); the package's tests and its fuzz
// target compare the two.
//
// Everything here is a pure function of its arguments.
package netplan

import (
	"bytes"
	"fmt"
	"net/netip"

	"gopkg.in/yaml.v3"
)

// Version is the network configuration version this package writes.
const Version = 2

// File is a netplan file (/etc/netplan/*.yaml): Config under the key
// network. Files that define one ID amend one definition: a later file's
// scalar settings override an earlier one's and its lists (addresses,
// routes) are appended (netplan-generate(8), "Handling multiple files").
type File struct {
	Network Config `yaml:"network"`
}

// Config is a network configuration, version 2: cloud-init's network config
// document as it is, netplan's under the key network (File).
type Config struct {
	// Version is the schema version: Version (2).
	Version int `yaml:"version"`
	// Ethernets are the physical interfaces' definitions, in this order.
	Ethernets Ethernets `yaml:"ethernets"`
}

// Ethernets are the definitions under ethernets, written as one mapping
// from each definition's ID to its settings in the slice's order (a Go map
// would be written in the order of its sorted keys).
type Ethernets []Ethernet

// Ethernet is one definition of a physical interface. Unset (zero) fields
// are left out.
type Ethernet struct {
	// ID is the definition's key: the interface's name, or, with Match, a
	// name of the file's own (netplan's "ID"). Not a setting.
	ID string `yaml:"-"`
	// Match selects the interface by name (a shell glob) or MAC address.
	Match *Match `yaml:"match,omitempty"`
	// SetName renames the matched interface, e.g. "enp1f0".
	SetName string `yaml:"set-name,omitempty"`
	// DHCP4 turns IPv4 DHCP on or off; nil leaves it unsaid.
	DHCP4 *bool `yaml:"dhcp4,omitempty"`
	// Addresses are static addresses with their prefix length, e.g.
	// 10.10.0.1/24.
	Addresses []netip.Prefix `yaml:"addresses,omitempty"`
	// MTU is the interface's MTU in bytes; 0 leaves it unsaid.
	MTU int `yaml:"mtu,omitempty"`
	// Routes are static routes through this interface.
	Routes Routes `yaml:"routes,omitempty"`
	// RoutingPolicy are the policy rules (`ip rule`) that come up with
	// this interface, e.g. one that sends what its address sends to its
	// own table.
	RoutingPolicy []RoutingPolicy `yaml:"routing-policy,omitempty"`
	// Nameservers are the DNS servers of this interface.
	Nameservers *Nameservers `yaml:"nameservers,omitempty"`
}

// Match selects the interface a definition configures; netplan matches an
// interface that has every field set here.
type Match struct {
	// Name is the kernel's name of the interface, or a shell glob ("en*").
	Name string `yaml:"name,omitempty"`
	// MACAddress is the interface's MAC address, "00:50:56:aa:bb:cc".
	MACAddress string `yaml:"macaddress,omitempty"`
}

// RoutingPolicy is one policy rule of a definition (netplan's
// routing-policy; the kernel's `ip rule`): traffic from From is looked up
// in Table, the rules taken in the order of their Priority. Netplan writes
// it for systemd-networkd as a [RoutingPolicyRule] section (From=, Table=,
// Priority=; systemd.network(5)).
type RoutingPolicy struct {
	// From is the source the rule matches: an address with its prefix
	// length, 10.0.3.13/32 for one address.
	From netip.Prefix `yaml:"from"`
	// Table is the routing table looked up, 1…2³²−1 (netplan: "positive
	// integers starting from 1"; 253–255 are the system's default, main
	// and local tables).
	Table int `yaml:"table"`
	// Priority orders the rules, lowest first (0 is the kernel's rule for
	// the local table, 32766 and 32767 its rules for main and default);
	// 0 leaves it unsaid and the kernel picks one.
	Priority int `yaml:"priority,omitempty"`
}

// Nameservers are a definition's DNS settings.
type Nameservers struct {
	// Addresses are the DNS servers' addresses.
	Addresses []netip.Addr `yaml:"addresses"`
}

// MarshalYAML writes es as one mapping in the slice's order: each ID (as
// yaml.v3 writes a Go string) to its Ethernet. yaml.v3 turns the IDs and
// the settings into nodes in one pass (Node.Encode), which the mapping
// pairs. It fails only when yaml.v3 cannot encode a value, which these
// types never give it.
func (es Ethernets) MarshalYAML() (any, error) {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	var n yaml.Node
	if err := n.Encode(struct {
		IDs      []string
		Settings []Ethernet
	}{ids, es}); err != nil {
		return nil, err
	}
	keys, values := n.Content[1].Content, n.Content[3].Content
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: make([]*yaml.Node, 0, 2*len(es))}
	for i := range keys {
		m.Content = append(m.Content, keys[i], values[i])
	}
	return m, nil
}

// AppendYAML appends c's YAML, as yaml.v3 writes it, to b and returns the
// extended slice. See the package comment for how the routes get there.
func (c Config) AppendYAML(b []byte) []byte {
	marked, routes := c.marked()
	return appendDocument(b, marked, c, routes)
}

// AppendYAML appends f's YAML, as yaml.v3 writes it, to b and returns the
// extended slice. See the package comment for how the routes get there.
func (f File) AppendYAML(b []byte) []byte {
	marked, routes := f.Network.marked()
	return appendDocument(b, File{Network: marked}, f, routes)
}

// Marshal is v as yaml.v3 writes it with 2-space indentation (an Encoder
// with SetIndent(2)): the form of every document of this package, route
// entries included, and the reference that AppendYAML's output equals. It
// panics when yaml.v3 cannot encode v, which never happens for this
// package's types (strings, numbers, booleans, netip values).
func Marshal(v any) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("netplan: encoding %T: %v", v, err))
	}
	if err := enc.Close(); err != nil {
		panic(fmt.Sprintf("netplan: encoding %T: %v", v, err))
	}
	return b.Bytes()
}
