package workerapply

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/bench"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// What `rdggen check --target workers` must prove between workers is that
// every worker reaches its peers from its own container address and is
// reached by them. It proves it in two parts, both read in each host's one
// round trip:
//
//   - logins along a ring (bench.Rounds: worker i logs in to worker i+1, so
//     each worker is a source once and a receiver once; n logins), all of one
//     worker's logins from inside one `docker exec`, every host at once
//     (up to --parallel): each login's $SSH_CONNECTION says the source
//     address the peer's sshd saw. They prove the parts no rule shows: the
//     keys, sshd, the image, Docker's own forwarding, the data network.
//   - the rule check: what decides every other pair on the hosts themselves,
//     evaluated for every peer: the host's NAT exemption (rdggen's jump first
//     in nat POSTROUTING, and RDGGEN-POSTROUTING accepting, i.e. not
//     translating, traffic to the peer's worker), its route to the peer's
//     worker (`ip route get`, the kernel's own answer: via the peer's data
//     address, or the switch's with docker.routing: switch), and its accept
//     rules (rdggen's jump first in DOCKER-USER, and RDGGEN-CONTAINERS
//     accepting a new connection from the peer's worker on the data
//     interface). See dockernet's firewall and route rules
//     (docs/rules.md#docker-networking).
//
// --all-pairs (Options.AllPairs) logs in along every pair instead: n(n-1)
// logins, still one `docker exec` per worker.

// schedule is who logs in to whom: out[i] are the host indexes worker i logs
// in to, in round order.
type schedule struct {
	out    [][]int
	logins int
	all    bool
}

// newSchedule is the ring of bench.Rounds over n workers, or with all
// every ordered pair.
func newSchedule(n int, all bool) schedule {
	s := schedule{out: make([][]int, n), all: all}
	if all {
		// Worker i logs in to i+1, i+2, … (mod n): while every worker is
		// at its k-th login, each sshd receives one (peersAtOnce bounds
		// the rest).
		for i := range n {
			for k := 1; k < n; k++ {
				s.out[i] = append(s.out[i], (i+k)%n)
			}
		}
		s.logins = n * (n - 1)
		return s
	}
	for _, round := range bench.Rounds(n) {
		for _, p := range round {
			s.out[p.Client] = append(s.out[p.Client], p.Server)
			s.logins++
		}
	}
	return s
}

// describe is the schedule for a person: "64 logins along a ring".
func (s schedule) describe() string {
	if s.all {
		return fmt.Sprintf("%s login(s), every pair (--all-pairs)", thousands(s.logins))
	}
	return fmt.Sprintf("%s login(s) along a ring (each worker a source and a receiver once)", thousands(s.logins))
}

// thousands writes n with a comma every three digits: 4,032.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// peersScript appends scripts/peers.sh (worker_probe, rules_probe) and its
// variables; probe's come first.
func peersScript(w *remote.Script) {
	w.Set("fw_chain", dockernet.FirewallChain)
	w.Set("user_chain", dockernet.DockerUserChain)
	w.Set("nat_chain", dockernet.NATChain)
	w.Text(script("peers.sh"))
}

// workerProbe appends, when the worker runs, scripts/worker.sh in it with
// the peers it logs in to (scripts/peers.sh): result "worker", split into
// parts "ifaces", "inside" (what NCCL needs of the container: checkWorker)
// and one per login, "1", "2", … in the peers' order.
func workerProbe(w *remote.Script, d *desired, peers []peer) {
	w.SetScript("WS", script("worker.sh"))
	args := []string{workerMark(w), strconv.Itoa(d.Port), strconv.Itoa(peerConnectTimeout), strconv.Itoa(peersAtOnce)}
	for _, p := range peers {
		args = append(args, p.Address.String())
	}
	w.Line("worker_probe", remote.Words(args))
}

func workerMark(w *remote.Script) string { return "rdggen-part-" + w.Nonce() }

// part is one part of scripts/worker.sh's report: its exit status and output.
type part struct {
	rc   int
	text string
}

// parseParts splits the "worker" result into the parts named in names. A
// part without its mark (the docker exec itself failed) gets the result's
// status, at least 1, and its whole output ("no result" when there is no
// result at all).
func parseParts(r remote.Result, mark string, names []string) map[string]part {
	out := map[string]part{}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	cur := ""
	var text []string
	flush := func() {
		if cur != "" {
			p := out[cur]
			p.text = strings.TrimSpace(strings.Join(text, "\n"))
			out[cur] = p
		}
		text = text[:0]
	}
	for _, l := range strings.Split(string(r.Data), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == mark && want[f[1]] {
			if rc, err := strconv.Atoi(f[2]); err == nil {
				flush()
				cur = f[1]
				out[cur] = part{rc: rc}
				continue
			}
		}
		text = append(text, l)
	}
	flush()
	for _, n := range names {
		if _, ok := out[n]; !ok {
			out[n] = part{rc: max(r.RC(), 1), text: strings.TrimSpace(string(r.Data))}
			if r.Name == "" {
				out[n] = part{rc: 1, text: "no result"}
			}
		}
	}
	return out
}

// loginNames are the names of n logins' parts: "1" … "n".
func loginNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = strconv.Itoa(i + 1)
	}
	return names
}

// rulesProbe appends the rule check's reads: nat POSTROUTING and
// RDGGEN-POSTROUTING, DOCKER-USER and RDGGEN-CONTAINERS, and `ip route get`
// of every peer's worker address (one `ip -batch`), with rules_probe
// (peersScript).
func rulesProbe(w *remote.Script, peers []peer) {
	var addrs []string
	for _, p := range peers {
		addrs = append(addrs, p.Address.String())
	}
	w.Line("rules_probe", remote.Words(addrs))
}

// routeHops parses `ip -o route get` answers: per destination, "via X dev
// Y" (dev alone for a connected route).
func routeHops(out string) map[netip.Addr]string {
	m := map[netip.Addr]string{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 1 && (f[0] == "unicast" || f[0] == "local" || f[0] == "broadcast") {
			f = f[1:]
		}
		if len(f) == 0 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		var hop []string
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "via" || f[i] == "dev" {
				hop = append(hop, f[i], f[i+1])
			}
		}
		m[a] = strings.Join(hop, " ")
	}
	return m
}

// ruleVerdict is the rule check of one host: per peer (host index), why
// the rules there do not admit the pair in one direction or the other.
type ruleVerdict struct {
	read bool         // the host was read and its rules judged
	bad  map[int]bool // peers whose pair with this host the rules do not admit
}

// problems gathers the rule check's findings, each reason with the peers it
// affects, in the order they were found.
type problems struct {
	order  []string
	peers  map[string][]string
	why    map[string][]string // per peer, its reasons
	unsure bool
}

func (p *problems) add(reason, peer string) {
	if p.peers == nil {
		p.peers, p.why = map[string][]string{}, map[string][]string{}
	}
	p.why[peer] = append(p.why[peer], reason)
	if _, ok := p.peers[reason]; !ok {
		p.order = append(p.order, reason)
	}
	p.peers[reason] = append(p.peers[reason], peer)
}

// String is every reason with its peers: "reason (ns-01, ns-03 and 7 more)".
func (p *problems) String() string {
	var parts []string
	for _, r := range p.order {
		parts = append(parts, r+" ("+namesList(p.peers[r], 4)+")")
	}
	return strings.Join(parts, "; ")
}

// namesList is names, the first show of them and "and N more".
func namesList(names []string, show int) string {
	if len(names) <= show {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:show], ", ") + fmt.Sprintf(" and %d more", len(names)-show)
}

// judgeRules is the rule check of host h against every peer: nat
// POSTROUTING's first rule, RDGGEN-POSTROUTING, the route, DOCKER-USER's
// first rule and RDGGEN-CONTAINERS, each evaluated for a new connection
// between h's worker and the peer's.
func judgeRules(inv *inventory.Inventory, h *inventory.Host, self netip.Addr, byName map[string]remote.Result, peers []peer) (bad map[int]bool, p problems) {
	bad = map[int]bool{}
	flag := func(pr peer, reason string) {
		bad[pr.Index] = true
		p.add(reason, pr.Name)
	}
	unsure := func(reason string) {
		p.unsure = true
		for _, pr := range peers {
			flag(pr, reason)
		}
	}
	readChain := func(name, what string) ([]ipRule, bool) {
		r, ok := byName[name]
		if !ok || r.RC() != 0 {
			unsure("cannot read " + what + ": " + remote.FirstLine(string(r.Data)))
			return nil, false
		}
		return chainRules(string(r.Data)), true
	}

	// Leaving h: untranslated, and routed as dockernet routes it.
	if r := byName["postrouting"]; r.Name == "" || r.RC() != 0 {
		unsure("cannot read nat POSTROUTING: " + remote.FirstLine(string(r.Data)))
	} else if why := natProblem(r, h); why != "" {
		for _, pr := range peers {
			flag(pr, why)
		}
	} else if rules, ok := readChain("natchain", "nat "+dockernet.NATChain); ok {
		for _, pr := range peers {
			target, rule, known := decide(rules, newConn{src: self, dst: pr.Address, out: h.DataInterface})
			switch {
			case !known:
				p.unsure = true
				flag(pr, fmt.Sprintf("cannot judge %s's rule %q", h.Name, rule))
			case target != "ACCEPT":
				why := h.Name + "'s " + dockernet.NATChain + " has no rule exempting its containers' traffic to the worker, so Docker's MASQUERADE translates it"
				if target != "" && target != "RETURN" {
					why = fmt.Sprintf("%s's rule %q translates its containers' traffic to the worker", h.Name, rule)
				}
				flag(pr, why)
			}
		}
	}
	if len(peers) > 0 {
		if r, ok := byName["routes"]; !ok {
			unsure("no route result")
		} else {
			hops := routeHops(string(r.Data))
			for _, pr := range peers {
				want := "via " + nextHop(inv, h, pr).String() + " dev " + h.DataInterface
				switch have, ok := hops[pr.Address]; {
				case !ok:
					flag(pr, h.Name+" has no route to the worker")
				case have != want:
					flag(pr, fmt.Sprintf("%s routes the worker %s, not %s", h.Name, have, want))
				}
			}
		}
	}

	// Arriving at h: a new connection from each peer's worker accepted.
	if r := byName["dockeruser"]; r.Name == "" || r.RC() != 0 {
		unsure("cannot read " + dockernet.DockerUserChain + ": " + remote.FirstLine(string(r.Data)))
	} else if why := firewallJumpProblem(r, h); why != "" {
		for _, pr := range peers {
			flag(pr, why)
		}
	} else if rules, ok := readChain("fwchain", dockernet.FirewallChain); ok {
		for _, pr := range peers {
			target, rule, known := decide(rules, newConn{src: pr.Address, dst: self, in: h.DataInterface, out: dockernet.DockerBridge})
			switch {
			case !known:
				p.unsure = true
				flag(pr, fmt.Sprintf("cannot judge %s's rule %q", h.Name, rule))
			case target == "ACCEPT":
			case target == "" || target == "RETURN":
				flag(pr, h.Name+"'s "+dockernet.FirewallChain+" has no rule accepting new connections from the worker")
			default:
				flag(pr, fmt.Sprintf("%s's rule %q refuses new connections from the worker", h.Name, rule))
			}
		}
	}
	return bad, p
}

// nextHop is where host h routes peer pr's worker: pr's data address
// (dockernet.RouteTo), or with docker.routing: switch the pool route's
// next hop (dockernet.PoolRoute).
func nextHop(inv *inventory.Inventory, h *inventory.Host, pr peer) netip.Addr {
	if inv.Docker.SwitchRouted() {
		return dockernet.PoolRoute(inv, h).Via
	}
	_, via := dockernet.RouteTo(&inv.Hosts[pr.Index])
	return via
}

// coveredPairs counts the ordered pairs (a, b), a ≠ b, of hosts that were
// both read whose rules admit the pair at both ends (a pair either host
// marks bad is not covered, in either direction).
func coveredPairs(vs []ruleVerdict) int {
	read := 0
	badPairs := map[[2]int]bool{}
	for a := range vs {
		if !vs[a].read {
			continue
		}
		read++
		for b := range vs[a].bad {
			if b >= 0 && b < len(vs) && vs[b].read {
				badPairs[[2]int{min(a, b), max(a, b)}] = true
			}
		}
	}
	return read*(read-1) - 2*len(badPairs)
}
