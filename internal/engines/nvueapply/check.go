package nvueapply

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// The checks of `rdggen check --target switch` on a Cumulus switch
// (readiness.Result.Check). Only GET requests are sent.
const (
	// CheckConnect is reported only when the switch could not be read
	// (no mgmt address, TLS, login, the API failed): Unknown, with why.
	CheckConnect = "connect"
	// CheckConfig is the apply plan (Reconcile of the applied
	// configuration, GET /nvue_v1/?rev=applied): passed when nothing is to
	// change, else one failure per NVUE leaf, Subject its path, the fix its
	// `nv set`/`nv unset` command (then `nv config apply`) or `rdggen apply
	// --target switch`. A switch that runs BGP as another AS, to which the
	// plan writes no BGP setting, fails with Subject ForeignASSubject.
	CheckConfig = "config"
	// CheckRoCE compares `nv show qos roce`'s operational view (GET
	// /nvue_v1/qos/roce) with the applied one and the inventory, Subject
	// "mode" (a lossless mode, the applied one), "pfc-priority"
	// (roce.priority), "ecn" (ECN on, thresholds roce.ecn_min_kb and
	// ecn_max_kb within the view's rounding) and "enabled-tc" (the RoCE
	// traffic class marks ECN).
	CheckRoCE = "qos-roce"
	// CheckLink reads each data port's link (GET /nvue_v1/interface, the
	// collection; /interface/swpN for a port it does not show): passed when
	// oper-status is up at the speed the inventory plans for both ends
	// (inventory.FabricPlan.LinkSpeed); a slower or faster link fails
	// naming both ends, a speed that is not shown is Unknown. An
	// administratively down port's fix is `nv set interface swpN link state
	// up` when the applied configuration does not set it up; when it does,
	// the port was set down outside NVUE and the fix says so (`sudo ip link
	// set swpN up` on the switch, then the cable and the far end).
	CheckLink = "link"
	// CheckMTU reads the port's operational MTU: passed when it equals the
	// intent's (the data MTU with its L2 margin, pkg/cumulus), fix `nv set
	// interface swpN link mtu M`.
	CheckMTU = "mtu"
	// CheckPauseCounters reads `nv show interface swpN counters qos
	// pfc-stats` on roce.priority: passed with the pause frames received
	// and sent; Unknown when the switch does not report them. Never
	// failed: pause frames are normal on a lossless fabric.
	CheckPauseCounters = "pause-counters"
	// CheckBGP reads, on a fabric switch (a role), the operational view
	// of the default VRF's BGP neighbors (GET /nvue_v1/vrf/default/router/
	// bgp/neighbor, `nv show vrf default router bgp neighbor`): each
	// planned session (an uplink's port for an unnumbered one, the peer's
	// /31 address for a numbered one) passes when its state is
	// established with the planned peer: its remote-as the peer's planned
	// AS and, where the fabric has that AS more than once (the spines), its
	// peer-hostname the peer's name (not shown: Unknown), Subject the
	// neighbor.
	CheckBGP = "bgp"
	// CheckLLDP compares, on each uplink, the LLDP neighbors the switch
	// sees (`nv show interface <swp> lldp neighbor`: their system names
	// and ports) with the planned end of the link in fabric.links; a
	// miswired link names both ends and the fix, two neighbors or more fail
	// (something joins a point-to-point link).
	CheckLLDP = "lldp"
)

// applyFix is appended to `nv set` fixes: NVUE changes take effect on
// apply.
const applyFix = " && nv config apply"

// Check is `rdggen check --target switch` for the given Cumulus switches,
// Parallel at a time; it changes nothing. err names the switches that could
// not be read (their results say why).
func Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch, o Options) ([]readiness.Result, error) {
	o.defaults()
	names := make([]string, len(sws))
	for i, sw := range sws {
		names[i] = sw.Name
	}
	errs := make([]string, len(sws))
	fp := inv.FabricPlan() // once for every switch: linear in the fabric
	results, _ := driver.Check(names, o.Parallel, o.Track, fmt.Sprintf("checking %d Cumulus switch(es), read-only", len(sws)),
		func(i int) ([]readiness.Result, error) {
			var rs []readiness.Result
			rs, errs[i] = checkSwitch(ctx, inv, fp, sws[i], o)
			return rs, nil
		})
	var out []readiness.Result
	var failed []string
	for i := range sws {
		out = append(out, results[i]...)
		if errs[i] != "" {
			failed = append(failed, errs[i])
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("%d of %d Cumulus switch(es) could not be checked: %s", len(failed), len(sws), strings.Join(failed, "; "))
	}
	return out, nil
}

type checker struct {
	ctx    context.Context
	inv    *inventory.Inventory
	fp     *inventory.FabricPlan
	sw     inventory.Switch
	c      *Client
	intent Tree
	// applied is the switch's applied configuration (GET
	// /nvue_v1/?rev=applied).
	applied Tree
	rs      []readiness.Result
}

func (k *checker) pass(check, subject, found string) {
	k.rs = append(k.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: k.sw.Name, Check: check, Subject: subject, Status: readiness.Passed, Found: found})
}

func (k *checker) fail(check, subject, found, expected, fix string) {
	k.rs = append(k.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: k.sw.Name, Check: check, Subject: subject, Status: readiness.Failed, Found: found, Expected: expected, Fix: fix})
}

func (k *checker) unsure(check, subject, why string) {
	k.rs = append(k.rs, readiness.Result{Target: readiness.TargetSwitch, Machine: k.sw.Name, Check: check, Subject: subject, Status: readiness.Unknown, Found: why})
}

// after makes the last result follow from refs (readiness.Causes).
func (k *checker) after(refs ...readiness.Ref) {
	last := &k.rs[len(k.rs)-1]
	last.After = last.After.Add(refs...)
}

func checkSwitch(ctx context.Context, inv *inventory.Inventory, fp *inventory.FabricPlan, sw inventory.Switch, o Options) ([]readiness.Result, string) {
	t := prepare(ctx, inv, sw, o)
	if t.client != nil {
		defer t.client.Close()
	}
	k := &checker{ctx: ctx, inv: inv, fp: fp, sw: sw, c: t.client, intent: t.intent, applied: t.applied}
	if t.res.Err != nil && len(t.res.Awaiting) == 0 {
		k.unsure(CheckConnect, "", t.res.errText())
		return k.rs, t.res.errText()
	}
	provisional := len(t.res.Awaiting) > 0
	if t.revErr != nil {
		// A revision awaiting its confirmation cannot be ruled out.
		provisional = true
		k.unsure(CheckConfig, "revisions", "GET /nvue_v1/revision: "+t.revErr.Error()+": whether a revision awaits its confirmation (and the switch will roll back what it runs) is not known")
	}
	for _, id := range t.res.Awaiting {
		// What the switch runs may roll back any moment: nothing of the
		// configuration passes until the revision is confirmed or gone.
		k.fail(CheckConfig, "revision "+quote.Terminal(id), "applied, awaiting its confirmation: the switch rolls it back when its confirm window ends unless it is confirmed (NVUE does not show when)",
			"no revision awaiting confirmation", "confirm it on the switch (`nv config apply "+quote.Terminal(id)+" --confirm-yes`) to keep it, or wait for the rollback; then check again")
	}
	drift := 0
	for _, c := range t.res.Plan.Changes {
		if c.IsRecord() {
			// rdggen's bookkeeping, not the switch's behaviour (a switch
			// configured from switch/<name>.sh has none).
			k.pass(CheckConfig, c.Key(), "rdggen's record of what it wrote is "+cumulus.LeafText(c.From, c.From != nil)+"; the next `rdggen apply --target switch` writes "+cumulus.LeafText(c.To, c.To != nil))
			continue
		}
		drift++
		k.fail(CheckConfig, c.Key(), cumulus.LeafText(c.From, c.From != nil), cumulus.LeafText(c.To, c.To != nil), c.Command()+applyFix+" (or rdggen apply --target switch)")
	}
	if k.foreignAS(t.applied) {
		drift++
	}
	if drift == 0 && !provisional {
		k.pass(CheckConfig, "", "the applied configuration has every NVUE setting rdggen owns")
	}
	for _, kept := range t.res.Plan.Kept {
		k.pass(CheckConfig, cumulus.PathString(kept.Path), kept.Reason+"; to remove it: "+kept.Command)
	}
	k.roce(t.applied)
	k.ports()
	if sw.Fabric.Role != "" {
		k.bgp()
		k.bfd() // check_bfd.go
		k.routes()
	}
	return k.rs, ""
}

// roce compares the operational qos roce with the applied one and the
// inventory.
func (k *checker) roce(applied Tree) {
	op, err := k.c.GetTree(k.ctx, []string{"qos", "roce"}, "")
	if err != nil {
		k.unsure(CheckRoCE, "", "GET /nvue_v1/qos/roce: "+err.Error())
		return
	}
	wantMode := "lossless"
	if m, ok := cumulus.Lookup(k.intent, []string{"qos", "roce", "mode"}); ok {
		wantMode = fmt.Sprint(m)
	}
	appliedMode := "(none)"
	if cfg, ok := cumulus.Lookup(applied, []string{"qos", "roce"}); ok {
		appliedMode = "lossless" // `nv set qos roce` alone
		if m, ok := cfg.(map[string]any)["mode"].(string); ok {
			appliedMode = m
		}
		// `qos roce enable off`, or `qos roce state disabled` from 5.15.
		if e, _ := cfg.(map[string]any)["enable"].(string); e == "off" {
			appliedMode = "(off)"
		}
		if e, _ := cfg.(map[string]any)["state"].(string); e == "disabled" {
			appliedMode = "(off)"
		}
	}
	fixMode := cumulus.NVCommand([]string{"qos", "roce", "mode"}, wantMode) + applyFix
	opMode, _ := op["mode"].(string)
	switch {
	case opMode != wantMode:
		k.fail(CheckRoCE, "mode", fmt.Sprintf("operational %s, applied %s", orDash(opMode), appliedMode), wantMode, fixMode)
	case appliedMode != opMode:
		k.fail(CheckRoCE, "mode", fmt.Sprintf("operational %s, applied %s", opMode, appliedMode), "operational = applied = "+wantMode,
			"the data plane did not follow the applied configuration: "+fixMode+", then see `nv show qos roce` and the switchd log")
	default:
		k.pass(CheckRoCE, "mode", opMode)
	}
	roceTC := strconv.Itoa(k.inv.RoCE.Priority)
	if pfc, _ := op["pfc"].(map[string]any); pfc != nil && fmt.Sprint(pfc["pfc-priority"]) == roceTC {
		k.pass(CheckRoCE, "pfc-priority", roceTC)
	} else {
		found := "PFC off"
		if pfc != nil {
			found = "PFC on priority " + fmt.Sprint(pfc["pfc-priority"])
		}
		k.fail(CheckRoCE, "pfc-priority", found, "PFC on switch priority "+roceTC, fixMode)
	}
	cc, _ := op["congestion-control"].(map[string]any)
	minKB, okMin := kilobytes(cc["min-threshold"])
	maxKB, okMax := kilobytes(cc["max-threshold"])
	mode, _ := cc["congestion-mode"].(string)
	wantECN := fmt.Sprintf("ECN, %d KB-%d KB", k.inv.RoCE.ECNMinKB, k.inv.RoCE.ECNMaxKB)
	switch {
	case cc == nil || !strings.EqualFold(mode, "ECN") || !okMin || !okMax:
		k.fail(CheckRoCE, "ecn", fmt.Sprintf("congestion-mode %s, min %v, max %v", orDash(mode), cc["min-threshold"], cc["max-threshold"]), wantECN, fixMode)
	case !near(minKB, k.inv.RoCE.ECNMinKB, cc["min-threshold"]) || !near(maxKB, k.inv.RoCE.ECNMaxKB, cc["max-threshold"]):
		k.fail(CheckRoCE, "ecn", fmt.Sprintf("ECN, %v-%v", cc["min-threshold"], cc["max-threshold"]), wantECN,
			"the qos roce template marks at 150 KB-1500 KB: set roce.ecn_min_kb/ecn_max_kb to those, or configure a qos congestion-control profile by hand")
	default:
		k.pass(CheckRoCE, "ecn", ecnFound(k.inv.RoCE.ECNMinKB, k.inv.RoCE.ECNMaxKB, cc["min-threshold"], cc["max-threshold"]))
	}
	tcs := strings.Split(strings.ReplaceAll(fmt.Sprint(cc["enabled-tc"]), " ", ""), ",")
	if cc != nil && slices.Contains(tcs, roceTC) {
		k.pass(CheckRoCE, "enabled-tc", fmt.Sprint(cc["enabled-tc"]))
	} else {
		k.fail(CheckRoCE, "enabled-tc", fmt.Sprintf("%v", cc["enabled-tc"]), "traffic class "+roceTC+" among them", fixMode)
	}
}

// ecnFound is a passed ECN check's finding in KB, the unit of the
// inventory and cluster.txt: the thresholds passed because the switch's
// display equals the inventory's KB within its rounding, so those are
// given, with the display beside them when it differs ("ECN, 150 KB-1500
// KB (shown rounded as 150.00 KB-1.46 MB)").
func ecnFound(minKB, maxKB int, shownMin, shownMax any) string {
	s := fmt.Sprintf("ECN, %d KB-%d KB", minKB, maxKB)
	if shown := fmt.Sprintf("%v-%v", shownMin, shownMax); shown != fmt.Sprintf("%d KB-%d KB", minKB, maxKB) {
		s += " (shown rounded as " + shown + ")"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// kilobytes reads a threshold as `nv show qos roce` prints it ("150.00
// KB", "1.46 MB", binary units) or a number of bytes.
func kilobytes(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x) / 1024, true
	case float64:
		return x / 1024, true
	case string:
		f := strings.Fields(x)
		if len(f) != 2 {
			return 0, false
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, false
		}
		switch strings.ToUpper(f[1]) {
		case "B":
			return n / 1024, true
		case "KB":
			return n, true
		case "MB":
			return n * 1024, true
		}
	}
	return 0, false
}

// near compares a threshold read in its displayed precision with want KB:
// "1.46 MB" is 1495 KB, within the 0.005 MB the display rounds to.
func near(got float64, want int, shown any) bool {
	tol := 0.5
	if s, ok := shown.(string); ok && strings.HasSuffix(strings.ToUpper(s), "MB") {
		tol = 0.005 * 1024
	}
	return math.Abs(got-float64(want)) <= tol+1e-9
}

// ForeignASSubject is the Subject of the CheckConfig failure of a switch
// that runs BGP as another AS than the plan's (its `router bgp
// autonomous-system`, the NVUE path): apply then writes no BGP setting
// there (pkg/cumulus's Reconcile), so the check fails rather than pass a
// configuration without rdggen's BGP. onyxapply.ForeignASSubject is the
// same for ONYX.
const ForeignASSubject = "router.bgp.autonomous-system"

// onyxForeignASSubject is onyxapply.ForeignASSubject, the Subject an ONYX
// peer's foreign-AS finding has (the engines do not import each other).
const onyxForeignASSubject = "router bgp"

// foreignASRef names the foreign-AS finding switch x would have.
func foreignASRef(x *inventory.Switch) readiness.Ref {
	if x.OS() == inventory.OSCumulus {
		return readiness.Ref{Machine: x.Name, Check: CheckConfig, Subject: ForeignASSubject}
	}
	return readiness.Ref{Machine: x.Name, Check: CheckConfig, Subject: onyxForeignASSubject}
}

// foreignAS fails the configuration of a fabric switch whose applied
// configuration runs BGP as another AS than the plan's, and reports
// whether it did.
func (k *checker) foreignAS(applied Tree) bool {
	path := []string{"router", "bgp", "autonomous-system"}
	have, ok := cumulus.Lookup(applied, path)
	want, wanted := cumulus.Lookup(k.intent, path)
	if !ok || !wanted || cumulus.JSONEqual(have, want) {
		return false
	}
	k.fail(CheckConfig, ForeignASSubject, fmt.Sprintf("BGP runs as AS %s: rdggen writes none of its BGP settings here (neighbors, networks, router-id)", cumulus.LeafText(have, true)),
		fmt.Sprintf("AS %s (%s's, the inventory's) with rdggen's BGP settings", cumulus.LeafText(want, true), k.sw.Name),
		fmt.Sprintf("if the switch's BGP is yours, set switches[].asn: %s for %s in the inventory and apply again; else %s%s, then rdggen apply --target switch",
			cumulus.LeafText(have, true), k.sw.Name, cumulus.NVCommand(path, want), applyFix))
	return true
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

// ports checks each data port and, on a fabric switch, each uplink: link
// (state and speed), MTU, pause counters, and on an uplink its LLDP
// neighbors. The interfaces are read with one GET of the collection
// (`nv show interface`); a port the collection shows without its link,
// LLDP or counters is read by itself.
func (k *checker) ports() {
	uplinks := map[string]inventory.Uplink{}
	ports := cumulus.DataPorts(k.inv, k.sw)
	for _, u := range k.fp.Uplinks(k.sw.Name) {
		uplinks[k.sw.PortName(u.Port)] = u
		ports = append(ports, u.Port)
	}
	if len(ports) == 0 {
		return
	}
	all, allErr := k.c.GetTree(k.ctx, []string{"interface"}, "")
	for _, p := range ports {
		name := k.sw.PortName(p)
		u, isUplink := uplinks[name]
		ifc, _ := all[name].(map[string]any)
		if _, hasLink := ifc["link"].(map[string]any); allErr != nil || !hasLink || isUplink && ifc["lldp"] == nil {
			one, err := k.c.GetTree(k.ctx, []string{"interface", name}, "")
			if err != nil {
				checks := []string{CheckLink, CheckMTU, CheckPauseCounters}
				if isUplink {
					checks = append(checks, CheckLLDP)
				}
				for _, c := range checks {
					k.unsure(c, name, err.Error()) // the error names the request
				}
				continue
			}
			ifc = one
		}
		link, _ := ifc["link"].(map[string]any)
		var up *inventory.Uplink
		if isUplink {
			up = &u
		}
		k.link(p, link, up)
		want, ok := cumulus.Lookup(k.intent, []string{"interface", name, "link", "mtu"})
		if !ok {
			want = int64(9216)
		}
		if cumulus.JSONEqual(link["mtu"], want) {
			k.pass(CheckMTU, name, fmt.Sprint(link["mtu"]))
		} else {
			fix := cumulus.NVCommand([]string{"interface", name, "link", "mtu"}, want) + applyFix
			if isUplink {
				fix += fmt.Sprintf("; every hop of the fabric carries MTU %v, %s too (a smaller hop drops large RoCE frames while pings pass)", want, peerEnd(u))
			}
			k.fail(CheckMTU, name, fmt.Sprint(link["mtu"]), fmt.Sprint(want), fix)
		}
		k.pause(name, ifc)
		if isUplink {
			k.lldp(name, u, ifc)
		}
	}
}

// link judges port p's link state and speed (up at the speed the plan
// gives both ends; uplink u, or nil for a host port).
func (k *checker) link(p inventory.Port, link map[string]any, u *inventory.Uplink) {
	name := k.sw.PortName(p)
	oper, _ := link["oper-status"].(string)
	admin, _ := link["admin-status"].(string)
	if st, ok := link["state"].(map[string]any); ok && oper == "" && len(st) == 1 {
		// Before 5.11 the operational link state is link.state's one
		// key (a public NVUE client reads it so: docs/nvue.md).
		for k := range st {
			oper = k
		}
	}
	noLink := "the port is enabled but has no link: check the cable and the host's NIC (its data port)"
	if u != nil {
		noLink = fmt.Sprintf("the port is enabled but has no link: check the cable to %s and that port there (fabric.links[%d])", peerEnd(*u), u.Link)
	}
	switch {
	case oper == "up":
		want, basis := k.fp.LinkSpeed(&k.sw, p)
		shown, _ := link["speed"].(string)
		v := judgeSpeed(shown, want, basis, "`nv show interface "+name+" link` on "+k.sw.Name)
		switch v.status {
		case readiness.Passed:
			k.pass(CheckLink, name, v.found)
		case readiness.Unknown:
			k.unsure(CheckLink, name, v.found)
		default:
			where := fmt.Sprintf("the cable and optics to %s, the port's speed setting (`nv show interface %s link`) and the NIC's", hostNames(k.fp.Hosts(k.sw.Name), p), name)
			if u != nil {
				where = fmt.Sprintf("the link %s %s ↔ %s: the cable and the optics at both ends, and the speed set on each port (%s, and on %s)",
					k.sw.Name, name, peerEnd(*u), "`nv show interface "+name+" link` here", u.Peer.Name)
			}
			k.fail(CheckLink, name, v.found, v.expected, fmt.Sprintf(v.fixed, where))
			if u != nil {
				k.after(portRef(u.Peer, CheckLink, u.PeerPort))
			}
		}
	case admin == "down" && k.appliedUp(name):
		// NVUE's configuration says up, so `nv set … link state up`
		// changes nothing: the port was set down outside NVUE, which
		// does not track Linux commands such as ip link set or ifdown
		// (Cumulus Linux user guide, "NVUE CLI"), and NVUE documents no
		// action that brings a port up.
		cable := "the cable and the host's NIC (its data port)"
		if u != nil {
			cable = fmt.Sprintf("the cable to %s and that port there (fabric.links[%d])", peerEnd(*u), u.Link)
		}
		k.fail(CheckLink, name, "administratively down", "up", fmt.Sprintf(
			"NVUE's applied configuration already sets %s up (`nv set interface %s link state up` changes nothing): the port was set down outside NVUE (`ip link set %s down` or `ifdown %s` on the switch); bring it up there with `sudo ip link set %s up`, and if it stays without link, check %s",
			name, name, name, name, name, cable))
	case admin == "down":
		k.fail(CheckLink, name, "administratively down", "up", cumulus.NVCommand([]string{"interface", name, "link", "state", "up"}, map[string]any{})+applyFix)
	default:
		k.fail(CheckLink, name, "down ("+orDash(oper)+")", "up", noLink)
		if u != nil {
			// One cable, two ends: the far end's finding (an
			// administratively down port there) may be the cause.
			k.after(portRef(u.Peer, CheckLink, u.PeerPort))
		}
	}
}

// appliedUp tells whether the switch's applied configuration sets port
// name's link state up (`interface swpN link state up`, the form rdggen
// writes: docs/rules.md).
func (k *checker) appliedUp(name string) bool {
	st, _ := cumulus.Lookup(k.applied, []string{"interface", name, "link", "state"})
	m, _ := st.(map[string]any)
	_, up := m["up"]
	_, down := m["down"]
	return up && !down
}

// hostNames names the hosts on port p ("h11 (esx-11.example vmnic4)").
func hostNames(hs []*inventory.Host, p inventory.Port) string {
	var out []string
	for _, h := range hs {
		if h.Data.Port == p {
			out = append(out, fmt.Sprintf("%s (%s %s)", h.Name, h.ESXi, h.NIC.PF))
		}
	}
	return strings.Join(out, ", ")
}

// speedVerdict is a judged link speed; fixed holds one %s for where to
// look.
type speedVerdict struct {
	status                 readiness.Status
	found, expected, fixed string
}

// judgeSpeed compares the speed a switch shows for an up link (NVUE's
// "400G", ONYX's "400 Gbps") with the plan's, want Gb/s (basis says what
// it follows from; 0: the plan gives none). look is the command that
// shows the port's speed.
func judgeSpeed(shown string, want int, basis, look string) speedVerdict {
	if want == 0 {
		found := "up"
		if shown != "" {
			found += ", " + quote.Terminal(shown)
		}
		return speedVerdict{status: readiness.Passed, found: found + " (the inventory gives this port no speed to compare)"}
	}
	gbps, ok := parseSpeed(shown)
	if !ok {
		what := "shows no speed"
		if shown != "" {
			what = fmt.Sprintf("shows the speed %q, which rdggen cannot read", quote.Terminal(shown))
		}
		return speedVerdict{status: readiness.Unknown, found: fmt.Sprintf("up; the switch %s, so whether the link runs at the planned %d Gb/s (%s) is not known: see %s", what, want, basis, look)}
	}
	if math.Abs(gbps-float64(want)) < 0.01 {
		return speedVerdict{status: readiness.Passed, found: "up, " + quote.Terminal(shown)}
	}
	v := speedVerdict{status: readiness.Failed, found: "up, " + quote.Terminal(shown), expected: fmt.Sprintf("up at %d Gb/s (%s)", want, basis)}
	if gbps < float64(want) {
		v.fixed = "the link runs slower than both ends allow (RoCE bandwidth and the benchmarks' pass lines follow the planned speed): check %s"
	} else {
		v.fixed = "the link runs faster than the inventory plans: if the hardware is faster, correct the inventory (hosts' nic.speed_gbps, switches[].model) so that bench judges against it; else check %s"
	}
	return v
}

// parseSpeed reads a link speed in Gb/s: NVUE's "100G", "2.5G", "100M",
// ONYX's "100 Gbps", "10 Mbps", "1.6 Tbps".
func parseSpeed(s string) (float64, bool) {
	t := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "BPS"), "B/S")
	if t == "" {
		return 0, false
	}
	scale := 0.0
	switch t[len(t)-1] {
	case 'T':
		scale = 1000
	case 'G':
		scale = 1
	case 'M':
		scale = 0.001
	default:
		return 0, false
	}
	n, err := strconv.ParseFloat(t[:len(t)-1], 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n * scale, true
}

// peerEnd is the far end of uplink u: "spine1 swp1".
func peerEnd(u inventory.Uplink) string {
	if u.Peer == nil {
		return "?"
	}
	return u.Peer.Name + " " + u.Peer.PortName(u.PeerPort)
}

// lldp compares uplink name's LLDP neighbors with the plan: one neighbor,
// the planned end of the link.
func (k *checker) lldp(name string, u inventory.Uplink, ifc Tree) {
	want := peerEnd(u)
	nbs, present := cumulus.Lookup(ifc, []string{"lldp", "neighbor"})
	m, _ := nbs.(map[string]any)
	if !present {
		if _, lldpOn := ifc["lldp"]; !lldpOn {
			k.unsure(CheckLLDP, name, "GET /nvue_v1/interface/"+name+" has no lldp view: is LLDP running (`nv show service lldp`)?")
			return
		}
	}
	type neighbor struct {
		text string
		sw   *inventory.Switch
		port string
	}
	var seen []neighbor
	for _, id := range sortedKeys(m) {
		v := m[id]
		sys, _ := cumulus.Lookup(Tree{"n": v}, []string{"n", "chassis", "system-name"})
		port, hasPort := cumulus.Lookup(Tree{"n": v}, []string{"n", "port", "name"})
		if !hasPort {
			// The view's shape is inferred (docs/nvue.md): say what was
			// read rather than call the link miswired.
			k.unsure(CheckLLDP, name, fmt.Sprintf("the LLDP neighbor %q is shown without port.name; compare `nv show interface %s lldp neighbor` with %s by hand", quote.Terminal(id), name, want))
			return
		}
		sysName := fmt.Sprint(sys)
		if sys == nil {
			sysName = id
		}
		seen = append(seen, neighbor{text: quote.Terminal(sysName + " " + fmt.Sprint(port)), sw: k.inv.Switch(sysName), port: fmt.Sprint(port)})
	}
	slices.SortFunc(seen, func(a, b neighbor) int { return strings.Compare(a.text, b.text) })
	here := k.sw.Name + " " + name
	planned := want + " (fabric.links[" + strconv.Itoa(u.Link) + "])"
	var texts []string
	for _, n := range seen {
		texts = append(texts, n.text)
	}
	got := strings.Join(texts, ", ")
	switch {
	case len(seen) == 1 && seen[0].text == want:
		k.pass(CheckLLDP, name, want)
	case len(seen) == 0:
		k.fail(CheckLLDP, name, "no LLDP neighbor", planned,
			"no LLDP frames arrive on "+here+": check the cable to "+want+" and that LLDP runs on "+u.Peer.Name)
		k.after(portRef(&k.sw, CheckLink, u.Port))
	case len(seen) > 1:
		k.fail(CheckLLDP, name, fmt.Sprintf("%d neighbors: %s", len(seen), got), "one: "+planned,
			fmt.Sprintf("more than one device on %s, a point-to-point uplink to %s: something joins the link (an unmanaged switch, a bridge, a tap); remove it and cable %s straight to %s",
				here, want, here, want))
	default:
		k.fail(CheckLLDP, name, got, planned,
			fmt.Sprintf("miswired: %s is cabled to %s, the plan cables it to %s: move the cable at %s to %s (or, if this cabling is the intended one, correct fabric.links[%d] and apply again)",
				here, got, want, here, want, u.Link))
		// One fault, one cause: the same cable shows at the end it
		// reached; two swapped cables show on both their ports.
		if x, port, ok := k.fp.MiswireFrom(&k.sw, u, seen[0].sw, seen[0].port); ok {
			k.after(portRef(x, CheckLLDP, port))
		}
	}
}

// bgp checks every planned BGP session of a fabric switch: established,
// with the planned peer (its AS, and its host name where the AS is shared).
func (k *checker) bgp() {
	const path = "/nvue_v1/vrf/default/router/bgp/neighbor"
	op, err := k.c.GetTree(k.ctx, []string{"vrf", "default", "router", "bgp", "neighbor"}, "")
	firstDead := -1 // the first session of a BGP daemon that does not answer
	for _, u := range k.fp.Uplinks(k.sw.Name) {
		if u.Peer == nil {
			continue
		}
		key := u.Neighbor(k.sw)
		far, _ := k.fp.Far(u)
		peerKey := far.Neighbor(*u.Peer)
		if err != nil {
			k.unsure(CheckBGP, key, "GET "+path+": "+err.Error())
			continue
		}
		want := fmt.Sprintf("established with %s (AS %d)", u.Peer.Name, u.Peer.Fabric.ASN)
		entry, _ := op[key].(map[string]any)
		state, _ := entry["state"].(string)
		peerCmd := "`nv show vrf default router bgp neighbor " + peerKey + "` on " + u.Peer.Name
		if u.Peer.OS() != inventory.OSCumulus {
			peerCmd = "`show ip bgp summary` on " + u.Peer.Name
		}
		// What a session follows from: both ends' link and LLDP, the
		// peer's end of the session, either end's foreign AS.
		cable := []readiness.Ref{portRef(&k.sw, CheckLink, u.Port), portRef(u.Peer, CheckLink, u.PeerPort),
			portRef(&k.sw, CheckLLDP, u.Port), portRef(u.Peer, CheckLLDP, u.PeerPort),
			sessionRef(u.Peer, far), foreignASRef(&k.sw), foreignASRef(u.Peer)}
		switch {
		case entry == nil:
			k.fail(CheckBGP, key, "not configured", want, cumulus.NVCommand([]string{"vrf", "default", "router", "bgp", "neighbor", key}, map[string]any{})+" (or rdggen apply --target switch)")
			k.after(foreignASRef(&k.sw))
		case strings.EqualFold(state, "established"):
			k.established(u, key, entry, want)
			k.after(cable...)
		case state == "":
			k.fail(CheckBGP, key, "no session state: the switch's BGP daemon does not answer", want,
				"on "+k.sw.Name+": `sudo systemctl restart frr` (bgpd), then `nv show vrf default router bgp neighbor "+key+"`")
			if firstDead >= 0 {
				k.after(k.rs[firstDead].Ref()) // the same daemon
			} else {
				firstDead = len(k.rs) - 1
			}
		default:
			k.fail(CheckBGP, key, state, want,
				fmt.Sprintf("check %s's BGP (%s) and the link %s %s ↔ %s (link and lldp checks)", u.Peer.Name, peerCmd, k.sw.Name, k.sw.PortName(u.Port), peerEnd(u)))
			k.after(cable...)
		}
	}
}

// established judges an established session on uplink u: its peer's AS
// must be the planned peer's, and where that AS is shared (the spines')
// its host name too.
func (k *checker) established(u inventory.Uplink, key string, entry map[string]any, want string) {
	rx, _ := cumulus.Lookup(entry, []string{"address-family", "ipv4-unicast", "rx-prefix"})
	host, _ := entry["peer-hostname"].(string)
	host = quote.Terminal(host)
	as, asOK := asNumber(entry["remote-as"])
	peer := fmt.Sprintf("%s (AS %v)", orDash(host), quote.Terminal(fmt.Sprint(entry["remote-as"])))
	found := fmt.Sprintf("established with %s, %v prefixes received", peer, rx)
	here := k.sw.Name + " " + k.sw.PortName(u.Port)
	wrong := fmt.Sprintf("%s peers with %s, the plan with %s (fabric.links[%d]): the lldp check of %s names what is cabled there; move the cable to %s, or correct fabric.links and apply again",
		here, peer, peerEnd(u), u.Link, k.sw.PortName(u.Port), peerEnd(u))
	switch {
	case !asOK:
		k.unsure(CheckBGP, key, fmt.Sprintf("established; the view shows remote-as %q, not the peer's AS number, so whether the peer is %s is not known (`nv show vrf default router bgp neighbor %s`)",
			quote.Terminal(fmt.Sprint(entry["remote-as"])), want[len("established with "):], key))
	case as != int64(u.Peer.Fabric.ASN):
		k.fail(CheckBGP, key, found, want, "wrong peer: "+wrong)
	case host != "" && host != u.Peer.Name:
		k.fail(CheckBGP, key, found, want, "wrong peer: "+wrong)
	case host == "" && k.fp.SharedASN(u.Peer.Fabric.ASN):
		k.unsure(CheckBGP, key, fmt.Sprintf("established with AS %d, which more than one switch of the fabric has; the view shows no peer-hostname, so whether the peer is %s is not known (the lldp check of %s names what is cabled there)",
			as, u.Peer.Name, k.sw.PortName(u.Port)))
	default:
		k.pass(CheckBGP, key, found)
	}
}

// asNumber reads an AS number as NVUE shows it (a number, or its digits).
func asNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case float64:
		return int64(x), x == math.Trunc(x)
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// pause reads the pause counters of port name on roce.priority from its
// interface view, or, when that view holds no counters, from `nv show
// interface <name> counters qos pfc-stats`.
func (k *checker) pause(name string, ifc Tree) {
	stats, ok := cumulus.Lookup(ifc, []string{"counters", "qos", "pfc-stats"})
	m, _ := stats.(map[string]any)
	if !ok || m == nil {
		var err error
		m, err = k.c.GetTree(k.ctx, []string{"interface", name, "counters", "qos", "pfc-stats"}, "")
		if err != nil {
			k.unsure(CheckPauseCounters, name, err.Error()) // the error names the request
			return
		}
	}
	prio, _ := cumulus.Lookup(m, []string{"switch-priority", strconv.Itoa(k.inv.RoCE.Priority)})
	pm, _ := prio.(map[string]any)
	rx, okRx := pm["rx-pause-frames"].(int64)
	tx, okTx := pm["tx-pause-frames"].(int64)
	if !okRx || !okTx {
		k.unsure(CheckPauseCounters, name, fmt.Sprintf("the switch reports no pause frames for switch priority %d", k.inv.RoCE.Priority))
		return
	}
	k.pass(CheckPauseCounters, name, fmt.Sprintf("priority %d: %d pause frames received, %d sent", k.inv.RoCE.Priority, rx, tx))
}
