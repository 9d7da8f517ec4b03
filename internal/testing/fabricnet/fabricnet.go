// Package fabricnet gives the switch simulators a data plane run by the
// routing daemons the switches run themselves (needs root): the fabric
// tests' and `rdggen lab`'s (internal/lab, through its TB adapter).
//
// A fabric is laid out in Linux network namespaces from a plain
// description (Spec): one namespace per switch (rdg<slot>f<switch>), one
// veth pair per link, each end named as its switch's port — Cumulus ports
// keep their names (swp31), ONYX ports, whose names are not legal Linux
// interface names, become eth<unit>-<port> (1/31 → eth1-31, 1/1/2 →
// eth1-1-2; IfName). Each namespace has its loopback up and IPv4 and IPv6
// forwarding on (ONYX: IPv4 only with `ip routing`).
//
// Each switch runs FRR (Debian's frr 8.4: zebra, staticd, bfdd and bgpd, each
// with its own pid file, zserv socket and vty socket directory, so the
// instances of different namespaces never meet) and lldpd (its own control
// socket, system hostname = the switch's name, port ids as interface names,
// one LLDPDU a second). What they run is rendered from the simulator's
// configuration as the switch OS renders it: RenderNVUE from the applied
// NVUE tree of pkg/sim/nvuesim (FollowNVUE re-renders after each apply),
// RenderONYX from pkg/sim/onyxsim's running-config (FollowONYX re-renders
// after each configuration change). Interface addresses and MTUs are set on
// the veths, as the switch OS programs its ports; FRR learns them from the
// kernel. A VLAN's access ports join a Linux bridge named as the VLAN's IP
// interface (vlan1), which carries the SVI's addresses: the hosts of a leaf
// share its data subnet, as on a switch (this kernel has no VLAN-aware
// bridges or VLAN devices; access ports are untagged, so a bridge per VLAN
// forwards the same). A change of FRR configuration restarts staticd, bfdd and
// bgpd.
//
// The readers (BGPSummary, Routes, LLDPNeighbors, Link) return Go values:
// what a fabric check reads from the switches, and what a simulator's
// operational views can be backed by (NVUEBGPNeighbors).
//
// Hosts attach with Attach (any namespace) or AttachHost (a netnstest
// host: its data0 moves from the netnstest switch bridge to a leaf port).
// The slot comes from netnstest.TakeSlot, so fabrics and netnstest
// clusters of parallel test processes never collide; a fabric sharing a
// cluster's slot passes Options.Slot.
//
// Cleanup is complete: every daemon is ended by the pids in its pid file
// (lldpd's monitor and its child alike), then the namespaces are deleted;
// nothing is created in the machine's own namespace.
package fabricnet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// TB is what a fabric needs of its caller: a test's testing.TB, or
// internal/lab's adapter, which runs a fabric outside a test (`rdggen lab`).
// It is netnstest.TB (Fatal and Fatalf must not return; Cleanup's
// functions run when the fabric is torn down) with Logf, where Close
// reports a process it had to end.
type TB interface {
	netnstest.TB
	Logf(format string, args ...any)
}

// OS names a switch operating system.
type OS string

// The switch operating systems a fabric simulates.
const (
	Cumulus OS = "cumulus"
	ONYX    OS = "onyx"
)

// Switch is one switch of a Spec.
type Switch struct {
	// Name is the switch's name (its LLDP system name and FRR hostname),
	// e.g. "leaf1": letters, digits and '-', at most 20 characters.
	Name string
	// OS is Cumulus or ONYX.
	OS OS
}

// End is one end of a link: a switch and its port as the switch OS names
// it ("swp31" on Cumulus, "1/31" on ONYX).
type End struct {
	Switch, Port string
}

// Link is a cable between two switch ports.
type Link struct {
	A, B End
}

// Spec describes a fabric: its switches and the cabling between them.
type Spec struct {
	Switches []Switch
	Links    []Link
}

// Options shape a fabric.
type Options struct {
	// Slot is a netnstest slot to share (a cluster's Slot: its hosts and
	// the fabric's switches then share the slot's names); 0 takes one. One
	// fabric per slot.
	Slot int
}

// Fabric is a running fabric.
type Fabric struct {
	// Slot is the netnstest slot the namespaces are named after.
	Slot int
	// Dir holds each switch's configuration, sockets, pid files and logs
	// (Dir/<switch>/), readable by FRR's user.
	Dir string

	t        TB
	spec     Spec
	switches map[string]*node

	mu     sync.Mutex
	hosts  []string    // HostNS and Hub namespaces
	cables map[End]End // each switch-to-switch cable, from both ends
	hubs   int         // Hub namespaces made
}

// node is one switch's namespace and daemons.
type node struct {
	sw    Switch
	ns    string
	dir   string
	ports map[string]bool // Linux interface names of the cabled and attached ports

	mu     sync.Mutex     // serialises Program
	speed  map[string]int // Gb/s each port's link came up at (speed.go)
	frr    string         // the FRR configuration running
	router Router
	lldpd  *exec.Cmd
	gen    func() (Router, error)
	err    error // of the last background sync
	closed bool
}

// IfName is the Linux interface name of a switch port: Cumulus ports keep
// their name (swp31, swp1s0); an ONYX port unit/port[/split] becomes
// eth<unit>-<port>[-<split>] (1/31 → eth1-31), because '/' is not allowed
// in a Linux interface name. PortName is the reverse.
func IfName(os OS, port string) string {
	if os == ONYX {
		return "eth" + strings.ReplaceAll(port, "/", "-")
	}
	return port
}

// PortName is the switch port of a Linux interface name (IfName's inverse).
func PortName(os OS, ifname string) string {
	if os == ONYX && strings.HasPrefix(ifname, "eth") {
		return strings.ReplaceAll(strings.TrimPrefix(ifname, "eth"), "-", "/")
	}
	return ifname
}

// Binaries the fabric runs (Debian's frr and lldpd packages).
const (
	Zebra   = "/usr/lib/frr/zebra"
	Staticd = "/usr/lib/frr/staticd"
	Bgpd    = "/usr/lib/frr/bgpd"
	Bfdd    = "/usr/lib/frr/bfdd"
	Vtysh   = "/usr/bin/vtysh"
	LLDPD   = "/usr/sbin/lldpd"
	LLDPCLI = "/usr/sbin/lldpcli"
)

// Require skips t (fails it when CI=true, netnstest.Unavailable) unless
// the process is root, ip works in namespaces, and FRR (zebra, staticd,
// bgpd, vtysh, user frr) and lldpd are installed.
func Require(t TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		netnstest.Unavailable(t, "fabricnet: needs root to create network namespaces (run the tests as root, as CI does)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		netnstest.Unavailable(t, "fabricnet: ip not found (install iproute2)")
	}
	for _, bin := range []string{Zebra, Staticd, Bgpd, Bfdd, Vtysh} {
		if _, err := os.Stat(bin); err != nil {
			netnstest.Unavailable(t, "fabricnet: %s not found (install frr)", bin)
		}
	}
	for _, bin := range []string{LLDPD, LLDPCLI} {
		if _, err := os.Stat(bin); err != nil {
			netnstest.Unavailable(t, "fabricnet: %s not found (install lldpd)", bin)
		}
	}
	if _, err := user.Lookup("frr"); err != nil {
		netnstest.Unavailable(t, "fabricnet: no user frr (install frr)")
	}
	probe := netnstest.ProbeName("rdgfprobe")
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		netnstest.Unavailable(t, "fabricnet: ip netns add does not work here: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", probe).Run()
	if out, err := exec.Command("ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1").CombinedOutput(); err != nil {
		netnstest.Unavailable(t, "fabricnet: the kernel refuses veth pairs: %v: %s", err, out)
	}
}

// SlotDir is the directory of the files (configurations, sockets, logs) of
// the daemons of the fabric in netnstest slot slot.
func SlotDir(slot int) string {
	return filepath.Join("/tmp/rdggen-fabricnet", strconv.Itoa(slot))
}

// New lays out spec in namespaces and starts each switch's lldpd and
// zebra; staticd, bfdd and bgpd start once a configuration is given (Program,
// FollowNVUE, FollowONYX). Everything is removed by t.Cleanup.
func New(t TB, spec Spec, o Options) *Fabric {
	t.Helper()
	Require(t)
	slot := o.Slot
	if slot == 0 {
		slot = netnstest.TakeSlot(t)
	}
	f := &Fabric{Slot: slot, t: t, spec: spec, switches: map[string]*node{}, cables: map[End]End{},
		Dir: SlotDir(slot)}
	_ = f.removeDir()
	t.Cleanup(f.Close)
	frr, err := user.Lookup("frr")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(frr.Uid)
	gid, _ := strconv.Atoi(frr.Gid)
	for _, sw := range spec.Switches {
		if sw.OS != Cumulus && sw.OS != ONYX {
			t.Fatalf("fabricnet: switch %s: OS %q (cumulus or onyx)", sw.Name, sw.OS)
		}
		if _, dup := f.switches[sw.Name]; dup || sw.Name == "" || len(sw.Name) > 20 || strings.Trim(sw.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "" {
			t.Fatalf("fabricnet: switch name %q: empty, doubled or not [A-Za-z0-9-]{1,20}", sw.Name)
		}
		n := &node{sw: sw, ns: fmt.Sprintf("rdg%df%s", slot, sw.Name), dir: filepath.Join(f.Dir, sw.Name), ports: map[string]bool{}}
		f.switches[sw.Name] = n
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{filepath.Dir(f.Dir), f.Dir, n.dir} {
			_ = os.Chmod(d, 0o755)
		}
		if err := os.Chown(n.dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		f.must("ip", "netns", "add", n.ns)
		f.batch(n.ns, "link set lo up")
		n.sysctl(f, Router{Forwarding: sw.OS == Cumulus})
	}
	for _, l := range spec.Links {
		a, b := f.node(l.A.Switch), f.node(l.B.Switch)
		ia, ib := IfName(a.sw.OS, l.A.Port), IfName(b.sw.OS, l.B.Port)
		if len(ia) > 15 || len(ib) > 15 || a.ports[ia] || b.ports[ib] {
			t.Fatalf("fabricnet: link %s:%s – %s:%s: a port used twice or a name over 15 bytes", l.A.Switch, l.A.Port, l.B.Switch, l.B.Port)
		}
		a.ports[ia], b.ports[ib] = true, true
		f.cables[l.A], f.cables[l.B] = l.B, l.A
		f.batch(a.ns, "link add "+ia+" type veth peer name "+ib+" netns "+b.ns, "link set "+ia+" up")
		f.batch(b.ns, "link set "+ib+" up")
	}
	for _, n := range f.nodes() {
		n.setMTU(f, Router{})
		if err := f.startZebra(n); err != nil {
			t.Fatal(err)
		}
		if err := f.startLLDPD(n); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// NS is the network namespace of switch sw.
func (f *Fabric) NS(sw string) string { return f.node(sw).ns }

// Switches returns the spec's switches, in order.
func (f *Fabric) Switches() []Switch { return append([]Switch(nil), f.spec.Switches...) }

func (f *Fabric) node(name string) *node {
	n := f.switches[name]
	if n == nil {
		f.t.Fatalf("fabricnet: no switch %q", name)
	}
	return n
}

func (f *Fabric) nodes() []*node {
	var out []*node
	for _, sw := range f.spec.Switches {
		out = append(out, f.switches[sw.Name])
	}
	return out
}

// Attach cables port of switch sw to namespace ns: a veth pair with one end
// in the switch's namespace named as the port (IfName) and the other in ns
// named ifname, both up. The switch's configuration is programmed again, so
// the port's addresses and MTU apply to it.
func (f *Fabric) Attach(sw, port, ns, ifname string) {
	f.t.Helper()
	n := f.node(sw)
	name := IfName(n.sw.OS, port)
	if n.ports[name] {
		f.t.Fatalf("fabricnet: %s port %s is cabled already", sw, port)
	}
	f.batch(n.ns, "link add "+name+" type veth peer name "+ifname+" netns "+ns, "link set "+name+" up")
	f.batch(ns, "link set "+ifname+" up")
	n.mu.Lock()
	n.ports[name] = true
	n.mu.Unlock()
	f.reprogram(n)
}

// AttachHost moves netnstest host h's data interface (h.DataIf: data0, or
// the inventory's data_interface) from its cluster's switch
// bridge to port of leaf sw, with the address data (a leaf owns its hosts'
// subnet, so a host behind another leaf than the cluster's switch needs an
// address in that leaf's subnet; h.Data and the cluster's inventory are
// left as they were) and a default route via gw (the leaf's address on that
// port): the host then reaches the other leaves' subnets across the spines.
func (f *Fabric) AttachHost(h *netnstest.Host, sw, port string, data netip.Prefix, gw netip.Addr) {
	f.t.Helper()
	dev := h.DataIf()
	f.must("ip", "-n", h.NS, "link", "del", dev)
	f.Attach(sw, port, h.NS, dev)
	f.batch(h.NS, "addr add "+data.String()+" dev "+dev, "route replace default via "+gw.String()+" dev "+dev)
}

// AttachRail moves rail rl of netnstest host h (its interface, rl.If)
// from its cluster's rail bridge to port of leaf sw, with the rail's
// address and no route: a guest's routes of several rails come from the
// hosts target (pkg/railnet: a table and a rule per rail), which reaches
// the other (leaf, rail) subnets through the rail's gateway on sw.
func (f *Fabric) AttachRail(h *netnstest.Host, rl netnstest.RailLink, sw, port string) {
	f.t.Helper()
	f.must("ip", "-n", h.NS, "link", "del", rl.If)
	f.Attach(sw, port, h.NS, rl.If)
	f.batch(h.NS, "addr add "+rl.Address.String()+" dev "+rl.If)
}

// reprogram programs n's current configuration again (after a port was
// added).
func (f *Fabric) reprogram(n *node) {
	n.mu.Lock()
	gen := n.gen
	n.mu.Unlock()
	if gen != nil {
		if err := f.sync(n); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	n.mu.Lock()
	r := n.router
	n.mu.Unlock()
	if r.Interfaces != nil {
		if err := f.program(n, r); err != nil {
			f.t.Fatal(err)
		}
	} else {
		n.setMTU(f, Router{DefaultMTU: defaultMTU(n.sw.OS)})
	}
}

func defaultMTU(os OS) int {
	if os == ONYX {
		return 1500
	}
	return 9216
}

// Program makes switch sw route as r says: forwarding, interface
// addresses (exactly r's IPv4 addresses on each port and on lo) and MTUs,
// and FRR's configuration (staticd, bfdd and bgpd restarted when it changed).
func (f *Fabric) Program(sw string, r Router) {
	f.t.Helper()
	if err := f.program(f.node(sw), r); err != nil {
		f.t.Fatal(err)
	}
}

func (f *Fabric) program(n *node, r Router) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.router = r
	if err := n.sysctlErr(r); err != nil {
		return err
	}
	if err := n.bridge(r); err != nil {
		return err
	}
	var lines []string
	have := n.addresses()
	names := []string{"lo"}
	for p := range n.ports {
		names = append(names, p)
	}
	for name := range n.links() {
		if isSVI(name) { // a VLAN's bridge, with or without an SVI
			names = append(names, name)
		}
	}
	for _, name := range names {
		want := map[string]bool{}
		if !isPort(n, name) || r.access(name) == 0 {
			for _, a := range r.Interfaces[name].Addresses {
				want[a.String()] = true
			}
		}
		for _, a := range have[name] {
			if !want[a] {
				lines = append(lines, "addr del "+a+" dev "+name)
			}
		}
		for a := range want {
			if !contains(have[name], a) {
				lines = append(lines, "addr add "+a+" dev "+name)
			}
		}
		mtu := r.Interfaces[name].MTU
		switch {
		case name == "lo":
			continue
		case isSVI(name) && mtu == 0:
			continue // the bridge's: its ports' smallest
		case mtu == 0 && r.DefaultMTU != 0:
			mtu = r.DefaultMTU
		case mtu == 0:
			mtu = defaultMTU(n.sw.OS)
		}
		lines = append(lines, "link set "+name+" mtu "+strconv.Itoa(mtu))
	}
	if len(lines) > 0 {
		if err := batchErr(n.ns, lines...); err != nil {
			return err
		}
	}
	if r.FRR == n.frr {
		return nil
	}
	conf := filepath.Join(n.dir, "frr.conf")
	if err := writeFile(conf, []byte(r.FRR)); err != nil {
		return err
	}
	n.frr = r.FRR
	stopPidFile(filepath.Join(n.dir, "bgpd.pid"))
	stopPidFile(filepath.Join(n.dir, "bfdd.pid"))
	stopPidFile(filepath.Join(n.dir, "staticd.pid"))
	// zebra keeps running; tell it nothing: it learns the kernel's
	// addresses itself, and its own configuration has no state we render.
	// bfdd before bgpd, which registers its sessions with it.
	for _, d := range []string{Staticd, Bfdd, Bgpd} {
		if err := n.startDaemon(d); err != nil {
			return err
		}
	}
	return nil
}

func isPort(n *node, name string) bool { return n.ports[name] }

// isSVI: a VLAN's IP interface, vlan<id>.
func isSVI(name string) bool {
	id, ok := strings.CutPrefix(name, "vlan")
	v, err := strconv.Atoi(id)
	return ok && err == nil && v >= 1 && v <= 4094 && strconv.Itoa(v) == id
}

// access is port's access VLAN (0: routed).
func (r Router) access(port string) int {
	if v, ok := r.Access[port]; ok {
		return v
	}
	return r.DefaultAccess
}

// bridge makes n's VLANs: one Linux bridge per VLAN, named as the VLAN's IP
// interface (vlan<id>, which carries the SVI's addresses), holding exactly
// the ports whose access VLAN it is. This kernel has neither VLAN-aware
// bridges nor VLAN devices (CONFIG_BRIDGE_VLAN_FILTERING and 8021q are off),
// and access ports carry untagged frames only, so a bridge per VLAN forwards
// as the switch's VLAN-aware bridge would. On ONYX the kernel's spanning tree
// runs (2 s forward delay): its default-bridged ports could otherwise loop
// between switches. A VLAN's bridge exists while a port is in it or its SVI
// is configured.
func (n *node) bridge(r Router) error {
	wantPorts := map[string]int{}
	wantVLAN := map[string]bool{}
	for p := range n.ports {
		if v := r.access(p); v > 0 {
			wantPorts[p] = v
			wantVLAN["vlan"+strconv.Itoa(v)] = true
		}
	}
	for name := range r.Interfaces {
		if isSVI(name) {
			wantVLAN[name] = true
		}
	}
	links := n.links()
	stp := "0"
	if n.sw.OS == ONYX {
		stp = "1"
	}
	var first, then []string
	for name := range wantVLAN {
		if _, ok := links[name]; !ok {
			first = append(first, "link add "+name+" type bridge stp_state "+stp+" forward_delay 200", "link set "+name+" up")
		}
	}
	for p := range n.ports {
		want := ""
		if v := wantPorts[p]; v > 0 {
			want = "vlan" + strconv.Itoa(v)
		}
		switch master := links[p]; {
		case want != "" && master != want:
			then = append(then, "link set "+p+" master "+want)
		case want == "" && master != "":
			then = append(then, "link set "+p+" nomaster")
		}
	}
	for name := range links {
		if isSVI(name) && !wantVLAN[name] {
			then = append(then, "link del "+name)
		}
	}
	if lines := append(first, then...); len(lines) > 0 {
		return batchErr(n.ns, lines...)
	}
	return nil
}

// links returns n's links by name, each with its master ("" for none).
func (n *node) links() map[string]string {
	out, _ := exec.Command("ip", "-n", n.ns, "-j", "link", "show").Output()
	var raw []struct {
		Name   string `json:"ifname"`
		Master string `json:"master"`
	}
	_ = json.Unmarshal(out, &raw)
	m := map[string]string{}
	for _, l := range raw {
		m[l.Name] = l.Master
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addresses returns the IPv4 global addresses of n's interfaces (lo's
// 127.0.0.1 left out), by interface name.
func (n *node) addresses() map[string][]string {
	out, _ := exec.Command("ip", "-n", n.ns, "-4", "-o", "addr", "show").Output()
	m := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[2] != "inet" || f[3] == "127.0.0.1/8" {
			continue
		}
		m[f[1]] = append(m[f[1]], f[3])
	}
	return m
}

func (n *node) sysctl(f *Fabric, r Router) {
	if err := n.sysctlErr(r); err != nil {
		f.t.Fatal(err)
	}
}

func (n *node) sysctlErr(r Router) error {
	v := "0"
	if r.Forwarding {
		v = "1"
	}
	out, err := exec.Command("ip", "netns", "exec", n.ns, "sysctl", "-qw",
		"net.ipv4.ip_forward="+v, "net.ipv6.conf.all.forwarding=1").CombinedOutput()
	if err != nil {
		return fmt.Errorf("fabricnet: %s: sysctl: %v: %s", n.sw.Name, err, out)
	}
	return nil
}

func (n *node) setMTU(f *Fabric, r Router) {
	mtu := r.DefaultMTU
	if mtu == 0 {
		mtu = defaultMTU(n.sw.OS)
	}
	var lines []string
	for p := range n.ports {
		lines = append(lines, "link set "+p+" mtu "+strconv.Itoa(mtu))
	}
	if len(lines) > 0 {
		f.batch(n.ns, lines...)
	}
}

// startZebra starts n's zebra.
func (f *Fabric) startZebra(n *node) error {
	if err := writeFile(filepath.Join(n.dir, "frr.conf"), []byte(frrConf(n.sw.Name, nil, nil))); err != nil {
		return err
	}
	n.frr = frrConf(n.sw.Name, nil, nil)
	return n.startDaemon(Zebra)
}

// startDaemon starts one FRR daemon in n's namespace, daemonized, with
// its pid file, the namespace's zserv socket and vty socket directory, and
// waits for its pid file.
func (n *node) startDaemon(bin string) error {
	name := filepath.Base(bin)
	pid := filepath.Join(n.dir, name+".pid")
	_ = os.Remove(pid)
	args := []string{"netns", "exec", n.ns, bin, "-d", "-f", filepath.Join(n.dir, "frr.conf"),
		"-i", pid, "-z", filepath.Join(n.dir, "zserv.api"), "--vty_socket", n.dir,
		"-u", "frr", "-g", "frr", "--log", "file:" + filepath.Join(n.dir, name+".log")}
	if bin == Bfdd {
		// Its control socket in the switch's directory, not the machine's
		// /var/run/frr/bfdd.sock.
		args = append(args, "--bfdctl", filepath.Join(n.dir, "bfdd.sock"))
	}
	if out, err := daemonCmd(args...).CombinedOutput(); err != nil {
		return fmt.Errorf("fabricnet: %s: %s: %v: %s", n.sw.Name, name, err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if p := readPid(pid); p > 0 && syscall.Kill(p, 0) == nil {
			if _, err := os.Stat(filepath.Join(n.dir, name+".vty")); err == nil {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(n.dir, name+".log"))
	return fmt.Errorf("fabricnet: %s: %s did not start\n%s", n.sw.Name, name, log)
}

// StopDaemon ends one of switch sw's FRR daemons (zebra, staticd, bfdd, bgpd) by
// its pid file, as a crash or `systemctl stop` would.
func (f *Fabric) StopDaemon(sw, daemon string) {
	f.t.Helper()
	n := f.node(sw)
	stopPidFile(filepath.Join(n.dir, daemon+".pid"))
}

// Configure changes switch sw's running FRR configuration with vtysh
// (`configure terminal`, then lines, in one session), behind its
// simulator's back: a fault its configuration does not show (an outbound
// filter put in by hand). A later re-render that changes the rendered
// configuration restarts bgpd without it.
func (f *Fabric) Configure(sw string, lines ...string) {
	f.t.Helper()
	n := f.node(sw)
	args := []string{"netns", "exec", n.ns, Vtysh, "--vty_socket", n.dir, "-c", "configure terminal"}
	for _, l := range lines {
		args = append(args, "-c", l)
	}
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		f.t.Fatalf("fabricnet: %s: vtysh %q: %v: %s", sw, lines, err, out)
	}
}

// Running reports whether one of switch sw's FRR daemons (zebra, staticd,
// bfdd, bgpd) runs: the process of its pid file is alive.
func (f *Fabric) Running(sw, daemon string) bool {
	f.t.Helper()
	p := readPid(filepath.Join(f.node(sw).dir, daemon+".pid"))
	return p > 1 && alive(p)
}

// CabledTo returns the far end of the cable at switch port e (cabled by
// the Spec or by Plug), false when no cable between switches is plugged
// there (pulled by Unplug, or a host's or a hub's port).
func (f *Fabric) CabledTo(e End) (End, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	far, ok := f.cables[e]
	return far, ok
}

// StartDaemon starts one of switch sw's FRR daemons again.
func (f *Fabric) StartDaemon(sw, daemon string) {
	f.t.Helper()
	n := f.node(sw)
	if err := n.startDaemon(filepath.Join(filepath.Dir(Zebra), daemon)); err != nil {
		f.t.Fatal(err)
	}
}

// daemonCmd is `ip args...` run with umask 022, whatever this process's
// (the lab's supervisor runs with 077): the daemons drop to their own users
// (frr, _lldpd), which must reach the sockets and files they make.
func daemonCmd(args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `umask 022 && exec ip "$@"`, "sh"}, args...)...)
}

// writeFile writes a file the daemons read (mode 0644 whatever the umask).
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return p
}

// stopPidFile ends the process in a pid file: SIGTERM, then SIGKILL after
// 5 s; it returns once the process is gone.
func stopPidFile(path string) {
	if p := readPid(path); p > 1 {
		stopPid(p)
	}
	_ = os.Remove(path)
}

func stopPid(p int) {
	if syscall.Kill(p, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !alive(p) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(p, syscall.SIGKILL)
	for i := 0; i < 200 && alive(p); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// alive: the process exists and is not a zombie.
func alive(p int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// Close ends every daemon by its pid file, deletes the namespaces and the
// fabric's directory. It runs by t.Cleanup.
func (f *Fabric) Close() {
	var wg sync.WaitGroup
	for _, n := range f.switches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.mu.Lock()
			n.closed = true
			n.mu.Unlock()
			f.stopLLDPD(n)
			for _, d := range []string{"bgpd", "bfdd", "staticd", "zebra"} {
				stopPidFile(filepath.Join(n.dir, d+".pid"))
			}
		}()
	}
	wg.Wait()
	for _, n := range f.switches {
		// Nothing should be left; a process that is (a daemon's helper)
		// is ended with its namespace.
		out, _ := exec.Command("ip", "netns", "pids", n.ns).Output()
		for _, p := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(p); err == nil && pid > 1 {
				f.t.Logf("fabricnet: %s: process %d was left running; ending it", n.sw.Name, pid)
				stopPid(pid)
			}
		}
		_ = exec.Command("ip", "netns", "del", n.ns).Run()
	}
	for _, ns := range f.hosts {
		_ = exec.Command("ip", "netns", "del", ns).Run()
	}
	_ = f.removeDir()
}

func (f *Fabric) removeDir() error { return os.RemoveAll(f.Dir) }

func (f *Fabric) must(args ...string) {
	f.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		f.t.Fatalf("fabricnet: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (f *Fabric) batch(ns string, lines ...string) {
	f.t.Helper()
	if err := batchErr(ns, lines...); err != nil {
		f.t.Fatal(err)
	}
}

// batchErr runs `ip -n ns -batch -` with lines.
func batchErr(ns string, lines ...string) error {
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("fabricnet: ip -n %s -batch: %v\n%s\n%s", ns, err, strings.Join(lines, "\n"), out)
	}
	return nil
}

// HostNS creates a bare namespace for a stand-in host (rdg<slot>f<name>;
// name must not be a switch's), loopback up, removed with the fabric.
// Cable it with Attach.
func (f *Fabric) HostNS(name string) string {
	f.t.Helper()
	if _, dup := f.switches[name]; dup {
		f.t.Fatalf("fabricnet: host %q has a switch's name", name)
	}
	ns := fmt.Sprintf("rdg%df%s", f.Slot, name)
	f.must("ip", "netns", "add", ns)
	f.mu.Lock()
	f.hosts = append(f.hosts, ns)
	f.mu.Unlock()
	f.batch(ns, "link set lo up")
	return ns
}

// Unplug pulls the cables at ends (switch ports cabled by the Spec or by
// Plug), in order: both ends of each veth pair go (an end that is the far
// end of a cable pulled before it in ends is gone already, and skipped).
func (f *Fabric) Unplug(ends ...End) {
	f.t.Helper()
	var waits []neighborWait
	pulled := map[End]bool{}
	for _, e := range ends {
		if pulled[e] {
			continue
		}
		n := f.node(e.Switch)
		name := IfName(n.sw.OS, e.Port)
		f.must("ip", "-n", n.ns, "link", "del", name)
		n.mu.Lock()
		delete(n.ports, name)
		n.mu.Unlock()
		f.mu.Lock()
		far, cabled := f.cables[e]
		if cabled {
			delete(f.cables, far)
			delete(f.cables, e)
		}
		f.mu.Unlock()
		pulled[e] = true
		waits = append(waits, f.forgetNeighbor(e))
		if cabled {
			pulled[far] = true
			waits = append(waits, f.forgetNeighbor(far))
		}
	}
	for _, o := range f.switches {
		o.mu.Lock()
		for p := range o.ports {
			if err := exec.Command("ip", "-n", o.ns, "link", "show", p).Run(); err != nil {
				delete(o.ports, p)
			}
		}
		o.mu.Unlock()
	}
	// A switch forgets a port's LLDP neighbor when the port goes down;
	// lldpd does once it has seen the interface go, so wait for that (at
	// most 10 s, for every pulled end at once), lest a cable plugged at
	// once find the old neighbor still listed beside the new one.
	f.waitNeighbors(waits...)
}

// neighborWait is what waitNeighbors waits for: switch sw's LLDP
// neighbors as done says.
type neighborWait struct {
	sw   string
	done func([]LLDPNeighbor) bool
}

// forgetNeighbor is the wait until e's switch's lldpd lists no neighbor on
// e's port.
func (f *Fabric) forgetNeighbor(e End) neighborWait {
	return neighborWait{e.Switch, func(list []LLDPNeighbor) bool {
		return !slices.ContainsFunc(list, func(nb LLDPNeighbor) bool { return nb.Port == e.Port })
	}}
}

// hearNeighbor is the wait until e's switch's lldpd lists far's switch as
// a neighbor on e's port.
func (f *Fabric) hearNeighbor(e, far End) neighborWait {
	return neighborWait{e.Switch, func(list []LLDPNeighbor) bool {
		return slices.ContainsFunc(list, func(nb LLDPNeighbor) bool { return nb.Port == e.Port && nb.SysName == far.Switch })
	}}
}

// waitNeighbors polls the LLDP neighbors every 50 ms until each wait's
// done says its switch's are as wanted, at most 10 s for them all; a wait
// on a switch that runs no lldpd, or whose lldpcli fails, ends at once
// (the check that follows says what it reads).
func (f *Fabric) waitNeighbors(waits ...neighborWait) {
	for deadline := time.Now().Add(10 * time.Second); len(waits) > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		waits = slices.DeleteFunc(waits, func(w neighborWait) bool {
			if f.node(w.sw).lldpd == nil {
				return true
			}
			list, err := f.LLDPNeighbors(w.sw)
			return err != nil || w.done(list)
		})
	}
}

// Plug cables links (each's two ports free, e.g. after Unplug) and programs
// their switches again, so the ports get their addresses and MTUs. Where
// both ports' speeds are known (SetSpeed, PlanSpeeds) a cable comes up at
// the lower.
func (f *Fabric) Plug(links ...Link) {
	f.t.Helper()
	var waits []neighborWait
	for _, l := range links {
		a, b := f.node(l.A.Switch), f.node(l.B.Switch)
		ia, ib := IfName(a.sw.OS, l.A.Port), IfName(b.sw.OS, l.B.Port)
		f.batch(a.ns, "link add "+ia+" type veth peer name "+ib+" netns "+b.ns, "link set "+ia+" up")
		f.batch(b.ns, "link set "+ib+" up")
		a.mu.Lock()
		a.ports[ia] = true
		a.mu.Unlock()
		b.mu.Lock()
		b.ports[ib] = true
		b.mu.Unlock()
		f.mu.Lock()
		f.cables[l.A], f.cables[l.B] = l.B, l.A
		f.mu.Unlock()
		// A new cable between ports whose speeds are known comes up at the
		// lower (SetSpeed).
		if sa, sb := a.speedOf(ia), b.speedOf(ib); sa > 0 && sb > 0 {
			f.setSpeed(l.A, min(sa, sb))
			f.setSpeed(l.B, min(sa, sb))
		}
		f.reprogram(a)
		f.reprogram(b)
		waits = append(waits, f.hearNeighbor(l.A, l.B), f.hearNeighbor(l.B, l.A))
	}
	// Each end hears the other within a transmit interval (1 s); wait
	// for it (at most 10 s, for every cable at once), so that what a check
	// reads next is the new cabling, not a port that has heard nothing yet.
	f.waitNeighbors(waits...)
}

// exec runs a command in namespace ns and returns its combined output.
func (f *Fabric) exec(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}
