// Package dockernet computes the container networking of each VM (docs/rules.md#docker-networking):
// docker0's daemon.json and how to merge it, forwarding, the firewall rules and
// the routes between the hosts' container subnets, and their persistent forms.
//
// Every value comes from one function here (DaemonSettings, Routes,
// FirewallRules, ...); the output tree (Artifacts) and the apply engine
// (internal/engines/hostapply) both use them. Facts and sources: docs/rules.md#docker-networking–§3.
package dockernet

import (
	"io/fs"
	"iter"
	"slices"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Artifacts returns this package's part of the output tree (docs/architecture.md#output-tree), per host
// under hosts/<host>/: daemon.json, routes.sh (0755), 60-rdggen-forwarding.conf
// (sysctl.d), the persistent routes (rdggen-routes, an ifupdown hook, 0755, on
// Ubuntu < 18.04; 60-rdggen.yaml, netplan, on ≥ 18.04), firewall.sh (0755)
// and rdggen-firewall.service. It collects Stream, so it holds every host's
// files at once: in routing: hosts mode n hosts' route files hold n² routes.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

// Stream yields Artifacts' files one at a time, host by host in inventory
// order (Generator.Host), each made when the loop asks for it, so that a
// loop that writes and drops each file holds one file at a time.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		g := NewGenerator(inv)
		for i := range inv.Hosts {
			for f := range g.Host(&inv.Hosts[i]) {
				if !yield(f) {
					return
				}
			}
		}
	}
}

// Generator makes this package's files host by host. NewGenerator computes
// once what every host's files share (each host's route text and the
// aggregated container subnets, O(hosts)), so that 1024 hosts (about a
// million routes) take well under a second and one host's files cost that
// host's routes alone.
type Generator struct {
	inv *inventory.Inventory
	t   *tables
}

// NewGenerator prepares the files of inv's hosts.
func NewGenerator(inv *inventory.Inventory) *Generator {
	return &Generator{inv: inv, t: newTables(inv)}
}

// Host yields host h's six files (h is one of the inventory's hosts), each
// made when the loop asks for it: hosts/<host>/daemon.json, routes.sh,
// 60-rdggen-forwarding.conf, the persistent routes (RoutesPersistName),
// firewall.sh and rdggen-firewall.service. With routing: hosts, routes.sh
// and the persistent routes grow with the cluster (one line per other host,
// about 70 and 55 bytes each).
func (g *Generator) Host(h *inventory.Host) iter.Seq[artifact.File] {
	inv, t := g.inv, g.t
	return func(yield func(artifact.File) bool) {
		dir := "hosts/" + h.Name + "/"
		persistMode := fs.FileMode(0o644)
		if !h.OS.UsesNetplan() {
			persistMode = 0o755
		}
		_ = yield(artifact.File{Path: dir + DaemonName, Mode: 0o644, Data: DaemonJSON(inv, h)}) &&
			yield(artifact.File{Path: dir + RoutesScriptName, Mode: 0o755, Data: t.routesScript(inv, h)}) &&
			yield(artifact.File{Path: dir + SysctlName, Mode: 0o644, Data: Sysctl(inv, h)}) &&
			yield(artifact.File{Path: dir + RoutesPersistName(h), Mode: persistMode, Data: t.routesPersist(inv, h)}) &&
			yield(artifact.File{Path: dir + FirewallScriptName, Mode: 0o755, Data: t.fw.script(inv, h)}) &&
			yield(artifact.File{Path: dir + FirewallUnitName, Mode: 0o644, Data: FirewallUnit(inv, h)})
	}
}
