package readiness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ref(s string) Ref {
	f := strings.SplitN(s, " ", 3)
	r := Ref{Machine: f[0], Check: f[1]}
	if len(f) == 3 {
		r.Subject = f[2]
	}
	return r
}

func res(s string, st Status, after ...string) Result {
	r := ref(s)
	x := Result{Target: TargetSwitch, Machine: r.Machine, Check: r.Check, Subject: r.Subject, Status: st}
	for _, a := range after {
		x.After = x.After.Add(ref(a))
	}
	return x
}

// A stopped bgpd on leaf2: its first session's finding is the cause, and
// its other session, the spines' sessions to it and the routes that rest
// on them follow from it, whichever order the references run in; an MTU
// finding stands alone; two findings that only name each other (both
// ends of a session down for a reason neither shows) make the first of
// them the cause; a switch that could not be read explains the findings
// that name any of its results.
func TestCauses(t *testing.T) {
	rs := []Result{
		res("spine1 link swp2", Passed),
		res("spine1 bgp swp2", Failed, "spine1 link swp2", "leaf2 link swp63", "leaf2 bgp swp63"),
		res("spine1 routes 10.1.2.0/24", Failed, "spine1 bgp swp2"),
		res("leaf1 routes 10.1.2.0/24", Failed, "leaf1 bgp swp63", "spine1 routes 10.1.2.0/24"),
		res("leaf1 bgp swp63", Passed),
		res("leaf2 link swp63", Passed),
		res("leaf2 bgp swp63", Failed),
		res("leaf2 bgp swp64", Failed, "leaf2 bgp swp63"),
		res("leaf2 mtu swp64", Failed),
		res("sw1 bgp 10.0.0.1", Failed, "sw2 bgp 10.0.0.0"),
		res("sw2 bgp 10.0.0.0", Failed, "sw1 bgp 10.0.0.1"),
		res("sw2 routes 10.9.0.0/24", Unknown, "sw2 bgp 10.0.0.0"),
		res("sw3 connect", Unknown),
		res("sw4 bgp 10.0.0.2", Failed, "sw3 bgp 10.0.0.3"),
	}
	got := Causes(rs)
	want := []Cause{
		{Ref: ref("leaf2 bgp swp63"), Explains: []Ref{ref("spine1 bgp swp2"), ref("spine1 routes 10.1.2.0/24"), ref("leaf1 routes 10.1.2.0/24"), ref("leaf2 bgp swp64")}},
		{Ref: ref("sw1 bgp 10.0.0.1"), Explains: []Ref{ref("sw2 bgp 10.0.0.0"), ref("sw2 routes 10.9.0.0/24")}},
		{Ref: ref("sw3 connect"), Explains: []Ref{ref("sw4 bgp 10.0.0.2")}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("causes (-want +got):\n%s", d)
	}
	line := NotReady(rs, got, 0)
	wantLine := "leaf2 bgp swp63 (4 follow from it); leaf2 mtu swp64; sw1 bgp 10.0.0.1 (2 follow from it); sw3 connect (1 follows from it); " +
		"then: spine1 bgp swp2; spine1 routes 10.1.2.0/24; leaf1 routes 10.1.2.0/24; leaf2 bgp swp64; sw2 bgp 10.0.0.0; sw2 routes 10.9.0.0/24; sw4 bgp 10.0.0.2"
	if line != wantLine {
		t.Errorf("NotReady:\n got %s\nwant %s", line, wantLine)
	}
	if l := NotReady(rs, got, 3); l != "leaf2 bgp swp63 (4 follow from it); leaf2 mtu swp64; sw1 bgp 10.0.0.1 (2 follow from it) and 8 more" {
		t.Errorf("NotReady, 3 at most: %s", l)
	}
}

// Deps keep their references in order, field by field, and compare as
// values.
func TestDeps(t *testing.T) {
	refs := []Ref{ref("leaf1 link swp63"), ref("spine1 connect"), {Machine: "a b", Check: "c", Subject: "d e f"}}
	d := DependsOn(refs...)
	if d2 := DependsOn(refs[0]).Add(refs[1:]...); d != d2 {
		t.Errorf("DependsOn and Add differ: %q %q", d, d2)
	}
	if d3 := DependsOn(refs[0]).Join(DependsOn(refs[1:]...)); d != d3 || Deps("").Join(d) != d || d.Join("") != d {
		t.Errorf("Join differs: %q %q", d, d3)
	}
	if got := d.Refs(); !cmp.Equal(got, refs) {
		t.Errorf("Refs() = %+v", got)
	}
	if Deps("").Refs() != nil || DependsOn() != "" {
		t.Error("the zero Deps names something")
	}
}

// Without references every finding stands alone: no cause, and the final
// line lists the findings in result order, as before causes existed.
func TestCausesNone(t *testing.T) {
	rs := []Result{res("sw config x", Failed), res("sw pfc Eth1/3", Failed), res("esx-02 reboot", Failed), res("h1 gid", Passed)}
	if c := Causes(rs); c != nil {
		t.Errorf("causes: %+v", c)
	}
	if l := NotReady(rs, nil, 20); l != "sw config x; sw pfc Eth1/3; esx-02 reboot" {
		t.Errorf("NotReady: %s", l)
	}
	if l := NotReady(rs[3:], nil, 20); l != "" {
		t.Errorf("NotReady of passed results: %q", l)
	}
}

// The document carries its causes as "causes", each a reference with the
// references it explains; the results do not carry their After, and a
// document without causes has no "causes" key.
func TestDocumentCauses(t *testing.T) {
	rs := []Result{res("leaf2 bgp swp63", Failed), res("leaf2 bgp swp64", Failed, "leaf2 bgp swp63")}
	d := &Document{Schema: SchemaCheck, Results: rs, Causes: Causes(rs)}
	var b bytes.Buffer
	if err := d.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Results []map[string]any `json:"results"`
		Causes  []map[string]any `json:"causes"`
	}
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Causes) != 1 || m.Causes[0]["machine"] != "leaf2" || m.Causes[0]["subject"] != "swp63" ||
		len(m.Causes[0]["explains"].([]any)) != 1 || len(m.Results[1]) != 5 {
		t.Errorf("JSON:\n%s", b.String())
	}
	b.Reset()
	d.Causes = nil
	d.Encode(&b)
	if strings.Contains(b.String(), "causes") {
		t.Errorf("a document without causes:\n%s", b.String())
	}
}

// Findings that only follow from one another (a cycle: three cables
// rotated at leaf1, each port's LLDP finding naming the port whose
// planned end it hears) are one fault: the cycle's first member in result
// order is the cause, even where findings that follow from the cycle come
// before it (the far ends, checked first), and a cycle that follows from
// another cause is explained by that cause, not made one.
func TestCausesCycle(t *testing.T) {
	rs := []Result{
		res("spine1 lldp swp1", Failed, "leaf1 lldp swp62"),
		res("spine1 lldp swp3", Failed, "leaf1 lldp swp64"),
		res("spine2 lldp swp1", Failed, "leaf1 lldp swp63"),
		res("leaf1 bgp swp63", Failed, "leaf1 lldp swp63", "spine1 bgp swp1"),
		res("leaf1 lldp swp62", Failed, "leaf1 lldp swp63"),
		res("leaf1 lldp swp63", Failed, "leaf1 lldp swp64"),
		res("leaf1 lldp swp64", Failed, "leaf1 lldp swp62"),
		// Two sessions naming each other, down because leaf2's
		// daemon is: the pair follows from it.
		res("leaf3 bgp swp1", Failed, "leaf4 bgp swp1"),
		res("leaf4 bgp swp1", Failed, "leaf3 bgp swp1", "leaf2 bgp swp2"),
		res("leaf2 bgp swp2", Failed),
	}
	want := []Cause{
		{Ref: ref("leaf1 lldp swp62"), Explains: []Ref{ref("spine1 lldp swp1"), ref("spine1 lldp swp3"), ref("spine2 lldp swp1"), ref("leaf1 bgp swp63"), ref("leaf1 lldp swp63"), ref("leaf1 lldp swp64")}},
		{Ref: ref("leaf2 bgp swp2"), Explains: []Ref{ref("leaf3 bgp swp1"), ref("leaf4 bgp swp1")}},
	}
	if d := cmp.Diff(want, Causes(rs)); d != "" {
		t.Errorf("causes (-want +got):\n%s", d)
	}
	// Whichever member of the cycle the results list first is the cause.
	rs[4], rs[6] = rs[6], rs[4]
	if got := Causes(rs); len(got) != 2 || got[0].Ref != ref("leaf1 lldp swp64") || len(got[0].Explains) != 6 {
		t.Errorf("causes, swp64 listed first: %+v", got)
	}
}

// Causes agrees with its definition, computed the slow way, on random
// graphs of findings: a finding reaches another when the other follows
// from it, directly or through others; a root's findings are reached by
// none they do not reach; a cause is a root's first finding in result
// order, and a finding belongs to the first cause that reaches it. A
// long cycle is one cause.
func TestCausesDefinition(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		n := 1 + rnd.IntN(10)
		rs := make([]Result, n)
		for i := range rs {
			st := Failed
			if rnd.IntN(5) == 0 {
				st = Passed
			}
			rs[i] = res(fmt.Sprintf("sw c %d", i), st)
			for k := rnd.IntN(3); k > 0; k-- {
				rs[i].After = rs[i].After.Add(ref(fmt.Sprintf("sw c %d", rnd.IntN(n+1))))
			}
		}
		// reach[i][j]: j follows from i (through findings only).
		reach := make([][]bool, n)
		for i := range reach {
			reach[i] = make([]bool, n)
			reach[i][i] = rs[i].Status != Passed
		}
		for changed := true; changed; {
			changed = false
			for j := range rs {
				if rs[j].Status == Passed {
					continue
				}
				for _, d := range rs[j].After.Refs() {
					var k int
					fmt.Sscan(d.Subject, &k)
					if k >= n || k == j || rs[k].Status == Passed {
						continue
					}
					for i := range rs {
						if reach[i][k] && !reach[i][j] {
							reach[i][j], changed = true, true
						}
					}
				}
			}
		}
		var want []Cause
		owner := make([]int, n)
		for f := range owner {
			owner[f] = -1
		}
		for c := range rs {
			isCause := rs[c].Status != Passed
			for j := range rs {
				if j != c && reach[j][c] && (!reach[c][j] || j < c) {
					isCause = false // reached from outside its cycle, or not its first
				}
			}
			if !isCause {
				continue
			}
			for f := range rs {
				if reach[c][f] && owner[f] < 0 {
					owner[f] = c
				}
			}
		}
		for c := range rs {
			var ex []Ref
			for f := range rs {
				if owner[f] == c && f != c {
					ex = append(ex, rs[f].Ref())
				}
			}
			if owner[c] == c && len(ex) > 0 {
				want = append(want, Cause{Ref: rs[c].Ref(), Explains: ex})
			}
		}
		if d := cmp.Diff(want, Causes(rs)); d != "" {
			for _, r := range rs {
				t.Logf("%s %v after %v", r.Ref(), r.Status, r.After.Refs())
			}
			t.Fatalf("round %d: causes (-want +got):\n%s", round, d)
		}
	}
	const big = 20000
	rs := make([]Result, big)
	for i := range rs {
		rs[i] = res(fmt.Sprintf("sw lldp %d", i), Failed, fmt.Sprintf("sw lldp %d", (i+1)%big))
	}
	if got := Causes(rs); len(got) != 1 || got[0].Ref != rs[0].Ref() || len(got[0].Explains) != big-1 {
		t.Errorf("a cycle of %d: %d causes", big, len(got))
	}
}

// BenchmarkCauses groups the results of a large fabric's check: 64
// switches of 64 ports, each port's link, LLDP and BGP results (a third
// of them failed, each BGP session naming its port's link and LLDP and its
// peer's session, which names it back: a cycle of two per session).
func BenchmarkCauses(b *testing.B) {
	var rs []Result
	for sw := 0; sw < 64; sw++ {
		for p := 0; p < 64; p++ {
			st := Passed
			if (sw+p)%3 == 0 {
				st = Failed
			}
			port := fmt.Sprintf("swp%d", p)
			m := fmt.Sprintf("sw%d", sw)
			rs = append(rs, res(m+" link "+port, st), res(m+" lldp "+port, st, m+" link "+port),
				res(m+" bgp "+port, st, m+" link "+port, m+" lldp "+port, fmt.Sprintf("sw%d bgp %s", (sw+1)%64, port)))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Causes(rs)
	}
}
