package cumulus

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Artifacts returns the files of every Cumulus switch of inv, two per
// switch (SwitchArtifacts), in inventory order. ONYX switches have none
// here: pkg/onyx writes theirs. It collects Stream.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

// Stream yields Artifacts' files one at a time, each made when the loop
// asks for it.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		for _, sw := range inv.SwitchesOf(inventory.OSCumulus) {
			for _, f := range SwitchArtifacts(inv, sw) {
				if !yield(f) {
					return
				}
			}
		}
	}
}

// SwitchArtifacts are Cumulus switch sw's files of the output tree:
//
//	switch/<name>.yaml  YAML(inv, sw), mode 0644: the intent as NVUE YAML, for `nv config patch`
//	switch/<name>.sh    Commands(inv, sw), mode 0755: the same as `nv set` lines, then `nv config apply`
func SwitchArtifacts(inv *inventory.Inventory, sw inventory.Switch) []artifact.File {
	return []artifact.File{
		{Path: "switch/" + sw.Name + ".sh", Mode: 0o755, Data: Commands(inv, sw)},
		{Path: "switch/" + sw.Name + ".yaml", Mode: 0o644, Data: YAML(inv, sw)},
	}
}

// header is what both files say first, one comment line each: the
// inventory and switch, the release and what rdggen sets, the ports and
// the routed pool. Every inventory string in it is held to a grammar at
// validation (switch, cluster and model names, versions, addresses) except
// the inventory's path, which quote.Line makes one line.
func header(inv *inventory.Inventory, sw inventory.Switch) []string {
	ports := DataPorts(inv, sw)
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = sw.PortName(p)
	}
	span := "none"
	if len(names) > 0 {
		span = strings.Join(Ranges(names), ",")
	}
	h := []string{
		fmt.Sprintf("rdggen: switch %s of cluster %s (inventory %s)", sw.Name, inv.Name, quote.Line(inv.File)),
		fmt.Sprintf("%s, %s: lossless RoCE with NVUE's `qos roce` profile (mode lossless: trust PCP and DSCP,", sw.Model, sw.Release()),
		fmt.Sprintf("switch priority %d -> traffic class %d with PFC and ECN, %d -> %d strict for CNPs: the hosts' DSCP %d and %d).",
			inventory.CumulusRoCEPriority, inventory.CumulusRoCEPriority, inventory.CumulusRoCECNPPriority, inventory.CumulusRoCECNPPriority, inv.RoCE.DSCP, inv.RoCE.CNPDSCP),
		fmt.Sprintf("Data ports %s (%d): in bridge %s, access VLAN %d, link up, MTU %d (Cumulus's default, written so that a lowered port shows).",
			span, len(ports), Bridge, DataVLAN, PortMTU),
	}
	if inv.MultiRail() {
		h[len(h)-1] = fmt.Sprintf("Data ports %s (%d): in bridge %s, access VLAN %s (rail r in VLAN r+1), link up, MTU %d (Cumulus's default, written so that a lowered port shows).",
			span, len(ports), Bridge, railVLANList(inv, sw), PortMTU)
	}
	if split := sw.SplitPorts(); len(split) > 0 {
		var parts []string
		for _, n := range split {
			mode := sw.Breakout(n)
			parent := sw.PortName(inventory.Port{Module: 1, Number: n})
			lanes := fmt.Sprintf("%s-%s", sw.PortName(inventory.Port{Module: 1, Number: n, Lane: 1}), sw.PortName(inventory.Port{Module: 1, Number: n, Lane: mode}))
			if sw.Blocks(mode) {
				lanes += ", " + sw.PortName(inventory.Port{Module: 1, Number: n + 1}) + " disabled"
			}
			parts = append(parts, fmt.Sprintf("%s %dx (%s)", parent, mode, lanes))
		}
		h = append(h, fmt.Sprintf("Split ports: %s; a breakout resets the port's links while the switch applies it.", strings.Join(parts, ", ")))
	}
	if inv.MultiRail() {
		h = append(h, "Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF:rail, or far switch:port).")
	} else {
		h = append(h, "Each data port and uplink is described with what is cabled to it (VM@ESXi host/PF, or far switch:port).")
	}
	if gw := inv.GatewaySwitch(); gw != nil && gw.Name == sw.Name && inv.GatewayPrefix().IsValid() {
		h = append(h,
			fmt.Sprintf("Routed container pool (docker.routing: switch): gateway %s on interface %s,", inv.GatewayPrefix(), SVI),
			fmt.Sprintf("and a static route in the default VRF to each of the %d hosts' container subnets in %s via the host's data address.",
				len(inv.HostsOnSwitch(sw.Name)), inv.Docker.Pool))
	}
	if sw.Fabric.Role != "" {
		h = append(h, fabricHeader(inv, sw)...)
	}
	h = append(h, "rdggen owns only these paths; the switch's other configuration is left as it is.")
	return h
}

// railVLANList names the access VLANs of sw's data ports, ascending:
// "2", "1 and 2".
func railVLANList(inv *inventory.Inventory, sw inventory.Switch) string {
	var vs []int
	for _, v := range PortVLANs(inv, sw) {
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(v)
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}

// applyLines are the commands that apply what was set, as NVIDIA documents
// them ("NVUE CLI"): review with `nv config diff`, apply (it asks before it
// applies), and save. From Cumulus 5.9 the apply saves by itself unless
// auto-save was turned off (`nv set system config auto-save enable off`,
// `auto-save state disabled` from 5.15), which the script cannot know, so
// it saves on every release; the save of a saved configuration changes
// nothing.
func applyLines(sw inventory.Switch) []string {
	return []string{"nv config diff", "nv config apply", "nv config save"}
}

// YAML is the text of switch/<name>.yaml: comment lines (header and how to
// apply), then Intent as one `- set:` document, the form `nv config show
// -o yaml` prints and `nv config patch` reads ("NVUE CLI", "Configuration
// Management Commands": nv config patch <file>, with the file's absolute
// path, "NVUE Snippets"). yaml.v3 writes it, so every
// key and value is a YAML scalar that reads back as itself (a switch name
// that looks like a number or a boolean is quoted).
func YAML(inv *inventory.Inventory, sw inventory.Switch) []byte {
	var b bytes.Buffer
	for _, l := range header(inv, sw) {
		b.WriteString("# " + l + "\n")
	}
	b.WriteString("# Apply on the switch (as a user allowed to apply, e.g. cumulus):\n")
	b.WriteString("#   nv config patch /absolute/path/of/this/file.yaml   (NVUE wants the full path)\n")
	for _, l := range applyLines(sw) {
		b.WriteString("#   " + l + "\n")
	}
	b.WriteString("# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode([]any{Tree{"set": Intent(inv, sw)}}); err != nil {
		// A Tree of strings, ints and Trees always encodes.
		panic(fmt.Sprintf("cumulus: encoding the NVUE YAML: %v", err))
	}
	if err := enc.Close(); err != nil {
		panic(fmt.Sprintf("cumulus: encoding the NVUE YAML: %v", err))
	}
	return b.Bytes()
}

// Commands is the text of switch/<name>.sh: a POSIX sh script of `nv set`
// lines equivalent to YAML, then the apply lines. Each line is `nv set`
// and the leaf's path and value as words ("NVUE CLI": nv set <path>
// <value>; an entry that only exists is its path alone, as in `nv set
// interface swp1 link state up`), every word quoted with quote.Sh. Ports
// with identical settings share one line with NVUE's range syntax
// (`swp1-8`, "Interface Configuration and Management": nv set interface
// swp1-4 ...), as `nv config show -o commands` prints them.
func Commands(inv *inventory.Inventory, sw inventory.Switch) []byte {
	var b bytes.Buffer
	b.WriteString("#!/bin/sh\n")
	for _, l := range header(inv, sw) {
		b.WriteString("# " + l + "\n")
	}
	b.WriteString("# Run on the switch as a user allowed to apply (e.g. cumulus); `nv config apply` shows the change and asks first.\n")
	b.WriteString("# Or run: rdggen apply --target switch, which changes only what differs, through the NVUE REST API.\n")
	b.WriteString("set -e\n")
	for _, words := range SetLines(Intent(inv, sw)) {
		b.WriteString(quote.ShJoin(append([]string{"nv", "set"}, words...)) + "\n")
	}
	for _, l := range applyLines(sw) {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// SetLines are the `nv set` arguments (without "nv set") that make t: one
// per leaf, path words then the value (none for an entry that only
// exists), in Walk's order, with the interfaces whose subtrees are equal
// and whose names are numbered alike (swp1 … swp8) merged into ranges
// (Ranges) first.
func SetLines(t Tree) [][]string {
	var out [][]string
	Walk(compactInterfaces(t), func(p Path, v any) {
		words := slices.Clone([]string(p))
		switch v := v.(type) {
		case Tree:
		case string:
			words = append(words, v)
		case int:
			words = append(words, strconv.Itoa(v))
		default:
			words = append(words, fmt.Sprint(v))
		}
		out = append(out, words)
	})
	return out
}

// compactInterfaces returns t with its swpN interfaces grouped by equal
// settings, each group keyed by its ranges (swp1-8,swp10) as NVUE writes a
// set of interfaces. A port's description names what is cabled to it, so
// it differs from port to port: it is left out of the grouping and stays
// on the port's own key. t is not changed.
func compactInterfaces(t Tree) Tree {
	ifaces, ok := t["interface"].(Tree)
	if !ok {
		return t
	}
	out := Tree{}
	for k, v := range t {
		out[k] = v
	}
	groups := map[string][]string{}
	first := map[string]any{}
	desc := map[string]any{}
	merged := Tree{}
	for name, v := range ifaces {
		if !strings.HasPrefix(name, "swp") {
			merged[name] = v
			continue
		}
		if sub, ok := v.(Tree); ok {
			if d, has := sub["description"]; has {
				desc[name] = d
				rest := Tree{}
				for k, x := range sub {
					if k != "description" {
						rest[k] = x
					}
				}
				v = rest
			}
		}
		var key strings.Builder
		Walk(Tree{"": v}, func(p Path, leaf any) { fmt.Fprintf(&key, "%q=%#v;", p, leaf) })
		groups[key.String()] = append(groups[key.String()], name)
		first[key.String()] = v
	}
	for key, names := range groups {
		merged[strings.Join(Ranges(names), ",")] = first[key]
	}
	for name, d := range desc {
		if sub, ok := merged[name].(Tree); ok { // a group of one: the port's own key
			withDesc := Tree{"description": d}
			for k, x := range sub {
				withDesc[k] = x
			}
			merged[name] = withDesc
			continue
		}
		merged[name] = Tree{"description": d}
	}
	out["interface"] = merged
	return out
}

// Ranges writes switch port names compactly, in NVUE's range syntax:
// consecutive swpN as swpA-B, e.g. [swp1 swp2 swp3 swp5] → [swp1-3 swp5];
// names not of the form swpN (swp1s0, a lane of a split port) follow the
// ranges, sorted.
func Ranges(names []string) []string {
	var nums []int
	var other []string
	for _, n := range names {
		if i, err := strconv.Atoi(strings.TrimPrefix(n, "swp")); err == nil && strings.HasPrefix(n, "swp") && i > 0 {
			nums = append(nums, i)
		} else {
			other = append(other, n)
		}
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	slices.SortFunc(other, compareKeys) // lanes of split ports (swp1s0) and the like, in a stable order
	var out []string
	for i := 0; i < len(nums); {
		j := i
		for j+1 < len(nums) && nums[j+1] == nums[j]+1 {
			j++
		}
		if j == i {
			out = append(out, "swp"+strconv.Itoa(nums[i]))
		} else {
			out = append(out, fmt.Sprintf("swp%d-%d", nums[i], nums[j]))
		}
		i = j + 1
	}
	return append(out, other...)
}
