package hostapply

import (
	"io/fs"

	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// fileSpec is a file rdggen owns whole on a host.
type fileSpec struct {
	Path string // absolute, without the root prefix
	Mode fs.FileMode
	Data []byte
	Unit bool // a systemd unit: a change needs a daemon-reload
}

// linkSpec is a symlink, as `systemctl enable` makes them.
type linkSpec struct {
	Path, Target string
}

// desired is everything one host should look like, computed from the
// generators only (the same functions the output tree uses).
type desired struct {
	Host *inventory.Host
	// Daemon is rdggen's daemon.json, merged into the host's (dockernet.Merge).
	Daemon []byte
	Files  []fileSpec
	Links  []linkSpec
	// Foreign are files rdggen wrote for another OS form (netplan versus the
	// ifupdown hook) or in an earlier layout; each goes away when it carries
	// its mark, and is left alone (with a note) when it does not.
	Foreign    []foreignFile
	Forwarding string
	// ChainRules and NATRules are the rules of dockernet.FirewallChain and
	// dockernet.NATChain; Firewall is the script that loads both and puts the
	// jumps first (dockernet.FirewallScript).
	ChainRules []string
	NATRules   []string
	Firewall   []byte
	Routes     []dockernet.Route
	RoCEScript []byte
	// Rails is a VM with several rails' own part (rails.go); nil for a
	// host with one rail, whose plan and scripts it leaves unchanged.
	Rails *railsDesired
}

// foreignFile is a file rdggen no longer wants at Path; Mark is the text by
// which rdggen recognises it as its own.
type foreignFile struct {
	Path, Mark, Why string
}

func desiredFor(inv *inventory.Inventory, h *inventory.Host) *desired {
	d := &desired{
		Host:       h,
		Daemon:     dockernet.DaemonJSON(inv, h),
		Forwarding: dockernet.ForwardingValue,
		ChainRules: dockernet.FirewallRules(inv, h),
		NATRules:   dockernet.NATRules(inv, h),
		Firewall:   dockernet.FirewallScript(inv, h),
		Routes:     dockernet.Routes(inv, h),
		RoCEScript: hostqos.Script(inv, h),
	}
	d.Files = []fileSpec{
		{Path: dockernet.SysctlPath, Mode: 0o644, Data: dockernet.Sysctl(inv, h)},
		{Path: dockernet.RoutesPersistPath(h), Mode: dockernet.RoutesPersistMode(h), Data: dockernet.RoutesPersist(inv, h)},
		{Path: dockernet.FirewallScriptPath, Mode: 0o755, Data: d.Firewall},
		{Path: dockernet.FirewallUnitPath, Mode: 0o644, Data: dockernet.FirewallUnit(inv, h), Unit: true},
		{Path: hostqos.ScriptPath, Mode: 0o755, Data: d.RoCEScript},
		{Path: hostqos.UnitPath, Mode: 0o644, Data: hostqos.Unit(inv, h), Unit: true},
		{Path: hostqos.PeermemPath, Mode: 0o644, Data: hostqos.PeermemConf(inv, h)},
	}
	d.Links = []linkSpec{
		{Path: dockernet.FirewallWantsPath, Target: dockernet.FirewallUnitPath},
		{Path: hostqos.UnitWantsPath, Target: hostqos.UnitPath},
	}
	if h.MultiRail() {
		rd, files, links := railsFor(inv, h)
		d.Rails = rd
		d.Files = append(d.Files, files...)
		d.Links = append(d.Links, links...)
	}
	const otherOS = "rdggen's routes for another OS form"
	if h.OS.UsesNetplan() {
		d.Foreign = []foreignFile{{dockernet.IfupdownHookPath, "rdggen: persistent routes", otherOS}}
	} else {
		d.Foreign = []foreignFile{{dockernet.NetplanPath, "rdggen: persistent routes", otherOS}}
	}
	d.Foreign = append(d.Foreign, foreignFile{dockernet.FormerFirewallRulesPath, "# rdggen: ",
		"rdggen's former firewall file, replaced by " + dockernet.FirewallScriptPath})
	return d
}

// paths lists every file path the probe reads.
func (d *desired) paths() []string {
	p := []string{dockernet.DaemonPath}
	for _, f := range d.Files {
		p = append(p, f.Path)
	}
	for _, l := range d.Links {
		p = append(p, l.Path)
	}
	for _, f := range d.Foreign {
		p = append(p, f.Path)
	}
	return p
}
