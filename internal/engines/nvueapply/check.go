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
	// --target switch`.
	CheckConfig = "config"
	// CheckRoCE compares `nv show qos roce`'s operational view (GET
	// /nvue_v1/qos/roce) with the applied one and the inventory, Subject
	// "mode" (a lossless mode, the applied one), "pfc-priority"
	// (roce.priority), "ecn" (ECN on, thresholds roce.ecn_min_kb and
	// ecn_max_kb within the view's rounding) and "enabled-tc" (the RoCE
	// traffic class marks ECN).
	CheckRoCE = "qos-roce"
	// CheckLink reads each data port's link (GET /nvue_v1/interface/swpN):
	// passed when oper-status is up; an administratively down port's fix is
	// `nv set interface swpN link state up`.
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
	// established, Subject the neighbor.
	CheckBGP = "bgp"
	// CheckLLDP compares, on each uplink, the LLDP neighbor the switch
	// sees (`nv show interface <swp> lldp neighbor`: its system name and
	// port) with the planned end of the link in fabric.links; a miswired
	// link names both ends and the fix.
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
	results, _ := driver.Check(names, o.Parallel, o.Track, fmt.Sprintf("checking %d Cumulus switch(es), read-only", len(sws)),
		func(i int) ([]readiness.Result, error) {
			var rs []readiness.Result
			rs, errs[i] = checkSwitch(ctx, inv, sws[i], o)
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
	sw     inventory.Switch
	c      *Client
	intent Tree
	rs     []readiness.Result
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

func checkSwitch(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) ([]readiness.Result, string) {
	t := prepare(ctx, inv, sw, o)
	if t.client != nil {
		defer t.client.Close()
	}
	k := &checker{ctx: ctx, inv: inv, sw: sw, c: t.client, intent: t.intent}
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

// ports checks each data port and, on a fabric switch, each uplink: link,
// MTU, pause counters, and on an uplink its LLDP neighbor.
func (k *checker) ports() {
	uplinks := map[string]inventory.Uplink{}
	ports := cumulus.DataPorts(k.inv, k.sw)
	for _, u := range k.inv.Uplinks(k.sw.Name) {
		uplinks[k.sw.PortName(u.Port)] = u
		ports = append(ports, u.Port)
	}
	for _, p := range ports {
		name := k.sw.PortName(p)
		u, isUplink := uplinks[name]
		ifc, err := k.c.GetTree(k.ctx, []string{"interface", name}, "")
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
		link, _ := ifc["link"].(map[string]any)
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
		if isUplink {
			noLink = fmt.Sprintf("the port is enabled but has no link: check the cable to %s and that port there (fabric.links[%d])", peerEnd(u), u.Link)
		}
		switch {
		case oper == "up":
			found := "up"
			if speed, ok := link["speed"]; ok && speed != nil {
				found = fmt.Sprintf("up, %v", speed)
			}
			k.pass(CheckLink, name, found)
		case admin == "down":
			k.fail(CheckLink, name, "administratively down", "up", cumulus.NVCommand([]string{"interface", name, "link", "state", "up"}, map[string]any{})+applyFix)
		default:
			k.fail(CheckLink, name, "down ("+orDash(oper)+")", "up", noLink)
		}
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
		k.pause(name)
		if isUplink {
			k.lldp(name, u, ifc)
		}
	}
}

// peerEnd is the far end of uplink u: "spine1 swp1".
func peerEnd(u inventory.Uplink) string {
	if u.Peer == nil {
		return "?"
	}
	return u.Peer.Name + " " + u.Peer.PortName(u.PeerPort)
}

// lldp compares uplink name's LLDP neighbor with the plan.
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
	var seen []string
	for id, v := range m {
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
		seen = append(seen, quote.Terminal(sysName+" "+fmt.Sprint(port)))
	}
	slices.Sort(seen)
	here := k.sw.Name + " " + name
	switch {
	case len(seen) == 1 && seen[0] == want:
		k.pass(CheckLLDP, name, want)
	case len(seen) == 0:
		k.fail(CheckLLDP, name, "no LLDP neighbor", want+" (fabric.links["+strconv.Itoa(u.Link)+"])",
			"no LLDP frames arrive on "+here+": check the cable to "+want+" and that LLDP runs on "+u.Peer.Name)
	default:
		got := strings.Join(seen, ", ")
		k.fail(CheckLLDP, name, got, want+" (fabric.links["+strconv.Itoa(u.Link)+"])",
			fmt.Sprintf("miswired: %s is cabled to %s, the plan cables it to %s: move the cable at %s to %s (or, if this cabling is the intended one, correct fabric.links[%d] and apply again)",
				here, got, want, here, want, u.Link))
	}
}

// bgp checks every planned BGP session of a fabric switch.
func (k *checker) bgp() {
	const path = "/nvue_v1/vrf/default/router/bgp/neighbor"
	op, err := k.c.GetTree(k.ctx, []string{"vrf", "default", "router", "bgp", "neighbor"}, "")
	for _, u := range k.inv.Uplinks(k.sw.Name) {
		key, peerKey := k.sw.PortName(u.Port), u.Peer.PortName(u.PeerPort)
		if u.Numbered {
			key, peerKey = u.Remote.Addr().String(), u.Local.Addr().String()
		}
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
		switch {
		case entry == nil:
			k.fail(CheckBGP, key, "not configured", want, cumulus.NVCommand([]string{"vrf", "default", "router", "bgp", "neighbor", key}, map[string]any{})+" (or rdggen apply --target switch)")
		case strings.EqualFold(state, "established"):
			rx, _ := cumulus.Lookup(entry, []string{"address-family", "ipv4-unicast", "rx-prefix"})
			k.pass(CheckBGP, key, fmt.Sprintf("established with %v (AS %v), %v prefixes received", orDash(fmt.Sprint(entry["peer-hostname"])), entry["remote-as"], rx))
		case state == "":
			k.fail(CheckBGP, key, "no session state: the switch's BGP daemon does not answer", want,
				"on "+k.sw.Name+": `sudo systemctl restart frr` (bgpd), then `nv show vrf default router bgp neighbor "+key+"`")
		default:
			k.fail(CheckBGP, key, state, want,
				fmt.Sprintf("check %s's BGP (%s) and the link %s %s ↔ %s (link and lldp checks)", u.Peer.Name, peerCmd, k.sw.Name, k.sw.PortName(u.Port), peerEnd(u)))
		}
	}
}

func (k *checker) pause(name string) {
	stats, err := k.c.GetTree(k.ctx, []string{"interface", name, "counters", "qos", "pfc-stats"}, "")
	if err != nil {
		k.unsure(CheckPauseCounters, name, err.Error()) // the error names the request
		return
	}
	prio, _ := cumulus.Lookup(stats, []string{"switch-priority", strconv.Itoa(k.inv.RoCE.Priority)})
	m, _ := prio.(map[string]any)
	rx, okRx := m["rx-pause-frames"].(int64)
	tx, okTx := m["tx-pause-frames"].(int64)
	if !okRx || !okTx {
		k.unsure(CheckPauseCounters, name, fmt.Sprintf("the switch reports no pause frames for switch priority %d", k.inv.RoCE.Priority))
		return
	}
	k.pass(CheckPauseCounters, name, fmt.Sprintf("priority %d: %d pause frames received, %d sent", k.inv.RoCE.Priority, rx, tx))
}
