package hostapply

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
	"github.com/rdggen/rdggen/pkg/railnet"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// railsGuestPCI are the staged guest's PCI devices: four L40S GPUs and the
// two rails' VFs (ConnectX-7, vendor 0x15b3), in bus order GPUs 0-1 before
// rail 0's VF's switch … as a vSphere guest numbers them, each behind its
// own virtual root port.
var railsGuestPCI = []struct{ bus, vendor, class, net string }{
	{"0000:0b:00.0", "0x15b3", "0x020000", "ens224"},
	{"0000:13:00.0", "0x10de", "0x030200", ""},
	{"0000:1b:00.0", "0x10de", "0x030200", ""},
	{"0000:8b:00.0", "0x15b3", "0x020000", "rail1"},
	{"0000:a3:00.0", "0x10de", "0x030200", ""},
	{"0000:ab:00.0", "0x10de", "0x030200", ""},
}

// stageRailsGuest writes what topo_facts reads under the host's root: its
// CPU, the online CPUs (no NUMA node: the VM shows none) and its PCI
// devices with their network interfaces.
func stageRailsGuest(t *testing.T, h *netnstest.Host) {
	t.Helper()
	write := func(p, s string) {
		t.Helper()
		f := h.File(p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7543 32-Core Processor\n\nprocessor\t: 1\n")
	write("/sys/devices/system/cpu/online", "0-31\n")
	for i, d := range railsGuestPCI {
		dir := "/sys/bus/pci/devices/" + d.bus
		write(dir+"/vendor", d.vendor+"\n")
		write(dir+"/class", d.class+"\n")
		write(dir+"/numa_node", "-1\n")
		if d.net != "" {
			write(dir+"/net/"+d.net+"/address", fmt.Sprintf("00:50:56:aa:00:%02x\n", i))
		}
	}
}

// railsCluster is the rails-firstboot inventory (two VMs, two rails each)
// on namespace hosts: rail 0 on the cluster's data bridge, rail 1 on the
// bridge rail1 of the switch namespace, each bridge holding its (leaf,
// rail) gateway (.254) so that ping -I reaches it; rail 1's interface
// starts down, without address, at MTU 1500. node1's netplan defines only
// ens224 (by key); node2's is its cloud-init first boot, which already
// defines both rails with their rules.
func railsCluster(t *testing.T) (*netnstest.Cluster, Options) {
	t.Helper()
	netnstest.Require(t)
	inv, err := inventory.LoadFile("../../../testdata/golden/rails-firstboot/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := netnstest.New(t, netnstest.Options{Inventory: inv})
	sw := c.SwitchNS()
	// netnstest cables rail 1 of each host to the bridge rail1 (RailLink),
	// up with its address: the gateways go on the bridges, and rail 1 is
	// taken back to what a fresh clone has, down without an address.
	lines := []string{"addr add 10.20.0.254/24 dev br0", "link set rail1 mtu 9216", "addr add 10.20.1.254/24 dev rail1"}
	for i, h := range c.Hosts {
		inv.Hosts[i].Mgmt = h.Mgmt.String()
		if len(h.Rails) != 1 || h.Rails[0].If != "rail1" {
			t.Fatalf("%s: rails %+v, want rail 1 on rail1", h.Name, h.Rails)
		}
		lines = append(lines, fmt.Sprintf("link set p%dr1 mtu 9216", i+1))
	}
	batch(t, sw, lines...)
	for _, h := range c.Hosts {
		batch(t, h.NS, "addr flush dev rail1", "link set rail1 down mtu 1500")
		stageRailsGuest(t, h)
	}
	own := map[string]string{
		"node1": "network:\n  version: 2\n  ethernets:\n    ens192: {dhcp4: true}\n    ens224:\n      addresses: [10.20.0.11/24]\n",
	}
	cfg, err := os.ReadFile("../../../testdata/golden/rails-firstboot/out/vms/node2/network-config")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("network:\n")
	for _, l := range strings.Split(strings.TrimSuffix(string(cfg), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			b.WriteString("  " + l + "\n")
		}
	}
	own["node2"] = b.String()
	for _, h := range c.Hosts {
		f := h.File("/etc/netplan/50-cloud-init.yaml")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(own[h.Name]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{
		Dial:           remote.SSH{User: "root", KnownHosts: c.KnownHosts, Identities: []string{c.Identity}}.Dialer(),
		Root:           c.RootTemplate(),
		DockerRestart:  c.DockerRestartCommand(),
		DockerValidate: c.DockerValidateCommand(),
		Parallel:       2,
	}
	return c, o
}

func batch(t *testing.T, ns string, lines ...string) {
	t.Helper()
	cmd := execIP(ns)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s -batch: %v\n%s", ns, err, out)
	}
}

// railResults are the rails' checks of rs, and the lines `rdggen check`
// prints for those that did not pass.
func railResults(rs []readiness.Result) (rails []readiness.Result, bad []string) {
	for _, r := range rs {
		for _, k := range railChecks {
			if r.Check == k {
				rails = append(rails, r)
				if r.Status != readiness.Passed {
					bad = append(bad, r.Line())
				}
			}
		}
	}
	return rails, bad
}

// TestRailsApplyAndCheck: a first apply sets up both VMs' second rail live
// (interface up at the fabric's MTU, address, rule, tables, sysctls),
// installs the rails' files and writes NCCL's topology file from the
// staged guest; node2's first boot already gives netplan its rules, so
// rdggen's rails file leaves them out (netplan would write each rule
// twice). The second apply changes nothing, and check passes every rail
// check with each gateway answering ping -I. Then a missing rule and a
// topology file naming a bus ID the guest lacks fail, each with its fix;
// one more apply repairs both.
func TestRailsApplyAndCheck(t *testing.T) {
	c, o := railsCluster(t)
	inv := c.Inventory
	ctx := context.Background()
	var out bytes.Buffer
	o.Out = &out
	rep, err := Run(ctx, inv, o)
	if err != nil || rep.Changed != 2 {
		t.Fatalf("first apply: %v (%d changed)\n%s", err, rep.Changed, out.String())
	}
	t.Logf("first apply:\n%s", out.String())
	for _, want := range []string{
		"+ rail 1: rule 1001: from 10.20.1.11 lookup 101",
		"~ rail 1 rail1: up (was down)",
		"~ rail 1 rail1: mtu 1500 -> 9000",
		"+ rail 1 rail1: address 10.20.1.11/24",
		"~ " + nccltopo.DefaultPath + ": NCCL's topology file from this guest's devices",
		"rail 0's rule from 10.20.0.12 table 100 is in /etc/netplan/50-cloud-init.yaml already (the VM's first boot)",
		"rail 1's rule from 10.20.1.12 table 101 is in /etc/netplan/50-cloud-init.yaml already",
		"+ " + railnet.NetplanPath,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the first apply's output lacks %q", want)
		}
	}
	// The rails' netplan files: node1's has both rules, node2's none.
	for i, h := range c.Hosts {
		b, err := os.ReadFile(h.File(railnet.NetplanPath))
		if err != nil {
			t.Fatal(err)
		}
		if n, want := strings.Count(string(b), "routing-policy:"), []int{2, 0}[i]; n != want {
			t.Errorf("%s: %d routing-policy blocks in %s, want %d:\n%s", h.Name, n, railnet.NetplanPath, want, b)
		}
		rules, _ := c.Exec(h.NS, "ip", "-4", "rule", "show")
		for r, a := range []string{inv.Hosts[i].Rails[0].Address.Addr().String(), inv.Hosts[i].Rails[1].Address.Addr().String()} {
			if want := fmt.Sprintf("%d:\tfrom %s lookup %d", railnet.Priority(r), a, railnet.Table(r)); !strings.Contains(rules, want) {
				t.Errorf("%s: no rule %q:\n%s", h.Name, want, rules)
			}
		}
		if _, err := os.Stat(h.File(nccltopo.DefaultPath)); err != nil {
			t.Errorf("%s: no topology file: %v", h.Name, err)
		}
	}
	out.Reset()
	if rep, err := Run(ctx, inv, o); err != nil || rep.UpToDate != 2 {
		t.Fatalf("second apply: %v (%d up to date)\n%s", err, rep.UpToDate, out.String())
	}

	rs, err := Check(ctx, inv, o)
	if err != nil {
		t.Fatal(err)
	}
	rails, bad := railResults(rs)
	// Per VM: 2 rails × (link, routing, gateway), the sysctls, the file.
	if len(rails) != 2*(2*3+2) || len(bad) != 0 {
		t.Fatalf("%d rail results, not passed:\n%s", len(rails), strings.Join(bad, "\n"))
	}
	for _, r := range rails {
		if r.Check == CheckRailGateway && !strings.Contains(r.Found, "answers from") {
			t.Errorf("%s", r.Line())
		}
	}

	// A missing rule on node1, a topology file on node2 that names a bus
	// ID the guest lacks.
	if out, err := c.Exec(c.Hosts[0].NS, "ip", "-4", "rule", "del", "priority", "1001"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	topo := c.Hosts[1].File(nccltopo.DefaultPath)
	b, err := os.ReadFile(topo)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("0000:a3:00.0")) {
		t.Fatalf("the topology file does not name GPU 2's bus ID:\n%s", b)
	}
	if err := os.WriteFile(topo, bytes.ReplaceAll(b, []byte("0000:a3:00.0"), []byte("0000:a4:00.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, _ = Check(ctx, inv, o)
	_, bad = railResults(rs)
	t.Logf("check after the faults:\n%s", strings.Join(bad, "\n"))
	want := []string{
		"node1: rail-routing rail 1 rail1: FAILED: found no rule 1001: from 10.20.1.11 lookup 101; expected 1001: from 10.20.1.11 lookup 101; fix: rdggen apply --target hosts (or run hosts/node1/rails.sh on node1)",
		"node2: nccl-topology " + nccltopo.DefaultPath + ": FAILED: found ",
	}
	if len(bad) != 2 || bad[0] != want[0] || !strings.HasPrefix(bad[1], want[1]) || !strings.Contains(bad[1], "0000:a4:00.0") ||
		!strings.HasSuffix(bad[1], "fix: rdggen apply --target hosts (it runs /usr/local/sbin/rdggen-nccl-topology, as every boot does)") {
		t.Errorf("check after the faults:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
	out.Reset()
	if rep, err := Run(ctx, inv, o); err != nil || rep.Changed != 2 {
		t.Fatalf("the repairing apply: %v (%d changed)\n%s", err, rep.Changed, out.String())
	}
	rs, _ = Check(ctx, inv, o)
	if _, bad = railResults(rs); len(bad) != 0 {
		t.Errorf("after the repair:\n%s", strings.Join(bad, "\n"))
	}
}

// execIP is `ip -n ns -batch -`.
func execIP(ns string) *exec.Cmd { return exec.Command("ip", "-n", ns, "-batch", "-") }

// A rail whose interface the guest lacks stops the host before anything
// changes; when another interface carries the rail's address, the message
// names it and the inventory field to set.
func TestRailsMissingInterface(t *testing.T) {
	inv, err := inventory.LoadFile("../../../testdata/golden/rails-firstboot/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := &inv.Hosts[0]
	d := desiredFor(inv, h)
	st := &hostState{Rails: &railState{
		Links: map[string]railLink{"ens224": {Flags: []string{"UP", "LOWER_UP"}, MTU: 9000}, "ens256": {Flags: []string{"UP", "LOWER_UP"}, MTU: 9000}},
		Addrs: map[string][]netip.Prefix{"ens224": {h.Rails[0].Address}, "ens256": {h.Rails[1].Address}},
		Seen:  map[string]remote.Result{"rlinks": {}, "raddrs": {}, "rrules": {}, "rsysctl": {}},
	}}
	p := &plan{d: d, newFiles: map[string]bool{}, fileWhy: map[string]string{}}
	_, err = p.planRails(inv, st, d.Files)
	want := `rail 1: no interface rail1 on node1 (hosts[0].data[1].interface, by default rail1; rdggen finds each rail's VF by its name): ens256 carries the rail's address 10.20.1.11/24, set hosts[0].data[1].interface: ens256`
	if _, ok := err.(*hostError); !ok || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	delete(st.Rails.Addrs, "ens256")
	if _, err = p.planRails(inv, st, d.Files); err == nil || !strings.Contains(err.Error(), "give the VF that name, or set hosts[0].data[1].interface to its name in the guest") {
		t.Errorf("without the address elsewhere: %v", err)
	}
}
