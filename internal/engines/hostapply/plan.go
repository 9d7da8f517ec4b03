package hostapply

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// daemonChange installs a merged daemon.json.
type daemonChange struct {
	Existed bool
	Old     []byte
	OldSum  string // sha256 of Old, so the install refuses a file changed since the probe
	Mode    fs.FileMode
	New     []byte
	Changed []string // keys added or changed
	Kept    []string // the file's other keys, kept as they were
}

// routeChange is one route to add or change.
type routeChange struct {
	Route dockernet.Route
	Was   []routeEntry // routes to the same subnet that differ (empty: new)
}

// chainChange is one of rdggen's chains to replace as a block.
type chainChange struct {
	Table, Chain string
	Want         int      // rules it will have
	Was          []string // its rules when it existed
	New          bool     // it did not exist
}

// jumpChange is a jump to put first in its chain, once.
type jumpChange struct {
	Jump dockernet.Jump
	Why  string // "absent", "rule 2", "3 copies"
}

// plan is the difference between a host and its desired state.
type plan struct {
	d          *desired
	daemon     *daemonChange
	restart    string // why docker must be restarted without a daemon.json change ("" when not)
	files      []fileSpec
	newFiles   map[string]bool
	links      []linkSpec
	remove     []foreignFile
	forwarding string // the current value when it must change
	mtu        string // the data interface's current MTU when it must change
	// fileWhy explains a file's change beyond its path (the netplan ID).
	fileWhy map[string]string
	chains  []chainChange
	jumps   []jumpChange
	routes  []routeChange
	stale   []routeEntry
	roce    []hostqos.Result
	// loadPeermem: nvidia-peermem is installed, not loaded, and is to be.
	loadPeermem bool
	reload      bool
	// rails are the rails' live differences rails_apply repairs, and
	// topology why NCCL's topology file is to be written ("" when not);
	// both empty on a host with one rail (rails.go).
	rails    []railGap
	topology string
	notes    []string
	// managed counts the files and links the plan keeps as generated (the
	// desired ones less those left out for this host).
	managed int
}

// empty reports whether the host already matches.
func (p *plan) empty() bool {
	return p.daemon == nil && p.restart == "" && len(p.files) == 0 && len(p.links) == 0 && len(p.remove) == 0 &&
		p.forwarding == "" && p.mtu == "" && len(p.chains) == 0 && len(p.jumps) == 0 && len(p.routes) == 0 && len(p.stale) == 0 && len(p.roce) == 0 &&
		!p.loadPeermem && len(p.rails) == 0 && p.topology == ""
}

// hostError is a problem that stops one host before anything is changed on it.
type hostError struct{ msg string }

func (e *hostError) Error() string { return e.msg }

func hostErrorf(format string, args ...any) error { return &hostError{fmt.Sprintf(format, args...)} }

// planOpts say what makePlan may plan beyond files and live network state.
type planOpts struct {
	// docker0 adds a docker restart when docker0's address is not
	// daemon.json's bip.
	docker0 bool
	// modules loads nvidia-peermem when it is installed and not loaded.
	modules bool
}

// makePlan compares st with d, one setting at a time (each in its own file).
// It returns a *hostError when the host cannot be changed safely (a
// daemon.json that is not JSON, a missing data address).
func makePlan(inv *inventory.Inventory, d *desired, st *hostState, po planOpts) (*plan, error) {
	p := &plan{d: d, newFiles: map[string]bool{}, fileWhy: map[string]string{}}
	if err := p.planAddress(st); err != nil {
		return nil, err
	}
	if err := p.planDaemon(st, po); err != nil {
		return nil, err
	}
	p.planMTU(st)
	p.planForwarding(st)
	p.planFirewall(st)
	p.planRoutes(inv, st)
	if err := p.planRoCE(st); err != nil {
		return nil, err
	}
	files := p.planPeermem(st, po)
	if d.Rails != nil {
		var err error
		if files, err = p.planRails(inv, st, files); err != nil {
			return nil, err
		}
	}
	if err := p.planFiles(inv, st, files); err != nil {
		return nil, err
	}
	p.planDockerVersion(inv, st)
	return p, nil
}

// changes returns the plan's changes, typed, each with its line for a
// person: "+" adds, "~" changes, "-" removes. Notes are in p.notes.
func (p *plan) changes() []applyplan.Change {
	var out []applyplan.Change
	add := func(op applyplan.Op, item, from, to, format string, args ...any) {
		out = append(out, applyplan.Change{Op: op, Item: item, From: from, To: to, Text: fmt.Sprintf(format, args...)})
	}
	if dc := p.daemon; dc != nil {
		op, sign, verb := applyplan.Update, "~", "set "+strings.Join(dc.Changed, ", ")
		if !dc.Existed {
			op, sign, verb = applyplan.Add, "+", "new file with "+strings.Join(dc.Changed, ", ")
		}
		kept := ""
		if len(dc.Kept) > 0 {
			kept = "; keeps " + strings.Join(dc.Kept, ", ")
		}
		backup := ""
		if dc.Existed {
			backup = ", backup"
		}
		add(op, dockernet.DaemonPath, "", strings.Join(dc.Changed, ", "), "%s %s: %s%s (validate%s, restart docker)", sign, dockernet.DaemonPath, verb, kept, backup)
	}
	if p.restart != "" {
		add(applyplan.Run, "restart docker", "", "", "~ restart docker: %s", p.restart)
	}
	if p.forwarding != "" {
		add(applyplan.Update, "sysctl "+dockernet.ForwardingKey, p.forwarding, p.d.Forwarding, "~ %s: %s -> %s", dockernet.ForwardingKey, p.forwarding, p.d.Forwarding)
	}
	if p.mtu != "" {
		add(applyplan.Update, "link "+p.d.Host.DataInterface+" mtu", p.mtu, strconv.Itoa(p.d.Host.DataMTU), "~ link %s: mtu %s -> %d", p.d.Host.DataInterface, p.mtu, p.d.Host.DataMTU)
	}
	for _, c := range p.chains {
		was := fmt.Sprintf("%d rule(s)", len(c.Was))
		if c.New {
			was = "absent"
		}
		add(applyplan.Update, "iptables "+c.Table+" chain "+c.Chain, was, fmt.Sprintf("%d rule(s)", c.Want),
			"~ iptables %s chain %s: %d rule(s), replaced as one block (was %s)", c.Table, c.Chain, c.Want, was)
	}
	for _, j := range p.jumps {
		add(applyplan.Update, "iptables "+j.Jump.Table+" chain "+j.Jump.Chain+" jump "+j.Jump.Target, j.Why, "first rule",
			"~ iptables %s chain %s: jump to %s as its first rule, once (was %s)", j.Jump.Table, j.Jump.Chain, j.Jump.Target, j.Why)
	}
	for _, r := range p.routes {
		to := fmt.Sprintf("via %s dev %s", r.Route.Via, r.Route.Dev)
		if len(r.Was) == 0 {
			add(applyplan.Add, "route "+r.Route.Dst.String(), "", to, "+ route %s via %s dev %s (%s)", r.Route.Dst, r.Route.Via, r.Route.Dev, r.Route.Host)
		} else {
			add(applyplan.Update, "route "+r.Route.Dst.String(), fmt.Sprint(r.Was[0]), to, "~ route %s via %s dev %s (%s; was %s)", r.Route.Dst, r.Route.Via, r.Route.Dev, r.Route.Host, r.Was[0])
		}
	}
	for _, e := range p.stale {
		add(applyplan.Remove, "route "+fmt.Sprint(e), "", "", "- route %s (into the container pool, not in the inventory)", e)
	}
	for _, r := range p.roce {
		add(applyplan.Update, "roce "+r.Name, "", r.Detail, "~ roce %s: %s", r.Name, r.Detail)
	}
	if p.loadPeermem {
		add(applyplan.Run, peermemItem, "not loaded", "loaded", "~ %s: load (modprobe %s), for GPUDirect RDMA", peermemItem, hostqos.PeermemModule)
	}
	out = append(out, p.railChanges()...)
	for _, f := range p.files {
		why := ""
		if w := p.fileWhy[f.Path]; w != "" {
			why = " (" + w + ")"
		}
		if p.newFiles[f.Path] {
			add(applyplan.Add, f.Path, "", "", "+ %s%s", f.Path, why)
		} else {
			add(applyplan.Update, f.Path, "", "", "~ %s%s", f.Path, why)
		}
	}
	for _, l := range p.links {
		add(applyplan.Add, l.Path, "", l.Target, "+ %s -> %s", l.Path, l.Target)
	}
	for _, f := range p.remove {
		add(applyplan.Remove, f.Path, "", "", "- %s (%s)", f.Path, f.Why)
	}
	if p.reload {
		add(applyplan.Run, "systemd daemon-reload", "", "", "~ systemd: daemon-reload (units changed)")
	}
	return out
}

// peermemItem is the plan's item for loading nvidia-peermem.
const peermemItem = "kernel module " + hostqos.PeermemSysfs

// describe is the text of every change (no line is cut).
func (p *plan) describe() []string { return driver.Texts(p.changes()) }

// firewall reports whether the firewall script must run: a chain or jump
