package railnet_test

import (
	"fmt"
	"net/netip"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// cable is where rail Rail of host Host is plugged: port Port of leaf
// Leaf (1, 2). Host h's rail r has the address 10.r.Leaf.(10+h)/24 on the
// (leaf, rail) subnet 10.r.Leaf.0/24, whose gateway is the leaf's
// 10.r.Leaf.1 (an SVI over a bridge of that rail's ports, VLAN 10+r).
type cable struct {
	Host, Rail, Leaf int
	Port             string
}

func subnet(leaf, rail int) netip.Prefix {
	return netip.MustParsePrefix(fmt.Sprintf("10.%d.%d.0/24", rail, leaf))
}

func (c cable) addr() netip.Addr {
	return netip.MustParseAddr(fmt.Sprintf("10.%d.%d.%d", c.Rail, c.Leaf, 10+c.Host))
}

func (c cable) gw() netip.Addr {
	return netip.MustParseAddr(fmt.Sprintf("10.%d.%d.1", c.Rail, c.Leaf))
}

// ifname is the rail's interface in its host: rail<r>.
func (c cable) ifname() string { return "rail" + strconv.Itoa(c.Rail) }

// mac is the MAC address rail 1 gets before the script finds it by it (and
// renames it from eth1 to rail1): a locally administered address.
func (c cable) mac() string { return fmt.Sprintf("02:00:00:00:%02x:%02x", c.Host, c.Rail) }

// railFabric is two leaves and two spines behind FRR (eBGP unnumbered,
// each leaf redistributing its connected subnets), and two hosts with two
// rails each, cabled as cables says. It returns the fabric, each host's
// namespace and each host's rails (railnet.VM).
//
// A rail's peers are every other (leaf, rail) subnet of the fabric, or,
// with aggregate, one prefix for all of them (10.0.0.0/8, which holds the
// rail's own subnet too).
func railFabric(t *testing.T, cables []cable, aggregate bool) (*fabricnet.Fabric, map[int]string, map[int]railnet.VM) {
	t.Helper()
	spec := fabricnet.Spec{
		Switches: []fabricnet.Switch{{Name: "spine1", OS: fabricnet.Cumulus}, {Name: "spine2", OS: fabricnet.Cumulus},
			{Name: "leaf1", OS: fabricnet.Cumulus}, {Name: "leaf2", OS: fabricnet.Cumulus}},
		Links: []fabricnet.Link{
			{A: fabricnet.End{Switch: "leaf1", Port: "swp31"}, B: fabricnet.End{Switch: "spine1", Port: "swp1"}},
			{A: fabricnet.End{Switch: "leaf1", Port: "swp32"}, B: fabricnet.End{Switch: "spine2", Port: "swp1"}},
			{A: fabricnet.End{Switch: "leaf2", Port: "swp31"}, B: fabricnet.End{Switch: "spine1", Port: "swp2"}},
			{A: fabricnet.End{Switch: "leaf2", Port: "swp32"}, B: fabricnet.End{Switch: "spine2", Port: "swp2"}},
		},
	}
	f := fabricnet.New(t, spec, fabricnet.Options{})
	for s := 1; s <= 2; s++ {
		f.Program(fmt.Sprintf("spine%d", s), fabricnet.Router{
			FRR: frr(fmt.Sprintf("spine%d", s), 65199, fmt.Sprintf("10.10.10.%d", 100+s), "swp1", "swp2"),
			Interfaces: map[string]fabricnet.Interface{
				"lo": {Addresses: []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.10.10.%d/32", 100+s))}}},
			DefaultMTU: 9216, Forwarding: true})
	}
	for l := 1; l <= 2; l++ {
		ifs := map[string]fabricnet.Interface{"lo": {Addresses: []netip.Prefix{netip.MustParsePrefix(fmt.Sprintf("10.10.10.%d/32", l))}}}
		access := map[string]int{}
		for _, c := range cables {
			if c.Leaf == l {
				access[c.Port] = 10 + c.Rail
				ifs["vlan"+strconv.Itoa(10+c.Rail)] = fabricnet.Interface{Addresses: []netip.Prefix{netip.PrefixFrom(c.gw(), 24)}}
			}
		}
		f.Program(fmt.Sprintf("leaf%d", l), fabricnet.Router{
			FRR:        frr(fmt.Sprintf("leaf%d", l), 65100+l, fmt.Sprintf("10.10.10.%d", l), "swp31", "swp32"),
			Interfaces: ifs, DefaultMTU: 9216, Forwarding: true, Access: access})
	}
	ns := map[int]string{}
	vms := map[int]railnet.VM{}
	for _, c := range cables {
		if ns[c.Host] == "" {
			ns[c.Host] = f.HostNS(fmt.Sprintf("h%d", c.Host))
		}
		r := railnet.Rail{Interface: c.ifname(), Address: netip.PrefixFrom(c.addr(), 24), Gateway: c.gw(), MTU: 9000}
		if c.Rail == 1 { // found by its MAC address and renamed by the script
			f.Attach(fmt.Sprintf("leaf%d", c.Leaf), c.Port, ns[c.Host], "eth1")
			run(t, ns[c.Host], "ip", "link", "set", "dev", "eth1", "address", c.mac())
			r.MAC = c.mac()
		} else {
			f.Attach(fmt.Sprintf("leaf%d", c.Leaf), c.Port, ns[c.Host], c.ifname())
		}
		seen := map[netip.Prefix]bool{subnet(c.Leaf, c.Rail): true}
		for _, o := range cables {
			if s := subnet(o.Leaf, o.Rail); !seen[s] {
				seen[s] = true
				r.Peers = append(r.Peers, s)
			}
		}
		if aggregate {
			r.Peers = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		}
		vm := vms[c.Host]
		vm.Name = fmt.Sprintf("h%d", c.Host)
		for len(vm.Rails) <= c.Rail {
			vm.Rails = append(vm.Rails, railnet.Rail{})
		}
		vm.Rails[c.Rail] = r
		vms[c.Host] = vm
	}
	// Each leaf learns the other's subnets over both spines.
	for _, c := range cables {
		for l := 1; l <= 2; l++ {
			if l == c.Leaf {
				continue
			}
			dst := subnet(c.Leaf, c.Rail)
			deadline := time.Now().Add(60 * time.Second)
			for {
				r, ok, err := f.Route(fmt.Sprintf("leaf%d", l), dst)
				if err == nil && ok && len(r.NextHops) == 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("leaf%d has no route to %s over both spines: %+v %v %v", l, dst, r, ok, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	}
	return f, ns, vms
}

// frr is an FRR 8.4 configuration as Cumulus Linux runs it (datacenter
// defaults): eBGP unnumbered on the given ports, connected subnets
// redistributed.
func frr(host string, asn int, id string, ports ...string) string {
	var b strings.Builder
	b.WriteString("frr version 8.4\nfrr defaults datacenter\nhostname " + host + "\nservice integrated-vtysh-config\n!\n")
	b.WriteString(fmt.Sprintf("router bgp %d\n bgp router-id %s\n bgp bestpath as-path multipath-relax\n", asn, id))
	for _, p := range ports {
		b.WriteString(" neighbor " + p + " interface remote-as external\n")
	}
	b.WriteString(" !\n address-family ipv4 unicast\n  redistribute connected\n exit-address-family\nexit\n!\n")
	return b.String()
}

// run runs a command in namespace ns and returns its output; it fails the
// test when the command fails.
func run(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", ns, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// applyScript runs the rails' script in namespace ns, as root runs it on a
// VM (sh -s, the script on stdin).
func applyScript(t *testing.T, ns string, script []byte) string {
	t.Helper()
	cmd := exec.Command("ip", "netns", "exec", ns, "sh", "-s")
	cmd.Stdin = strings.NewReader(string(script))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: rails script: %v\n%s", ns, err, out)
	}
	return string(out)
}

// state is what the script sets in namespace ns: rules, every table's
// routes, addresses, links' names and MTUs, the sysctls.
func state(t *testing.T, ns string) string {
	t.Helper()
	return run(t, ns, "ip", "-4", "rule", "show") + run(t, ns, "ip", "-4", "route", "show", "table", "all") +
		run(t, ns, "ip", "-4", "-o", "addr", "show") + run(t, ns, "sh", "-c", "ip -o link show | cut -d' ' -f2,5") +
		run(t, ns, "sysctl", "net.ipv4.conf.all.arp_ignore", "net.ipv4.conf.all.arp_announce", "net.ipv4.conf.all.rp_filter")
}

// counters installs one counting rule per (source address, interface)
// pair in ns's mangle POSTROUTING chain, which every packet the namespace
// sends passes after its route was chosen: it sees the interface a packet
// really leaves through.
func counters(t *testing.T, ns string, addrs []netip.Addr, ifaces []string) {
	t.Helper()
	for _, a := range addrs {
		for _, i := range ifaces {
			run(t, ns, "iptables", "-w", "-t", "mangle", "-A", "POSTROUTING", "-s", a.String()+"/32", "-o", i)
		}
	}
}

var reCounter = regexp.MustCompile(`(?m)^\[(\d+):\d+\] -A POSTROUTING -s (\S+)/32 -o (\S+)$`)

// readCounters returns the packets counted per "address>interface" since
// the last zeroing, and zeroes them.
func readCounters(t *testing.T, ns string) map[string]int {
	t.Helper()
	out := run(t, ns, "iptables-save", "-c", "-t", "mangle")
	run(t, ns, "iptables", "-w", "-t", "mangle", "-Z", "POSTROUTING")
	m := map[string]int{}
	for _, s := range reCounter.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(s[1])
		m[s[2]+">"+s[3]] = n
	}
	return m
}

// ping sends n echo requests from src (the socket bound to the address,
// not to an interface: the route is the kernel's choice) to dst, and
// reports whether one was answered.
func ping(ns string, src, dst netip.Addr, n int) (bool, string) {
	out, err := exec.Command("ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", strconv.Itoa(n), "-i", "0.2", "-W", "1", "-I", src.String(), dst.String()).CombinedOutput()
	return err == nil, string(out)
}

// Two leaves, two rails, two hosts behind FRR, in two cablings: rails
// cabled rail-optimized (rail r of both hosts on leaf r+1: the two
// (leaf, rail) subnets are one per leaf, and a host's two rails are on
// different leaves; the peers one aggregate, 10.0.0.0/8) and one leaf per
// host carrying both its rails (four (leaf, rail) subnets, every path
// between the hosts across the spines; the peers listed one by one).
// The rails' script, run twice in each host (the second run changes
// nothing), sets the sysctls, renames rail 1's interface found by its MAC
// address, and gives every rail its address, routes and rule. Then, by the
// counters of each host's mangle POSTROUTING chain, every packet sent from
// rail r's address leaves through rail r's interface and never the other,
// for every pair of the two hosts' rails (same rail and cross-rail), and
// every pair answers; the kernel's lookup pinned to a rail's interface (as
// the RDMA stack resolves a RoCE peer) finds the rail's gateway. Without
// the rules, the cross-rail packet leaves through the wrong interface, and
// a strict reverse-path filter drops the answer that comes back on the
// right one.
func TestRailsInFabric(t *testing.T) {
	fabricnet.Require(t)
	for _, tc := range []struct {
		name      string
		cables    []cable
		aggregate bool
		// src and dst are a cross-rail pair whose packet, without the
		// rules, leaves host 1 through the other rail's interface: from
		// host 1's rail src to host 2's rail dst.
		src, dst int
	}{
		{"rail-optimized", []cable{{1, 0, 1, "swp1"}, {1, 1, 2, "swp1"}, {2, 0, 1, "swp2"}, {2, 1, 2, "swp2"}}, true,
			0, 1}, // 10.1.2.0/24 is host 1's own rail 1 subnet: the main table's connected route goes out rail1
		{"leaf per host", []cable{{1, 0, 1, "swp1"}, {1, 1, 1, "swp2"}, {2, 0, 2, "swp1"}, {2, 1, 2, "swp2"}}, false,
			1, 0}, // the main table reaches 10.0.2.0/24 through rail 0 first (metric 100 < 101)
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ns, vms := railFabric(t, tc.cables, tc.aggregate)
			addrs := map[int][]netip.Addr{}
			for h := 1; h <= 2; h++ {
				g, err := railnet.New(vms[h])
				if err != nil {
					t.Fatal(err)
				}
				applyScript(t, ns[h], g.Script())
				first := state(t, ns[h])
				if out := applyScript(t, ns[h], g.Script()); out != "" {
					t.Errorf("h%d: the second run said:\n%s", h, out)
				}
				if again := state(t, ns[h]); again != first {
					t.Errorf("h%d: the second run changed the state:\n%s\nafter the first:\n%s", h, again, first)
				}
				for _, r := range vms[h].Rails {
					addrs[h] = append(addrs[h], r.Address.Addr())
				}
				counters(t, ns[h], addrs[h], []string{"rail0", "rail1"})
				t.Logf("h%d after the script:\n%s", h, first)
			}
			// The sysctls hold, on conf.all; the rails' own values stay the
			// kernel's default (0), the larger of the two counts.
			for h := 1; h <= 2; h++ {
				for _, s := range railnet.Sysctls() {
					if got := strings.TrimSpace(run(t, ns[h], "sysctl", "-n", s.Key)); got != s.Value {
						t.Errorf("h%d: %s = %s, want %s", h, s.Key, got, s.Value)
					}
				}
				if got := run(t, ns[h], "sysctl", "-n", "net.ipv4.conf.rail1.rp_filter", "net.ipv4.conf.rail1.arp_ignore"); got != "0\n0\n" {
					t.Errorf("h%d: rail1's own rp_filter and arp_ignore: %q", h, got)
				}
			}
			// The fabric converges: every pair answers (ARP, BGP).
			for r, src := range addrs[1] {
				for s, dst := range addrs[2] {
					deadline := time.Now().Add(30 * time.Second)
					for {
						ok, out := ping(ns[1], src, dst, 1)
						if ok {
							break
						}
						if time.Now().After(deadline) {
							t.Fatalf("h1 rail %d (%s) → h2 rail %d (%s) never answers:\n%s", r, src, s, dst, out)
						}
					}
				}
			}
			readCounters(t, ns[1])
			readCounters(t, ns[2])
			// Every pair, counted.
			const n = 3
			for r, src := range addrs[1] {
				for s, dst := range addrs[2] {
					if ok, out := ping(ns[1], src, dst, n); !ok {
						t.Errorf("h1 rail %d (%s) → h2 rail %d (%s):\n%s", r, src, s, dst, out)
					}
				}
			}
			for h, c := range map[int]map[string]int{1: readCounters(t, ns[1]), 2: readCounters(t, ns[2])} {
				t.Logf("h%d counters: %v", h, c)
				for r, a := range addrs[h] {
					own, other := fmt.Sprintf("%s>rail%d", a, r), fmt.Sprintf("%s>rail%d", a, 1-r)
					// h1 sent n requests to each of h2's 2 rails from each
					// rail; h2 answered each of h1's rails n times from each
					// of its own.
					if c[own] < 2*n || c[other] != 0 {
						t.Errorf("h%d rail %d (%s): %d packets out of rail%d (want ≥ %d), %d out of rail%d (want 0)",
							h, r, a, c[own], r, 2*n, c[other], 1-r)
					}
				}
			}
			// The RDMA stack resolves a RoCE peer with the lookup bound to
			// the GID's interface and its address as source (the rail's
			// rule and table); a socket bound to a rail's interface alone
			// looks up with that interface and no source (the main table's
			// route through the rail, metric 100+r). Both find the rail's
			// own gateway for every peer; without a route through the
			// interface the kernel would take the peer for a neighbour on
			// that link (net/ipv4/route.c, ip_route_output_key_hash_rcu).
			for r, src := range addrs[1] {
				own := vms[1].Rails[r]
				for _, dst := range addrs[2] {
					for _, from := range [][]string{{"from", src.String()}, nil} {
						args := append(append([]string{"ip", "-4", "route", "get", dst.String()}, from...), "oif", fmt.Sprintf("rail%d", r))
						got := run(t, ns[1], args...)
						want := regexp.MustCompile(fmt.Sprintf(`^%s (from %s )?via %s dev rail%d `, dst, src, own.Gateway, r))
						if own.Subnet().Contains(dst) { // a neighbour on the rail's own subnet
							want = regexp.MustCompile(fmt.Sprintf(`^%s (from %s )?dev rail%d `, dst, src, r))
						}
						if !want.MatchString(got) {
							t.Errorf("%s: %q, want %s", strings.Join(args, " "), got, want)
						}
					}
				}
			}

			// Without the rules (the main table's routes only), the
			// cross-rail packet leaves through the other rail's interface.
			for r, a := range addrs[1] {
				run(t, ns[1], "ip", "-4", "rule", "del", "from", a.String(), "table", strconv.Itoa(railnet.Table(r)), "priority", strconv.Itoa(railnet.Priority(r)))
			}
			src, dst := addrs[1][tc.src], addrs[2][tc.dst]
			wrong := fmt.Sprintf("rail%d", 1-tc.src)
			ping(ns[1], src, dst, n)
			c := readCounters(t, ns[1])
			if c[src.String()+">"+wrong] < n || c[src.String()+">rail"+strconv.Itoa(tc.src)] != 0 {
				t.Errorf("without the rules, %s → %s: counters %v; want ≥ %d packets out of %s, none out of rail%d", src, dst, c, n, wrong, tc.src)
			}
			// And a strict reverse-path filter (1) drops the answer, which
			// comes back on rail src while the main table's way back to
			// the sender is the other rail: the reason for loose (2).
			rpf := func() int {
				// Absolute (-a), without touching nstat's history file (-s).
				out := run(t, ns[1], "sh", "-c", "NSTAT_HISTORY=$1 nstat -asz TcpExtIPReversePathFilter", "-", filepath.Join(t.TempDir(), "nstat"))
				for line := range strings.Lines(out) {
					if f := strings.Fields(line); len(f) >= 2 && f[0] == "TcpExtIPReversePathFilter" {
						v, err := strconv.Atoi(f[1])
						if err != nil {
							t.Fatalf("nstat: %q", out)
						}
						return v
					}
				}
				t.Fatalf("nstat: no TcpExtIPReversePathFilter in %q", out)
				return 0
			}
			before := rpf()
			run(t, ns[1], "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=1")
			if ok, out := ping(ns[1], src, dst, n); ok {
				t.Errorf("strict rp_filter, no rules: %s → %s answered:\n%s", src, dst, out)
			}
			if d := rpf() - before; d < n {
				t.Errorf("strict rp_filter: %d packets dropped by the reverse-path filter, want ≥ %d", d, n)
			}
			// The script restores the rules and the sysctl, and with them
			// the pair's way.
			g, _ := railnet.New(vms[1])
			applyScript(t, ns[1], g.Script())
			readCounters(t, ns[1])
			if ok, out := ping(ns[1], src, dst, n); !ok {
				t.Errorf("after the script again: %s → %s:\n%s", src, dst, out)
			}
			if c := readCounters(t, ns[1]); c[src.String()+">"+wrong] != 0 {
				t.Errorf("after the script again: counters %v", c)
			}
		})
	}
}
