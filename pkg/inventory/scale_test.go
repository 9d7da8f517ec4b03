package inventory

import (
	"fmt"
	"math/rand"
	"net/netip"
	"strings"
	"testing"
)

// scaleYAML is a valid inventory of n hosts (n ≤ 8190) that exercises every
// cross-host rule: 64-port switches (SN4600C) with management addresses, one
// data network (a /21 up to 2,046 hosts, a /19 above), and, when full is
// set, two VMs per ESXi host sharing its port, GPUs pinned by PCI address,
// management addresses as IP literals and every other host's container
// subnet written out (the rest derived). Without full it is the plain
// cluster of internal/render's benchmarks: one VM per ESXi host, names for
// management, every subnet derived.
func scaleYAML(n int, full bool) []byte {
	var b strings.Builder
	b.WriteString("name: scale\nvcenter: https://vc.example/sdk\nswitches:\n")
	for s := range (n + 63) / 64 {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, onyx: 3.6.8190, mgmt: 192.168.%d.%d}\n", s+1, s/250, s%250+1)
	}
	b.WriteString(`docker: {pool: 10.0.0.0/8, prefix: 24}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}, {model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`)
	bits := 21
	if n > 2046 {
		bits = 19
	}
	for i := range n {
		off := i + 1
		if !full {
			fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/%d, switch: leaf%d, port: 1/%d}}\n",
				i+1, i+1, off>>8, off&255, bits, i/64+1, i%64+1)
			continue
		}
		e := i / 2 // two VMs per ESXi host, on its one port
		fmt.Fprintf(&b, "  - name: h%d\n    esxi: esx%d.example\n    mgmt: 172.20.%d.%d:22\n", i+1, e+1, off>>8, off&255)
		fmt.Fprintf(&b, "    gpus: [{model: V100-PCIE-16GB, memory_gb: 16, pci: 0000:%02x:00.0}, {model: V100-PCIE-16GB, memory_gb: 16, pci: 0000:%02x:00.0}]\n", 2*(i%2)+1, 2*(i%2)+2)
		fmt.Fprintf(&b, "    data: {address: 100.64.%d.%d/%d, switch: leaf%d, port: 1/%d}\n", off>>8, off&255, bits, e/64+1, e%64+1)
		if i%2 == 0 {
			fmt.Fprintf(&b, "    docker: {subnet: 10.%d.%d.0/24}\n", off>>8, off&255)
		}
	}
	return []byte(b.String())
}

func TestScaleInventoriesAreValid(t *testing.T) {
	for _, full := range []bool{false, true} {
		inv, err := Load("scale.yaml", scaleYAML(300, full))
		if err != nil {
			t.Fatalf("full=%v: %v", full, err)
		}
		if len(inv.Hosts) != 300 || inv.Hosts[299].Subnet.String() != "10.1.44.0/24" {
			t.Errorf("full=%v: %d hosts, the last one's subnet %s", full, len(inv.Hosts), inv.Hosts[299].Subnet)
		}
	}
}

// BenchmarkValidate loads (decodes and validates) inventories of 1,024 and
// 4,096 hosts; the YAML text is made outside the timed loop. "plain" is
// internal/render's synthetic cluster, "full" every cross-host rule at work
// (see scaleYAML). Validation is linear or n log n in the hosts when the
// 4,096-host time is about 4× the 1,024-host one.
func BenchmarkValidate(b *testing.B) {
	for _, full := range []bool{false, true} {
		kind := map[bool]string{false: "plain", true: "full"}[full]
		for _, n := range []int{1024, 4096} {
			src := scaleYAML(n, full)
			b.Run(fmt.Sprintf("%s/hosts=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Load("scale.yaml", src); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The indexes of index.go give what the pairwise scans they replace give,
// in the same order.
func TestIndexesMatchPairwiseScans(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	addr := func() netip.Addr {
		switch r.Intn(5) {
		case 0:
			return netip.AddrFrom16([16]byte{0xfd, 15: byte(r.Intn(8))})
		case 1:
			return netip.AddrFrom16(netip.AddrFrom4([4]byte{10, 0, byte(r.Intn(4)), byte(r.Intn(8))}).As16()) // 4in6
		}
		return netip.AddrFrom4([4]byte{10, 0, byte(r.Intn(4)), byte(r.Intn(8))})
	}
	prefix := func() netip.Prefix {
		p, _ := netip.AddrFrom4([4]byte{10, 0, byte(r.Intn(4)), byte(r.Intn(8))}).Prefix(20 + r.Intn(13))
		return p
	}
	for range 200 {
		var owned []ownedAddr
		for range r.Intn(30) {
			owned = append(owned, ownedAddr{addr: addr()})
		}
		var nets []dataNet
		seen := map[netip.Prefix]bool{}
		for range r.Intn(30) {
			if p := prefix(); !seen[p] {
				seen[p] = true
				nets = append(nets, dataNet{net: p})
			}
		}
		ai, ni := newAddrIndex(owned), newNetIndex(nets)
		for range 20 {
			s := prefix()
			var want []int
			for k, o := range owned {
				if s.Contains(o.addr) {
					want = append(want, k)
				}
			}
			if got := ai.within(s); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("addresses in %s: %v, the scan %v (%v)", s, got, want, owned)
			}
			want = nil
			for k, n := range nets {
				if s.Overlaps(n.net) {
					want = append(want, k)
				}
			}
			if got := ni.overlapping(s); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("networks overlapping %s: %v, the scan %v (%v)", s, got, want, nets)
			}
		}
	}
	inv, err := Load("scale.yaml", scaleYAML(300, true))
	if err != nil {
		t.Fatal(err)
	}
	inv.Hosts[7].ESXi, inv.Hosts[250].ESXi = "", inv.Hosts[3].ESXi
	groups := (&checker{inv: inv}).esxiGroups()
	names := inv.ESXiHosts()
	if len(groups) != len(names) {
		t.Fatalf("%d groups, %d ESXi hosts", len(groups), len(names))
	}
	for i, g := range groups {
		if g.name != names[i] || fmt.Sprint(g.hosts) != fmt.Sprint(inv.HostsOnESXi(names[i])) {
			t.Fatalf("group %d: %s %v, want %s %v", i, g.name, g.hosts, names[i], inv.HostsOnESXi(names[i]))
		}
	}
}
