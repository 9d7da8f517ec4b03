package nvueapply

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// PortCount is one port's PFC pause frames on roce.priority, received
// plus sent, at one moment (`nv show interface swpN counters qos
// pfc-stats`, GET /nvue_v1/interface/swpN/counters/qos/pfc-stats); -1 when
// not read.
type PortCount struct {
	// Port is "switch swpN", as pkg/bench names a Cumulus switch's port.
	Port  string
	Pause int64
}

// Counters reads the pause frames of every data port, and on a fabric
// switch of every uplink in fabric.links, of the given Cumulus switches,
// Parallel at a time, with GET requests only. ECN-marked packets are not
// read: rdggen has found no documented NVUE view of a port's ECN mark
// count to cite (docs/nvue.md lists the views it reads), so bench says
// nothing of ECN marks on Cumulus ports rather than guess a path. A
// switch that cannot be read makes err name it (the others' counters are
// still returned); a port whose counters cannot be read has Pause -1.
func Counters(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch, o Options) ([]PortCount, error) {
	o.defaults()
	per := make([][]PortCount, len(sws))
	errs := make([]string, len(sws))
	driver.ForEach(len(sws), o.Parallel, func(i int) {
		per[i], errs[i] = switchCounters(ctx, inv, sws[i], o)
	})
	var out []PortCount
	var failed []string
	for i := range sws {
		out = append(out, per[i]...)
		if errs[i] != "" {
			failed = append(failed, errs[i])
		}
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("switch counters: %s", strings.Join(failed, "; "))
	}
	return out, nil
}

func switchCounters(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch, o Options) ([]PortCount, string) {
	c, err := connect(sw, o)
	if err != nil {
		return nil, sw.Name + ": " + err.Error()
	}
	defer c.Close()
	ports := cumulus.DataPorts(inv, sw)
	for _, u := range inv.Uplinks(sw.Name) {
		if !slices.Contains(ports, u.Port) {
			ports = append(ports, u.Port)
		}
	}
	var out []PortCount
	var unread []string
	for _, p := range ports {
		name := sw.PortName(p)
		pc := PortCount{Port: sw.Name + " " + name, Pause: -1}
		stats, err := c.GetTree(ctx, []string{"interface", name, "counters", "qos", "pfc-stats"}, "")
		if err == nil {
			prio, _ := cumulus.Lookup(stats, []string{"switch-priority", strconv.Itoa(inv.RoCE.Priority)})
			m, _ := prio.(map[string]any)
			rx, okRx := m["rx-pause-frames"].(int64)
			tx, okTx := m["tx-pause-frames"].(int64)
			if okRx && okTx {
				pc.Pause = max(rx, 0) + max(tx, 0)
			}
		}
		if pc.Pause < 0 {
			unread = append(unread, name)
		}
		out = append(out, pc)
		if ctx.Err() != nil {
			break
		}
	}
	if len(unread) == len(ports) && len(ports) > 0 {
		return out, fmt.Sprintf("%s: no port's pause counters could be read (GET /nvue_v1/interface/%s/counters/qos/pfc-stats)", sw.Name, unread[0])
	}
	return out, ""
}
