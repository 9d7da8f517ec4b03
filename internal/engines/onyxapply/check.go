package onyxapply

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// The checks of `rdggen check --target switch` (readiness.Result.Check).
// CheckConnect and CheckConfig concern the whole switch (Subject ""/the
// setting); CheckLink … CheckECN are made on every data port, i.e. every
// port of the switch that a host's data link is cabled to
// (hosts[].data.port), and on a fabric switch on every uplink
// (fabric.links) too, with Subject the port's ONYX name ("Eth1/3");
// CheckLLDP on every uplink and CheckBGP and CheckBFD (check_bfd.go) on
// every planned BGP session of a fabric switch.
const (
	// CheckConnect is reported only when the switch could not be reached
	// (no mgmt address, SSH, login or the CLI failed): Unknown, with why.
	CheckConnect = "connect"
	// CheckConfig is the apply plan: `show running-config` diffed against
	// the inventory's statements (onyx.Reconcile), as `rdggen apply --target
	// switch --dry-run` makes it. Passed when nothing is to send; else one
	// failure per command of the plan, Subject the setting ("interface
	// ethernet 1/3 dcb priority-flow-control mode"), Found what the switch
	// has, Expected the command, Fix `rdggen apply --target switch` or the
	// command itself in config mode. A removal's Expected is "absent
	// (rdggen's, no longer wanted)": only what Reconcile shows is rdggen's.
	// Each command that apply leaves although it may be rdggen's
	// (onyx.Plan.Kept) is one more passed result, Subject the command
	// ("ip route vrf default 172.16.1.0/24 10.0.0.1"), Found apply's reason
	// and the command that removes it. On a fabric switch that runs a BGP
	// instance of another AS (onyx.ForeignBGP), for which the plan sends no
	// BGP line, a failure with Subject ForeignASSubject says so.
	CheckConfig = "config"
	// CheckLink reads "Admin state", "Operational state" and "Actual speed"
	// of `show interfaces ethernet | json-print`: passed when the link is
	// up at the speed the inventory plans for both its ends
	// (inventory.FabricPlan.LinkSpeed: the lower of the port's speed and
	// the hosts' NIC speed, on an uplink of both ports' speeds); a slower or
	// faster link fails naming both ends, a speed that cannot be read is
	// Unknown. A shut-down port's fix is `interface ethernet 1/N no
	// shutdown`; a port that is enabled but down needs its cable or its
	// host's NIC looked at.
	CheckLink = "link"
	// CheckMTU reads "MTU" of `show interfaces ethernet | json-print`:
	// passed when it is at least onyx.SwitchPortMTU (9216 bytes for a
	// jumbo-frame data network and on every port of a fabric switch, else
	// 1500); fix `interface ethernet 1/N mtu 9216 force`, on an uplink with
	// the far end of the link named (every hop carries the fabric's MTU).
	CheckMTU = "mtu"
	// CheckPFC reads `show dcb priority-flow-control | json-print`: passed
	// when PFC is enabled globally, the RoCE priority (roce.priority) is in
	// its "Priority Enabled List" and the port's "PFC oper" is Enabled;
	// fixes `dcb priority-flow-control enable force`, `dcb
	// priority-flow-control priority 3 enable`, `interface ethernet 1/N dcb
	// priority-flow-control mode on force` (or `roce lossless` when the
	// inventory wants the template and the switch lacks it).
	CheckPFC = "pfc"
	// CheckPauseCounters reads `show interfaces ethernet 1/N counters pfc
	// prio <roce.priority>`: passed with the pause packets received and
	// sent as found; Unknown when the switch does not print them. Never
	// failed: pause frames are normal on a lossless fabric.
	CheckPauseCounters = "pause-counters"
	// CheckECN reads `show interfaces ethernet 1/N congestion-control |
	// json-print`: passed when the RoCE traffic class marks ECN with the
	// inventory's absolute thresholds (roce.ecn_min_kb, ecn_max_kb); fix
	// the command pkg/onyx generates, `interface ethernet 1/N traffic-class
	// 3 congestion-control ecn minimum-absolute 150 maximum-absolute 1500`.
	CheckECN = "ecn"
	// CheckLLDP compares, on each uplink of a fabric switch, the LLDP
	// neighbor the switch hears (onyx.ShowLLDPRemoteCommand, `show lldp
	// interfaces ethernet remote | json-print`: "Remote system name" and
	// "Remote port-id") with the planned end of the link in fabric.links:
	// passed when the one neighbor is that switch and port (an ONYX port id
	// "Eth1/1" is port 1/1); a miswired link names both ends and the fix
	// (move the cable, or correct fabric.links); two neighbors or more on
	// the port fail (something joins a point-to-point link); no neighbor
	// fails with the cable to check. Unknown when the output cannot be
	// read.
	CheckLLDP = "lldp"
	// CheckBGP reads, on a fabric switch, `show ip bgp summary`
	// (onyx.ShowBGPSummaryCommand): each planned session (every uplink's
	// peer /31 address; ONYX peers numbered only) passes when the default
	// VRF's row of that neighbor is ESTABLISHED, the summary's local AS is
	// the switch's planned AS, the row's AS the planned peer's, and its
	// prefixes received at least as many as the plan routes over the
	// session (inventory.FabricPlan.Routes: on a leaf from a spine that
	// spine's loopback and the prefixes of every other leaf cabled to it,
	// on a spine a leaf's own), Subject the neighbor's address. A row in
	// another state fails with the state word and the peer and link to look
	// at; another AS fails as a wrong peer (or a foreign BGP instance);
	// fewer prefixes fail naming them; a session missing from the table
	// fails with the neighbor command apply writes and how to see whether
	// BGP runs (`show protocols | include bgp`). Unknown when the output is
	// not a BGP summary (an error line, BGP not enabled), with how to look
	// by hand, or does not show the AS or count to compare.
	CheckBGP = "bgp"
)

// PortChecks are the checks made on each data port and uplink, in the
// order they are reported (an uplink's CheckLLDP follows them).
var PortChecks = []string{CheckLink, CheckMTU, CheckPFC, CheckPauseCounters, CheckECN}

// applyCommand is the fix of a configuration drift.
const applyCommand = "rdggen apply --target switch"

// Check is `rdggen check --target switch`: a read-only readiness check of
// every switch of the inventory, Parallel at a time. It connects as Run
// does (enable mode; it never enters config mode, sends no configuration
// command, writes no backup and ignores DryRun, Gate, BackupDir, Now and
// Out), reads the running-config and the live state of each data port, and
// returns the results in inventory order: per switch the CheckConfig
// result(s), then per data port (in port order) the PortChecks, then per
// uplink (in fabric.links order) the PortChecks and CheckLLDP, then
// CheckBGP per planned session, then CheckBFD per planned session. A switch
// that cannot be reached gives one Unknown CheckConnect result; err names
// the switches that could not be checked (unreachable, or the session
// failed midway), and is nil when every switch answered, whatever the
// verdicts.
func Check(ctx context.Context, inv *inventory.Inventory, o Options) ([]readiness.Result, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	sws := o.switches(inv)
	n := len(sws)
	names := make([]string, n)
	for i, sw := range sws {
		names[i] = sw.Name
	}
	fp := inv.FabricPlan() // once for every switch
	results, errs := driver.Check(names, o.Parallel, o.Track, fmt.Sprintf("checking %d switch(es), read-only", n),
		func(i int) ([]readiness.Result, error) { return checkSwitch(ctx, inv, fp, sws[i], o) })
	var out []readiness.Result
	var failed []string
	for i, rs := range results {
		out = append(out, rs...)
		if errs[i] != nil {
			failed = append(failed, errs[i].Error())
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%d of %d switch(es) could not be checked: %s", len(failed), n, strings.Join(failed, "; "))
	}
	return out, nil
}

// checker checks one switch over one session.
type checker struct {
	ctx  context.Context
	inv  *inventory.Inventory
	fp   *inventory.FabricPlan
	t    *target
	rs   []readiness.Result
	lost error // a transport error: the session is no longer usable
	// template: the inventory wants the `roce lossless` template and the
	// switch lacks it, so the template is the fix of PFC and ECN.
	template bool
}

func (c *checker) pass(check, subject, found string) {
	c.rs = append(c.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: c.t.sw.Name, Check: check, Subject: subject, Status: readiness.Passed, Found: found})
}

func (c *checker) fail(check, subject, found, expected, fix string) {
	c.rs = append(c.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: c.t.sw.Name, Check: check, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fix})
}

func (c *checker) unsure(check, subject, why string) {
	c.rs = append(c.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: c.t.sw.Name, Check: check, Subject: subject, Status: readiness.Unknown, Found: why})
}

// after makes the last result follow from refs (readiness.Causes).
func (c *checker) after(refs ...readiness.Ref) {
	last := &c.rs[len(c.rs)-1]
	last.After = last.After.Add(refs...)
}

// ForeignASSubject is the Subject of the CheckConfig failure of a fabric
// switch that runs a BGP instance of another AS in the default VRF:
// apply then sends no BGP line there (onyx.Reconcile), so the check fails
// rather than pass a running-config without rdggen's BGP.
// nvueapply.ForeignASSubject is the same for Cumulus Linux.
const ForeignASSubject = "router bgp"

// cumulusForeignASSubject is nvueapply.ForeignASSubject, the Subject a
// Cumulus peer's foreign-AS finding has (the engines do not import each
// other).
const cumulusForeignASSubject = "router.bgp.autonomous-system"

// foreignASRef names the foreign-AS finding switch x would have.
func foreignASRef(x *inventory.Switch) readiness.Ref {
	if x.OS() == inventory.OSCumulus {
		return readiness.Ref{Machine: x.Name, Check: CheckConfig, Subject: cumulusForeignASSubject}
	}
	return readiness.Ref{Machine: x.Name, Check: CheckConfig, Subject: ForeignASSubject}
}

// portRef names check of port p of switch x, as x's engine names it
// (Eth1/1 on ONYX, swp1 on Cumulus Linux).
func portRef(x *inventory.Switch, check string, p inventory.Port) readiness.Ref {
	return readiness.Ref{Machine: x.Name, Check: check, Subject: x.OS().ShownPortName(p)}
}

// sessionRef names the bgp check of uplink u's session on switch x.
func sessionRef(x *inventory.Switch, u inventory.Uplink) readiness.Ref {
	return readiness.Ref{Machine: x.Name, Check: CheckBGP, Subject: u.Neighbor(*x)}
}

// send runs one show command. After a transport error (timeout, closed
// connection) nothing more is sent; a refused command leaves the session
// usable.
func (c *checker) send(cmd string) (string, error) {
	if c.lost != nil {
		return "", fmt.Errorf("%q not sent: the session failed earlier", cmd)
	}
	out, err := c.t.sess.Send(c.ctx, cmd)
	var de *sshcli.DeviceError
	if err != nil && !errors.As(err, &de) {
		c.lost = err
	}
	if err != nil && errors.Is(err, sshcli.ErrTimeout) && c.t.o.CommandTimeoutFlag != "" {
		err = fmt.Errorf("%w (the bound per command is %s)", err, c.t.o.CommandTimeoutFlag)
	}
	return out, err
}

// fix is the command that sets st, or `roce lossless` when the template is
// what the switch lacks.
func (c *checker) fix(st onyx.Statement) string {
	if c.template {
		return onyx.RoCE("lossless").Command()
	}
	return st.Command()
}

func checkSwitch(ctx context.Context, inv *inventory.Inventory, fp *inventory.FabricPlan, sw inventory.Switch, o Options) ([]readiness.Result, error) {
	t := prepare(ctx, inv, sw, o)
	defer t.close()
	c := &checker{ctx: ctx, inv: inv, fp: fp, t: t}
	if t.sess == nil {
		c.unsure(CheckConnect, "", t.res.errText())
		return c.rs, fmt.Errorf("%s: %s", sw.Name, t.res.errText())
	}
	if t.res.Err != nil { // connected, but the running-config could not be read
		c.unsure(CheckConfig, "", t.res.errText())
		var de *sshcli.DeviceError
		if !errors.As(t.res.Err, &de) {
			c.lost = t.res.Err
		}
	} else {
		c.config()
	}
	c.ports()
	if sw.Fabric.Role != "" {
		c.bgp()
		c.bfd() // check_bfd.go
	}
	if c.lost != nil {
		return c.rs, fmt.Errorf("%s: the session failed: %v", sw.Name, c.lost)
	}
	return c.rs, nil
}

// config reports the apply plan.
func (c *checker) config() {
	plan := c.t.res.Plan
	c.template = onyx.UsesRoCETemplate(c.inv, c.t.sw) && slices.ContainsFunc(plan.Changes, func(ch onyx.Change) bool { return ch.Kind == onyx.KindRoCE })
	// What apply leaves although it may be rdggen's passes, as apply
	// changes nothing about it, with apply's reason and the command that
	// removes it.
	defer func() {
		for _, k := range plan.Kept {
			c.pass(CheckConfig, k.Command, k.Reason)
		}
	}()
	if foreign := onyx.ForeignBGP(c.t.sw, onyx.Parse(c.t.running)); foreign != "" {
		// Reconcile left rdggen's BGP out: none of it is on the switch,
		// and the plan's other lines do not make up for that.
		var bgp int
		for _, d := range c.t.desired {
			if d.Kind == onyx.KindBGP {
				bgp++
			}
		}
		other := strings.Fields(foreign)[2]
		c.fail(CheckConfig, ForeignASSubject, fmt.Sprintf("%s: BGP runs as AS %s, so none of rdggen's %d BGP statements are sent", quote.Terminal(foreign), quote.Terminal(other), bgp),
			fmt.Sprintf("router bgp %d vrf default (%s's AS, the inventory's) with rdggen's BGP statements", c.t.sw.Fabric.ASN, c.t.sw.Name),
			fmt.Sprintf("if that BGP instance is yours, set switches[].asn: %s for %s in the inventory and apply again; else in config mode: no %s, then %s", quote.Terminal(other), c.t.sw.Name, quote.Terminal(foreign), applyCommand))
		if plan.Empty() {
			return
		}
	}
	if plan.Empty() {
		found := fmt.Sprintf("the running-config has all %d of the inventory's statements", len(c.t.desired))
		kept := map[string]bool{}
		for _, k := range plan.Kept {
			kept[k.Command+": "+k.Reason] = true
		}
		for _, w := range plan.Warnings {
			if !kept[w] {
				found += "; warning: " + w
			}
		}
		c.pass(CheckConfig, "", found)
		return
	}
	for _, ch := range plan.Changes {
		item, _ := changeItem(ch)
		found, expected := "not set", ch.Command
		switch {
		case len(ch.Removed) > 0:
			found, expected = strings.Join(ch.Removed, "; "), "absent (rdggen's, no longer wanted)"
		case len(ch.Replaces) > 0:
			found = strings.Join(ch.Replaces, "; ")
		}
		c.fail(CheckConfig, item, found, expected, applyCommand+", or in config mode: "+ch.Command)
	}
}

// dataPorts are the switch's ports cabled to hosts — every rail's, as
// the switch file configures them (Inventory.RailsOnSwitch) — in port
// order, with the hosts on each.
func dataPorts(inv *inventory.Inventory, sw string) ([]inventory.Port, map[inventory.Port][]*inventory.Host) {
	hosts := map[inventory.Port][]*inventory.Host{}
	var ports []inventory.Port
	for _, hr := range inv.RailsOnSwitch(sw) {
		p := hr.Rail.Port
		if _, ok := hosts[p]; !ok {
			ports = append(ports, p)
		}
		hosts[p] = append(hosts[p], hr.Host)
	}
	slices.SortFunc(ports, func(a, b inventory.Port) int {
		return cmp.Or(cmp.Compare(a.Module, b.Module), cmp.Compare(a.Number, b.Number), cmp.Compare(a.Lane, b.Lane))
	})
	return ports, hosts
}

// port is one port the check reads: a data port with its hosts, or an
// uplink.
type port struct {
	iface  onyx.Iface
	port   inventory.Port
	hosts  []*inventory.Host
	uplink *inventory.Uplink
}

// ports checks every data port and uplink.
func (c *checker) ports() {
	dps, hosts := dataPorts(c.inv, c.t.sw.Name)
	var ports []port
	for _, p := range dps {
		ports = append(ports, port{iface: onyx.PortIface(p), port: p, hosts: hosts[p]})
	}
	ups := c.fp.Uplinks(c.t.sw.Name)
	for i := range ups {
		ports = append(ports, port{iface: onyx.PortIface(ups[i].Port), port: ups[i].Port, uplink: &ups[i]})
	}
	if len(ports) == 0 {
		return
	}
	var ifaces map[string]onyx.PortStatus
	out, ifErr := c.send(onyx.ShowInterfacesCommand(onyx.Iface{}))
	if ifErr == nil {
		ifaces, ifErr = onyx.ParseInterfaces(out)
	}
	var pfc onyx.PFCStatus
	out, pfcErr := c.send(onyx.ShowPFCCommand)
	if pfcErr == nil {
		pfc, pfcErr = onyx.ParsePFC(out)
	}
	var lldp map[string][]onyx.LLDPRemote
	var lldpErr error
	if len(ups) > 0 {
		out, lldpErr = c.send(onyx.ShowLLDPRemoteCommand)
		if lldpErr == nil {
			lldp, lldpErr = onyx.ParseLLDPRemote(out)
		}
	}
	for _, p := range ports {
		iface := p.iface
		name := iface.ShortName()
		st, listed := ifaces[name]
		if ifErr == nil && !listed {
			what, field := "the port of "+hostList(p.hosts)+", up", "hosts[].data.port"
			if p.uplink != nil {
				what, field = "the uplink to "+peerEnd(p.uplink)+", up", fmt.Sprintf("fabric.links[%d]", p.uplink.Link)
			}
			c.fail(CheckLink, name, fmt.Sprintf("%s is not listed by %q", name, onyx.ShowInterfacesCommand(onyx.Iface{})),
				what, "check switches[].model and "+field+" in the inventory")
			c.unsure(CheckMTU, name, "the port is not listed by the switch")
		} else {
			c.link(iface, st, ifErr, p)
			c.mtu(iface, st, ifErr, p.uplink)
		}
		c.pfc(iface, pfc, pfcErr)
		c.pauseCounters(iface)
		c.ecn(iface)
		if p.uplink != nil {
			c.lldp(*p.uplink, lldp, lldpErr)
		}
	}
}

// peerEnd is the far end of uplink u: "spine1 1/1" (a Cumulus peer's port
// "swp1").
func peerEnd(u *inventory.Uplink) string {
	if u.Peer == nil {
		return "?"
	}
	return u.Peer.Name + " " + u.Peer.PortName(u.PeerPort)
}

// hostList names the hosts on a port and their ESXi uplinks, e.g.
// "clx-mld-41 (esx-41.example vmnic4)".
func hostList(hs []*inventory.Host) string {
	var out []string
	for _, h := range hs {
		out = append(out, fmt.Sprintf("%s (%s %s)", h.Name, h.ESXi, h.NIC.PF))
	}
	return strings.Join(out, ", ")
}

func (c *checker) link(iface onyx.Iface, st onyx.PortStatus, err error, p port) {
	name := iface.ShortName()
	speed := st.Speed
	if speed == "" {
		speed = "speed not shown"
	}
	sw := &c.t.sw
	switch {
	case err != nil:
		c.unsure(CheckLink, name, err.Error())
	case !st.AdminUp():
		c.fail(CheckLink, name, fmt.Sprintf("admin state %s, operational state %s", orDash(st.Admin), orDash(st.Oper)),
			"enabled and up", onyx.NoShutdown(iface).Command())
	case !st.OperUp() && p.uplink != nil:
		c.fail(CheckLink, name, fmt.Sprintf("admin state %s, operational state %s", st.Admin, orDash(st.Oper)),
			"up", fmt.Sprintf("check the cable to %s and that port there (fabric.links[%d]); the switch side is enabled", peerEnd(p.uplink), p.uplink.Link))
		// One cable, two ends: a shut-down far end may be the cause.
		c.after(portRef(p.uplink.Peer, CheckLink, p.uplink.PeerPort))
	case !st.OperUp():
		c.fail(CheckLink, name, fmt.Sprintf("admin state %s, operational state %s", st.Admin, orDash(st.Oper)),
			"up", "check the cable and the far end, "+hostList(p.hosts)+"; the switch side is enabled")
	default:
		want, basis := c.fp.LinkSpeed(sw, p.port)
		gbps := st.SpeedGbps()
		show := fmt.Sprintf("`show interfaces ethernet %s` on %s", iface.ID, sw.Name)
		up := "up, " + quote.Terminal(speed)
		if p.uplink != nil {
			up += ", uplink to " + peerEnd(p.uplink)
		}
		switch {
		case want == 0:
			c.pass(CheckLink, name, up)
		case gbps == 0:
			c.unsure(CheckLink, name, fmt.Sprintf("up; the switch shows the speed %q, so whether the link runs at the planned %d Gb/s (%s) is not known: see %s", quote.Terminal(speed), want, basis, show))
		case gbps > float64(want)-0.01 && gbps < float64(want)+0.01:
			c.pass(CheckLink, name, up)
		default:
			where := fmt.Sprintf("the cable and optics to %s, the port's speed setting (%s) and the NIC's", hostList(p.hosts), show)
			if p.uplink != nil {
				where = fmt.Sprintf("the link %s %s ↔ %s: the cable and the optics at both ends, and the speed set on each port (%s, and on %s)",
					sw.Name, sw.PortName(p.port), peerEnd(p.uplink), show, p.uplink.Peer.Name)
			}
			fix := "the link runs slower than both ends allow (RoCE bandwidth and the benchmarks' pass lines follow the planned speed): check " + where
			if gbps > float64(want) {
				fix = "the link runs faster than the inventory plans: if the hardware is faster, correct the inventory (hosts' nic.speed_gbps, switches[].model) so that bench judges against it; else check " + where
			}
			c.fail(CheckLink, name, "up, "+quote.Terminal(speed), fmt.Sprintf("up at %d Gb/s (%s)", want, basis), fix)
			if p.uplink != nil {
				c.after(portRef(p.uplink.Peer, CheckLink, p.uplink.PeerPort))
			}
		}
	}
}

func (c *checker) mtu(iface onyx.Iface, st onyx.PortStatus, err error, u *inventory.Uplink) {
	name := iface.ShortName()
	want := onyx.SwitchPortMTU(c.inv, c.t.sw)
	switch {
	case err != nil:
		c.unsure(CheckMTU, name, err.Error())
	case st.MTU == 0:
		c.unsure(CheckMTU, name, "the port's MTU is not in the output of "+strconv.Quote(onyx.ShowInterfacesCommand(onyx.Iface{})))
	case st.MTU >= want:
		c.pass(CheckMTU, name, fmt.Sprintf("%d bytes", st.MTU))
	case c.t.sw.Fabric.Role != "":
		fix := onyx.MTU(iface, want).Command()
		if u != nil {
			fix += fmt.Sprintf("; every hop of the fabric carries MTU %d, %s too (a smaller hop drops large RoCE frames while pings pass)", want, peerEnd(u))
		}
		c.fail(CheckMTU, name, fmt.Sprintf("%d bytes", st.MTU),
			fmt.Sprintf("at least %d bytes (the fabric's MTU on every hop)", want), fix)
	default:
		c.fail(CheckMTU, name, fmt.Sprintf("%d bytes", st.MTU),
			fmt.Sprintf("at least %d bytes (data_mtu %d)", want, c.inv.DataMTU()), onyx.MTU(iface, want).Command())
	}
}

// lldpPort reads an LLDP port id as the port name of the switch it names:
// ONYX advertises "Eth1/1" for port 1/1 (CANU's fixture); any other id is
// kept.
func lldpPort(peer *inventory.Switch, id string) string {
	if peer == nil {
		return id
	}
	if pre := peer.OS().ShownPrefix(); pre != "" && len(id) > len(pre) && strings.EqualFold(id[:len(pre)], pre) && id[len(pre)] >= '0' && id[len(pre)] <= '9' {
		return id[len(pre):]
	}
	return id
}

// lldp compares uplink u's LLDP neighbors with the plan: one neighbor,
// the planned end of the link.
func (c *checker) lldp(u inventory.Uplink, nbs map[string][]onyx.LLDPRemote, err error) {
	name := onyx.PortIface(u.Port).ShortName()
	want := peerEnd(&u)
	here := c.t.sw.Name + " " + c.t.sw.PortName(u.Port)
	planned := want + fmt.Sprintf(" (fabric.links[%d])", u.Link)
	if err != nil {
		c.unsure(CheckLLDP, name, fmt.Sprintf("%v; compare `show lldp interfaces ethernet remote` on %s by hand with the plan, %s", err, c.t.sw.Name, planned))
		return
	}
	type neighbor struct {
		text string
		sw   *inventory.Switch
		port string
	}
	var seen []neighbor
	for _, nb := range nbs[name] {
		if nb.SystemName == "" && nb.PortID == "" && nb.ChassisID == "" {
			continue // every TLV "Not Advertised" (CANU's fixture): no neighbor
		}
		sys := nb.SystemName
		if sys == "" {
			sys = "(no system name, chassis " + orDash(nb.ChassisID) + ")"
		}
		x := c.inv.Switch(nb.SystemName)
		port := lldpPort(x, orDash(nb.PortID))
		seen = append(seen, neighbor{text: quote.Terminal(sys + " " + port), sw: x, port: port})
	}
	slices.SortFunc(seen, func(a, b neighbor) int { return strings.Compare(a.text, b.text) })
	var texts []string
	for _, n := range seen {
		texts = append(texts, n.text)
	}
	got := strings.Join(texts, ", ")
	switch {
	case len(seen) == 1 && seen[0].text == want:
		c.pass(CheckLLDP, name, want)
	case len(seen) == 0:
		c.fail(CheckLLDP, name, "no LLDP neighbor", planned,
			"no LLDP frames arrive on "+here+": check the cable to "+want+" and that LLDP runs on "+u.Peer.Name)
		c.after(portRef(&c.t.sw, CheckLink, u.Port))
	case len(seen) > 1:
		c.fail(CheckLLDP, name, fmt.Sprintf("%d neighbors: %s", len(seen), got), "one: "+planned,
			fmt.Sprintf("more than one device on %s, a point-to-point uplink to %s: something joins the link (an unmanaged switch, a bridge, a tap); remove it and cable %s straight to %s",
				here, want, here, want))
	default:
		c.fail(CheckLLDP, name, got, planned,
			fmt.Sprintf("miswired: %s is cabled to %s, the plan cables it to %s: move the cable at %s to %s (or, if this cabling is the intended one, correct fabric.links[%d] and apply again)",
				here, got, want, here, want, u.Link))
		// One fault, one cause: the same cable shows at the end it
		// reached; two swapped cables show on both their ports.
		if x, port, ok := c.fp.MiswireFrom(&c.t.sw, u, seen[0].sw, seen[0].port); ok {
			c.after(portRef(x, CheckLLDP, port))
		}
	}
}

// bgp checks every planned BGP session of a fabric switch: established,
// under the planned AS on both ends, carrying at least the prefixes the
// plan routes over it.
func (c *checker) bgp() {
	sw := &c.t.sw
	ups := c.fp.Uplinks(sw.Name)
	if len(ups) == 0 {
		return
	}
	out, err := c.send(onyx.ShowBGPSummaryCommand)
	var vrf onyx.BGPVRF
	if err == nil {
		var vrfs []onyx.BGPVRF
		vrfs, err = onyx.ParseBGPSummary(out)
		found := false
		for _, v := range vrfs {
			if v.VRF == "default" {
				vrf, found = v, true
			}
		}
		if err == nil && !found {
			err = errors.New("show ip bgp summary: no VRF default in the output")
		}
	}
	// What each session must carry: the routes the plan has over it.
	carried := map[int][]inventory.FabricRoute{}
	for _, r := range c.fp.Routes(sw) {
		for _, v := range r.Via {
			carried[v.Link] = append(carried[v.Link], r)
		}
	}
	asn := sw.Fabric.ASN
	firstMissing := -1 // the first planned session the table lacks
	for _, u := range ups {
		if !u.Numbered || !u.Remote.IsValid() || u.Peer == nil {
			continue // ONYX peers numbered only: validation gives every ONYX link a /31
		}
		key := u.Remote.Addr().String()
		if err != nil {
			c.unsure(CheckBGP, key, fmt.Sprintf("%v; look by hand: `show ip bgp summary` on %s (the session to %s must be ESTABLISHED), `show protocols | include bgp` (bgp: enabled)", err, sw.Name, key))
			continue
		}
		want := fmt.Sprintf("established with %s (AS %d)", u.Peer.Name, u.Peer.Fabric.ASN)
		n, ok := vrf.Neighbor(u.Remote.Addr())
		peerCmd := "`show ip bgp summary` on " + u.Peer.Name
		if u.Peer.OS() == inventory.OSCumulus {
			peerCmd = "`nv show vrf default router bgp neighbor " + u.Local.Addr().String() + "` on " + u.Peer.Name
		}
		far, _ := c.fp.Far(u)
		cable := []readiness.Ref{portRef(sw, CheckLink, u.Port), portRef(u.Peer, CheckLink, u.PeerPort),
			portRef(sw, CheckLLDP, u.Port), portRef(u.Peer, CheckLLDP, u.PeerPort),
			sessionRef(u.Peer, far), foreignASRef(sw), foreignASRef(u.Peer)}
		neighbor := fmt.Sprintf("router bgp %d vrf default neighbor %s remote-as %d", asn, key, u.Peer.Fabric.ASN)
		switch {
		case !ok:
			c.fail(CheckBGP, key, "no session to "+key+" in `show ip bgp summary`", want,
				applyCommand+", or in config mode: "+neighbor+"; if `show running-config` has it, BGP does not run it: `show protocols | include bgp` must say enabled (`protocol bgp`), then `clear ip bgp all`")
			c.after(foreignASRef(sw))
			if firstMissing >= 0 && len(vrf.Neighbors) == 0 {
				c.after(c.rs[firstMissing].Ref()) // the same BGP process lists no session
			} else if firstMissing < 0 {
				firstMissing = len(c.rs) - 1
			}
		case !n.Established():
			c.fail(CheckBGP, key, quote.Terminal(n.State), want,
				fmt.Sprintf("check %s's BGP (%s) and the link %s ↔ %s (link and lldp checks)", u.Peer.Name, peerCmd, sw.Name+" "+sw.PortName(u.Port), peerEnd(&u)))
			c.after(cable...)
		default:
			c.established(u, key, n, vrf.LocalAS, want, carried[u.Link], cable)
		}
	}
}

// established judges an established session on uplink u: both ends' AS
// as planned (the summary's local AS and the neighbor's AS column), and at
// least the prefixes the plan routes over it (want).
func (c *checker) established(u inventory.Uplink, key string, n onyx.BGPNeighbor, localAS uint32, want string, carried []inventory.FabricRoute, cable []readiness.Ref) {
	sw := &c.t.sw
	found := fmt.Sprintf("established with %s (AS %d)", u.Peer.Name, n.AS)
	if n.PfxRcd >= 0 {
		found += fmt.Sprintf(", %d prefixes received", n.PfxRcd)
	}
	if n.UpDown != "" {
		found += ", up " + quote.Terminal(n.UpDown)
	}
	switch {
	case localAS != 0 && localAS != uint32(sw.Fabric.ASN):
		c.fail(CheckBGP, key, fmt.Sprintf("established, but %s's BGP runs as AS %d", sw.Name, localAS), want+fmt.Sprintf(", %s as AS %d", sw.Name, sw.Fabric.ASN),
			fmt.Sprintf("the switch runs another BGP instance than rdggen's (its config check names it): remove it (no router bgp %d vrf default) and apply, or set switches[].asn: %d for %s", localAS, localAS, sw.Name))
		c.after(foreignASRef(sw))
		return
	case n.AS == 0:
		c.unsure(CheckBGP, key, "established; `show ip bgp summary` shows no AS number for "+key+", so whether the peer is "+want[len("established with "):]+" is not known")
		return
	case n.AS != uint32(u.Peer.Fabric.ASN):
		c.fail(CheckBGP, key, fmt.Sprintf("established with AS %d", n.AS), want,
			fmt.Sprintf("wrong peer: %s %s peers with AS %d at %s, the plan with %s (AS %d, fabric.links[%d]): the lldp check of %s names what is cabled there, and %s's config check whether it runs rdggen's AS",
				sw.Name, sw.PortName(u.Port), n.AS, key, peerEnd(&u), u.Peer.Fabric.ASN, u.Link, sw.PortName(u.Port), u.Peer.Name))
		c.after(cable...)
		return
	}
	if len(carried) == 0 {
		c.pass(CheckBGP, key, found)
		return
	}
	if n.PfxRcd < 0 {
		c.unsure(CheckBGP, key, found+"; `show ip bgp summary` shows no count of prefixes received, so whether the session carries the "+strconv.Itoa(len(carried))+" the plan routes over it is not known")
		return
	}
	if n.PfxRcd >= len(carried) {
		c.pass(CheckBGP, key, found)
		return
	}
	// Fewer than planned: name them, and what they come through.
	var what []string
	var deps []readiness.Ref
	owners := map[string]bool{}
	for _, r := range carried {
		what = append(what, r.Prefix.String())
		if owners[r.Owner.Name] {
			continue
		}
		owners[r.Owner.Name] = true
		if r.Owner.Name != u.Peer.Name {
			// Through the peer (a spine) from the announcing leaf: the
			// spine's sessions to it.
			for _, pu := range c.fp.Uplinks(u.Peer.Name) {
				if pu.Peer != nil && pu.Peer.Name == r.Owner.Name {
					deps = append(deps, sessionRef(u.Peer, pu))
				}
			}
		}
		deps = append(deps, foreignASRef(r.Owner))
	}
	c.fail(CheckBGP, key, found, fmt.Sprintf("%s, at least %d prefixes received: %s", want, len(carried), abbreviatePrefixes(what, 8)),
		fmt.Sprintf("the session is up but carries %d of them: look at what %s announces to %s (`show ip bgp neighbors %s advertised-routes` on %s: its network statements and outbound filters) and, for another switch's prefixes, at %s's sessions to it",
			n.PfxRcd, u.Peer.Name, sw.Name, u.Local.Addr(), u.Peer.Name, u.Peer.Name))
	c.after(deps...)
	c.after(cable...)
}

// abbreviatePrefixes names at most max prefixes, then how many more.
func abbreviatePrefixes(ps []string, max int) string {
	if len(ps) <= max {
		return strings.Join(ps, ", ")
	}
	return strings.Join(ps[:max], ", ") + fmt.Sprintf(" and %d more", len(ps)-max)
}

func (c *checker) pfc(iface onyx.Iface, pfc onyx.PFCStatus, err error) {
	name := iface.ShortName()
	prio := c.inv.RoCE.Priority
	if err != nil {
		c.unsure(CheckPFC, name, err.Error())
		return
	}
	port, listed := pfc.Ports[name]
	var found, fixes []string
	addFix := func(f string) {
		if !slices.Contains(fixes, f) {
			fixes = append(fixes, f)
		}
	}
	if pfc.Enabled() {
		found = append(found, "PFC enabled")
	} else {
		found = append(found, "PFC "+orDash(pfc.Global)+" globally")
		addFix(c.fix(onyx.PFC()))
	}
	if pfc.PriorityEnabled(prio) {
		found = append(found, fmt.Sprintf("priority %d enabled", prio))
	} else {
		found = append(found, fmt.Sprintf("priority %d not enabled (enabled: %s)", prio, orDash(ints(pfc.Priorities))))
		addFix(c.fix(onyx.PFCPriority(prio)))
	}
	switch {
	case !listed:
		found = append(found, name+" not listed")
		addFix(c.fix(onyx.PFCPort(iface)))
	default:
		found = append(found, fmt.Sprintf("%s PFC admin %s, oper %s", name, orDash(port.Admin), orDash(port.Oper)))
		if !strings.EqualFold(port.Admin, "on") {
			addFix(c.fix(onyx.PFCPort(iface)))
		}
	}
	if pfc.Enabled() && pfc.PriorityEnabled(prio) && listed && port.OperEnabled() {
		c.pass(CheckPFC, name, strings.Join(found, ", "))
		return
	}
	fix := strings.Join(fixes, "; ")
	if fix == "" { // configured on everywhere, yet not operational
		fix = "PFC is configured on the port; check its link and the host NIC's PFC settings (DCBX over LLDP)"
	}
	c.fail(CheckPFC, name, strings.Join(found, ", "),
		fmt.Sprintf("PFC enabled, priority %d enabled, %s PFC oper Enabled", prio, name), fix)
}

func (c *checker) pauseCounters(iface onyx.Iface) {
	name := iface.ShortName()
	prio := c.inv.RoCE.Priority
	cmd := onyx.ShowPFCCountersCommand(iface, prio)
	out, err := c.send(cmd)
	if err != nil {
		c.unsure(CheckPauseCounters, name, err.Error())
		return
	}
	pc, err := onyx.ParsePauseCounters(out)
	if err != nil {
		c.unsure(CheckPauseCounters, name, fmt.Sprintf("%q: %v", cmd, err))
		return
	}
	c.pass(CheckPauseCounters, name, fmt.Sprintf("priority %d: %s", prio, pc))
}

func (c *checker) ecn(iface onyx.Iface) {
	name := iface.ShortName()
	r := c.inv.RoCE
	want := onyx.ECN(iface, r.Priority, r.ECNMinKB, r.ECNMaxKB)
	out, err := c.send(onyx.ShowCongestionCommand(iface))
	var cc onyx.Congestion
	if err == nil {
		cc, err = onyx.ParseCongestion(out)
	}
	if err != nil {
		c.unsure(CheckECN, name, err.Error())
		return
	}
	tc, ok := cc.TC(r.Priority)
	if !ok {
		c.unsure(CheckECN, name, fmt.Sprintf("traffic class %d is not in the output of %q", r.Priority, onyx.ShowCongestionCommand(iface)))
		return
	}
	wantText := fmt.Sprintf("traffic class %d: ECN, absolute %d-%d KB", r.Priority, r.ECNMinKB, r.ECNMaxKB)
	found := fmt.Sprintf("traffic class %d: %s", r.Priority, tc)
	if tc.ECN() && tc.ThresholdMode == "absolute" && tc.Min == r.ECNMinKB && tc.Max == r.ECNMaxKB {
		if cc.ECNMarked >= 0 {
			found += fmt.Sprintf(", %d packets marked", cc.ECNMarked)
		}
		c.pass(CheckECN, name, found)
		return
	}
	c.fail(CheckECN, name, found, wantText, c.fix(want))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func ints(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}
