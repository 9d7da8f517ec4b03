// Package dockernet computes the container networking of each VM (docs/rules.md#docker-networking):
// docker0's daemon.json and how to merge it, forwarding, the firewall rules and
// the routes between the hosts' container subnets, and their persistent forms.
//
// Every value comes from one function here (DaemonSettings, Routes,
// FirewallRules, ...); the output tree (Artifacts) and the apply engine
// (internal/hostapply) both use them. Facts and sources: docs/rules.md#docker-networking–§3.
package dockernet

import (
	"io/fs"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Artifacts returns this package's part of the output tree (docs/architecture.md#output-tree), per host
// under hosts/<host>/: daemon.json, routes.sh (0755), 60-rdggen-forwarding.conf
// (sysctl.d), the persistent routes (rdggen-routes, an ifupdown hook, 0755, on
// Ubuntu < 18.04; 60-rdggen.yaml, netplan, on ≥ 18.04), firewall.sh (0755)
// and rdggen-firewall.service. Route text is built from per-host fragments computed
// once, so 1024 hosts (about a million routes) take well under a second.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	t := newTables(inv)
	files := make([]artifact.File, 0, 6*len(inv.Hosts))
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		dir := "hosts/" + h.Name + "/"
		persistMode := fs.FileMode(0o644)
		if !h.OS.UsesNetplan() {
			persistMode = 0o755
		}
		files = append(files,
			artifact.File{Path: dir + DaemonName, Mode: 0o644, Data: DaemonJSON(inv, h)},
			artifact.File{Path: dir + RoutesScriptName, Mode: 0o755, Data: t.routesScript(inv, h)},
			artifact.File{Path: dir + SysctlName, Mode: 0o644, Data: Sysctl(inv, h)},
			artifact.File{Path: dir + RoutesPersistName(h), Mode: persistMode, Data: t.routesPersist(inv, h)},
			artifact.File{Path: dir + FirewallScriptName, Mode: 0o755, Data: t.fw.script(inv, h)},
			artifact.File{Path: dir + FirewallUnitName, Mode: 0o644, Data: FirewallUnit(inv, h)},
		)
	}
	return files
}
