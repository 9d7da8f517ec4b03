package dockernet

import (
	"bytes"
	"io/fs"
	"strconv"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/netplan"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Where the hosts target installs each file on a VM. Every file carries
// rdggen's name in its first lines and is owned by rdggen as a whole.
const (
	// DaemonPath is Docker's configuration file; rdggen merges into it (Merge).
	DaemonPath = "/etc/docker/daemon.json"
	// SysctlPath keeps forwarding on across reboots.
	SysctlPath = "/etc/sysctl.d/60-rdggen-forwarding.conf"
	// IfupdownHookPath holds the persistent routes on Ubuntu < 18.04 (ifupdown).
	IfupdownHookPath = "/etc/network/if-up.d/rdggen-routes"
	// NetplanPath holds the persistent routes on Ubuntu ≥ 18.04.
	NetplanPath = "/etc/netplan/60-rdggen.yaml"
	// FirewallScriptPath is FirewallScript, run by the firewall unit.
	FirewallScriptPath = "/etc/rdggen/firewall.sh"
	// FormerFirewallRulesPath is where rdggen before FirewallScript kept its
	// filter chain; `apply --target hosts` removes the file when rdggen wrote it.
	FormerFirewallRulesPath = "/etc/rdggen/firewall.rules"
	// FirewallUnitPath is the oneshot unit that runs FirewallScript whenever
	// docker.service starts.
	FirewallUnitPath = "/etc/systemd/system/rdggen-firewall.service"
	// FirewallWantsPath is the symlink `systemctl enable` makes for the unit's
	// WantedBy=docker.service; it points to FirewallUnitPath.
	FirewallWantsPath = "/etc/systemd/system/docker.service.wants/rdggen-firewall.service"
)

// Names of this package's files under hosts/<host>/ in the output tree (docs/architecture.md#output-tree).
const (
	DaemonName         = "daemon.json"
	RoutesScriptName   = "routes.sh"
	SysctlName         = "60-rdggen-forwarding.conf"
	IfupdownHookName   = "rdggen-routes"
	NetplanName        = "60-rdggen.yaml"
	FirewallScriptName = "firewall.sh"
	FirewallUnitName   = "rdggen-firewall.service"
)

// Forwarding is the sysctl that routes between docker0 and the data interface,
// and its value (docs/rules.md#docker-networking).
const (
	ForwardingKey   = "net.ipv4.conf.all.forwarding"
	ForwardingValue = "1"
)

// RoutesPersistPath is where host h's persistent routes go: netplan on
// Ubuntu ≥ 18.04, an ifupdown if-up.d hook before.
func RoutesPersistPath(h *inventory.Host) string {
	if h.OS.UsesNetplan() {
		return NetplanPath
	}
	return IfupdownHookPath
}

// RoutesPersistMode is the permission of RoutesPersistPath(h) on the host:
// 0600 for netplan (netplan warns about readable files), 0755 for the hook.
func RoutesPersistMode(h *inventory.Host) fs.FileMode {
	if h.OS.UsesNetplan() {
		return 0o600
	}
	return 0o755
}

// RoutesPersistName is RoutesPersistPath's file name in the output tree.
func RoutesPersistName(h *inventory.Host) string {
	if h.OS.UsesNetplan() {
		return NetplanName
	}
	return IfupdownHookName
}

// Sysctl is host h's /etc/sysctl.d file: forwarding on at every boot.
func Sysctl(inv *inventory.Inventory, h *inventory.Host) []byte {
	return []byte("# rdggen: IP forwarding for " + h.Name + "'s routed docker0 subnet " + h.Subnet.String() + " (cluster " + inv.Name + ").\n" +
		"# Installed as " + SysctlPath + "; systemd-sysctl applies it at boot, before docker.service,\n" +
		"# so dockerd finds forwarding on and leaves the FORWARD policy alone. Now: sysctl -p <this file>.\n" +
		ForwardingKey + " = " + ForwardingValue + "\n")
}

// RoutesScript is host h's routes.sh: forwarding, firewall and routes, to run
// by hand as root; idempotent. `rdggen apply --target hosts` does the same
// steps with the same values and installs the persistent forms.
func RoutesScript(inv *inventory.Inventory, h *inventory.Host) []byte {
	return newTables(inv).routesScript(inv, h)
}

// tables holds what the per-host artifacts share, computed once per cluster.
type tables struct {
	routes *routeTable
	fw     *firewallTable
}

func newTables(inv *inventory.Inventory) *tables {
	return &tables{routes: newRouteTable(inv), fw: newFirewallTable(inv)}
}

func (t *tables) routesScript(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	b.Grow(t.routes.batchSize(inv, h, true) + 4096)
	own := h.Subnet.String()
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# rdggen: container networking of " + h.Name + " (cluster " + inv.Name + "). Run as root; safe to run again.\n")
	b.WriteString("# `rdggen apply --target hosts` does the same and installs the persistent forms:\n")
	b.WriteString("#   " + SysctlPath + ", " + RoutesPersistPath(h) + ",\n")
	b.WriteString("#   " + FirewallScriptPath + " with " + FirewallUnitPath + ".\n")
	b.WriteString("set -eu\n\n")
	b.WriteString("# 1. Forwarding between docker0 and " + h.DataInterface + ", and the data network's MTU on " + h.DataInterface + ".\n")
	b.WriteString("sysctl -qw " + ForwardingKey + "=" + ForwardingValue + "\n")
	b.WriteString("ip " + MTUCommand(h) + "\n\n")
	b.WriteString("# 2. Firewall and address translation, the same as " + FirewallScriptPath + ":\n")
	t.fw.comment(h, &b, "#    ")
	if inv.Docker.AllowDirectRouting() {
		b.WriteString("#    Docker ≥ 28.2 also drops routed traffic in the raw table unless daemon.json sets\n")
		b.WriteString("#    \"allow-direct-routing\": true, which rdggen's daemon.json does.\n")
	}
	t.fw.firewallBody(h, &b)
	b.WriteString("\n")
	if t.routes.fabric {
		gw := PoolRoute(inv, h).Via.String()
		b.WriteString("# 3. Routes: the whole container pool " + inv.Docker.Pool.String() + " and the other leaves' data subnets via " + gw + ",\n")
		b.WriteString("#    the address of this host's leaf " + h.Data.Switch + " on its data subnet; the leaves route each host's subnet to\n")
		b.WriteString("#    that host. docker0's own subnet " + own + " stays local: its connected route is more specific.\n")
	} else if r := t.routes.pool; r != nil {
		b.WriteString("# 3. Route: the whole container pool " + r.Dst.String() + " via the switch's address " + r.Via.String() + " (docker.routing:\n")
		b.WriteString("#    switch); the switch routes each host's subnet to that host. docker0's own subnet " + own + "\n")
		b.WriteString("#    stays local: its connected route is more specific. `replace` is idempotent.\n")
	} else {
		b.WriteString("# 3. Routes: each other host's container subnet via its data address. Never " + own + ",\n")
		b.WriteString("#    docker0's own subnet. `replace` is idempotent where `add` fails on a re-run.\n")
	}
	b.WriteString("ip -force -batch - <<'EOF'\n")
	t.routes.ipBatchLines(inv, h, &b, true)
	b.WriteString("EOF\n")
	return b.Bytes()
}

// RoutesPersist is host h's persistent routes in the form of its OS, to be
// installed at RoutesPersistPath(h).
func RoutesPersist(inv *inventory.Inventory, h *inventory.Host) []byte {
	return newTables(inv).routesPersist(inv, h)
}

func (t *tables) routesPersist(inv *inventory.Inventory, h *inventory.Host) []byte {
	if h.OS.UsesNetplan() {
		return t.netplan(inv, h, h.DataInterface, "")
	}
	return t.ifupdownHook(inv, h)
}

// MTUCommand is the `ip` command (its arguments) that gives host h's data
// interface the data MTU: "link set dev enp1f0 mtu 9000".
func MTUCommand(h *inventory.Host) string {
	return "link set dev " + h.DataInterface + " mtu " + strconv.Itoa(h.DataMTU)
}

// NetplanFor is host h's netplan file with its routes and MTU under the
// netplan ID id: the ID of the definition that already configures the data
// interface on the host (a later file with the same ID amends it; under
// another ID netplan would make a second, ignored definition of the same
// NIC). found says how the ID was found, for the file's comment; "" when
// the ID is the interface's name by assumption.
func NetplanFor(inv *inventory.Inventory, h *inventory.Host, id, found string) []byte {
	return newTables(inv).netplan(inv, h, id, found)
}

// ifupdownHook: on Ubuntu 16.04 the data interface's stanza in
// /etc/network/interfaces (or interfaces.d) is the operator's. An if-up.d hook
// adds the routes without editing that stanza or adding a second one for the
// same interface, works however the stanza is written, and is a file rdggen
// owns whole, so a re-apply replaces it cleanly.
func (t *tables) ifupdownHook(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	b.Grow(t.routes.batchSize(inv, h, false) + 2048)
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# rdggen: persistent routes of " + h.Name + " (" + h.OS.String() + ", ifupdown), cluster " + inv.Name + ".\n")
	b.WriteString("# Installed as " + IfupdownHookPath + " (mode 0755): ifup runs every if-up.d script after an\n")
	b.WriteString("# interface comes up (NetworkManager's dispatcher runs them too); this one acts for " + h.DataInterface + " only.\n")
	b.WriteString("# It sets the data network's MTU (" + strconv.Itoa(h.DataMTU) + ") and adds the routes.\n")
	b.WriteString("# A hook instead of \"up\" lines in " + h.DataInterface + "'s stanza of /etc/network/interfaces: it leaves\n")
	b.WriteString("# that stanza (and the file it is in) as the operator wrote it and never adds a second one.\n")
	b.WriteString("[ \"$IFACE\" = " + h.DataInterface + " ] || exit 0\n")
	b.WriteString("ip " + MTUCommand(h) + " || echo \"rdggen-routes: cannot set the data MTU " + strconv.Itoa(h.DataMTU) + " on " + h.DataInterface + "\" >&2\n")
	b.WriteString("ip -force -batch - <<'EOF' || echo \"rdggen-routes: some routes via " + h.DataInterface + " failed\" >&2\n")
	t.routes.ipBatchLines(inv, h, &b, false)
	b.WriteString("EOF\nexit 0\n")
	return b.Bytes()
}

func (t *tables) netplan(inv *inventory.Inventory, h *inventory.Host, id, found string) []byte {
	var b bytes.Buffer
	b.WriteString("# rdggen: persistent routes and MTU of " + h.Name + " (" + h.OS.String() + ", netplan), cluster " + inv.Name + ".\n")
	b.WriteString("# Installed as " + NetplanPath + " (mode 0600). netplan merges it with the file that sets\n")
	b.WriteString("# " + h.DataInterface + "'s address (" + h.Data.Address.String() + ", not repeated here): files that use one netplan ID\n")
	if found == "" {
		b.WriteString("# amend one definition. The ID here is the interface's name; `rdggen apply --target hosts` reads\n")
		b.WriteString("# the host's netplan files and writes under the ID that already configures " + h.DataInterface + ".\n")
	} else {
		b.WriteString("# amend one definition: " + quote.Line(id) + " is the ID that configures " + h.DataInterface + " (" + quote.Line(found) + ").\n")
	}
	b.WriteString("# `netplan apply` or the next boot installs the routes; rdggen apply adds them at once.\n")
	f := netplan.File{Network: netplan.Config{Version: netplan.Version, Ethernets: netplan.Ethernets{
		{ID: id, MTU: h.DataMTU, Routes: t.routes.netplanRoutes(inv, h)},
	}}}
	return f.AppendYAML(b.Bytes())
}

// FirewallUnit is the systemd unit that runs FirewallScript every time
// docker.service starts (PartOf: a Docker restart re-runs it; After: once
// dockerd has set up its own rules and signalled that it is ready).
func FirewallUnit(inv *inventory.Inventory, h *inventory.Host) []byte {
	return []byte(`# rdggen: firewall and address translation of ` + h.Name + `'s containers (cluster ` + inv.Name + `).
# Installed as ` + FirewallUnitPath + `,
# enabled with the link ` + FirewallWantsPath + `.
[Unit]
Description=rdggen: the cluster's container traffic, untranslated and filtered (` + FirewallChain + `, ` + NATChain + `)
After=docker.service
PartOf=docker.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh ` + FirewallScriptPath + `

[Install]
WantedBy=docker.service
`)
}
