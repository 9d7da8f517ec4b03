package hostapply

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/remote"
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
	notes       []string
	// managed counts the files and links the plan keeps as generated (the
	// desired ones less those left out for this host).
	managed int
}

// empty reports whether the host already matches.
func (p *plan) empty() bool {
	return p.daemon == nil && p.restart == "" && len(p.files) == 0 && len(p.links) == 0 && len(p.remove) == 0 &&
		p.forwarding == "" && p.mtu == "" && len(p.chains) == 0 && len(p.jumps) == 0 && len(p.routes) == 0 && len(p.stale) == 0 && len(p.roce) == 0 &&
		!p.loadPeermem
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

// makePlan compares st with d. It returns a *hostError when the host cannot
// be changed safely (a daemon.json that is not JSON, a missing data address).
func makePlan(inv *inventory.Inventory, d *desired, st *hostState, po planOpts) (*plan, error) {
	h := d.Host
	checkDocker0 := po.docker0
	p := &plan{d: d, newFiles: map[string]bool{}, fileWhy: map[string]string{}}

	// The data interface must carry the inventory's address: routes use it.
	if st.Addr.RC != 0 {
		return nil, hostErrorf("data interface %s: %s", h.DataInterface, remote.FirstLine(st.Addr.Out))
	}
	if addrs := parseAddrs(st.Addr.Out); !slices.Contains(addrs, h.Data.Address) {
		return nil, hostErrorf("data interface %s does not carry %s (hosts[%d].data.address; it has %v): configure it first, the routes' next hops must be on-link",
			h.DataInterface, h.Data.Address, h.Index, addrs)
	}

	// daemon.json: merged, never overwritten when it does not parse.
	cur := st.Files[dockernet.DaemonPath]
	switch cur.Kind {
	case "link", "other":
		return nil, hostErrorf("%s is not a regular file (%s); rdggen does not write through it", dockernet.DaemonPath, cur.Kind)
	}
	merged, err := dockernet.Merge(cur.Data, d.Daemon)
	if err != nil {
		return nil, hostErrorf("%s: %v; the file was not changed", dockernet.DaemonPath, strings.TrimPrefix(err.Error(), "existing daemon.json: "))
	}
	if cur.Kind == "absent" || !bytes.Equal(merged, cur.Data) {
		if err := dockernet.Validate(merged); err != nil {
			return nil, hostErrorf("%s: the merged file would not be valid, so it was not installed: %v", dockernet.DaemonPath, err)
		}
		dc := &daemonChange{Existed: cur.Kind == "file", Old: cur.Data, Mode: 0o644, New: merged}
		if dc.Existed {
			sum := sha256.Sum256(cur.Data)
			dc.OldSum, dc.Mode = hex.EncodeToString(sum[:]), cur.Mode
		}
		dc.Changed = dockernet.ChangedKeys(cur.Data, merged)
		ours := dockernet.Keys(d.Daemon)
		for _, k := range dockernet.Keys(cur.Data) {
			if !slices.Contains(ours, k) {
				dc.Kept = append(dc.Kept, k)
			}
		}
		p.daemon = dc
	} else if checkDocker0 && st.Docker0.RC == 0 {
		// The file is right; is the running Docker using it?
		if bip := h.Bridge(); !slices.Contains(parseAddrs(st.Docker0.Out), bip) {
			p.restart = fmt.Sprintf("docker0 has %v, daemon.json says bip %s", parseAddrs(st.Docker0.Out), bip)
		}
	}

	// The data network's MTU on the data interface.
	if cur, _ := parseLink(st.Link.Out); st.Link.RC != 0 || cur != h.DataMTU {
		p.mtu = strconv.Itoa(cur)
		if cur == 0 {
			p.mtu = "unknown"
		}
	}

	// Forwarding.
	if v := strings.TrimSpace(st.Forwarding.Out); st.Forwarding.RC != 0 || v != d.Forwarding {
		p.forwarding = v
		if p.forwarding == "" {
			p.forwarding = "unknown"
		}
	}

	// Firewall and address translation: each chain as a block, each jump
	// first in its chain, once.
	for _, c := range []struct {
		table, chain string
		st           cmdOut
		want         []string
	}{
		{"filter", dockernet.FirewallChain, st.Chain, d.ChainRules},
		{"nat", dockernet.NATChain, st.NAT, d.NATRules},
	} {
		if have := chainRules(c.st.Out); c.st.RC != 0 || !slices.Equal(have, c.want) {
			p.chains = append(p.chains, chainChange{Table: c.table, Chain: c.chain, Want: len(c.want), Was: have, New: c.st.RC != 0})
		}
	}
	for i, in := range []cmdOut{st.DockerUser, st.Postrouting} {
		if why := jumpProblem(dockernet.Jumps[i], in); why != "" {
			p.jumps = append(p.jumps, jumpChange{Jump: dockernet.Jumps[i], Why: why})
		}
	}

	// Routes: replace what is missing or different, delete stale routes into
	// the pool via the data interface (a host that left the inventory).
	table := parseRoutes(st.Routes.Out)
	byDst := map[netip.Prefix][]routeEntry{}
	for _, e := range table {
		byDst[e.Dst] = append(byDst[e.Dst], e)
	}
	want := map[netip.Prefix]bool{}
	for _, r := range d.Routes {
		want[r.Dst] = true
		ok := false
		for _, e := range byDst[r.Dst] {
			ok = ok || (e.Via == r.Via && e.Dev == r.Dev)
		}
		if !ok {
			p.routes = append(p.routes, routeChange{Route: r, Was: byDst[r.Dst]})
		}
	}
	pool := inv.Docker.Pool
	for _, e := range table {
		if e.Via.IsValid() && e.Dev == h.DataInterface && pool.Contains(e.Dst.Addr()) && e.Dst.Bits() >= pool.Bits() && !want[e.Dst] {
			p.stale = append(p.stale, e)
		}
	}

	// In-VM RoCE settings.
	rs := roceResults(st.RoCE.Out)
	if len(rs) == 0 {
		return nil, hostErrorf("RoCE check did not run (exit %d): %s", st.RoCE.RC, remote.FirstLine(st.RoCE.Out))
	}
	for _, r := range rs {
		if r.State == hostqos.StateDiffers || r.State == hostqos.StateFailed {
			p.roce = append(p.roce, r)
		}
	}

	// GPUDirect RDMA's peer-memory module: persisted by its modules-load.d
	// file (one of the files below), loaded now when it is installed. The
	// file names a module, so it is written only where the module is
	// there: systemd-modules-load fails at every boot on a module it cannot
	// find (modules-load.d(5), systemd-modules-load.service(8)). Where
	// DMA-BUF carries GPUDirect RDMA, neither is needed.
	pm := parsePeermem(st.Peermem.Out)
	files := d.Files
	withoutPeermem := func() []fileSpec {
		return slices.DeleteFunc(slices.Clone(d.Files), func(f fileSpec) bool { return f.Path == hostqos.PeermemPath })
	}
	switch {
	case pm.Legacy && st.Files[hostqos.PeermemPath].Kind == "absent":
		// Only one peer-memory module may be loaded: leave nv_peer_mem's setup.
		files = withoutPeermem()
		p.notes = append(p.notes, fmt.Sprintf("%s (the peer-memory module of NVIDIA drivers before R470) is loaded: rdggen neither loads %s nor writes %s (only one of them may be loaded)",
			hostqos.LegacyPeerModule, hostqos.PeermemModule, hostqos.PeermemPath))
	case pm.Loaded || pm.Legacy:
	case dmabufPath(h, pm).ok:
		// GPUDirect RDMA goes through DMA-BUF here (NVIDIA's recommended
		// path, no MLNX_OFED needed; without MLNX_OFED nvidia-peermem
		// cannot even load): nothing to load or persist.
		files = withoutPeermem()
		p.notes = append(p.notes, fmt.Sprintf("GPUDirect RDMA through DMA-BUF (%s): rdggen neither loads %s nor writes %s (docs/rules.md#gpudirect-rdma-through-dma-buf)",
			dmabufPath(h, pm).found, hostqos.PeermemModule, hostqos.PeermemPath))
	case !pm.Module:
		// Neither written nor changed; one from an earlier apply stays.
		files = withoutPeermem()
		then := fmt.Sprintf("writes %s, which it leaves out until then (systemd-modules-load would fail at every boot)", hostqos.PeermemPath)
		if st.Files[hostqos.PeermemPath].Kind != "absent" {
			then = fmt.Sprintf("keeps %s, which makes systemd-modules-load fail at every boot until the module is installed (remove the file if it will not be)", hostqos.PeermemPath)
		}
		p.notes = append(p.notes, fmt.Sprintf("%s is not installed (NVIDIA driver < 470, or none yet): GPUDirect RDMA needs it. "+
			"Install the NVIDIA driver ≥ 470 (it ships %s) after MLNX_OFED, then rdggen apply --target hosts again: it loads the module and %s",
			hostqos.PeermemModule, hostqos.PeermemModule, then))
	case po.modules:
		p.loadPeermem = true
	default:
		p.notes = append(p.notes, fmt.Sprintf("%s is installed but not loaded, and loading is off (--module-load none or --host-root): load it with modprobe %s",
			hostqos.PeermemModule, hostqos.PeermemModule))
	}

	// Files rdggen owns whole, their enabling links, and the other OS form.
	// The netplan file depends on the host: its routes and MTU go under the
	// ID of the host's own definition of the data interface.
	if h.OS.UsesNetplan() {
		_, mac := parseLink(st.Link.Out)
		id, how, ok := netplanID(st.Netplan, h.DataInterface, mac)
		if !ok {
			id = h.DataInterface
			p.notes = append(p.notes, fmt.Sprintf("no netplan file configures %s: rdggen's %s defines it under its name (its address must come from there or elsewhere)", h.DataInterface, dockernet.NetplanPath))
		}
		files = slices.Clone(files)
		for i := range files {
			if files[i].Path == dockernet.NetplanPath {
				files[i].Data = dockernet.NetplanFor(inv, h, id, how)
				if ok {
					p.fileWhy[files[i].Path] = "routes and MTU under netplan ID " + id + ", " + how
				}
			}
		}
	}
	p.managed = len(files) + len(d.Links)
	for _, f := range files {
		s := st.Files[f.Path]
		switch {
		case s.Kind == "other" || s.Kind == "link":
			return nil, hostErrorf("%s is not a regular file (%s); remove it and run apply again", f.Path, s.Kind)
		case s.Kind == "file" && bytes.Equal(s.Data, f.Data) && s.Mode == f.Mode:
			continue
		}
		p.files = append(p.files, f)
		p.newFiles[f.Path] = s.Kind == "absent"
		p.reload = p.reload || f.Unit
	}
	for _, l := range d.Links {
		if s := st.Files[l.Path]; s.Kind != "link" || string(s.Data) != l.Target {
			p.links = append(p.links, l)
			p.reload = true
		}
	}
	for _, f := range d.Foreign {
		s := st.Files[f.Path]
		if s.Kind == "absent" {
			continue
		}
		if s.Kind == "file" && bytes.Contains(s.Data, []byte(f.Mark)) {
			p.remove = append(p.remove, f)
		} else {
			p.notes = append(p.notes, fmt.Sprintf("%s exists but was not written by rdggen: left alone", f.Path))
		}
	}

	// Docker version against the inventory's.
	if v, ok := dockerVersion(st.Dockerd.Out); ok {
		have := inventory.MustVersion(fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]))
		switch {
		case have.AtLeast(28, 2) && !inv.Docker.AllowDirectRouting():
			p.notes = append(p.notes, fmt.Sprintf("dockerd is %d.%d.%d but the inventory says docker.version %s: without \"allow-direct-routing\" Docker ≥ 28.2 drops routed traffic to containers; set docker.version", v[0], v[1], v[2], inv.Docker.Version))
		case !have.AtLeast(28, 2) && inv.Docker.AllowDirectRouting():
			p.notes = append(p.notes, fmt.Sprintf("dockerd is %d.%d.%d but the inventory says docker.version %s: dockerd < 28.2 rejects \"allow-direct-routing\"", v[0], v[1], v[2], inv.Docker.Version))
		}
	} else if st.Dockerd.RC == 127 {
		p.notes = append(p.notes, "dockerd is not installed: daemon.json and the firewall unit take effect when Docker is")
	}
	return p, nil
}

// jumpProblem says why j is not the first rule of its chain exactly once
// ("" when it is); in is `iptables -S <chain>`.
func jumpProblem(j dockernet.Jump, in cmdOut) string {
	if in.RC != 0 {
		return "no chain " + j.Chain
	}
	rules := chainRules(in.Out)
	var at []int
	for i, r := range rules {
		if r == j.Rule() {
			at = append(at, i+1)
		}
	}
	switch {
	case len(at) == 0:
		return "absent"
	case at[0] != 1:
		return fmt.Sprintf("rule %d, after %q", at[0], rules[0])
	case len(at) > 1:
		return fmt.Sprintf("%d copies", len(at))
	}
	return ""
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
func (p *plan) describe() []string { return remote.Texts(p.changes()) }

// firewall reports whether the firewall script must run: a chain or jump
// differs, or Docker restarts (it puts its MASQUERADE rule back on top).
func (p *plan) firewall() bool {
	return len(p.chains)+len(p.jumps) > 0 || p.daemon != nil || p.restart != ""
}
