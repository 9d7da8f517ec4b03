package railnet

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
)

// railsNS is a network namespace of its own with twoRails' interfaces:
// rail 0 as enp1f0, rail 1 under another name (eth1) with its MAC address,
// each a veth whose other end is up in the same namespace. It goes with
// the test.
func railsNS(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		netnstest.Unavailable(t, "railnet: needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		netnstest.Unavailable(t, "railnet: ip not found (install iproute2)")
	}
	ns := fmt.Sprintf("rdgrail%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		netnstest.Unavailable(t, "railnet: ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	for _, line := range []string{
		"link add enp1f0 type veth peer name p0", "link add eth1 type veth peer name p1",
		"link set eth1 address 00:50:56:aa:00:11", "link set p0 up", "link set p1 up", "link set lo up",
	} {
		if out, err := exec.Command("ip", append([]string{"-n", ns}, strings.Fields(line)...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", line, err, out)
		}
	}
	return ns
}

// inNS runs sh with script on stdin in namespace ns (through the shell
// command prefix, e.g. unshare), and returns stdout, stderr and the exit
// status.
func inNS(t *testing.T, ns, script string, prefix ...string) (string, string, int) {
	t.Helper()
	args := append(append([]string{"netns", "exec", ns}, prefix...), "sh", "-s")
	cmd := exec.Command("ip", args...)
	cmd.Stdin = strings.NewReader(script)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func nsState(t *testing.T, ns string) string {
	t.Helper()
	out, _, code := inNS(t, ns, "ip -4 rule show; ip -4 route show table all; ip -4 -o addr show; ip -o link show | cut -d' ' -f2,5; ip -br link show; "+
		"sysctl net.ipv4.conf.all.arp_ignore net.ipv4.conf.all.arp_announce net.ipv4.conf.all.rp_filter\n")
	if code != 0 {
		t.Fatalf("state: %s", out)
	}
	return out
}

// The script as the hosts engine sends it (framed, one step) and as a
// user runs it: the first run renames rail 1's interface found by its MAC
// address and sets everything; a second run, of either, prints nothing and
// changes nothing.
func TestScriptInNamespace(t *testing.T) {
	ns := railsNS(t)
	composed := composedScripts(t)
	out, stderr, code := inNS(t, ns, composed["apply.sh"])
	rs, err := remote.ParseResults([]byte(out), scripttest.Nonce)
	if err != nil || code != 0 || len(rs) != 1 || rs[0].Name != "step:rails" || rs[0].Status != "0" || strings.TrimSpace(string(rs[0].Data)) != "" {
		t.Fatalf("framed run: %v, exit %d, results %+v\n%s%s", err, code, rs, out, stderr)
	}
	first := nsState(t, ns)
	for _, want := range []string{
		"1000:\tfrom 10.0.1.11 lookup 100", "1001:\tfrom 10.1.2.11 lookup 101",
		"10.1.2.0/24 dev rail1 table 101 scope link", "10.0.2.0/24 via 10.1.2.1 dev rail1 table 101",
		"10.0.2.0/24 via 10.0.1.1 dev enp1f0 metric 100", "10.0.2.0/24 via 10.1.2.1 dev rail1 metric 101",
		"inet 10.1.2.11/24 scope global rail1", "rail1@p1: 9000", "net.ipv4.conf.all.rp_filter = 2",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("no %q in the state after the first run:\n%s", want, first)
		}
	}
	if strings.Contains(first, "eth1") || !regexp.MustCompile(`(?m)^rail1@p1 +UP +00:50:56:aa:00:11 `).MatchString(first) {
		t.Errorf("eth1 was not renamed rail1, or is not up:\n%s", first)
	}
	g, _ := New(twoRails())
	for _, script := range []string{string(g.Script()), composed["apply.sh"]} {
		out, stderr, code := inNS(t, ns, script)
		if code != 0 || stderr != "" || strings.Contains(out, "rdggen rails") {
			t.Errorf("again: exit %d\n%s%s", code, out, stderr)
		}
		if again := nsState(t, ns); again != first {
			t.Errorf("a second run changed the state:\n%s\nafter the first:\n%s", again, first)
		}
	}
}

// When iproute2 names a rail's table (rt_tables), `ip rule` shows the name:
// the script still finds its rule and adds no second one.
func TestScriptNamedTable(t *testing.T) {
	ns := railsNS(t)
	g, _ := New(twoRails())
	if _, stderr, code := inNS(t, ns, string(g.Script())); code != 0 {
		t.Fatalf("first run: %s", stderr)
	}
	tables := filepath.Join(t.TempDir(), "rt_tables")
	if err := os.WriteFile(tables, []byte("255\tlocal\n254\tmain\n253\tdefault\n100\trail0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// /etc/iproute2/rt_tables replaced in a mount namespace of the run's own.
	mnt := []string{"unshare", "-m", "sh", "-c", `t=$1; shift; mount --bind "$t" /etc/iproute2/rt_tables && exec "$@"`, "sh", tables}
	rules := func() string {
		out, stderr, code := inNS(t, ns, "ip -4 rule show\n", mnt...)
		if code != 0 {
			t.Fatalf("ip rule: %s", stderr)
		}
		return out
	}
	before := rules()
	if !strings.Contains(before, "1000:\tfrom 10.0.1.11 lookup rail0") {
		t.Fatalf("iproute2 does not show the table's name:\n%s", before)
	}
	if _, stderr, code := inNS(t, ns, string(g.Script()), mnt...); code != 0 {
		t.Fatalf("run with a named table: %s", stderr)
	}
	if after := rules(); after != before {
		t.Errorf("the rules changed:\n%s\nbefore:\n%s", after, before)
	}
}

// A rail whose interface is not there stops the script with the rail and
// the reason, exit status 1, before the rails after it.
func TestScriptFails(t *testing.T) {
	ns := railsNS(t)
	vm := twoRails()
	vm.Rails[1].MAC = "00:50:56:aa:00:99"
	g, err := New(vm)
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code := inNS(t, ns, string(g.Script()))
	if code != 1 || stderr != "rdggen rails: rail 1: no interface has the MAC address 00:50:56:aa:00:99 (rail1)\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	vm = twoRails()
	vm.Rails[0].Interface = "ens9"
	g, _ = New(vm)
	_, stderr, code = inNS(t, ns, string(g.Script()))
	if code != 1 || stderr != "rdggen rails: rail 0: no interface ens9\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if st := nsState(t, ns); strings.Contains(st, "lookup 101") {
		t.Errorf("the rail after the failure was set up:\n%s", st)
	}
}
