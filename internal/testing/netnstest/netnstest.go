// Package netnstest builds a GPU cluster's VMs out of Linux network
// namespaces for tests of `rdggen apply --target hosts` (test-only; needs root).
//
// Each host is a namespace with a data interface on a shared bridge in a
// "switch" namespace (198.18.S.N/24; in the routed-pool mode the switch
// namespace also routes, see SetSwitchL3), a management interface on a bridge in the
// test's own namespace (198.19.S.N/24, the only thing outside a namespace), its
// own sshd, and a docker0 bridge with a "container" namespace at .2 of the
// host's container subnet. Docker is emulated where it matters: FORWARD policy
// DROP with Docker's jump to DOCKER-USER, its conntrack/bridge rules and its
// MASQUERADE rule, forwarding off, docker0 at Docker's default 172.17.0.1/16
// until a (fake) restart applies daemon.json's bip. A host built from an
// inventory of several rails (Options.Inventory) has one more interface per
// rail, on a bridge of that rail in the switch namespace (RailLink). S is a slot number taken
// under a lock, so clusters of parallel test binaries never collide.
//
// Everything is torn down by t.Cleanup, also when the test fails. t is a TB:
// a test's testing.TB, or internal/lab's, which builds the cluster for
// `rdggen lab` (Options.Inventory).
package netnstest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// SSHD is the OpenSSH server binary the hosts run.
const SSHD = "/usr/sbin/sshd"

// Require skips t (fails it when CI=true, see Unavailable) unless the
// process is root and ip, iptables, iptables-restore and sshd are present and
// `ip netns` works.
func Require(t TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "netnstest: needs root to create network namespaces (run the tests as root, as CI does)")
	}
	for _, tool := range []string{"ip", "iptables", "iptables-restore", "base64", "awk", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, "netnstest: %s not found (install iproute2, iptables, util-linux)", tool)
		}
	}
	if _, err := os.Stat(SSHD); err != nil {
		Unavailable(t, "netnstest: %s not found (install openssh-server)", SSHD)
	}
	probe := ProbeName("rdgprobe")
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		Unavailable(t, "netnstest: ip netns add does not work here: %v: %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", probe).Run()
	// The kernel features the cluster needs: bridges, veth pairs, and the
	// netfilter matches and targets of the Docker emulation.
	for _, args := range [][]string{
		{"ip", "-n", probe, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1"},
	} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			Unavailable(t, "netnstest: the kernel refuses %s: %v: %s", strings.Join(args[3:], " "), err, out)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", probe, "iptables-restore")
	cmd.Stdin = strings.NewReader(dockerRules)
	if out, err := cmd.CombinedOutput(); err != nil {
		Unavailable(t, "netnstest: iptables cannot load the Docker emulation (conntrack, MASQUERADE) in a namespace: %v: %s", err, out)
	}
}

// probes counts ProbeName's names.
var probes atomic.Int64

// ProbeName is a name for a short-lived probe namespace, prefix<pid>-<n>,
// unique to this call: tests of one process that run in parallel
// (t.Parallel) probe at the same time, and a name they shared would make
// the second `ip netns add` fail.
func ProbeName(prefix string) string {
	return fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), probes.Add(1))
}

// Options shape a cluster.
type Options struct {
	// Hosts is the number of hosts (1–250).
	Hosts int
	// OS returns host i's os (default ubuntu-16.04 for all).
	OS func(i int) string
	// DockerVersion is the inventory's docker.version (default 20.10).
	DockerVersion string
	// HorovodNetwork is the inventory's horovod.network (default bridge).
	HorovodNetwork string
	// Routing is the inventory's docker.routing ("" leaves it out: hosts).
	// With "switch" the hosts route the pool to the switch namespace's
	// gateway address (198.18.S.254), which SetSwitchL3 gives it.
	Routing string
	// Image is the inventory's horovod.image (default: the inventory default).
	Image string
	// GPUs is the number of V100-PCIE-16GB each host's inventory entry has
	// (default 1: one slot per host).
	GPUs int
	// DataMTU is the inventory's data_mtu (default: none, 1500). Above
	// 1500 the "switch" bridge's ports carry 9216, as rdggen configures a
	// switch; the hosts' data0 stay at 1500 until an apply sets them.
	DataMTU int
	// Docker runs a real dockerd in every host (see docker.go; needs
	// RequireDocker) instead of the emulated docker0 and container namespace.
	Docker bool
	// ForwardAccept, when set, leaves FORWARD's policy at ACCEPT on host i, as
	// dockerd does where forwarding was already on when it started.
	ForwardAccept func(i int) bool
	// Inventory, when set, gives the hosts instead of a generated
	// inventory (Hosts, OS, DockerVersion, HorovodNetwork, Routing, Image,
	// GPUs and DataMTU are then ignored): one host per inventory host, with
	// its name, data address, container subnet, data interface name and
	// data MTU; the management addresses stay 198.19.S.N (Host.Mgmt). The
	// caller points the inventory's mgmt at them (rdggen lab does).
	Inventory *inventory.Inventory
	// Users, when set, adds a login user (and a stand-in sudo that refuses,
	// as sudo -n does without a NOPASSWD rule) to host i's sshd; "" for none.
	User func(i int) string
}

// Cluster is a running namespace cluster.
type Cluster struct {
	// Dir holds keys, configs, logs and the per-host roots.
	Dir  string
	Slot int
	// Hosts in inventory order.
	Hosts []*Host
	// InventoryPath is the cluster's inventory (YAML); Inventory is it loaded.
	InventoryPath string
	Inventory     *inventory.Inventory
	// KnownHosts holds every host's key at its management address;
	// Identity is the client's private key (unencrypted OpenSSH format).
	KnownHosts, Identity string

	t        TB
	docker   bool
	switchNS string
	mgmtBr   string
	mu       sync.Mutex
}

// Host is one namespace host.
type Host struct {
	Index       int
	Name        string
	NS          string       // the host's network namespace
	ContainerNS string       // the "container" namespace behind its docker0
	Mgmt        netip.Addr   // sshd listens here
	Data        netip.Prefix // data0's address
	Subnet      netip.Prefix // container subnet
	Container   netip.Addr   // the container's address (.2)
	// Root is the directory the host's files live under (the host target's
	// root prefix with {host} expanded).
	Root string
	// SSHDLog is sshd's log (LogLevel VERBOSE: one line per session).
	SSHDLog string
	sshdDir string
	sshd    *exec.Cmd
	user    string
	dataIf  string // the data interface's name (data0, or the inventory's)
	// Rails are the host's rails beyond rail 0 (a cluster built from an
	// inventory of several rails, Options.Inventory), in rail order.
	Rails []RailLink
}

// RailLink is rail r ≥ 1 of a namespace host built from an inventory of
// several rails: an interface of the host's namespace named as the hosts
// target finds the rail (inventory.Rail.Interface: hosts[].data[r].interface
// or rail<r>), with the rail's address, cabled to the bridge rail<r> of
// the switch namespace (port p<host>r<r>), the rail's own broadcast domain
// as a leaf's VLAN per rail is. Rail 0 is the host's data interface.
type RailLink struct {
	Rail    int
	If      string
	Address netip.Prefix
}

const lockFile = "/tmp/rdggen-netnstest.lock"

// slotDir holds one file per slot in use, <slot>.pid, with its owner's PID.
const slotDir = "/tmp/rdggen-netnstest"

// New builds a cluster of o.Hosts hosts; it is torn down by t.Cleanup.
func New(t TB, o Options) *Cluster {
	t.Helper()
	Require(t)
	if o.Inventory != nil {
		o.Hosts = len(o.Inventory.Hosts)
		o.DataMTU = o.Inventory.Hosts[0].DataMTU
	}
	if o.Hosts < 1 || o.Hosts > 250 {
		t.Fatalf("netnstest: %d hosts (1–250)", o.Hosts)
	}
	if o.OS == nil {
		o.OS = func(int) string { return "ubuntu-16.04" }
	}
	if o.DockerVersion == "" {
		o.DockerVersion = "20.10"
	}
	if o.HorovodNetwork == "" {
		o.HorovodNetwork = "bridge"
	}
	if o.Docker {
		RequireDocker(t)
	}
	c := &Cluster{Dir: t.TempDir(), t: t, docker: o.Docker}
	t.Cleanup(c.teardown)
	c.Slot = c.takeSlot()
	c.writeRestartScripts()
	c.switchNS = fmt.Sprintf("rdg%dsw", c.Slot)
	c.mgmtBr = fmt.Sprintf("rdgm%d", c.Slot)

	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	c.keys(o.Hosts)
	c.must("ip", "link", "add", c.mgmtBr, "type", "bridge")
	c.must("ip", "addr", "add", c.mgmtAddr(254).String()+"/24", "dev", c.mgmtBr)
	c.must("ip", "link", "set", c.mgmtBr, "up")
	c.must("ip", "-n", c.switchNS, "link", "add", "br0", "type", "bridge")
	c.must("ip", "-n", c.switchNS, "link", "set", "br0", "up")

	for i := 0; i < o.Hosts; i++ {
		n := i + 1
		h := &Host{
			Index: i, Name: fmt.Sprintf("ns-%02d", n),
			NS: fmt.Sprintf("rdg%dh%d", c.Slot, n), ContainerNS: fmt.Sprintf("rdg%dc%d", c.Slot, n),
			Mgmt:   c.mgmtAddr(n),
			Data:   netip.PrefixFrom(netip.AddrFrom4([4]byte{198, 18, byte(c.Slot), byte(n)}), 24),
			Subnet: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, byte(n), 0}), 24),
		}
		if o.User != nil {
			h.user = o.User(i)
		}
		h.Container = netip.AddrFrom4([4]byte{172, 16, byte(n), 2})
		h.dataIf = "data0"
		if o.Inventory != nil {
			ih := o.Inventory.Hosts[i]
			h.Name, h.Data, h.Subnet, h.dataIf = ih.Name, ih.Data.Address, ih.Subnet, ih.DataInterface
			h.Container = h.Subnet.Addr().Next().Next()
			for r := 1; r < len(ih.Rails); r++ {
				h.Rails = append(h.Rails, RailLink{Rail: r, If: ih.Rails[r].Interface, Address: ih.Rails[r].Address})
			}
		}
		if o.Docker {
			h.ContainerNS = ""
		}
		h.Root = filepath.Join(c.Dir, "roots", h.Name)
		c.Hosts = append(c.Hosts, h)
		c.buildHost(h, o.ForwardAccept != nil && o.ForwardAccept(i))
	}
	c.pinDataNeighbours()
	if o.DataMTU > 1500 {
		var lines []string
		bridges := map[string]bool{}
		for _, h := range c.Hosts {
			lines = append(lines, fmt.Sprintf("link set p%d mtu 9216", h.Index+1))
			for _, rl := range h.Rails {
				lines = append(lines, fmt.Sprintf("link set p%dr%d mtu 9216", h.Index+1, rl.Rail))
				bridges[fmt.Sprintf("rail%d", rl.Rail)] = true
			}
		}
		for br := range bridges {
			lines = append(lines, "link set "+br+" mtu 9216")
		}
		c.batch(c.switchNS, append(lines, "link set br0 mtu 9216")...)
	}
	if o.Inventory != nil {
		c.Inventory = o.Inventory
	} else {
		c.writeInventory(o)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(c.Hosts))
	for i, h := range c.Hosts {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.startSSHD(h) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if o.Docker {
		bin := c.dockerBin()
		for i, h := range c.Hosts {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = c.startDocker(h, bin) }()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			Unavailable(t, "netnstest: dockerd does not start in a namespace host here: %v", err)
		}
	}
	return c
}

// DataIf is the name of h's data interface in its namespace: data0, or
// the inventory's data_interface when the cluster was built from one.
func (h *Host) DataIf() string { return h.dataIf }

func (c *Cluster) mgmtAddr(n int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 19, byte(c.Slot), byte(n)})
}

// takeSlot reserves a slot 1–250 under a file lock: the smallest whose owner
// process is gone; the leftovers of every slot whose owner is gone are
// removed first.
func (c *Cluster) takeSlot() int {
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		c.t.Fatal(err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	dir := slotDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.t.Fatal(err)
	}
	live := func(pidFile string) bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0 && syscall.Kill(pid, 0) == nil
	}
	// Every slot whose owner is gone (a run killed by go test's -timeout
	// runs no cleanup) is cleared now, not only when its number is taken
	// again: its daemons (sshd, dockerd, containerd) would run on.
	stale, _ := filepath.Glob(filepath.Join(dir, "*.pid"))
	for _, pidFile := range stale {
		if s, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(pidFile), ".pid")); err == nil && !live(pidFile) {
			removeSlot(s)
			_ = os.Remove(pidFile)
		}
	}
	for s := 1; s <= 250; s++ {
		pidFile := filepath.Join(dir, strconv.Itoa(s)+".pid")
		if live(pidFile) {
			continue // in use by a live process
		}
		removeSlot(s)
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			c.t.Fatal(err)
		}
		_ = exec.Command("ip", "netns", "add", fmt.Sprintf("rdg%dsw", s)).Run()
		return s
	}
	c.t.Fatal("netnstest: no free slot")
	return 0
}

// TakeSlot reserves a slot as New does, for another harness whose
// namespaces are named rdg<slot>f<name> (internal/testing/fabricnet); the
// slot is released, and whatever such namespaces a killed run left behind
// removed, by t.Cleanup and by the next taker of the slot.
func TakeSlot(t TB) int {
	t.Helper()
	c := &Cluster{t: t}
	s := c.takeSlot()
	t.Cleanup(func() {
		removeSlot(s)
		_ = os.Remove(filepath.Join("/tmp/rdggen-netnstest", strconv.Itoa(s)+".pid"))
	})
	return s
}

// removeSlot deletes whatever a slot left behind: its namespaces (with
// their processes) and its management bridge.
func removeSlot(s int) {
	prefix := fmt.Sprintf("rdg%d", s)
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		name := f[0]
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || (rest[0] != 'h' && rest[0] != 'c' && rest[0] != 'f' && rest != "sw" && rest != "o") {
			continue
		}
		killNS(name)
		_ = exec.Command("ip", "netns", "del", name).Run()
	}
	_ = exec.Command("ip", "link", "del", fmt.Sprintf("rdgm%d", s)).Run()
	// The management veths' root ends (rdg<slot>m<host>) go with their
	// namespace only once the kernel has freed it, which happens later
	// (namespace cleanup runs asynchronously, after the last killed process
	// is reaped): a slot taken again at once would find them. Delete them
	// here, which removes both ends at once.
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	for _, name := range rootVeths(string(out), s) {
		_ = exec.Command("ip", "link", "del", name).Run()
	}
}

// rootVeths returns the names of slot s's management veths (rdg<s>m<n>)
// in `ip -o link show` output.
func rootVeths(ipLink string, s int) []string {
	prefix := fmt.Sprintf("rdg%dm", s)
	var names []string
	for _, line := range strings.Split(ipLink, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		names = append(names, name)
	}
	return names
}

// killNS kills every process in a namespace.
func killNS(ns string) {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	for _, p := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(p); err == nil && pid > 1 && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func (c *Cluster) teardown() {
	if c.docker {
		var wg sync.WaitGroup
		for _, h := range c.Hosts {
			wg.Add(1)
			go func() { defer wg.Done(); c.stopDocker(h) }()
		}
		wg.Wait()
	}
	for _, h := range c.Hosts {
		c.StopSSHD(h)
	}
	if c.Slot > 0 {
		removeSlot(c.Slot)
		_ = os.Remove(filepath.Join(slotDir, strconv.Itoa(c.Slot)+".pid"))
	}
}

func (c *Cluster) must(args ...string) {
	c.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		c.t.Fatalf("netnstest: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// batch runs `ip [-n ns] -batch -` with lines.
func (c *Cluster) batch(ns string, lines ...string) {
	c.t.Helper()
	args := []string{"-batch", "-"}
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	cmd := exec.Command("ip", args...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("netnstest: ip %s: %v\n%s\n%s", strings.Join(args, " "), err, strings.Join(lines, "\n"), out)
	}
}

// dockerRules is what dockerd (20.10) leaves in iptables with the default
// bip, before it has seen rdggen's daemon.json (docs/rules.md#rules-docker-creates).
const dockerRules = `*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
:DOCKER-USER - [0:0]
-A FORWARD -j DOCKER-USER
-A FORWARD -o docker0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -i docker0 ! -o docker0 -j ACCEPT
-A FORWARD -i docker0 -o docker0 -j ACCEPT
-A DOCKER-USER -j RETURN
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
COMMIT
`

func (c *Cluster) buildHost(h *Host, forwardAccept bool) {
	c.must("ip", "netns", "add", h.NS)
	if c.docker {
		c.batch("", "link add "+fmt.Sprintf("rdg%dm%d", c.Slot, h.Index+1)+" type veth peer name mgmt0 netns "+h.NS,
			"link set "+fmt.Sprintf("rdg%dm%d", c.Slot, h.Index+1)+" master "+c.mgmtBr+" up")
		port := fmt.Sprintf("p%d", h.Index+1)
		c.batch(c.switchNS,
			"link add "+port+" type veth peer name "+h.dataIf+" netns "+h.NS,
			"link set "+port+" master br0 up")
		c.batch(h.NS,
			"link set lo up",
			"addr add "+h.Mgmt.String()+"/24 dev mgmt0",
			"link set mgmt0 up",
			"addr add "+h.Data.String()+" dev "+h.dataIf,
			"link set "+h.dataIf+" up")
		c.buildRails(h)
		if err := os.MkdirAll(h.Root, 0o755); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	c.must("ip", "netns", "add", h.ContainerNS)
	mgmtPeer := fmt.Sprintf("rdg%dm%d", c.Slot, h.Index+1)
	c.batch("",
		"link add "+mgmtPeer+" type veth peer name mgmt0 netns "+h.NS,
		"link set "+mgmtPeer+" master "+c.mgmtBr+" up")
	port := fmt.Sprintf("p%d", h.Index+1)
	c.batch(c.switchNS,
		"link add "+port+" type veth peer name "+h.dataIf+" netns "+h.NS,
		"link set "+port+" master br0 up")
	c.batch(h.ContainerNS, "link add eth0 type veth peer name vethc netns "+h.NS)
	c.batch(h.NS,
		"link set lo up",
		"addr add "+h.Mgmt.String()+"/24 dev mgmt0",
		"link set mgmt0 up",
		"addr add "+h.Data.String()+" dev "+h.dataIf,
		"link set "+h.dataIf+" up",
		"link add docker0 type bridge",
		"addr add 172.17.0.1/16 dev docker0",
		"link set docker0 up",
		"link set vethc master docker0 up")
	c.buildRails(h)
	c.batch(h.ContainerNS,
		"link set lo up",
		"addr add "+h.Container.String()+"/24 dev eth0",
		"link set eth0 up",
		"route add default via "+h.Subnet.Addr().Next().String())
	rules := dockerRules
	if forwardAccept {
		rules = strings.Replace(rules, ":FORWARD DROP", ":FORWARD ACCEPT", 1)
	}
	cmd := exec.Command("ip", "netns", "exec", h.NS, "iptables-restore")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("netnstest: %s: iptables-restore: %v\n%s", h.NS, err, out)
	}
	c.must("ip", "netns", "exec", h.NS, "sysctl", "-qw", "net.ipv4.conf.all.forwarding=0")
	if err := os.MkdirAll(h.Root, 0o755); err != nil {
		c.t.Fatal(err)
	}
}

// buildRails cables h's rails beyond rail 0 (RailLink): per rail, the
// bridge rail<r> of the switch namespace (made with its first port) and a
// veth pair from its port p<host>r<r> to the rail's interface in h's
// namespace, up, with the rail's address.
func (c *Cluster) buildRails(h *Host) {
	for _, rl := range h.Rails {
		br := fmt.Sprintf("rail%d", rl.Rail)
		if exec.Command("ip", "-n", c.switchNS, "link", "show", "dev", br).Run() != nil {
			c.batch(c.switchNS, "link add "+br+" type bridge", "link set "+br+" up")
		}
		port := fmt.Sprintf("p%dr%d", h.Index+1, rl.Rail)
		c.batch(c.switchNS,
			"link add "+port+" type veth peer name "+rl.If+" netns "+h.NS,
			"link set "+port+" master "+br+" up")
		c.batch(h.NS, "addr add "+rl.Address.String()+" dev "+rl.If, "link set "+rl.If+" up")
	}
}

// pinDataNeighbours makes every host's data-network neighbours permanent.
// The kernel's ARP table is shared by all namespaces and refuses new entries
// beyond gc_thresh3 (1024 by default): a 32-host full mesh needs about 1100
// and pings then fail with "neighbour table overflow". Permanent entries are
// exempt from that limit (Linux ≥ 4.19); routing and filtering are unchanged.
func (c *Cluster) pinDataNeighbours() {
	macs := make([]string, len(c.Hosts))
	for i, h := range c.Hosts {
		out, err := exec.Command("ip", "-n", h.NS, "-br", "link", "show", h.dataIf).Output()
		f := strings.Fields(string(out))
		if err != nil || len(f) < 3 {
			c.t.Fatalf("netnstest: %s: data0's MAC: %v %q", h.Name, err, out)
		}
		macs[i] = f[2]
	}
	for i, h := range c.Hosts {
		var lines []string
		for j, o := range c.Hosts {
			if j != i {
				lines = append(lines, "neigh replace "+o.Data.Addr().String()+" lladdr "+macs[j]+" dev "+h.dataIf+" nud permanent")
			}
		}
		if len(lines) > 0 {
			c.batch(h.NS, lines...)
		}
	}
}

func (c *Cluster) writeInventory(o Options) {
	image := ""
	if o.Image != "" {
		image = ", image: " + o.Image
	}
	dataMTU := ""
	if o.DataMTU != 0 {
		dataMTU = fmt.Sprintf("\n  data_mtu: %d", o.DataMTU)
	}
	routing := ""
	if o.Routing != "" {
		routing = ", routing: " + o.Routing
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# netnstest cluster, slot %d
name: nstest
switches:
  - {name: sw, model: SN2700, onyx: 3.6.8190}
docker: {version: %q, pool: 172.16.0.0/16, prefix: 24%s}
horovod: {network: %s%s}
defaults:
  data_interface: data0%s
  gpus: [%s]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`, c.Slot, o.DockerVersion, routing, o.HorovodNetwork, image, dataMTU, strings.TrimSuffix(strings.Repeat("{model: V100-PCIE-16GB, memory_gb: 16}, ", max(o.GPUs, 1)), ", "))
	for _, h := range c.Hosts {
		fmt.Fprintf(&b, "  - {name: %s, esxi: esx-%02d, os: %s, mgmt: %s, data: {address: %s, port: 1/%d}}\n",
			h.Name, h.Index+1, o.OS(h.Index), h.Mgmt, h.Data, h.Index+1)
	}
	c.InventoryPath = filepath.Join(c.Dir, "cluster.yaml")
	if err := os.WriteFile(c.InventoryPath, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	inv, err := inventory.LoadFile(c.InventoryPath)
	if err != nil {
		c.t.Fatalf("netnstest: the generated inventory does not load: %v\n%s", err, b.String())
	}
	for i, h := range c.Hosts {
		if inv.Hosts[i].Subnet != h.Subnet {
			c.t.Fatalf("netnstest: %s: inventory subnet %s, harness %s", h.Name, inv.Hosts[i].Subnet, h.Subnet)
		}
	}
	c.Inventory = inv
}

// keys writes the client key, one host key per host, authorized_keys and known_hosts.
func (c *Cluster) keys(n int) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		c.t.Fatal(err)
	}
	c.Identity = filepath.Join(c.Dir, "id_ed25519")
	writeKey(c.t, c.Identity, priv)
	spub, _ := ssh.NewPublicKey(pub)
	if err := os.WriteFile(filepath.Join(c.Dir, "authorized_keys"), ssh.MarshalAuthorizedKey(spub), 0o600); err != nil {
		c.t.Fatal(err)
	}
	var kh bytes.Buffer
	for i := 1; i <= n; i++ {
		hpub, hpriv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			c.t.Fatal(err)
		}
		dir := filepath.Join(c.Dir, "sshd", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			c.t.Fatal(err)
		}
		writeKey(c.t, filepath.Join(dir, "host_ed25519"), hpriv)
		hk, _ := ssh.NewPublicKey(hpub)
		kh.WriteString(knownhosts.Line([]string{c.mgmtAddr(i).String()}, hk) + "\n")
	}
	c.KnownHosts = filepath.Join(c.Dir, "known_hosts")
	if err := os.WriteFile(c.KnownHosts, kh.Bytes(), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func writeKey(t TB, path string, key ed25519.PrivateKey) {
	block, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startSSHD starts the host's sshd in its namespace and waits until it accepts.
func (c *Cluster) startSSHD(h *Host) error {
	h.sshdDir = filepath.Join(c.Dir, "sshd", strconv.Itoa(h.Index+1))
	h.SSHDLog = filepath.Join(h.sshdDir, "sshd.log")
	cfg := fmt.Sprintf(`ListenAddress %s:22
HostKey %s
PidFile none
AuthorizedKeysFile %s
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
PrintMotd no
LogLevel VERBOSE
MaxStartups 200
MaxSessions 200
Subsystem sftp internal-sftp
`, h.Mgmt, filepath.Join(h.sshdDir, "host_ed25519"), filepath.Join(c.Dir, "authorized_keys"))
	if c.docker {
		cfg += "SetEnv DOCKER_HOST=unix://" + h.DockerSocket() + "\n"
	}
	start := "exec " + SSHD + " -D -f " + filepath.Join(h.sshdDir, "sshd_config") + " -E " + h.SSHDLog
	if h.user != "" {
		// A login user that exists only in this sshd's mount namespace (ip netns
		// exec gives it one), and a sudo that refuses like `sudo -n` without a
		// NOPASSWD rule: the real /etc/passwd is never touched.
		bin := filepath.Join(h.sshdDir, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			return err
		}
		if err := exefile.Write(filepath.Join(bin, "sudo"), []byte("#!/bin/sh\necho 'sudo: a password is required' >&2\nexit 1\n"), 0o755); err != nil {
			return err
		}
		passwd, err := os.ReadFile("/etc/passwd")
		if err != nil {
			return err
		}
		passwd = append(passwd, []byte(h.user+":x:4242:4242::/tmp:/bin/sh\n")...)
		pf := filepath.Join(h.sshdDir, "passwd")
		if err := os.WriteFile(pf, passwd, 0o644); err != nil {
			return err
		}
		// The user must be able to reach its authorized_keys: a readable copy,
		// behind directories it may traverse (the keys stay unreadable).
		ak := filepath.Join(h.sshdDir, "authorized_keys")
		b, err := os.ReadFile(filepath.Join(c.Dir, "authorized_keys"))
		if err != nil {
			return err
		}
		if err := os.WriteFile(ak, b, 0o644); err != nil {
			return err
		}
		for _, d := range []string{filepath.Dir(c.Dir), c.Dir, filepath.Dir(h.sshdDir), h.sshdDir} {
			if err := os.Chmod(d, 0o711); err != nil {
				return err
			}
		}
		cfg = strings.Replace(cfg, filepath.Join(c.Dir, "authorized_keys"), ak, 1)
		cfg += "SetEnv PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin\n"
		start = "mount --bind " + pf + " /etc/passwd && " + start
	}
	// The namespace hosts stand in for stock VMs: root's own shell startup
	// file on this machine (a dev box may run pyenv or conda from it, 0.2 s
	// per SSH session) is masked inside sshd's private mount namespace only.
	if rc := "/root/.bashrc"; fileExists(rc) {
		start = "mount --bind /dev/null " + rc + " && " + start
	}
	if err := os.WriteFile(filepath.Join(h.sshdDir, "sshd_config"), []byte(cfg), 0o600); err != nil {
		return err
	}
	cmd := exec.Command("ip", "netns", "exec", h.NS, "sh", "-c", start)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: start sshd: %v", h.Name, err)
	}
	c.mu.Lock()
	h.sshd = cmd
	c.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	addr := net.JoinHostPort(h.Mgmt.String(), "22")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			log, _ := os.ReadFile(h.SSHDLog)
			return fmt.Errorf("%s: sshd exited: %v\n%s%s", h.Name, err, stderr.String(), log)
		default:
		}
		if conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			conn.Close()
			go func() { <-done }() // reap
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s: sshd does not accept on %s", h.Name, addr)
}

// StopSSHD takes the host off the management network: its sshd and every
// session are killed.
func (c *Cluster) StopSSHD(h *Host) {
	c.mu.Lock()
	cmd := h.sshd
	h.sshd = nil
	c.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	killNS(h.NS)
}

// Exec runs a command inside a namespace and returns its combined output.
func (c *Cluster) Exec(ns string, args ...string) (string, error) {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).CombinedOutput()
	return string(out), err
}

// Outsider returns a namespace on the data network that is not a host of
// the cluster (198.18.S.200/24), with routes to every container subnet via
// that host's data address: a stranger the hosts' firewalls must refuse.
func (c *Cluster) Outsider() (ns string, addr netip.Addr) {
	c.t.Helper()
	ns = fmt.Sprintf("rdg%do", c.Slot)
	addr = netip.AddrFrom4([4]byte{198, 18, byte(c.Slot), 200})
	if _, err := os.Stat("/run/netns/" + ns); err == nil {
		return ns, addr
	}
	c.must("ip", "netns", "add", ns)
	c.batch(c.switchNS,
		"link add pout type veth peer name data0 netns "+ns,
		"link set pout master br0 up")
	lines := []string{"link set lo up", "addr add " + addr.String() + "/24 dev data0", "link set data0 up"}
	for _, h := range c.Hosts {
		lines = append(lines, "route add "+h.Subnet.String()+" via "+h.Data.Addr().String())
	}
	c.batch(ns, lines...)
	return ns, addr
}

// Sessions counts the SSH sessions (commands) the host's sshd has served.
func (h *Host) Sessions() int {
	b, _ := os.ReadFile(h.SSHDLog)
	return bytes.Count(b, []byte("Starting session: command"))
}

// RootTemplate is the hosts target's --host-root for this cluster.
func (c *Cluster) RootTemplate() string { return filepath.Join(c.Dir, "roots", "{host}") }

// DockerRestartCommand is the hosts target's --docker-restart for the
// namespace hosts: what dockerd does at start that matters here — docker0
// takes daemon.json's bip, Docker's MASQUERADE rule follows the bridge subnet
// and is inserted at the top of POSTROUTING again — and a line in
// <root>/docker-restarts to count restarts.
func (c *Cluster) DockerRestartCommand() string {
	if c.docker {
		return "sh " + filepath.Join(c.Dir, "docker-restart.sh")
	}
	return "sh " + filepath.Join(c.Dir, "fake-docker-restart.sh")
}

// writeRestartScripts writes DockerRestartCommand's scripts once, before any
// host can run them (a script rewritten while a shell reads it is cut short).
func (c *Cluster) writeRestartScripts() {
	for name, body := range map[string]string{"docker-restart.sh": dockerRestartScript, "fake-docker-restart.sh": fakeDockerRestartScript} {
		if err := exefile.Write(filepath.Join(c.Dir, name), []byte(body), 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
}

// fakeDockerRestartScript is the emulated hosts' stand-in for a Docker restart.
const fakeDockerRestartScript = `#!/bin/sh
# netnstest's stand-in for "systemctl restart docker" on a namespace host.
set -eu
f="$RDGGEN_ROOT/etc/docker/daemon.json"
bip=$(sed -n 's/.*"bip": *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
[ -n "$bip" ] || { echo "no bip in $f" >&2; exit 1; }
ip addr flush dev docker0
ip addr add "$bip" dev docker0
net=$(ip -4 route show dev docker0 proto kernel scope link | cut -d' ' -f1)
# Docker deletes its MASQUERADE rule with the old bridge network and inserts
# the new one at the top of POSTROUTING (above rules added since).
iptables -w -t nat -S POSTROUTING | grep -e ' ! -o docker0 -j MASQUERADE$' | sed 's/^-A /-D /' |
while read -r rule; do iptables -w -t nat $rule; done
iptables -w -t nat -I POSTROUTING 1 -s "$net" ! -o docker0 -j MASQUERADE
echo "$bip" >>"$RDGGEN_ROOT/docker-restarts"
`

// DockerValidateCommand is the hosts target's --docker-validate for the
// namespace hosts (there is no dockerd): the staged candidate must exist and
// carry a bip.
func (c *Cluster) DockerValidateCommand() string {
	return `test -s "$1" && grep -q '"bip"' "$1"`
}

// Restarts is how often the fake Docker restart ran on h.
func (h *Host) Restarts() int {
	b, _ := os.ReadFile(filepath.Join(h.Root, "docker-restarts"))
	return bytes.Count(b, []byte("\n"))
}

// File is the path of a host file under the host's root.
func (h *Host) File(path string) string { return filepath.Join(h.Root, filepath.FromSlash(path)) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// SlotsOf returns the slots whose owner, as recorded under the slot lock,
// is process pid (a cluster's owner is the process that built it).
func SlotsOf(pid int) []int {
	var slots []int
	for s := 1; s <= 250; s++ {
		b, err := os.ReadFile(filepath.Join(slotDir, strconv.Itoa(s)+".pid"))
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(pid) {
			slots = append(slots, s)
		}
	}
	return slots
}

// Running reports whether process pid exists and is not a zombie: a
// killed process that its parent (or init) has yet to reap still answers
// kill(pid, 0), but runs nothing and holds nothing.
func Running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// RemoveSlotsOf deletes what the clusters of process pid, which must be
// gone, left behind: for each slot whose record still names pid, its
// namespaces (killing their processes: sshd, dockerd, containers), its
// management bridge and veths, what also removes of it (another harness's
// files of the slot), and its record. It holds the slot lock throughout:
// a slot that another process took meanwhile (the owner being gone, takeSlot
// may hand it out again) names that process and is not touched. It returns
// the slots it cleared.
func RemoveSlotsOf(pid int, also func(slot int)) ([]int, error) {
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if Running(pid) {
		return nil, fmt.Errorf("netnstest: process %d still runs: its slots are its own", pid)
	}
	var cleared []int
	for _, s := range SlotsOf(pid) {
		removeSlot(s)
		if also != nil {
			also(s)
		}
		_ = os.Remove(filepath.Join(slotDir, strconv.Itoa(s)+".pid"))
		cleared = append(cleared, s)
	}
	return cleared, nil
}
