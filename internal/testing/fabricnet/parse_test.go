package fabricnet

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The readers' parsers against outputs recorded from this package's
// fabric (FRR 8.4.4, lldpd 1.0.16, iproute2 6.1): testdata/*.json.
func TestParsers(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s, err := ParseBGPSummary(read("bgp-spine1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s %d %+v", s.RouterID, s.AS, s.Peers); got != "10.10.10.101 65199 [{Neighbor:swp1 Hostname:leaf1 RemoteAS:65101 State:Established PfxRcd:3 PfxSnt:4 Uptime:00:00:05 MsgRcvd:9 MsgSent:8 UptimeMsec:5000}]" || !s.Established() {
		t.Errorf("bgp summary: %s", got)
	}
	if s, err := ParseBGPSummary([]byte("{}")); err != nil || s.Established() {
		t.Errorf("no BGP: %+v %v (no peer is not Established)", s, err)
	}

	// RFC 5549 next hops ("via": {"family": "inet6", …}), host routes
	// without "/", a connected route without a gateway, a static route.
	r, err := ParseRoutes(read("routes-leaf1.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := "[{10.10.10.101/32 bgp [{fe80::1093:72ff:febf:914f swp31}]} {10.10.10.102/32 bgp [{fe80::304e:f8ff:fec5:3afd swp32}]} " +
		"{31.31.1.0/24 kernel [{invalid IP swp1}]} {172.16.1.0/24 static [{31.31.1.11 swp1}]}]"
	if got := fmt.Sprint(r); got != want {
		t.Errorf("routes:\n got %s\nwant %s", got, want)
	}
	// ECMP: "nexthops".
	ecmp := `[{"dst":"172.16.2.0/24","protocol":"bgp","metric":20,"flags":[],"nexthops":[` +
		`{"via":{"family":"inet6","host":"fe80::1"},"dev":"swp31","weight":1,"flags":[]},` +
		`{"via":{"family":"inet6","host":"fe80::2"},"dev":"swp32","weight":1,"flags":[]}]}]`
	if r, err := ParseRoutes([]byte(ecmp)); err != nil || fmt.Sprint(r) != "[{172.16.2.0/24 bgp [{fe80::1 swp31} {fe80::2 swp32}]}]" {
		t.Errorf("ECMP: %v %v", r, err)
	}

	// zebra's RIB: leaf1 of TestCumulusFabric (connected, static and BGP
	// routes; ECMP over swp31 and swp32 with RFC 5549 next hops).
	rib, err := ParseRIB(read("rib-leaf1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rib {
		var hops []string
		for _, h := range r.NextHops {
			hops = append(hops, fmt.Sprintf("%v %s active=%v fib=%v", h.IP, h.Interface, h.Active, h.FIB))
		}
		got = append(got, fmt.Sprintf("%s %s sel=%v inst=%v [%s]", r.Prefix, r.Protocol, r.Selected, r.Installed, strings.Join(hops, "; ")))
	}
	if len(rib) != 8 || !strings.Contains(strings.Join(got, "\n"), "172.16.2.0/24 bgp sel=true inst=true [fe80::f034:63ff:fe7e:95ac swp31 active=true fib=true; fe80::f421:89ff:fe46:14 swp32 active=true fib=true]") {
		t.Errorf("RIB:\n%s", strings.Join(got, "\n"))
	}

	// One neighbor: "interface" is an object; several: a list.
	one, err := ParseLLDPNeighbors(read("lldp-spine1.json"))
	if err != nil || fmt.Sprint(one) != "[{swp1 leaf1 swp31}]" {
		t.Errorf("one neighbor: %v %v", one, err)
	}
	two, err := ParseLLDPNeighbors(read("lldp-leaf1.json"))
	if err != nil || fmt.Sprint(two) != "[{swp31 spine1 swp1} {swp32 spine2 swp1}]" {
		t.Errorf("two neighbors: %v %v", two, err)
	}
	if none, err := ParseLLDPNeighbors([]byte(`{"lldp": {}}`)); err != nil || len(none) != 0 {
		t.Errorf("no neighbor: %v %v", none, err)
	}

	// bfdd's sessions: leaf1's over its unnumbered uplink (the peer's
	// IPv6 link-local address), neighbor swp31 bfd 3 300 300.
	bfd, err := ParseBFDPeers(read("bfd-leaf1.json"))
	if err != nil || fmt.Sprintf("%+v", bfd) != "[{Peer:fe80::b0e3:3ff:fee4:96af Interface:swp31 Status:up DetectMultiplier:3 ReceiveInterval:300 TransmitInterval:300}]" {
		t.Errorf("bfd peers: %+v %v", bfd, err)
	}
	if none, err := ParseBFDPeers([]byte("[\n]\n")); err != nil || len(none) != 0 {
		t.Errorf("no session: %v %v", none, err)
	}
	if _, err := ParseBFDPeers([]byte("% Unknown command")); err == nil {
		t.Errorf("not JSON: no error")
	}

	// Every interface of a namespace in one `ip -j addr show` (iproute2
	// 6.1): a veth pair swp31–swp32 and lo, all UP (administratively: the
	// flag); IPv4 addresses only.
	links, err := parseLinks(read("addr-leaf.json"))
	if got := fmt.Sprintf("%+v", links); err != nil || got != "map[lo:{MTU:65536 Up:false AdminUp:true Addresses:[127.0.0.1/8]} swp31:{MTU:9216 Up:true AdminUp:true Addresses:[10.1.1.254/24]} swp32:{MTU:1500 Up:true AdminUp:true Addresses:[]}]" {
		t.Errorf("links: %s %v", got, err)
	}
	if _, err := parseLinks([]byte("Cannot open network namespace")); err == nil {
		t.Errorf("not JSON: no error")
	}
}
