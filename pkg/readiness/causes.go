package readiness

import (
	"fmt"
	"strings"
)

// Ref names one result of a check: its machine, check and subject, which
// together identify it among the results of one run.
type Ref struct {
	Machine string `json:"machine"`
	Check   string `json:"check"`
	Subject string `json:"subject,omitempty"`
}

// String is "leaf2 bgp swp63", as the final line of `rdggen check` names a
// result.
func (r Ref) String() string {
	s := r.Machine + " " + r.Check
	if r.Subject != "" {
		s += " " + r.Subject
	}
	return s
}

// Deps are the results a result follows from (Result.After), in the order
// given: an encoded list, made with DependsOn, Add and Join and read with
// Refs (the encoding is not for reading otherwise). Being a string, it
// compares with == and go-cmp compares it, so that Results do too; ""
// names none.
type Deps string

// refSep and fieldSep separate the references of Deps and their fields
// (bytes that no machine, check or subject contains: quote.Terminal
// removes control characters from what reaches a result).
const refSep, fieldSep = "\x1e", "\x1f"

// DependsOn is Deps naming refs.
func DependsOn(refs ...Ref) Deps { return Deps("").Add(refs...) }

// Add is d with refs after its own.
func (d Deps) Add(refs ...Ref) Deps {
	var b strings.Builder
	b.WriteString(string(d))
	for _, r := range refs {
		if b.Len() > 0 {
			b.WriteString(refSep)
		}
		b.WriteString(r.Machine + fieldSep + r.Check + fieldSep + r.Subject)
	}
	return Deps(b.String())
}

// Join is d with the references of more after its own, in order.
func (d Deps) Join(more ...Deps) Deps {
	n, parts := len(d), 0
	if d != "" {
		parts++
	}
	for _, o := range more {
		if o != "" {
			n += len(o)
			parts++
		}
	}
	if parts <= 1 {
		for _, o := range more {
			if o != "" {
				return o
			}
		}
		return d
	}
	var b strings.Builder
	b.Grow(n + parts - 1)
	b.WriteString(string(d))
	for _, o := range more {
		if o == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(refSep)
		}
		b.WriteString(string(o))
	}
	return Deps(b.String())
}

// Refs are the references of d.
func (d Deps) Refs() []Ref {
	if d == "" {
		return nil
	}
	var out []Ref
	for _, e := range strings.Split(string(d), refSep) {
		f := strings.SplitN(e, fieldSep, 3)
		out = append(out, Ref{Machine: f[0], Check: f[1], Subject: f[2]})
	}
	return out
}

// Ref is the reference to r.
func (r Result) Ref() Ref { return Ref{Machine: r.Machine, Check: r.Check, Subject: r.Subject} }

// Cause is a finding (a result that did not pass) that other findings
// follow from: the one fault to look at first, with what it explains. A
// stopped BGP daemon on a leaf, for one, fails its own sessions, its
// peers' sessions to it, and every route it announced or learnt; the first
// of its own session's results is the cause, and the rest follow from it.
type Cause struct {
	// Ref names the finding that is the cause.
	Ref
	// Explains are the findings that follow from it, directly or through
	// one another, in the order of the results.
	Explains []Ref `json:"explains"`
}

// connectCheck is the check every target reports for a machine it could
// not reach or read (apply.CheckConnect).
const connectCheck = "connect"

// Causes groups the findings of rs (the results that did not pass) by the
// findings they follow from, as each result's After names them. A finding
// whose After are all passed (or absent from rs) is a root: it is where
// the fault shows itself. Findings that only depend on one another (a
// cycle: the two ends of a BGP session that is down for a reason neither
// end can show, cables rotated at a switch whose LLDP findings each name
// the port whose planned end they hear) are one root together, and the
// first of them in result order is its cause, wherever the findings that
// follow from them stand. Every finding that depends on a root, directly
// or through other findings, follows from it and is counted once, under
// the first root in result order that explains it; so every finding is
// either a cause, in one cause's Explains, or stands alone. A reference
// to a machine that has a non-passed "connect" result (it could not be
// read at all) stands for that result.
//
// Only the causes that explain at least one other finding are returned,
// in result order; a finding that neither explains nor follows from
// another is in none of them. The cost is linear in the results and
// their references (the cycles are the graph's strongly connected
// components, found with Tarjan's algorithm: R. Tarjan, "Depth-first
// search and linear graph algorithms", SIAM J. Comput. 1(2), 1972).
func Causes(rs []Result) []Cause {
	at := make(map[Ref]int, len(rs))
	connect := map[string]int{}
	for i, r := range rs {
		if _, dup := at[r.Ref()]; !dup {
			at[r.Ref()] = i
		}
		if r.Check == connectCheck && r.Status != Passed {
			if _, dup := connect[r.Machine]; !dup {
				connect[r.Machine] = i
			}
		}
	}
	// followers[i] are the findings that name finding i in their After.
	followers := make([][]int, len(rs))
	finding := make([]bool, len(rs))
	for i, r := range rs {
		if r.Status == Passed {
			continue
		}
		finding[i] = true
		for _, ref := range r.After.Refs() {
			j, ok := at[ref]
			if !ok {
				j, ok = connect[ref.Machine]
			}
			if !ok || j == i || rs[j].Status == Passed {
				continue
			}
			followers[j] = append(followers[j], i)
		}
	}
	// A root is a component (findings that follow from one another, or
	// one finding) that follows from no finding outside it.
	comp, n := components(followers, finding)
	root := make([]bool, n)
	for c := range root {
		root[c] = true
	}
	for j, fs := range followers {
		for _, i := range fs {
			if comp[i] != comp[j] {
				root[comp[i]] = false
			}
		}
	}
	owner := make([]int, len(rs)) // the cause whose group a finding is in, -1 none yet
	for i := range owner {
		owner[i] = -1
	}
	// A root's first finding in result order claims the root's other
	// findings (no finding outside reaches them) and all that follow.
	var queue []int
	for i := range rs {
		if !finding[i] || !root[comp[i]] || owner[i] >= 0 {
			continue
		}
		owner[i] = i
		queue = append(queue[:0], i)
		for len(queue) > 0 {
			j := queue[0]
			queue = queue[1:]
			for _, f := range followers[j] {
				if owner[f] < 0 {
					owner[f] = i
					queue = append(queue, f)
				}
			}
		}
	}
	explains := map[int][]Ref{}
	for i, r := range rs {
		if r.Status != Passed && owner[i] != i {
			explains[owner[i]] = append(explains[owner[i]], r.Ref())
		}
	}
	var out []Cause
	for i, r := range rs {
		if r.Status != Passed && owner[i] == i && len(explains[i]) > 0 {
			out = append(out, Cause{Ref: r.Ref(), Explains: explains[i]})
		}
	}
	return out
}

// components numbers the strongly connected components of the graph whose
// nodes are the indexes i with in[i] and whose edges run from i to each of
// next[i] (all of them nodes): comp[i] is i's component, 0 to n-1, and -1
// where !in[i]. Tarjan's algorithm, with an explicit stack rather than
// recursion, so that a long chain of findings cannot exhaust the goroutine
// stack; O(nodes + edges).
func components(next [][]int, in []bool) (comp []int, n int) {
	comp = make([]int, len(next))
	index := make([]int, len(next)) // visit order from 1; 0 not yet visited
	low := make([]int, len(next))
	onStack := make([]bool, len(next))
	for i := range comp {
		comp[i] = -1
	}
	type frame struct{ v, e int } // a node and its next edge to follow
	var stack []int
	var call []frame
	visited := 0
	visit := func(v int) {
		visited++
		index[v], low[v] = visited, visited
		stack = append(stack, v)
		onStack[v] = true
		call = append(call, frame{v: v})
	}
	for s := range next {
		if !in[s] || index[s] != 0 {
			continue
		}
		visit(s)
		for len(call) > 0 {
			top := len(call) - 1
			v := call[top].v
			if e := call[top].e; e < len(next[v]) {
				call[top].e++
				w := next[v][e]
				if index[w] == 0 {
					visit(w)
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:top]
			if top > 0 {
				if u := call[top-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = n
					if w == v {
						break
					}
				}
				n++
			}
		}
	}
	return comp, n
}

// NotReady names the findings of rs for the final line of `rdggen check`,
// causes before consequences: every finding that follows from no other (in
// result order, each cause with how many follow from it: "leaf2 bgp swp63
// (21 follow from it)"), then, after "then:", the findings that follow
// from them. At most max names are given, then "and N more". "" when every
// result passed.
func NotReady(rs []Result, causes []Cause, max int) string {
	follows := map[Ref]int{}
	after := map[Ref]bool{}
	for _, c := range causes {
		follows[c.Ref] = len(c.Explains)
		for _, e := range c.Explains {
			after[e] = true
		}
	}
	var names, then []string
	for _, r := range rs {
		if r.Status == Passed {
			continue
		}
		ref := r.Ref()
		switch {
		case after[ref]:
			then = append(then, ref.String())
		case follows[ref] == 1:
			names = append(names, ref.String()+" (1 follows from it)")
		case follows[ref] > 1:
			names = append(names, fmt.Sprintf("%s (%d follow from it)", ref, follows[ref]))
		default:
			names = append(names, ref.String())
		}
	}
	if len(then) > 0 {
		then[0] = "then: " + then[0]
		names = append(names, then...)
	}
	more := ""
	if max > 0 && len(names) > max {
		more = fmt.Sprintf(" and %d more", len(names)-max)
		names = names[:max]
	}
	if len(names) == 0 {
		return ""
	}
	return strings.Join(names, "; ") + more
}
