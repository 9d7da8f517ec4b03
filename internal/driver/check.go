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

// Check is the check loop of every target: it runs check(i) for every
// machine (parallel at once), machine i named names[i], following it on
// track under phase, and returns each machine's results and error in the
// order of names. It changes nothing itself.
func Check(names []string, parallel int, track *progress.Tracker, phase string, check func(i int) ([]readiness.Result, error)) ([][]readiness.Result, []error) {
	results := make([][]readiness.Result, len(names))
	errs := make([]error, len(names))
	track.Phase(phase, len(names))
	ForEach(len(names), parallel, func(i int) {
		track.Begin(names[i])
		results[i], errs[i] = check(i)
		track.End(names[i])
	})
	return results, errs
}

// CheckEach runs check for every host (parallel at once), following it on
// track under phase, and returns the results in host order. The error names
// the hosts that could not be read (their only result is CheckConnect).
func CheckEach(hosts []inventory.Host, parallel int, track *progress.Tracker, phase string, check func(h *inventory.Host) []readiness.Result) ([]readiness.Result, error) {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	per, _ := Check(names, parallel, track, phase, func(i int) ([]readiness.Result, error) { return check(&hosts[i]), nil })
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
