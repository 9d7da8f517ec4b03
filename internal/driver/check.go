package driver

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/internal/progress"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// CheckConnect is the check a host gets, as its only result (Unknown), when
// it could not be connected to or read.
const CheckConnect = "connect"

// Unread is a host's only result when it could not be read: why.
func Unread(target applyplan.TargetName, host string, err error) []readiness.Result {
	return []readiness.Result{readiness.Result{Target: target, Machine: host, Check: CheckConnect, Subject: "", Status: readiness.Unknown, Found: err.Error()}}
}

// CheckEach runs check for every host (parallel at once), following it on
// track under phase, and returns the results in host order. The error names
// the hosts that could not be read (their only result is CheckConnect).
func CheckEach(hosts []inventory.Host, parallel int, track *progress.Tracker, phase string, check func(h *inventory.Host) []readiness.Result) ([]readiness.Result, error) {
	per := make([][]readiness.Result, len(hosts))
	track.Phase(phase, len(hosts))
	ForEach(len(hosts), parallel, func(i int) {
		h := &hosts[i]
		track.Begin(h.Name)
		per[i] = check(h)
		track.End(h.Name)
	})
	var out []readiness.Result
	var unread []string
	for i, rs := range per {
		out = append(out, rs...)
		if len(rs) == 1 && rs[0].Check == CheckConnect {
			unread = append(unread, hosts[i].Name)
		}
	}
	if len(unread) > 0 {
		return out, fmt.Errorf("%d of %d host(s) could not be read: %s", len(unread), len(hosts), strings.Join(unread, ", "))
	}
	return out, nil
}
