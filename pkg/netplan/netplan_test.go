package netplan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func route(to, via string) Route {
	return Route{To: netip.MustParsePrefix(to), Via: netip.MustParseAddr(via)}
}

// A host's file as rdggen writes it: the layout every netplan file of the
// output tree has.
func TestFileLayout(t *testing.T) {
	list := NewRouteList([]Route{route("172.16.41.0/24", "31.31.31.41"), route("172.16.42.0/24", "31.31.31.42"), route("172.16.43.0/24", "31.31.31.43")})
	f := File{Network: Config{Version: Version, Ethernets: Ethernets{{ID: "enp1f0", MTU: 9000, Routes: list.Except(1)}}}}
	want := `network:
  version: 2
  ethernets:
    enp1f0:
      mtu: 9000
      routes:
        - to: 172.16.41.0/24
          via: 31.31.31.41
        - to: 172.16.43.0/24
          via: 31.31.31.43
`
	if diff := cmp.Diff(want, string(f.AppendYAML(nil))); diff != "" {
		t.Errorf("AppendYAML (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, string(Marshal(f))); diff != "" {
		t.Errorf("yaml.v3 (-want +got):\n%s", diff)
	}
	// Appends.
	if got := string(f.AppendYAML([]byte("# head\n"))); got != "# head\n"+want {
		t.Errorf("after a head:\n%s", got)
	}
}

// configs are documents whose AppendYAML must equal yaml.v3's encoding:
// every field, several route lists, lists that leave out their first, a
// middle or their last route, IPv6 and other routes yaml.v3 writes itself,
// and strings that must be quoted, span lines or spell a placeholder.
func configs() map[string]Config {
	list := NewRouteList([]Route{route("10.0.1.0/24", "10.9.0.1"), route("10.0.2.0/24", "10.9.0.2"), route("10.0.3.0/24", "10.9.0.3")})
	mgmt := Ethernet{ID: "ens192", Match: &Match{MACAddress: "00:50:56:8a:00:01"}, SetName: "ens192", DHCP4: new(false),
		Addresses: []netip.Prefix{netip.MustParsePrefix("192.168.50.41/24")}, Routes: NewRoutes(route("0.0.0.0/0", "192.168.50.1")),
		Nameservers: &Nameservers{Addresses: []netip.Addr{netip.MustParseAddr("192.168.50.2")}}}
	data := func(id string, r Routes) Ethernet {
		return Ethernet{ID: id, Match: &Match{Name: id}, DHCP4: new(false), Addresses: []netip.Prefix{netip.MustParsePrefix("10.9.0.2/24")}, MTU: 9000, Routes: r}
	}
	return map[string]Config{
		"empty":                 {Version: Version},
		"no routes":             {Version: Version, Ethernets: Ethernets{{ID: "enp1f0", MTU: 1500}}},
		"empty route list":      {Version: Version, Ethernets: Ethernets{{ID: "enp1f0", MTU: 1500, Routes: NewRouteList(nil).All()}}},
		"one left of two":       {Version: Version, Ethernets: Ethernets{{ID: "e", Routes: NewRouteList(list.routes[:1]).Except(0)}}},
		"static and data":       {Version: Version, Ethernets: Ethernets{mgmt, data("enp11s0", list.Except(1))}},
		"first left out":        {Version: Version, Ethernets: Ethernets{data("a", list.Except(0)), data("b", list.Except(2)), data("c", list.All())}},
		"dhcp":                  {Version: Version, Ethernets: Ethernets{{ID: "ens192", Match: &Match{Name: "ens192"}, DHCP4: new(true)}}},
		"ipv6 and more":         {Version: Version, Ethernets: Ethernets{data("e", NewRoutes(route("fd00:1::/64", "fd00::1"), route("::/0", "::ffff:10.0.0.1"), Route{To: netip.MustParsePrefix("10.0.0.0/8")}))}},
		"ids to quote":          {Version: Version, Ethernets: Ethernets{data("on", list.All()), data("123", list.All()), data("null", list.All()), data("a: b", list.All()), data("- x", list.All())}},
		"line breaks":           {Version: Version, Ethernets: Ethernets{data("x\nroutes: []\n", list.Except(1)), {ID: "y", SetName: "a\n  - rdggen-netplan-routes-1\n", Routes: list.All()}}},
		"spells a placeholder":  {Version: Version, Ethernets: Ethernets{data("rdggen-netplan-routes-1", list.All()), {ID: "z", Match: &Match{Name: "- rdggen-netplan-routes-2"}, Routes: list.Except(2)}}},
		"rails":                 {Version: Version, Ethernets: Ethernets{rail(0, "enp1f0", ""), rail(1, "rail1", "00:50:56:aa:00:11")}},
		"policy without routes": {Version: Version, Ethernets: Ethernets{{ID: "e", RoutingPolicy: []RoutingPolicy{{From: netip.MustParsePrefix("10.0.0.0/8"), Table: 7}}}}},
		"routes yaml.v3 writes": {Version: Version, Ethernets: Ethernets{data("e", NewRoutes(
			Route{To: netip.MustParsePrefix("10.0.0.0/8"), Scope: "a: b"},
			Route{To: netip.MustParsePrefix("fd00::/8"), Scope: ScopeLink, Table: 100},
			Route{To: netip.MustParsePrefix("10.0.0.0/8"), Via: netip.MustParseAddr("fd00::1"), Metric: -1}))}},
	}
}

// rail is rail r's definition as a VM with several rails has it: its
// address, a route to each other rail's subnet in the main table (metric
// 100+r) and in its own table (100+r) with its own subnet on the link, and
// the rule that sends its address's traffic to that table.
func rail(r int, id, mac string) Ethernet {
	addr := netip.MustParsePrefix(fmt.Sprintf("10.%d.1.11/24", r))
	gw := netip.MustParseAddr(fmt.Sprintf("10.%d.1.1", r))
	var rs []Route
	for _, table := range []int{0, 100 + r} {
		if table != 0 {
			rs = append(rs, Route{To: addr.Masked(), Scope: ScopeLink, Table: table})
		}
		for p := range 3 {
			if p != r {
				rs = append(rs, Route{To: netip.MustParsePrefix(fmt.Sprintf("10.%d.0.0/16", p)), Via: gw, Metric: (100 + r) * btoi(table == 0), Table: table})
			}
		}
	}
	e := Ethernet{ID: id, DHCP4: new(false), Addresses: []netip.Prefix{addr}, MTU: 9000, Routes: NewRoutes(rs...),
		RoutingPolicy: []RoutingPolicy{{From: netip.PrefixFrom(addr.Addr(), 32), Table: 100 + r, Priority: 1000 + r}}}
	if mac != "" {
		e.Match, e.SetName = &Match{MACAddress: mac}, id
	}
	return e
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// AppendYAML writes what yaml.v3 writes for the same value, for a Config
// and for a File.
func TestAppendYAMLIsYAMLv3(t *testing.T) {
	for name, c := range configs() {
		if diff := cmp.Diff(string(Marshal(c)), string(c.AppendYAML(nil))); diff != "" {
			t.Errorf("%s: Config (-yaml.v3 +AppendYAML):\n%s", name, diff)
		}
		f := File{Network: c}
		if diff := cmp.Diff(string(Marshal(f)), string(f.AppendYAML(nil))); diff != "" {
			t.Errorf("%s: File (-yaml.v3 +AppendYAML):\n%s", name, diff)
		}
	}
}

// Every document reads back as the value written: the IDs in order, each
// string as itself, every route of the list but the one left out.
func TestReadsBack(t *testing.T) {
	for name, c := range configs() {
		doc := File{Network: c}.AppendYAML(nil)
		var n yaml.Node
		if err := yaml.Unmarshal(doc, &n); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		var back struct {
			Network struct {
				Version   int
				Ethernets yaml.Node
			}
		}
		if err := n.Decode(&back); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		if back.Network.Version != 2 || (len(c.Ethernets) > 0 && len(back.Network.Ethernets.Content) != 2*len(c.Ethernets)) {
			t.Fatalf("%s: read back %+v\n%s", name, back, doc)
		}
		for i, e := range c.Ethernets {
			k, v := back.Network.Ethernets.Content[2*i], back.Network.Ethernets.Content[2*i+1]
			var got struct {
				Match   *Match
				SetName string `yaml:"set-name"`
				Routes  []struct {
					To, Via, Scope string
					Metric, Table  int
				}
				RoutingPolicy []RoutingPolicy `yaml:"routing-policy"`
			}
			if err := v.Decode(&got); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if k.Value != e.ID || k.Tag != "!!str" || got.SetName != e.SetName || (e.Match != nil && *got.Match != *e.Match) {
				t.Errorf("%s: ethernet %d reads back as %q (%s) %+v, want %q %+v", name, i, k.Value, k.Tag, got, e.ID, e)
			}
			var want []string
			for r := range e.Routes.All() {
				via := r.Via.String()
				if !r.Via.IsValid() {
					via = ""
				}
				want = append(want, fmt.Sprintf("%s via %s scope %q metric %d table %d", r.To, via, r.Scope, r.Metric, r.Table))
			}
			var have []string
			for _, r := range got.Routes {
				have = append(have, fmt.Sprintf("%s via %s scope %q metric %d table %d", r.To, r.Via, r.Scope, r.Metric, r.Table))
			}
			if strings.Join(have, ",") != strings.Join(want, ",") {
				t.Errorf("%s: %s's routes %q, want %q", name, e.ID, have, want)
			}
			if !cmp.Equal(got.RoutingPolicy, e.RoutingPolicy, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })) {
				t.Errorf("%s: %s's routing policy %+v, want %+v", name, e.ID, got.RoutingPolicy, e.RoutingPolicy)
			}
		}
	}
}

// An IPv4 route's entry, made from its addresses' text, is what yaml.v3
// writes for it: random prefixes and addresses of every length and digit
// count, and the edges.
func TestEntryIsYAMLv3(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rs := []Route{route("0.0.0.0/0", "0.0.0.0"), route("255.255.255.255/32", "255.255.255.255"), route("1.2.3.0/24", "1.2.3.4")}
	scopes := []string{"", ScopeLink, "host", "global"}
	for range 2000 {
		a := netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
		v := netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
		rs = append(rs, Route{To: netip.PrefixFrom(a, rng.IntN(33)).Masked(), Via: v}, Route{To: netip.PrefixFrom(a, rng.IntN(33)), Via: v},
			Route{To: netip.PrefixFrom(a, rng.IntN(33)), Via: v, Metric: rng.IntN(1 << 20), Table: rng.IntN(300)},
			Route{To: netip.PrefixFrom(a, rng.IntN(33)), Scope: scopes[rng.IntN(len(scopes))], Metric: rng.IntN(3) - 1, Table: -rng.IntN(3)},
			Route{To: netip.PrefixFrom(a, rng.IntN(33)), Via: v, Scope: scopes[rng.IntN(len(scopes))], Table: int(rng.Int32())})
	}
	rs = append(rs, Route{To: netip.MustParsePrefix("10.0.0.0/8"), Table: math.MaxInt}, Route{To: netip.MustParsePrefix("10.0.0.0/8"), Metric: math.MinInt})
	for _, r := range rs {
		if got, want := string(appendEntry(nil, "", r)), string(Marshal([]Route{r})); got != want {
			t.Fatalf("%v: entry %q, yaml.v3 %q", r, got, want)
		}
	}
}

// Routes' accessors: Len, All and IsZero of a whole list, of a list less
// one route, and of the zero value.
func TestRoutes(t *testing.T) {
	list := NewRouteList([]Route{route("10.0.1.0/24", "10.9.0.1"), route("10.0.2.0/24", "10.9.0.2"), route("10.0.3.0/24", "10.9.0.3")})
	for _, tc := range []struct {
		r    Routes
		want string
	}{
		{list.All(), "10.0.1.0/24 10.0.2.0/24 10.0.3.0/24"},
		{list.Except(0), "10.0.2.0/24 10.0.3.0/24"},
		{list.Except(2), "10.0.1.0/24 10.0.2.0/24"},
		{Routes{}, ""},
		{NewRoutes(), ""},
	} {
		var got []string
		for r := range tc.r.All() {
			got = append(got, r.To.String())
		}
		if s := strings.Join(got, " "); s != tc.want || tc.r.Len() != len(got) || tc.r.IsZero() != (len(got) == 0) {
			t.Errorf("%v: %q, Len %d, IsZero %v; want %q", tc.r, s, tc.r.Len(), tc.r.IsZero(), tc.want)
		}
	}
}

// The lists one RouteList shares between documents are written at each
// document's own indentation, also when documents of both kinds take turns.
func TestSharedList(t *testing.T) {
	var rs []Route
	for i := range 50 {
		rs = append(rs, route(fmt.Sprintf("172.16.%d.0/24", i), fmt.Sprintf("10.0.0.%d", i+1)))
	}
	list := NewRouteList(rs)
	for i := range rs {
		c := Config{Version: Version, Ethernets: Ethernets{{ID: "e", MTU: 9000, Routes: list.Except(i)}}}
		if got, want := string(c.AppendYAML(nil)), string(Marshal(c)); got != want {
			t.Fatalf("host %d: Config\n%s\nwant\n%s", i, got, want)
		}
		if got, want := string(File{Network: c}.AppendYAML(nil)), string(Marshal(File{Network: c})); got != want {
			t.Fatalf("host %d: File\n%s\nwant\n%s", i, got, want)
		}
	}
}

// FuzzAppendYAML: for any ID, name and routes, AppendYAML is yaml.v3's
// encoding.
func FuzzAppendYAML(f *testing.F) {
	f.Add("enp1f0", "enp1f0", []byte{10, 0, 1, 0, 24, 10, 9, 0, 1}, 1)
	f.Add("on", "- rdggen-netplan-routes-1", []byte{0, 0, 0, 0, 0, 1, 2, 3, 4}, 0)
	f.Add("a\n- rdggen-netplan-routes-1\n", "x: y", []byte{255, 255, 255, 255, 32, 0, 0, 0, 0, 1, 1, 1, 1, 8, 2, 2, 2, 2}, 2)
	f.Fuzz(func(t *testing.T, id, name string, addrs []byte, omit int) {
		var rs []Route
		for ; len(addrs) >= 9; addrs = addrs[9:] {
			to := netip.AddrFrom4([4]byte(addrs[:4]))
			r := Route{To: netip.PrefixFrom(to, int(addrs[4])%33), Via: netip.AddrFrom4([4]byte(addrs[5:9]))}
			switch addrs[4] / 33 { // a route of the rails' kinds too
			case 1:
				r.Metric, r.Table = int(addrs[5]), int(addrs[6])
			case 2:
				r.Via, r.Scope, r.Table = netip.Addr{}, ScopeLink, int(addrs[7])
			case 3:
				r.Scope = name
			}
			rs = append(rs, r)
		}
		r := NewRouteList(rs).All()
		if len(rs) > 0 && omit >= 0 {
			r = NewRouteList(rs).Except(omit % len(rs))
		}
		c := Config{Version: Version, Ethernets: Ethernets{{ID: id, Match: &Match{Name: name}, Routes: r}, {ID: name, SetName: id, Routes: r}}}
		if got, want := string(c.AppendYAML(nil)), string(Marshal(c)); got != want {
			t.Errorf("AppendYAML\n%s\nyaml.v3\n%s", got, want)
		}
	})
}

// BenchmarkFile writes one host's file of a cluster of n hosts (n−1
// routes), as AppendYAML does (the RouteList's entries made once, outside
// the loop, as a cluster's files share them) and as yaml.v3 alone does.
func BenchmarkFile(b *testing.B) {
	for _, n := range []int{64, 1024, 4096} {
		rs := make([]Route, n)
		for i := range rs {
			rs[i] = route(fmt.Sprintf("10.%d.%d.0/24", i>>8, i&255), fmt.Sprintf("100.64.%d.%d", i>>8, i&255))
		}
		list := NewRouteList(rs)
		f := File{Network: Config{Version: Version, Ethernets: Ethernets{{ID: "ens224", MTU: 9000, Routes: list.Except(n / 2)}}}}
		_ = f.AppendYAML(nil)
		b.Run(fmt.Sprintf("AppendYAML/routes=%d", n-1), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = f.AppendYAML(nil)
			}
		})
		b.Run(fmt.Sprintf("yaml.v3/routes=%d", n-1), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Marshal(f)
			}
		})
	}
}
