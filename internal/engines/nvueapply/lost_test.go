package nvueapply

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/readiness"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// TestLostAnswers: faults between rdggen and the switch (the answer lost
// after the switch acted, a proxy's 504 after it acted, a proxy's 502 or a
// reset before it saw the request) on each step of the push. rdggen reads
// what happened instead of guessing: a change the switch made is verified
// and confirmed, one it never saw is discarded, and no revision is left
// pending.
func TestLostAnswers(t *testing.T) {
	for _, c := range []struct {
		name, method, prefix string
		skip                 int
		fault                nvuesim.Fault
		applied              bool   // the run ends with the change applied and confirmed
		err, note            string // in Err, in Notes
	}{
		{"apply answer lost", "PATCH", "/revision", 0, nvuesim.LoseAnswer, true, "", "the answer to the apply was lost"},
		{"apply proxy 504", "PATCH", "/revision", 0, nvuesim.ProxyTimeout, true, "", "the answer to the apply was lost (PATCH /nvue_v1/revision/"},
		{"apply proxy 502", "PATCH", "/revision", 0, nvuesim.ProxyError, false, "the switch never applied it (still pending); revision changeset/", ""},
		{"apply reset", "PATCH", "/revision", 0, nvuesim.ResetBefore, false, "the switch never applied it (still pending); revision changeset/", ""},
		{"confirm answer lost", "PATCH", "/revision", 1, nvuesim.LoseAnswer, true, "", "the answer to the confirmation was lost"},
		{"confirm proxy 504", "PATCH", "/revision", 1, nvuesim.ProxyTimeout, true, "", "the answer to the confirmation was lost"},
		{"patch proxy 504", "PATCH", "/", 0, nvuesim.ProxyTimeout, false, "the answer to the change was lost", ""},
		{"revision answer lost", "POST", "/revision", 0, nvuesim.LoseAnswer, false, "the switch had made 1 revision(s) all the same: revision changeset/", ""},
		{"revision reset", "POST", "/revision", 0, nvuesim.ResetBefore, false, "the switch made no revision: nothing changed", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nvuesim.Options{})
			inv := loadInv(t, "cumulus", r.sim.Addr)
			r.sim.InjectAfter(c.method, c.prefix, c.skip, c.fault)
			res, err := r.run(t, inv)
			t.Logf("%s", r.out)
			if c.applied {
				if err != nil || !res.Applied || !res.Confirmed || !res.Saved {
					t.Fatalf("want applied and confirmed, got %v (applied %v confirmed %v)", err, res.Applied, res.Confirmed)
				}
				if st := r.sim.RevisionState(res.Revision); st != "applied_and_saved" {
					t.Errorf("revision state %q", st)
				}
				if !strings.Contains(strings.Join(res.Notes, "\n"), c.note) || strings.Contains(r.out.String(), "rolls back by itself") {
					t.Errorf("notes %q, want %q; output:\n%s", res.Notes, c.note, r.out)
				}
			} else {
				if err == nil || res.Err == nil || !strings.Contains(res.Err.Error(), c.err) {
					t.Fatalf("want an error with %q, got %v", c.err, res.Err)
				}
				if len(r.sim.Applied()) != 0 {
					t.Errorf("the switch changed: %v", r.sim.Applied())
				}
			}
			for _, id := range r.sim.Revisions() {
				if st := r.sim.RevisionState(id); st == "pending" || st == "confirm" {
					t.Errorf("revision %s left %s", id, st)
				}
			}
			// The next run finds the switch as it is and finishes the job.
			r.out.Reset()
			res, err = r.run(t, inv)
			if err != nil {
				t.Fatalf("next run: %v\n%s", err, r.out)
			}
			if c.applied != res.Plan.Empty() {
				t.Errorf("next run's plan: %d change(s)\n%s", len(res.Plan.Changes), r.out)
			}
		})
	}
}

// TestAwaitingConfirmationIsNotReady: rdggen's apply reached the switch,
// which applied it and dropped the management path longer than rdggen
// waits for an answer. Within the confirm window, a second apply does not
// say "up to date" and check does not pass: both report the revision that
// awaits its confirmation, and the first apply says by when it rolls back.
func TestAwaitingConfirmationIsNotReady(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	r.sim.CutOffApply(1500 * time.Millisecond)
	r.o.ConfirmTimeout = 30 * time.Second
	r.o.ApplyTimeout = 300 * time.Millisecond
	r.o.RequestTimeout = time.Second
	res, err := r.run(t, inv)
	if err == nil || res.Applied || !strings.Contains(res.Err.Error(), "what the switch did could not be read") ||
		!strings.Contains(res.Err.Error(), "if the switch applied it, the switch rolls it back by itself by ") {
		t.Fatalf("first apply: %v\n%s", res.Err, r.out)
	}
	t.Logf("first apply (answer lost, switch unreachable):\n%s", r.out)
	if st := r.sim.RevisionState(res.Revision); st != "confirm" {
		t.Fatalf("revision state %q, want confirm", st)
	}
	time.Sleep(1600 * time.Millisecond) // the switch answers again; the window is still open

	r.out.Reset()
	res2, err := r.run(t, inv)
	t.Logf("second apply, within the window:\n%s", r.out)
	if err == nil || strings.Contains(r.out.String(), "up to date") ||
		!strings.Contains(r.out.String(), "cannot plan: revision "+res.Revision+" is applied but awaits its confirmation") {
		t.Errorf("second apply: err %v\n%s", err, r.out)
	}
	if m := res2.Machine(); m.Status == "unchanged" || m.Status == "applied" {
		t.Errorf("status %q", m.Status)
	}

	rs, err := Check(context.Background(), inv, inv.Switches, r.o)
	var lines []string
	passed := 0
	for _, x := range rs {
		lines = append(lines, x.Line())
		if x.Status == readiness.Passed {
			passed++
		}
	}
	t.Logf("check, within the window (err %v):\n%s", err, strings.Join(lines, "\n"))
	c := find(rs, CheckConfig, "revision "+res.Revision)
	if c == nil || c.Status != readiness.Failed || find(rs, CheckConfig, "") != nil {
		t.Errorf("check's config verdict: %+v", c)
	}
}

// TestCheckRevisionsUnreadable: when the revision list cannot be read,
// check does not pass the configuration: a revision awaiting its
// confirmation cannot be ruled out.
func TestCheckRevisionsUnreadable(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	if _, err := r.run(t, inv); err != nil {
		t.Fatal(err)
	}
	r.sim.Inject("GET", "/revision", nvuesim.ProxyError)
	rs, err := Check(context.Background(), inv, inv.Switches, r.o)
	if err != nil {
		t.Fatal(err)
	}
	if c := find(rs, CheckConfig, "revisions"); c == nil || c.Status != readiness.Unknown {
		t.Errorf("revisions: %+v", c)
	}
	if c := find(rs, CheckConfig, ""); c != nil {
		t.Errorf("config passed without the revisions: %+v", c)
	}
}

// TestPendingRevisionNamed: a pending revision of rdggen's user (a lost
// creation answer of an earlier run, or a person's `nv set` session) is
// named, never deleted; another user's is not rdggen's business.
func TestPendingRevisionNamed(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	c, err := NewClient(ClientConfig{Addr: r.sim.Addr, User: "cumulus", Password: "cumulus", TLS: r.o.TLS})
	if err != nil {
		t.Fatal(err)
	}
	left, err := c.CreateRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.run(t, inv)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	if !strings.Contains(r.out.String(), "# warning: revision "+left+" of user cumulus is pending") || len(res.Pending) != 1 {
		t.Errorf("the pending revision is not named:\n%s", r.out)
	}
	if st := r.sim.RevisionState(left); st != "pending" {
		t.Errorf("the pending revision is now %q", st)
	}
}
