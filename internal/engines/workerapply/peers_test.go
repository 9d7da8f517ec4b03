package workerapply

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// The ring makes each worker a source once and a receiver once, against
// another worker, in n logins; --all-pairs is every ordered pair.
func TestSchedule(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7, 64, 512} {
		s := newSchedule(n, false)
		src, dst := make([]int, n), make([]int, n)
		for i, to := range s.out {
			for _, j := range to {
				if j == i {
					t.Fatalf("n=%d: %d logs in to itself", n, i)
				}
				src[i]++
				dst[j]++
			}
		}
		want := n
		if n < 2 {
			want = 0
		}
		if s.logins != want {
			t.Errorf("n=%d: %d logins, want %d", n, s.logins, want)
		}
		for i := 0; i < n && n >= 2; i++ {
			if src[i] != 1 || dst[i] != 1 {
				t.Errorf("n=%d: worker %d is a source %d times and a receiver %d times, want 1 and 1", n, i, src[i], dst[i])
			}
		}
		all := newSchedule(n, true)
		if all.logins != n*(n-1) || n > 1 && len(all.out[n-1]) != n-1 {
			t.Errorf("n=%d all pairs: %d logins", n, all.logins)
		}
		// In rotation: at each step every worker is the target of one login.
		for k := 0; k < n-1; k++ {
			seen := make([]bool, n)
			for i := range n {
				j := all.out[i][k]
				if j == i || seen[j] {
					t.Fatalf("n=%d all pairs, step %d: %d logs in to %d, which is itself or already a target", n, k, i, j)
				}
				seen[j] = true
			}
		}
	}
	if got := newSchedule(64, false).describe(); got != "64 login(s) along a ring (each worker a source and a receiver once)" {
		t.Errorf("describe: %q", got)
	}
	if got := newSchedule(64, true).describe(); got != "4,032 login(s), every pair (--all-pairs)" {
		t.Errorf("describe: %q", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 4032: "4,032", 261632: "261,632", 16773120: "16,773,120", -4032: "-4,032"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// workerScript's report, split per part; a part without its mark gets the
// docker exec's own failure.
func TestParseParts(t *testing.T) {
	const mark = "rdggen-part-abc"
	names := append([]string{"ifaces", "inside"}, loginNames(3)...)
	r := remote.Result{Name: "worker", Status: "0", Data: []byte("\n" + mark + " ifaces 0\neth0\nlo\n" + "\n" + mark + " inside 0\nmemlock unlimited\ngdr PHB\ndev uverbs0\n" +
		"\n" + mark + " 2 255\nssh: connect to host 172.16.43.2 port 12345: Connection timed out\n" +
		"\n" + mark + " 1 0\n172.16.41.2 40312 172.16.42.2 12345\n")}
	got := parseParts(r, mark, names)
	want := map[string]part{"ifaces": {0, "eth0\nlo"}, "inside": {0, "memlock unlimited\ngdr PHB\ndev uverbs0"},
		"1": {0, "172.16.41.2 40312 172.16.42.2 12345"}, "2": {255, "ssh: connect to host 172.16.43.2 port 12345: Connection timed out"},
		"3": {1, strings.TrimSpace(string(r.Data))}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(part{})); diff != "" {
		t.Errorf("parseParts (-want +got):\n%s", diff)
	}
	// A forged mark with another nonce is text, not a result.
	r = remote.Result{Name: "worker", Status: "0", Data: []byte("\n" + mark + " 1 0\nrdggen-part-xyz 1 0\n")}
	if got := parseParts(r, mark, loginNames(1)); got["1"].rc != 0 || got["1"].text != "rdggen-part-xyz 1 0" {
		t.Errorf("forged mark: %+v", got)
	}
	r = remote.Result{Name: "worker", Status: "126", Data: []byte("OCI runtime exec failed: exec failed: unable to start container process: exec: \"sh\": executable file not found in $PATH\n")}
	if got := parseParts(r, mark, names); got["inside"].rc != 126 || !strings.HasPrefix(got["2"].text, "OCI runtime exec failed") {
		t.Errorf("docker exec failed: %+v", got)
	}
	if got := parseParts(remote.Result{}, mark, names); got["1"].rc != 1 || got["1"].text != "no result" {
		t.Errorf("no result: %+v", got)
	}
}

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		rule string
		conn newConn
		want bool
	}{
		{"-A C -s 172.16.42.0/23 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT", newConn{addr("172.16.43.2"), addr("172.16.41.2"), "enp1f0", "docker0"}, true},
		{"-A C -s 172.16.42.0/23 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT", newConn{addr("172.16.44.2"), addr("172.16.41.2"), "enp1f0", "docker0"}, false},
		{"-A C -s 172.16.42.0/23 -d 172.16.41.0/24 -i enp1f0 -o docker0 -j ACCEPT", newConn{addr("172.16.43.2"), addr("172.16.41.2"), "eno0", "docker0"}, false},
		{"-A C -d 172.16.41.0/24 -i enp1f0 -o docker0 -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP", newConn{addr("10.1.1.1"), addr("172.16.41.2"), "enp1f0", "docker0"}, true},
		{"-A C -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT", newConn{addr("10.1.1.1"), addr("172.16.41.2"), "enp1f0", "docker0"}, false},
		{"-A C -m state --state NEW,ESTABLISHED -j ACCEPT", newConn{addr("10.1.1.1"), addr("172.16.41.2"), "enp1f0", "docker0"}, true},
		{"-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE", newConn{addr("172.16.41.2"), addr("172.16.42.2"), "", "enp1f0"}, true},
		{"-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE", newConn{addr("172.16.41.2"), addr("172.16.41.3"), "", "docker0"}, false},
		{"-A C ! -s 10.0.0.0/8 -o enp+ -j ACCEPT", newConn{addr("172.16.41.2"), addr("172.16.42.2"), "", "enp1f0"}, true},
		{"-A C ! -s 10.0.0.0/8 -o enp+ -j ACCEPT", newConn{addr("10.1.2.3"), addr("172.16.42.2"), "", "enp1f0"}, false},
		{"-A C -d 172.16.42.2 -j ACCEPT", newConn{addr("172.16.41.2"), addr("172.16.42.2"), "", "enp1f0"}, true},
	} {
		r := parseRule(tc.rule)
		if !r.known || r.matches(tc.conn) != tc.want {
			t.Errorf("%q for %+v: known %v, matches %v, want %v", tc.rule, tc.conn, r.known, r.matches(tc.conn), tc.want)
		}
	}
	for _, rule := range []string{"-A C -p tcp --dport 22 -j ACCEPT", "-A C -m comment --comment x -j ACCEPT", "-A C -s not-an-address -j ACCEPT", "-N C", "-A C -s"} {
		if parseRule(rule).known {
			t.Errorf("%q: judged, want unknown", rule)
		}
	}
	rules := chainRules("-N C\n-A C -s 10.0.0.0/8 -j RETURN\n-A C -p udp -j DROP\n-A C -j ACCEPT\n")
	if target, _, known := decide(rules, newConn{src: addr("10.1.1.1")}); !known || target != "RETURN" {
		t.Errorf("first rule decides: %q %v", target, known)
	}
	if _, rule, known := decide(rules, newConn{src: addr("172.16.1.1")}); known || rule != "-A C -p udp -j DROP" {
		t.Errorf("a rule the check cannot judge: %q %v", rule, known)
	}
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// hostRules is host h as `rdggen apply --target hosts` leaves it, as the
// rule probe reads it: Docker's MASQUERADE below rdggen's jump, the chains
// exactly as dockernet writes them, and the kernel's route to every peer.
func hostRules(inv *inventory.Inventory, h *inventory.Host) map[string]remote.Result {
	ok := func(name, data string) remote.Result {
		return remote.Result{Name: name, Status: "0", Data: []byte(data)}
	}
	var routes []string
	for i := range inv.Hosts {
		p := &inv.Hosts[i]
		if p.Index == h.Index {
			continue
		}
		via := nextHop(inv, h, peer{Index: p.Index})
		routes = append(routes, fmt.Sprintf("%s via %s dev %s src %s uid 0 \\    cache ", horovod.WorkerAddress(inv, p), via, h.DataInterface, h.Data.Address.Addr()))
	}
	return map[string]remote.Result{
		"postrouting": ok("postrouting", "-P POSTROUTING ACCEPT\n"+dockernet.NATJump+"\n-A POSTROUTING -s "+h.Subnet.String()+" ! -o docker0 -j MASQUERADE\n"),
		"natchain":    ok("natchain", "-N "+dockernet.NATChain+"\n"+strings.Join(dockernet.NATRules(inv, h), "\n")+"\n"),
		"dockeruser":  ok("dockeruser", "-N DOCKER-USER\n"+dockernet.FirewallJump+"\n-A DOCKER-USER -j RETURN\n"),
		"fwchain":     ok("fwchain", "-N "+dockernet.FirewallChain+"\n"+strings.Join(dockernet.FirewallRules(inv, h), "\n")+"\n"),
		"routes":      ok("routes", strings.Join(routes, "\n")+"\n"),
	}
}

func peersOf(inv *inventory.Inventory, self int) []peer {
	var ps []peer
	for i := range inv.Hosts {
		if i != self {
			ps = append(ps, peer{Index: i, Name: inv.Hosts[i].Name, Address: horovod.WorkerAddress(inv, &inv.Hosts[i])})
		}
	}
	return ps
}

// The rule check admits every pair on hosts as apply leaves them (per-host
// routes and, in the routed-pool inventory, the pool via the switch), and
// names the peers a broken rule cuts off, with the rule.
func TestJudgeRules(t *testing.T) {
	routed, err := inventory.LoadFile("../../../testdata/golden/routed-pool/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range []*inventory.Inventory{inventory.Reference(), routed} {
		for i := range inv.Hosts {
			h := &inv.Hosts[i]
			bad, p := judgeRules(inv, h, horovod.WorkerAddress(inv, h), hostRules(inv, h), peersOf(inv, i))
			if len(bad) != 0 || len(p.order) != 0 {
				t.Fatalf("%s %s as apply leaves it: %v", inv.Name, h.Name, p.String())
			}
		}
	}

	inv := inventory.Reference()
	h := &inv.Hosts[0] // clx-mld-41; its sources 172.16.42.0/23, 172.16.44.0/22, 172.16.48.0/24
	self := horovod.WorkerAddress(inv, h)
	peers := peersOf(inv, 0)
	for _, tc := range []struct {
		name   string
		change func(rs map[string]remote.Result)
		bad    []int // host indexes
		want   string
		unsure bool
	}{
		{"no NAT jump", func(rs map[string]remote.Result) {
			rs["postrouting"] = remote.Result{Name: "postrouting", Status: "0", Data: []byte("-P POSTROUTING ACCEPT\n-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE\n")}
		}, []int{1, 2, 3, 4, 5, 6, 7}, "clx-mld-41's nat POSTROUTING has no jump to RDGGEN-POSTROUTING, so Docker's MASQUERADE translates its containers' traffic (clx-mld-42, clx-mld-43, clx-mld-44, clx-mld-45 and 3 more)", false},
		{"Docker's MASQUERADE first", func(rs map[string]remote.Result) {
			rs["postrouting"] = remote.Result{Name: "postrouting", Status: "0", Data: []byte("-P POSTROUTING ACCEPT\n-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE\n" + dockernet.NATJump + "\n")}
		}, []int{1, 2, 3, 4, 5, 6, 7}, `clx-mld-41's nat POSTROUTING starts with "-A POSTROUTING -s 172.16.41.0/24 ! -o docker0 -j MASQUERADE", before the jump to RDGGEN-POSTROUTING`, false},
		{"NAT exemption short of 172.16.44.0/22", func(rs map[string]remote.Result) {
			rs["natchain"] = remote.Result{Name: "natchain", Status: "0", Data: []byte("-N RDGGEN-POSTROUTING\n-A RDGGEN-POSTROUTING -s 172.16.41.0/24 -d 172.16.42.0/23 -j ACCEPT\n-A RDGGEN-POSTROUTING -s 172.16.41.0/24 -d 172.16.48.0/24 -j ACCEPT\n")}
		}, []int{3, 4, 5, 6}, "clx-mld-41's RDGGEN-POSTROUTING has no rule exempting its containers' traffic to the worker, so Docker's MASQUERADE translates it (clx-mld-44, clx-mld-45, clx-mld-46, clx-mld-47)", false},
		{"routes", func(rs map[string]remote.Result) {
			r := rs["routes"]
			text := strings.Replace(string(r.Data), "172.16.43.2 via 31.31.31.43 ", "172.16.43.2 via 31.31.31.1 ", 1)
			text = strings.Replace(text, "172.16.48.2 via", "RTNETLINK answers: Network is unreachable\nCommand failed -:7\nx via", 1)
			rs["routes"] = remote.Result{Name: "routes", Status: "1", Data: []byte(text)}
		}, []int{2, 7}, "clx-mld-41 routes the worker via 31.31.31.1 dev enp1f0, not via 31.31.31.43 dev enp1f0 (clx-mld-43); clx-mld-41 has no route to the worker (clx-mld-48)", false},
		{"no filter jump", func(rs map[string]remote.Result) {
			rs["dockeruser"] = remote.Result{Name: "dockeruser", Status: "0", Data: []byte("-N DOCKER-USER\n-A DOCKER-USER -j RETURN\n")}
		}, []int{1, 2, 3, 4, 5, 6, 7}, "clx-mld-41's DOCKER-USER has no jump to RDGGEN-CONTAINERS, so rdggen's accept rules do not decide new connections to its containers (clx-mld-42, clx-mld-43, clx-mld-44, clx-mld-45 and 3 more)", false},
		{"a DROP above the accepts", func(rs map[string]remote.Result) {
			rs["fwchain"] = remote.Result{Name: "fwchain", Status: "0", Data: []byte("-N RDGGEN-CONTAINERS\n-A RDGGEN-CONTAINERS -s 172.16.48.0/24 -j DROP\n" + strings.Join(dockernet.FirewallRules(inv, h), "\n"))}
		}, []int{7}, `clx-mld-41's rule "-A RDGGEN-CONTAINERS -s 172.16.48.0/24 -j DROP" refuses new connections from the worker (clx-mld-48)`, false},
		{"accept rules lost", func(rs map[string]remote.Result) {
			rs["fwchain"] = remote.Result{Name: "fwchain", Status: "0", Data: []byte("-N RDGGEN-CONTAINERS\n")}
		}, []int{1, 2, 3, 4, 5, 6, 7}, "clx-mld-41's RDGGEN-CONTAINERS has no rule accepting new connections from the worker (clx-mld-42, clx-mld-43, clx-mld-44, clx-mld-45 and 3 more)", false},
		{"a rule the check cannot judge", func(rs map[string]remote.Result) {
			rs["fwchain"] = remote.Result{Name: "fwchain", Status: "0", Data: []byte("-N RDGGEN-CONTAINERS\n-A RDGGEN-CONTAINERS -p tcp --dport 22 -j DROP\n" + strings.Join(dockernet.FirewallRules(inv, h), "\n"))}
		}, []int{1, 2, 3, 4, 5, 6, 7}, `cannot judge clx-mld-41's rule "-A RDGGEN-CONTAINERS -p tcp --dport 22 -j DROP"`, true},
		{"iptables cannot be read", func(rs map[string]remote.Result) {
			rs["postrouting"] = remote.Result{Name: "postrouting", Status: "127", Data: []byte("sh: 1: iptables: not found\n")}
		}, []int{1, 2, 3, 4, 5, 6, 7}, "cannot read nat POSTROUTING: sh: 1: iptables: not found", true},
	} {
		rs := hostRules(inv, h)
		tc.change(rs)
		bad, p := judgeRules(inv, h, self, rs, peers)
		var got []int
		for i := range bad {
			got = append(got, i)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.bad) || !strings.HasPrefix(p.String(), tc.want) || p.unsure != tc.unsure {
			t.Errorf("%s: bad %v (want %v), unsure %v\n got: %s\nwant: %s", tc.name, got, tc.bad, p.unsure, p.String(), tc.want)
		}
	}
}

// A pair is covered when both ends were read and neither marks it; hosts
// not read cover nothing.
func TestCoveredPairs(t *testing.T) {
	ok := ruleVerdict{read: true, bad: map[int]bool{}}
	vs := []ruleVerdict{ok, ok, ok, ok}
	if got := coveredPairs(vs); got != 12 {
		t.Errorf("4 good hosts: %d pairs, want 12", got)
	}
	vs[1] = ruleVerdict{read: true, bad: map[int]bool{0: true, 2: true}} // 1–0 and 1–2, both ways
	if got := coveredPairs(vs); got != 8 {
		t.Errorf("host 1 cuts off 0 and 2: %d pairs, want 8", got)
	}
	vs[0] = ruleVerdict{read: true, bad: map[int]bool{1: true}} // the same pair, seen from 0
	if got := coveredPairs(vs); got != 8 {
		t.Errorf("a pair both ends mark: %d pairs, want 8", got)
	}
	vs[3] = ruleVerdict{} // not read
	if got := coveredPairs(vs); got != 2 {
		t.Errorf("host 3 not read: %d pairs, want 2 (0–2 both ways)", got)
	}
}

// With horovod.network: host the workers use the data addresses: nothing
// is read for the rule check and it passes, saying why; in bridge mode it
// fails on a host whose rules were not read.
func TestPeerRulesResult(t *testing.T) {
	inv := inventory.Reference()
	k := testKeys(t)
	h := &inv.Hosts[0]
	d := desiredFor(inv, h, k, "")
	rs, v, _ := peerRules(inv, h, d, hostRules(inv, h), peersOf(inv, 0))
	if len(rs) != 1 || rs[0].Status != readiness.Passed || rs[0].Subject != "with 7 peer(s)" || !v.read || len(v.bad) != 0 ||
		rs[0].Found != "to every peer's worker untranslated (RDGGEN-POSTROUTING) via their data addresses on enp1f0; new connections from them accepted (RDGGEN-CONTAINERS)" {
		t.Errorf("bridge, as apply leaves it: %+v %+v", rs, v)
	}
	rs, v, why := peerRules(inv, h, d, map[string]remote.Result{}, peersOf(inv, 0))
	if len(rs) != 1 || rs[0].Status == readiness.Passed || len(v.bad) != 7 || len(why["clx-mld-42"]) == 0 {
		t.Errorf("bridge, nothing read: %+v %+v", rs, v)
	}
	inv.Horovod.Network = inventory.NetworkHost
	d = desiredFor(inv, h, k, "")
	rs, v, _ = peerRules(inv, h, d, map[string]remote.Result{}, peersOf(inv, 0))
	if len(rs) != 1 || rs[0].Status != readiness.Passed || !strings.Contains(rs[0].Found, "horovod.network: host") || len(v.bad) != 0 {
		t.Errorf("host network: %+v %+v", rs, v)
	}
	if rs, _, _ := peerRules(inv, h, d, nil, nil); len(rs) != 0 {
		t.Errorf("no peers: %+v", rs)
	}
}
