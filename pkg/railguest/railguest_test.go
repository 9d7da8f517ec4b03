package railguest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	_ "github.com/rdggen/rdggen/internal/golden" // the -update flag
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railnet"
)

func load(t testing.TB, golden string) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.LoadFile("../../testdata/golden/" + golden + "/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func pfxs(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, pfx(s))
	}
	return out
}

// The rails golden case's first VM: four rails on leaves 0–3, each with its
// leaf's gateway (.254), the fabric's MTU, its MAC when given, and the four
// (leaf, rail) subnets merged into one aggregate, 10.0.0.0/22.
func TestVM(t *testing.T) {
	inv := load(t, "rails")
	h := &inv.Hosts[0]
	got := VM(inv, h, []string{"", "00:50:56:AA:00:01"})
	agg := pfxs("10.0.0.0/22")
	want := railnet.VM{Name: "gpu1", Rails: []railnet.Rail{
		{Interface: "enp1f0", Address: pfx("10.0.0.11/24"), Gateway: netip.MustParseAddr("10.0.0.254"), MTU: 9000, Peers: agg},
		{Interface: "rail1", MAC: "00:50:56:AA:00:01", Address: pfx("10.0.1.11/24"), Gateway: netip.MustParseAddr("10.0.1.254"), MTU: 9000, Peers: agg},
		{Interface: "rail2", Address: pfx("10.0.2.11/24"), Gateway: netip.MustParseAddr("10.0.2.254"), MTU: 9000, Peers: agg},
		{Interface: "rail3", Address: pfx("10.0.3.11/24"), Gateway: netip.MustParseAddr("10.0.3.254"), MTU: 9000, Peers: agg},
	}}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("VM (-want +got):\n%s", diff)
	}
	if _, err := Guest(inv, h, nil); err != nil {
		t.Errorf("Guest: %v", err)
	}
}

// Several rails on one leaf (rails-shared): leaf-a's two rail subnets
// merge into 10.1.0.0/23, leaf-b's into 10.2.0.0/23; a rail whose own
// subnet sits in an aggregate keeps it (railnet keeps the own subnet on the
// link), the VM with ens256 named by the inventory.
func TestPeersShared(t *testing.T) {
	inv := load(t, "rails-shared")
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		for r := range h.Rails {
			if got, want := Peers(inv, h, r), pfxs("10.1.0.0/23", "10.2.0.0/23"); !slices.Equal(got, want) {
				t.Errorf("%s rail %d: peers %v, want %v", h.Name, r, got, want)
			}
		}
		if vm := VM(inv, h, nil); vm.Rails[1].Interface != "ens256" {
			t.Errorf("%s: rail 1 is %q", h.Name, vm.Rails[1].Interface)
		}
	}
	if p := Peers(inv, &inv.Hosts[0], 2); p != nil {
		t.Errorf("rail 2 of a VM with 2: %v", p)
	}
}

// aggregate covers exactly its input: siblings merge up, what is inside
// another is dropped, what is not aligned or not adjacent stays apart.
func TestAggregate(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"10.0.3.0/24", "10.0.1.0/24", "10.0.0.0/24", "10.0.2.0/24"}, []string{"10.0.0.0/22"}},
		{[]string{"10.0.1.0/24", "10.0.2.0/24"}, []string{"10.0.1.0/24", "10.0.2.0/24"}}, // not one /23
		{[]string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"}, []string{"10.0.0.0/23", "10.0.2.0/24"}},
		{[]string{"10.0.0.0/16", "10.0.5.0/24", "10.1.0.0/16"}, []string{"10.0.0.0/15"}},
		{[]string{"10.0.0.0/24", "10.0.0.0/24", "192.168.0.0/25", "192.168.0.128/25"}, []string{"10.0.0.0/24", "192.168.0.0/24"}},
		{[]string{"10.0.0.0/24", "10.0.2.0/24", "10.0.1.0/24", "10.0.3.0/24", "10.0.4.0/24"}, []string{"10.0.0.0/22", "10.0.4.0/24"}},
		{nil, nil},
	} {
		got := aggregate(pfxs(tc.in...))
		if !slices.Equal(got, pfxs(tc.want...)) {
			t.Errorf("aggregate(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// A host with one rail gets no file; the rails golden case's hosts get the
// rails' three and the topology's three, in hosts/<host>/, the scripts
// 0755.
func TestFilesAndStream(t *testing.T) {
	ref := load(t, "reference")
	if fs, err := Files(ref, &ref.Hosts[0], nil); fs != nil || err != nil {
		t.Errorf("one rail: %v %v", fs, err)
	}
	if n := len(slices.Collect(Stream(ref))); n != 0 {
		t.Errorf("one rail: %d files in the tree", n)
	}
	inv := load(t, "rails")
	fs, err := Files(inv, &inv.Hosts[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Name+" "+f.Path+" "+f.Mode.String())
	}
	want := []string{
		"61-rdggen-rails.yaml /etc/netplan/61-rdggen-rails.yaml -rw-------",
		"60-rdggen-rails.conf /etc/sysctl.d/60-rdggen-rails.conf -rw-r--r--",
		"rails.sh  -rwxr-xr-x",
		"nccl-topology.xml /etc/rdggen/nccl-topology.xml -rw-r--r--",
		"nccl-topology.sh /usr/local/sbin/rdggen-nccl-topology -rwxr-xr-x",
		"rdggen-nccl-topology.service /etc/systemd/system/rdggen-nccl-topology.service -rw-r--r--",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	var paths []string
	for f := range Stream(inv) {
		if strings.HasPrefix(f.Path, "hosts/gpu3/") {
			paths = append(paths, f.Path+" "+f.Mode.String())
		}
	}
	want = []string{
		"hosts/gpu3/61-rdggen-rails.yaml -rw-r--r--", "hosts/gpu3/60-rdggen-rails.conf -rw-r--r--", "hosts/gpu3/rails.sh -rwxr-xr-x",
		"hosts/gpu3/nccl-topology.xml -rw-r--r--", "hosts/gpu3/nccl-topology.sh -rwxr-xr-x", "hosts/gpu3/rdggen-nccl-topology.service -rw-r--r--",
	}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("Stream (-want +got):\n%s", diff)
	}
	if n := len(slices.Collect(Stream(inv))); n != 6*len(inv.Hosts) {
		t.Errorf("%d files for %d hosts", n, len(inv.Hosts))
	}
}

// The netplan file the tree holds for a rails VM: every rail by name, its
// address, MTU, the aggregate through its own gateway in the main table
// (metric 100+r) and its table, and its rule.
func TestNetplanOfRails(t *testing.T) {
	inv := load(t, "rails")
	fs, err := Files(inv, &inv.Hosts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	np := string(fs[0].Data)
	for _, w := range []string{
		"    rail2:\n      addresses:\n        - 10.0.2.11/24\n      mtu: 9000\n      routes:\n" +
			"        - to: 10.0.0.0/22\n          via: 10.0.2.254\n          metric: 102\n" +
			"        - to: 10.0.2.0/24\n          scope: link\n          table: 102\n" +
			"        - to: 10.0.0.0/22\n          via: 10.0.2.254\n          table: 102\n" +
			"      routing-policy:\n        - from: 10.0.2.11/32\n          table: 102\n          priority: 1002\n",
	} {
		if !strings.Contains(np, w) {
			t.Errorf("no\n%s\nin\n%s", w, np)
		}
	}
	if strings.Contains(np, "macaddress") {
		t.Errorf("the tree's file matches by MAC:\n%s", np)
	}
}
