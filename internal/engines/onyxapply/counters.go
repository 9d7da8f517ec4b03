package onyxapply

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// PortCounters are one data port's (or fabric uplink's) RoCE counters at one moment: the PFC
// pause frames of the RoCE priority (rx + tx, `show interfaces ethernet 1/N
// counters pfc prio P`) and the packets ECN-marked on its traffic class
// (`show interfaces ethernet 1/N congestion-control`); -1 when not read.
type PortCounters struct {
	// Port is "switch Eth1/N", as pkg/bench names a host's port.
	Port       string
	Pause, ECN int64
}

// Counters reads the RoCE counters of every data port, and on a fabric
// switch (a leaf or a spine) of every uplink in fabric.links, of the
// switches that have a mgmt address, read-only (enable mode, as Check), o.Parallel
// switches at a time. Switches without mgmt, or that o.Select leaves out
// (Cumulus Linux ones, whose counters this engine cannot read), are
// skipped and named in skipped; a switch that cannot be read makes err name it (the others'
// counters are still returned).
func Counters(ctx context.Context, inv *inventory.Inventory, o Options) (counters []PortCounters, skipped []string, err error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	var sws []inventory.Switch
	for _, sw := range inv.Switches {
		if sw.Mgmt == "" || o.Select != nil && !o.Select(sw) {
			skipped = append(skipped, sw.Name)
		} else {
			sws = append(sws, sw)
		}
	}
	per := make([][]PortCounters, len(sws))
	errs := make([]string, len(sws))
	driver.ForEach(len(sws), o.Parallel, func(i int) {
		per[i], errs[i] = switchCounters(ctx, inv, sws[i], o)
	})
	var failed []string
	for i := range sws {
		counters = append(counters, per[i]...)
		if errs[i] != "" {
			failed = append(failed, errs[i])
		}
	}
	if len(failed) > 0 {
		err = fmt.Errorf("switch counters: %s", strings.Join(failed, "; "))
	}
	return counters, skipped, err
}

func switchCounters(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) ([]PortCounters, string) {
	t := prepare(ctx, inv, sw, o)
	defer t.close()
	if t.sess == nil {
		return nil, t.res.errText()
	}
	c := &checker{ctx: ctx, inv: inv, t: t}
	ports, _ := dataPorts(inv, sw.Name)
	for _, u := range inv.Uplinks(sw.Name) {
		if !slices.Contains(ports, u.Port) {
			ports = append(ports, u.Port) // a fabric switch's uplinks, in fabric.links order
		}
	}
	var out []PortCounters
	for _, p := range ports {
		iface := onyx.Ethernet(p.Module, p.Number)
		pc := PortCounters{Port: sw.Name + " " + iface.ShortName(), Pause: -1, ECN: -1}
		if text, err := c.send(onyx.ShowPFCCountersCommand(iface, inv.RoCE.Priority)); err == nil {
			if n, err := onyx.ParsePauseCounters(text); err == nil {
				pc.Pause = max(n.Rx, 0) + max(n.Tx, 0)
			}
		}
		if text, err := c.send(onyx.ShowCongestionCommand(iface)); err == nil {
			if cc, err := onyx.ParseCongestion(text); err == nil {
				pc.ECN = cc.ECNMarked
			}
		}
		out = append(out, pc)
	}
	if c.lost != nil {
		return out, fmt.Sprintf("%s: the session failed: %v", sw.Name, c.lost)
	}
	return out, ""
}
