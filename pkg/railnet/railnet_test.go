package railnet

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func addr(s string) netip.Addr  { return netip.MustParseAddr(s) }

// twoRails is a VM with two rail-optimized rails: rail 0 on leaf 1
// (10.0.1.0/24, by name), rail 1 on leaf 2 (10.1.2.0/24, by MAC address),
// each reaching the other leaf's subnet of its own rail and both subnets of
// the other rail.
func twoRails() VM {
	return VM{Name: "gpu-node-1", Rails: []Rail{
		{Interface: "enp1f0", Address: pfx("10.0.1.11/24"), Gateway: addr("10.0.1.1"), MTU: 9000,
			Peers: []netip.Prefix{pfx("10.0.2.0/24"), pfx("10.1.1.0/24"), pfx("10.1.2.0/24")}},
		{Interface: "rail1", MAC: "00:50:56:AA:00:11", Address: pfx("10.1.2.11/24"), Gateway: addr("10.1.2.1"), MTU: 9000,
			Peers: []netip.Prefix{pfx("10.0.1.0/24"), pfx("10.0.2.0/24"), pfx("10.1.1.0/24")}},
	}}
}

func TestNumbers(t *testing.T) {
	for _, tc := range []struct{ r, table, prio, metric int }{{0, 100, 1000, 100}, {1, 101, 1001, 101}, {7, 107, 1007, 107}, {MaxRails - 1, 163, 1063, 163}} {
		if Table(tc.r) != tc.table || Priority(tc.r) != tc.prio || Metric(tc.r) != tc.metric {
			t.Errorf("rail %d: table %d priority %d metric %d; want %d %d %d", tc.r, Table(tc.r), Priority(tc.r), Metric(tc.r), tc.table, tc.prio, tc.metric)
		}
	}
	// Clear of the system's tables (253 default, 254 main, 255 local) and
	// of the kernel's rules (0 local, 32766 main, 32767 default).
	if last := Table(MaxRails - 1); last >= 253 {
		t.Errorf("the last rail's table %d reaches the system's", last)
	}
	if first, last := Priority(0), Priority(MaxRails-1); first <= 0 || last >= 32766 {
		t.Errorf("rule priorities %d–%d are not between the local and main tables' rules", first, last)
	}
}

// New accepts a valid VM (one rail too, a /31, an aggregate peer that
// contains the rail's own subnet) and keeps the MAC address canonical.
func TestNewValid(t *testing.T) {
	g, err := New(twoRails())
	if err != nil {
		t.Fatal(err)
	}
	if g.MAC(0) != "" || g.MAC(1) != "00:50:56:aa:00:11" {
		t.Errorf("MACs %q %q", g.MAC(0), g.MAC(1))
	}
	for name, vm := range map[string]VM{
		"one rail": {Name: "a", Rails: []Rail{{Interface: "ens224", Address: pfx("31.31.31.41/24"), Gateway: addr("31.31.31.1"), MTU: 1500}}},
		"a /31 and an aggregate": {Name: "b", Rails: []Rail{{Interface: "r0", Address: pfx("10.0.0.1/31"), Gateway: addr("10.0.0.0"), MTU: 9000,
			Peers: []netip.Prefix{pfx("10.0.0.0/8")}}}},
		"rail 0 under the host's own netplan ID": {Name: "c", Rails: []Rail{{Interface: "enp1f0", ID: "data", Address: pfx("10.0.1.11/24"), Gateway: addr("10.0.1.254"), MTU: 9000}}},
	} {
		if _, err := New(vm); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// New names every finding with its rail and field, all at once.
func TestNewInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*VM)
		want []string
	}{
		{"no rails", func(vm *VM) { vm.Rails = nil }, []string{"rails: 0 rails; a VM has 1 to 64"}},
		{"too many", func(vm *VM) {
			for len(vm.Rails) <= MaxRails {
				vm.Rails = append(vm.Rails, vm.Rails[0])
			}
		}, []string{"rails: 65 rails; a VM has 1 to 64"}},
		{"interface", func(vm *VM) { vm.Rails[1].Interface = "rail 1" }, []string{`rails[1].interface: "rail 1" is not a Linux interface name`}},
		{"long interface", func(vm *VM) { vm.Rails[1].Interface = "a23456789012345x" }, []string{`rails[1].interface: "a23456789012345x" is not a Linux interface name`}},
		{"loopback", func(vm *VM) { vm.Rails[0].Interface = "lo" }, []string{`rails[0].interface: "lo" is the VM's own loopback`}},
		{"same interface", func(vm *VM) { vm.Rails[1].Interface = "enp1f0" }, []string{"rails[1].interface: enp1f0 is rail 0's interface too"}},
		{"MAC", func(vm *VM) { vm.Rails[1].MAC = "00:50:56:aa:00" }, []string{`rails[1].mac: "00:50:56:aa:00" is not an Ethernet MAC address`}},
		{"multicast MAC", func(vm *VM) { vm.Rails[1].MAC = "01:00:5e:00:00:01" }, []string{"rails[1].mac: 01:00:5e:00:00:01 is a multicast address"}},
		{"same MAC", func(vm *VM) { vm.Rails[0].MAC = "00-50-56-aa-00-11" }, []string{"rails[1].mac: 00:50:56:aa:00:11 is rail 0's MAC address too"}},
		{"same ID", func(vm *VM) { vm.Rails[1].ID = "enp1f0" }, []string{`rails[1].id: netplan ID "enp1f0" is rail 0's too`}},
		{"IPv6", func(vm *VM) { vm.Rails[0].Address = pfx("fd00::1/64") }, []string{"rails[0].address: fd00::1/64 is not an IPv4 address"}},
		{"no address", func(vm *VM) { vm.Rails[0].Address = netip.Prefix{} }, []string{"rails[0].address: invalid Prefix is not an IPv4 address"}},
		{"/32", func(vm *VM) { vm.Rails[0].Address = pfx("10.0.1.11/32") }, []string{"rails[0].address: 10.0.1.11/32: prefix length 32, not 8–31"}},
		{"network address", func(vm *VM) { vm.Rails[0].Address = pfx("10.0.1.0/24") }, []string{"rails[0].address: 10.0.1.0/24 is its subnet's network or broadcast address"}},
		{"overlap", func(vm *VM) { vm.Rails[1].Address, vm.Rails[1].Gateway = pfx("10.0.1.12/24"), addr("10.0.1.1") },
			[]string{"rails[1].address: subnet 10.0.1.0/24 overlaps rail 0's 10.0.1.0/24", "rails[1].peers[0]: 10.0.1.0/24 is the rail's own subnet"}},
		{"gateway outside", func(vm *VM) { vm.Rails[1].Gateway = addr("10.1.1.1") }, []string{"rails[1].gateway: 10.1.1.1 is outside the rail's subnet 10.1.2.0/24"}},
		{"gateway is the address", func(vm *VM) { vm.Rails[1].Gateway = addr("10.1.2.11") }, []string{"rails[1].gateway: 10.1.2.11 is the rail's own address"}},
		{"gateway broadcast", func(vm *VM) { vm.Rails[1].Gateway = addr("10.1.2.255") }, []string{"rails[1].gateway: 10.1.2.255 is the subnet's network or broadcast address"}},
		{"no gateway", func(vm *VM) { vm.Rails[1].Gateway = netip.Addr{} }, []string{"rails[1].gateway: invalid IP is not an IPv4 address"}},
		{"MTU", func(vm *VM) { vm.Rails[1].MTU = 9216 }, []string{"rails[1].mtu: 9216 bytes, not 1280–9000"}},
		{"peer host bits", func(vm *VM) { vm.Rails[0].Peers[0] = pfx("10.0.2.1/24") }, []string{"rails[0].peers[0]: 10.0.2.1/24 has host bits set (the subnet is 10.0.2.0/24)"}},
		{"peer inside", func(vm *VM) { vm.Rails[0].Peers[0] = pfx("10.0.1.128/25") }, []string{"rails[0].peers[0]: 10.0.1.128/25 lies inside the rail's own subnet 10.0.1.0/24"}},
		{"peer twice", func(vm *VM) { vm.Rails[0].Peers[2] = vm.Rails[0].Peers[1] }, []string{"rails[0].peers[2]: 10.1.1.0/24 is listed twice"}},
		{"peer IPv6", func(vm *VM) { vm.Rails[0].Peers[0] = pfx("fd00::/8") }, []string{"rails[0].peers[0]: fd00::/8 is not an IPv4 prefix"}},
		{"several", func(vm *VM) { vm.Rails[0].MTU, vm.Rails[1].Interface = 0, "" },
			[]string{"rails[0].mtu: 0 bytes", `rails[1].interface: "" is not a Linux interface name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := twoRails()
			for i := range vm.Rails { // the peers are the test's own to edit
				vm.Rails[i].Peers = append([]netip.Prefix(nil), vm.Rails[i].Peers...)
			}
			tc.edit(&vm)
			g, err := New(vm)
			if err == nil {
				t.Fatalf("accepted: %+v", g.VM())
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Errorf("%d findings, want %d:\n%v", len(lines), len(tc.want), err)
			}
			for _, w := range tc.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("no finding %q in:\n%v", w, err)
				}
			}
		})
	}
}

// Ethernets: per rail, the routes in the main table with the rail's metric,
// the rail's own subnet on the link and the peers in its table, the rule,
// and match + set-name for a rail found by its MAC address.
func TestEthernets(t *testing.T) {
	g, err := New(twoRails())
	if err != nil {
		t.Fatal(err)
	}
	es := g.Ethernets()
	if len(es) != 2 || es[0].ID != "enp1f0" || es[0].Match != nil || es[0].SetName != "" ||
		es[1].ID != "rail1" || es[1].Match == nil || es[1].Match.MACAddress != "00:50:56:aa:00:11" || es[1].SetName != "rail1" {
		t.Fatalf("definitions: %+v", es)
	}
	var got []string
	for r := range es[1].Routes.All() {
		got = append(got, r.To.String()+" "+r.Via.String()+" "+r.Scope+" "+strconv.Itoa(r.Metric)+" "+strconv.Itoa(r.Table))
	}
	want := []string{
		"10.0.1.0/24 10.1.2.1  101 0", "10.0.2.0/24 10.1.2.1  101 0", "10.1.1.0/24 10.1.2.1  101 0",
		"10.1.2.0/24 invalid IP link 0 101",
		"10.0.1.0/24 10.1.2.1  0 101", "10.0.2.0/24 10.1.2.1  0 101", "10.1.1.0/24 10.1.2.1  0 101",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rail 1's routes (-want +got):\n%s", diff)
	}
	if p := es[1].RoutingPolicy; len(p) != 1 || p[0].From != pfx("10.1.2.11/32") || p[0].Table != 101 || p[0].Priority != 1001 {
		t.Errorf("rail 1's rule: %+v", p)
	}
	if es[0].MTU != 9000 || len(es[0].Addresses) != 1 || es[0].Addresses[0] != pfx("10.0.1.11/24") || es[0].DHCP4 != nil {
		t.Errorf("rail 0: %+v", es[0])
	}
	// Under the host's own netplan ID.
	vm := twoRails()
	vm.Rails[0].ID = "data"
	g, _ = New(vm)
	if id := g.Ethernets()[0].ID; id != "data" {
		t.Errorf("rail 0's ID %q", id)
	}
}

// The sysctl.d file holds every setting of Sysctls, each once, on conf.all.
func TestSysctl(t *testing.T) {
	g, err := New(twoRails())
	if err != nil {
		t.Fatal(err)
	}
	f := string(g.Sysctl())
	var keys []string
	for line := range strings.Lines(f) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(line), " = ")
		if !ok {
			t.Fatalf("line %q", line)
		}
		keys = append(keys, k+"="+v)
	}
	if diff := cmp.Diff([]string{"net.ipv4.conf.all.arp_ignore=2", "net.ipv4.conf.all.arp_announce=2", "net.ipv4.conf.all.rp_filter=2"}, keys); diff != "" {
		t.Errorf("settings (-want +got):\n%s\n%s", diff, f)
	}
	if !strings.HasPrefix(f, "# rdggen: ARP and reverse-path settings of gpu-node-1, a VM with 2 rails") {
		t.Errorf("head:\n%s", f)
	}
}

// A name with a line break stays one comment line in every file.
func TestNameInComments(t *testing.T) {
	vm := twoRails()
	vm.Name = "x\nnet.ipv4.ip_forward = 0"
	g, err := New(vm)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"netplan": g.Netplan(), "sysctl": g.Sysctl(), "script": g.Script()} {
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, "net.ipv4.ip_forward") {
				t.Errorf("%s: the name became a line:\n%s", name, b)
			}
		}
	}
}
