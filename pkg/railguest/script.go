package railguest

import (
	_ "embed"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
	"github.com/rdggen/rdggen/pkg/quote"
)

// fragment is scripts/topology.sh: topo_facts, topo_build and topo_write,
// headed by what they do and the variables Go sets before them (Vars).
//
//go:embed scripts/topology.sh
var fragment string

// Fragment is the embedded shell file scripts/topology.sh (POSIX sh, awk):
// it defines topo_facts (print the guest's facts, ParseFacts' input),
// topo_build (the topology file from the facts and the skeleton) and
// topo_write (topo_build into the file NCCL loads, only when the bytes
// differ), and runs nothing itself. It reads and writes under the root
// prefix R ("" for the machine's own root), as the engines' scripts do.
//
// The hosts target reads the facts within its own round trip
// (internal/transport/remote; topo_facts itself reads no variable, the
// others' are set so that the script is whole):
//
//	for _, v := range railguest.Vars(inv, h, macs) {
//		w.Set(v.Name, v.Value)
//	}
//	w.Text(railguest.Fragment())
//	w.Line("fr topology-facts topo_facts")
//
// and gives the framed output to ParseFacts and TopologyFile. BootScript
// is Vars, Fragment and topo_write as one script.
func Fragment() string { return fragment }

// Scripts are the package's embedded shell files by name, for the tests
// that parse them and run shellcheck on them.
func Scripts() map[string]string { return map[string]string{"topology.sh": fragment} }

// Var is one shell variable Fragment reads: set Name to Value, quoted as
// one sh word (quote.Sh; remote.Script.Set).
type Var struct {
	Name, Value string
}

// Vars are the variables topo_build and topo_write read for host h, in
// order: topo_skel (SkeletonPath), topo_out (nccltopo.DefaultPath),
// topo_head (nccltopo.Header, the file's first lines, which the skeleton
// does not hold), topo_gpus (the VM's GPU count) and topo_rails, one line
// per rail in rail order, "<rail> <interface> <MAC address>" with "-" for a
// rail found by its interface's name (macs as for VM). Every word of
// topo_rails is a number, an interface name held to the inventory's
// grammar or a MAC address Go wrote in canonical form, so none holds white
// space or a character the script would read as anything but itself; the
// others are Go constants.
func Vars(inv *inventory.Inventory, h *inventory.Host, macs []string) []Var {
	var b strings.Builder
	for r, rail := range h.Rails {
		mac := canonicalMAC(macOf(macs, r))
		if mac == "" {
			mac = "-"
		}
		b.WriteString(strconv.Itoa(r) + " " + rail.Interface + " " + mac + "\n")
	}
	return []Var{
		{"topo_skel", SkeletonPath},
		{"topo_out", nccltopo.DefaultPath},
		{"topo_head", nccltopo.Header},
		{"topo_gpus", strconv.Itoa(len(h.GPUs))},
		{"topo_rails", b.String()},
	}
}

// canonicalMAC is a MAC address in lower case with ':' ("" stays "", and
// anything that is not 6 hex bytes becomes "": such a rail is found by its
// name). railnet.New holds the same addresses to that grammar.
func canonicalMAC(s string) string {
	s = strings.ToLower(strings.ReplaceAll(s, "-", ":"))
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return ""
	}
	for _, p := range parts {
		if len(p) != 2 || strings.Trim(p, "0123456789abcdef") != "" {
			return ""
		}
	}
	return s
}

// BootScript is host h's boot script, installed at ScriptPath and run by
// Unit at every boot (and safe to run by hand, as root): Vars, Fragment
// and topo_write, under set -u, with R from $RDGGEN_ROOT (unset: the
// machine's own root). It writes nccltopo.DefaultPath from the skeleton
// at SkeletonPath and the guest's sysfs, the bytes TopologyFile gives for
// the same guest, and exits 0; or writes nothing, says why on stderr (the
// unit's journal) and exits 1. /var/run is a tmpfs, so the file is made
// again at every boot.
func BootScript(inv *inventory.Inventory, h *inventory.Host, macs []string) []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# rdggen: NCCL's topology file of " + quote.Line(h.Name) + " (" + strconv.Itoa(len(h.GPUs)) + " GPUs, " +
		strconv.Itoa(len(h.Rails)) + " rails), written from " + SkeletonPath + "\n")
	b.WriteString("# and this guest's own PCI devices, NUMA nodes and CPU into " + nccltopo.DefaultPath + ".\n")
	b.WriteString("# Installed as " + ScriptPath + ", run at every boot by " + UnitName + "; safe to run again.\n")
	b.WriteString("set -u\n")
	b.WriteString("R=${RDGGEN_ROOT:-}\n")
	b.WriteString("umask 022\n")
	for _, v := range Vars(inv, h, macs) {
		b.WriteString(v.Name + "=" + quote.Sh(v.Value) + "\n")
	}
	b.WriteString(fragment)
	b.WriteString("topo_write\n")
	return []byte(b.String())
}

// Unit is the systemd unit that runs BootScript at every boot, installed
// at UnitPath and enabled with the link UnitWantsPath: after the network
// is up (the rails' interfaces exist and carry their names, netplan's
// set-name) and before Docker, so that a worker container restarted at
// boot finds the file (pkg/horovod mounts its directory read-only).
func Unit(inv *inventory.Inventory, h *inventory.Host) []byte {
	return []byte(`# rdggen: NCCL's topology file of ` + quote.Line(h.Name) + ` (cluster ` + quote.Line(inv.Name) + `), made at every boot.
# Installed as ` + UnitPath + `,
# enabled with the link ` + UnitWantsPath + `.
[Unit]
Description=rdggen: NCCL topology file ` + nccltopo.DefaultPath + `
Wants=network-online.target
After=network-online.target
Before=docker.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + ScriptPath + `

[Install]
WantedBy=multi-user.target
`)
}
