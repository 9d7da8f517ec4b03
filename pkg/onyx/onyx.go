// Package onyx is the switch side of rdggen: inventory → ONYX statements →
// running-config text (docs/rules.md#switch-onyx), and back: parse a switch's running-config
// and diff it against what the inventory wants. show.go holds the
// read-only show commands of `rdggen check` and parsers for their output.
//
// The facts behind every command and format rule, with their public
// sources, are in docs/rules.md (section "Switch (ONYX)"); doc comments
// cite its headings.
package onyx

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Artifacts returns one file per ONYX switch, switch/<name>.cfg (docs/architecture.md#output-tree): the
// switch's config (Config) as ONYX running-config text, mode 0644. Cumulus
// Linux switches have none here (pkg/cumulus writes theirs). It collects
// Stream.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

// Stream yields Artifacts' files one at a time, in inventory order, each
// made when the loop asks for it (SwitchArtifact), so that a loop that
// writes and drops each file holds one switch's config at a time.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		for _, sw := range inv.SwitchesOf(inventory.OSONYX) {
			if !yield(SwitchArtifact(inv, sw)) {
				return
			}
		}
	}
}

// SwitchArtifact is switch sw's file of the output tree,
// switch/<name>.cfg: Config, mode 0644.
func SwitchArtifact(inv *inventory.Inventory, sw inventory.Switch) artifact.File {
	return artifact.File{Path: "switch/" + sw.Name + ".cfg", Mode: 0o644, Data: Config(inv, sw)}
}

// Config is the text of switch/<name>.cfg: a header that names the
// inventory and the switch, then Render(Desired(inv, sw)), with each split
// port's shutdown before its module-type (splitShutdowns: pasted, the
// split needs it, as apply's plan sends it). It holds no
// secrets, and it can be pasted in config mode on a clean switch
// (`configure terminal`), which is all the guide does. What is pasted is
// in the running-config only until `configuration write` saves it (docs/rules.md#saving-and-backups),
// so the header says to run it; `rdggen apply --target switch` instead
// sends only what the switch lacks, and saves.
func Config(inv *inventory.Inventory, sw inventory.Switch) []byte {
	form := "explicit QoS commands; `roce` needs ONYX 3.8.2000"
	switch {
	case UsesRoCETemplate(inv, sw):
		form = "the one-command `roce lossless` template (its lossless pool is sized automatically)"
	case sw.HasRoCECommand():
		form = "explicit QoS commands, since the priorities, ECN thresholds or buffer share differ from the `roce` template"
	}
	cabled := map[inventory.Port]bool{}
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		cabled[hr.Rail.Port] = true
	}
	ports := "none"
	if r := Ranges(FrontPanel(sw)); len(r) > 0 {
		ports = r[0]
	}
	header := []string{
		fmt.Sprintf("rdggen: switch %s of cluster %s (inventory %s)", sw.Name, inv.Name, inv.File),
		fmt.Sprintf("%s (ports %s), ONYX %s: %s", sw.Model, strings.TrimPrefix(ports, "ethernet "), sw.ONYX, form),
		portsHeader(inv, sw, len(cabled)),
		fmt.Sprintf("Under trust L3, ONYX maps DSCP to switch priority as DSCP/8: RoCE DSCP %d -> %d, CNP DSCP %d -> %d.",
			inv.RoCE.DSCP, inv.RoCE.Priority, inv.RoCE.CNPDSCP, inv.RoCE.CNPPriority),
	}
	if sw.IsLeaf() && inv.MultiRail() {
		for _, lr := range sw.Fabric.Rails {
			v := inventory.RailVLAN(lr.Rail)
			header = append(header, fmt.Sprintf("Rail %d: gateway %s/%d of the (leaf, rail) subnet %s on interface vlan %d, its ports in VLAN %d, the subnet advertised in BGP.",
				lr.Rail, lr.Gateway, lr.Subnet.Bits(), lr.Subnet, v, v))
		}
	}
	if h := splitHeader(sw); h != "" {
		header = append(header, h)
	}
	if gw := inv.GatewaySwitch(); gw != nil && gw.Name == sw.Name {
		header = append(header,
			fmt.Sprintf("Routed container pool (docker.routing: switch): gateway %s on interface vlan %d, the data ports' VLAN,", inv.GatewayPrefix(), DataVLAN),
			fmt.Sprintf("and a static route to each of the %d hosts' container subnets in %s via the host's data address.", len(inv.HostsOnSwitch(sw.Name)), inv.Docker.Pool),
			fmt.Sprintf("interface vlan %d's description %s records the pool, so that apply finds these routes after docker.pool changes.", DataVLAN, PoolRecordPrefix+inv.Docker.Pool.String()))
	}
	header = append(header,
		"Paste in config mode on a clean switch, then save it: configuration write (until then, a reboot loses it).",
		"Or run: rdggen apply --target switch, which sends only what the switch lacks and saves.")
	return Render(header, append(Desired(inv, sw), splitShutdowns(inv, sw)...))
}
