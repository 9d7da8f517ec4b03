// Package hostqos computes the in-VM side of lossless RoCE in DSCP mode
// (docs/rules.md): what a VM can set on its ConnectX VF, as an idempotent
// script with a boot unit, and a pointer to the ESXi side for what only the
// PF can set; and GPUDirect RDMA's in-VM part, the nvidia-peermem module
// loaded at boot (peermem.go).
//
// Split (docs/rules.md#what-only-the-physical-function-can-set): trust DSCP, PFC on the RoCE priority and
// ECN/CNP are port (PF) settings; in the guide's topology the PF belongs to
// ESXi's nmlx5 driver, so pkg/vmx sets them in esxi/<esxi-host>.sh. The VM sets
// the RoCE ToS (RDMA-CM default ToS, verbs traffic class) and TCP ECN; each path
// is probed and reported "n/a" when absent instead of failing.
package hostqos

import (
	"bufio"
	"bytes"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Where the hosts target installs the script and its unit.
const (
	// ScriptPath is Script on the VM.
	ScriptPath = "/usr/local/sbin/rdggen-roce-qos"
	// UnitPath is Unit on the VM.
	UnitPath = "/etc/systemd/system/rdggen-roce-qos.service"
	// UnitWantsPath is the link `systemctl enable` makes for WantedBy=multi-user.target.
	UnitWantsPath = "/etc/systemd/system/multi-user.target.wants/rdggen-roce-qos.service"
)

// Names of this package's files under hosts/<host>/ in the output tree.
const (
	ScriptName = "roce-qos.sh"
	UnitName   = "rdggen-roce-qos.service"
)

// TCPECN is the net.ipv4.tcp_ecn value the VM gets: 1 = request ECN on
// outgoing TCP connections too (the kernel default 2 only answers). TCP only;
// RoCE ECN is the PF's.
const TCPECN = 1

// Setting is one value the VM sets on itself.
type Setting struct {
	// Name is how reports and plans call it, e.g. "cma_roce_tos".
	Name string
	// Path is the file written, relative to the sysfs/procfs root; "<dev>"
	// stands for the RDMA device behind the data interface (e.g. mlx5_0).
	Path string
	// Value is written as text.
	Value string
	// Why says what it does and where the rule comes from.
	Why string
}

// Settings returns what host h's VM sets, in order (docs/rules.md#what-the-vm-can-set):
// TCP ECN; the RDMA-CM default ToS and the verbs traffic class, both
// inv.RoCE.ToS() (DSCP << 2 | ECT(0), 106 for DSCP 26); and ECN on the RoCE
// priority as notification and reaction point, which only a function that
// exposes ecn/ in sysfs takes (a PF; on a VF it is reported not applicable
// and is the PF's, set by ESXi).
func Settings(inv *inventory.Inventory, h *inventory.Host) []Setting {
	tos := strconv.Itoa(inv.RoCE.ToS())
	prio := strconv.Itoa(inv.RoCE.Priority)
	ecn := "/sys/class/net/" + h.DataInterface + "/ecn/"
	return []Setting{
		{"tcp_ecn", "/proc/sys/net/ipv4/tcp_ecn", strconv.Itoa(TCPECN),
			"TCP negotiates ECN (default 2 only answers); TCP only, not RoCE"},
		{"cma_roce_tos", "/sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos", tos,
			"default ToS of RDMA-CM QPs: DSCP " + strconv.Itoa(inv.RoCE.DSCP) + " << 2 | ECT(0) (configfs rdma_cm, what cma_roce_tos writes)"},
		{"traffic_class", "/sys/class/infiniband/<dev>/tc/1/traffic_class", tos,
			"ToS of verbs QPs that do not use RDMA-CM (MLNX_OFED sysfs; NCCL also gets NCCL_IB_TC)"},
		{"ecn_np", ecn + "roce_np/enable/" + prio, "1",
			"ECN notification point on priority " + prio + " (answers CE marks with CNPs); PF only"},
		{"ecn_rp", ecn + "roce_rp/enable/" + prio, "1",
			"ECN reaction point on priority " + prio + " (DCQCN rate limiting on CNPs); PF only"},
	}
}

// PFSettings describes what only the PF (ESXi) sets, for the script's report.
func PFSettings(inv *inventory.Inventory, h *inventory.Host) string {
	r := inv.RoCE
	return "trust DSCP, PFC on priority " + strconv.Itoa(r.Priority) + ", ECN on priority " + strconv.Itoa(r.Priority) +
		" with CNPs at DSCP " + strconv.Itoa(r.CNPDSCP) + "/priority " + strconv.Itoa(r.CNPPriority) +
		" are port settings of the PF, set by ESXi in esxi/" + h.ESXi + ".sh"
}

// Artifacts returns this package's part of the output tree (docs/architecture.md#output-tree):
// hosts/<host>/roce-qos.sh (0755), hosts/<host>/rdggen-roce-qos.service and
// hosts/<host>/60-rdggen-nvidia-peermem.conf.
// It collects Stream.
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return slices.Collect(Stream(inv))
}

// Stream yields Artifacts' files one host at a time, in inventory order
// (HostArtifacts), each host's made when the loop reaches it.
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		for i := range inv.Hosts {
			for _, f := range HostArtifacts(inv, &inv.Hosts[i]) {
				if !yield(f) {
					return
				}
			}
		}
	}
}

// HostArtifacts is host h's part of Artifacts: hosts/<host>/roce-qos.sh
// (Script, 0755), hosts/<host>/rdggen-roce-qos.service (Unit, 0644) and
// hosts/<host>/60-rdggen-nvidia-peermem.conf (PeermemConf, 0644), a few KB
// whatever the cluster's size.
func HostArtifacts(inv *inventory.Inventory, h *inventory.Host) []artifact.File {
	dir := "hosts/" + h.Name + "/"
	return []artifact.File{
		{Path: dir + ScriptName, Mode: 0o755, Data: Script(inv, h)},
		{Path: dir + UnitName, Mode: 0o644, Data: Unit(inv, h)},
		{Path: dir + PeermemName, Mode: 0o644, Data: PeermemConf(inv, h)},
	}
}

// Script is host h's RoCE script, installed as ScriptPath. `apply` (default)
// sets what differs, `check` changes nothing; both print one report line per
// setting (ParseReport) and exit 1 when something failed or, for check,
// differs. RDGGEN_SYSFS and RDGGEN_PROCFS replace /sys and /proc (tests use
// fake trees).
func Script(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b strings.Builder
	w := func(s ...string) {
		for _, x := range s {
			b.WriteString(x)
		}
		b.WriteByte('\n')
	}
	tos := strconv.Itoa(inv.RoCE.ToS())
	set := Settings(inv, h)
	w("#!/bin/sh")
	w("# rdggen: in-VM side of lossless RoCE (DSCP-based QoS) on ", h.Name, " (cluster ", inv.Name, ").")
	w("# Installed as ", ScriptPath, "; ", UnitName, " runs it at boot. Safe to run again.")
	w("# Usage: rdggen-roce-qos [apply|check]   check changes nothing and exits 1 when something differs.")
	w("#")
	w("# Set here, on the VM's ConnectX VF ", h.DataInterface, " (each path probed; \"n/a\" when absent, never a failure):")
	for _, s := range set {
		w("#   ", s.Name, " = ", s.Value, ": ", s.Why)
	}
	w("# Not applicable on a VF: ", PFSettings(inv, h), ".")
	w("# NCCL does not use RDMA-CM; horovod/run.sh passes NCCL_IB_TC=", tos, ".")
	w("set -u")
	w("mode=${1:-apply}")
	w("case $mode in apply|check) ;; *) echo \"usage: $0 [apply|check]\" >&2; exit 2;; esac")
	w("sys=${RDGGEN_SYSFS:-/sys}")
	w("proc=${RDGGEN_PROCFS:-/proc}")
	w("iface=", h.DataInterface)
	w("rc=0")
	w("report() { echo \"rdggen-roce $*\"; }")
	w("# put NAME FILE VALUE: write VALUE unless FILE already holds it.")
	w("put() {")
	w("\tcur=$(cat \"$2\" 2>/dev/null) || { report \"$1 failed cannot read $2\"; rc=1; return; }")
	w("\tcur=${cur##*=}  # MLNX_OFED prints traffic_class as \"Global tclass=106\"")
	w("\tif [ \"$cur\" = \"$3\" ]; then report \"$1 ok $3\"; return; fi")
	w("\tif [ \"$mode\" = check ]; then report \"$1 differs $cur -> $3\"; rc=1; return; fi")
	w("\tif echo \"$3\" 2>/dev/null >\"$2\"; then report \"$1 set $cur -> $3\"; else report \"$1 failed cannot write $2\"; rc=1; fi")
	w("}")
	w("")
	w("put ", set[0].Name, " ", shellPath(set[0].Path), " ", set[0].Value)
	w("")
	w("# The RDMA device behind the data interface (mlx5_N of the VF).")
	w("dev=")
	w("for d in \"$sys/class/net/$iface/device/infiniband/\"*; do [ -d \"$d\" ] && dev=${d##*/} && break; done")
	w("if [ -z \"$dev\" ]; then")
	w("\treport \"rdma_device n/a no RDMA device behind $iface (mlx5_ib not loaded, or not a ConnectX function)\"")
	w("\treport \"", set[1].Name, " n/a needs the RDMA device\"")
	w("\treport \"", set[2].Name, " n/a needs the RDMA device\"")
	w("else")
	w("\treport \"rdma_device ok $dev\"")
	w("\tcfg=$sys/kernel/config/rdma_cm")
	w("\tif [ ! -d \"$cfg\" ]; then")
	w("\t\treport \"", set[1].Name, " n/a $cfg absent (configfs not mounted or rdma_cm not loaded)\"")
	w("\telif [ ! -d \"$cfg/$dev\" ] && [ \"$mode\" = check ]; then")
	w("\t\treport \"", set[1].Name, " differs unset -> ", set[1].Value, "\"; rc=1")
	w("\telse")
	w("\t\t# mkdir in configfs creates the device's rdma_cm group and its ports/ tree.")
	w("\t\t[ -d \"$cfg/$dev\" ] || mkdir \"$cfg/$dev\" 2>/dev/null")
	w("\t\tput ", set[1].Name, " ", shellPath(set[1].Path), " ", set[1].Value)
	w("\tfi")
	w("\ttc=", shellPath(set[2].Path))
	w("\tif [ -e \"$tc\" ]; then")
	w("\t\tput ", set[2].Name, " \"$tc\" ", set[2].Value)
	w("\telse")
	w("\t\treport \"", set[2].Name, " n/a $tc absent (upstream mlx5 has no tc/ directory; NCCL_IB_TC covers NCCL)\"")
	w("\tfi")
	w("fi")
	w("")
	w("# ECN per priority: only a function that exposes ecn/ (a PF) takes it.")
	for _, e := range set[3:] {
		w("if [ -e ", shellPath(e.Path), " ]; then put ", e.Name, " ", shellPath(e.Path), " ", e.Value,
			"; else report \"", e.Name, " n/a not applicable on a VF (no $iface/ecn in sysfs): set on the PF by ESXi\"; fi")
	}
	w("report \"pf_qos esxi not applicable on a VF: ", PFSettings(inv, h), "\"")
	w("exit $rc")
	return []byte(b.String())
}

// shellPath turns a Setting.Path into the script's quoted shell word: /sys
// becomes $sys, /proc $proc, <dev> $dev.
func shellPath(p string) string {
	switch {
	case strings.HasPrefix(p, "/sys/"):
		p = "$sys" + p[len("/sys"):]
	case strings.HasPrefix(p, "/proc/"):
		p = "$proc" + p[len("/proc"):]
	}
	return `"` + strings.ReplaceAll(p, "<dev>", "$dev") + `"`
}

// Unit is the oneshot systemd unit that runs the script at every boot, after
// the network and MLNX_OFED's openibd (none of the settings survive a reboot
// or a driver reload).
func Unit(inv *inventory.Inventory, h *inventory.Host) []byte {
	return []byte(`# rdggen: in-VM lossless RoCE settings of ` + h.Name + ` (cluster ` + inv.Name + `).
# Installed as ` + UnitPath + `,
# enabled with the link ` + UnitWantsPath + `.
[Unit]
Description=rdggen: RoCE ToS ` + strconv.Itoa(inv.RoCE.ToS()) + ` and TCP ECN on ` + h.DataInterface + `
Wants=network-online.target
After=network-online.target openibd.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=` + ScriptPath + ` apply

[Install]
WantedBy=multi-user.target
`)
}

// Report states of a script line.
const (
	StateOK      = "ok"      // already as wanted
	StateSet     = "set"     // changed by this run (apply)
	StateDiffers = "differs" // would change (check)
	StateNA      = "n/a"     // the path does not exist here: not applicable
	StateFailed  = "failed"  // could not read or write
	StateESXi    = "esxi"    // belongs to the PF on ESXi
)

// Result is one line of the script's report.
type Result struct {
	Name, State, Detail string
}

// ParseReport reads the "rdggen-roce <name> <state> <detail>" lines of the
// script's output; other lines are ignored.
func ParseReport(out []byte) []Result {
	var rs []Result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 4)
		if len(f) < 3 || f[0] != "rdggen-roce" {
			continue
		}
		r := Result{Name: f[1], State: f[2]}
		if len(f) == 4 {
			r.Detail = f[3]
		}
		rs = append(rs, r)
	}
	return rs
}
