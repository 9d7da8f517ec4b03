package hostapply

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// RailGIDIndexes is GIDIndexes for every rail of every host: gids[i][r] is
// the index of the RoCE v2 GID of host i's rail r address in the GID table
// of the rail's RDMA device (inventory.Horovod.RailHCA: horovod.hca for
// rail 0, its number plus r for rail r), -1 where none is usable; bad are
// the failed (or unread) RDMA checks — the device, its port state and that
// GID, per rail, as the hosts target checks rail 0's — which keep the
// bench from running. One SSH round trip per host reads every rail's
// device (the same sysfs files, docs/check.md). An inventory of one rail
// is read exactly as GIDIndexes reads it: gids[i] is then {GIDIndexes's}.
func RailGIDIndexes(ctx context.Context, inv *inventory.Inventory, o Options) (gids [][]int, bad []readiness.Result) {
	if !inv.MultiRail() {
		one, bad := GIDIndexes(ctx, inv, o)
		gids = make([][]int, len(one))
		for i, g := range one {
			gids[i] = []int{g}
		}
		return gids, bad
	}
	gids = make([][]int, len(inv.Hosts))
	rs, _ := driver.CheckEach(inv.Hosts, o.Parallel, o.Track, fmt.Sprintf("reading the GID tables of %d VM(s) × %d rails over SSH", len(inv.Hosts), inv.RailCount()),
		func(h *inventory.Host) []readiness.Result {
			gids[h.Index] = slices.Repeat([]int{-1}, len(h.Rails))
			conn, err := o.Dial(ctx, h)
			if err != nil {
				return driver.Unread(readiness.TargetHosts, h.Name, remote.DialError(err))
			}
			defer conn.Close()
			w := remote.NewScript(o.rootFor(h))
			for r := range h.Rails {
				w.Line("fr " + railMark(r) + " true")
				rdmaProbe(w, inv.Horovod.RailHCA(r))
			}
			stdout, _, err := conn.Run(ctx, w.End())
			if err != nil {
				return driver.Unread(readiness.TargetHosts, h.Name, err)
			}
			results, err := remote.ParseResults(stdout, w.Nonce())
			if err != nil {
				return driver.Unread(readiness.TargetHosts, h.Name, err)
			}
			var out []readiness.Result
			for r, part := range splitRails(results, len(h.Rails)) {
				s := parseRDMA(part)
				vinv, vh := railView(inv, h, r)
				checks := checkRDMA(vinv, vh, s)
				if r > 0 {
					for k := range checks { // the rail's own key, not rail 0's
						checks[k].Fix = strings.ReplaceAll(checks[k].Fix, "hosts[].data_interface", fmt.Sprintf("hosts[].data[%d].interface", r))
					}
				}
				if g, ok := hostqos.FindRoCEv2(s.GIDs, vh.Data.Address.Addr()); ok && !slices.ContainsFunc(checks, func(c readiness.Result) bool {
					return c.Status != readiness.Passed && c.Check != CheckRDMAMTU
				}) {
					gids[h.Index][r] = g.Index
				}
				out = append(out, checks...)
			}
			return out
		})
	for _, r := range rs {
		if r.Status != readiness.Passed && r.Check != CheckRDMAMTU {
			bad = append(bad, r)
		}
	}
	return gids, bad
}

// railMark is the name of the empty result that opens rail r's probe.
func railMark(r int) string { return "rail:" + strconv.Itoa(r) }

// splitRails cuts a script's results at the rail marks: part[r] is what
// rail r's probe printed (nil when its mark is missing).
func splitRails(rs []remote.Result, n int) [][]remote.Result {
	part := make([][]remote.Result, n)
	cur := -1
	for _, x := range rs {
		if rest, ok := strings.CutPrefix(x.Name, "rail:"); ok {
			if r, err := strconv.Atoi(rest); err == nil && r >= 0 && r < n {
				cur = r
				continue
			}
		}
		if cur >= 0 {
			part[cur] = append(part[cur], x)
		}
	}
	return part
}

// railView is inv and h as checkRDMA sees rail r: horovod.hca the rail's
// RDMA device, the data link, interface and MTU the rail's. Shallow
// copies; inv and h are not changed.
func railView(inv *inventory.Inventory, h *inventory.Host, r int) (*inventory.Inventory, *inventory.Host) {
	vinv, vh := *inv, *h
	vinv.Horovod.HCA = inv.Horovod.RailHCA(r)
	vh.Data = h.Rails[r].DataLink
	vh.DataInterface = h.Rails[r].Interface
	return &vinv, &vh
}
