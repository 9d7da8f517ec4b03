package dockernet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// routes.sh and the ifupdown hook do what they say on real kernels, twice
// in a row: run in namespace hosts (netnstest) they make every container
// reach every other, and a second run changes nothing.
func TestScriptsInNamespaces(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	restart := c.DockerRestartCommand()
	sh := func(h *netnstest.Host, script []byte, env ...string) string {
		t.Helper()
		cmd := exec.Command("ip", append([]string{"netns", "exec", h.NS, "env"}, append(env, "sh", "-s")...)...)
		cmd.Stdin = strings.NewReader(string(script))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", h.Name, err, out)
		}
		return string(out)
	}
	for i, h := range c.Hosts {
		// What Docker does with rdggen's daemon.json: docker0 at bip.
		if err := os.MkdirAll(h.File("/etc/docker"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(h.File(DaemonPath), DaemonJSON(inv, &inv.Hosts[i]), 0o644); err != nil {
			t.Fatal(err)
		}
		sh(h, []byte(restart), "RDGGEN_ROOT="+h.Root)
	}
	if ok, _ := c.Reachability(ctx); len(ok) != 0 {
		t.Fatalf("reachable before routes.sh: %v", ok)
	}
	for i, h := range c.Hosts {
		for run := 0; run < 2; run++ {
			sh(h, RoutesScript(inv, &inv.Hosts[i]))
		}
		chain, _ := c.Exec(h.NS, "iptables", "-S", FirewallChain)
		if got := strings.Split(strings.TrimSpace(chain), "\n")[1:]; !slices.Equal(got, FirewallRules(inv, &inv.Hosts[i])) {
			t.Errorf("%s: chain after two runs:\n%s", h.Name, chain)
		}
		du, _ := c.Exec(h.NS, "iptables", "-S", DockerUserChain)
		if strings.Count(du, FirewallJump+"\n") != 1 {
			t.Errorf("%s: DOCKER-USER after two runs:\n%s", h.Name, du)
		}
		routes, _ := c.Exec(h.NS, "ip", "-4", "route", "show", "dev", "data0")
		for _, r := range Routes(inv, &inv.Hosts[i]) {
			if strings.Count(routes, r.Dst.String()+" via "+r.Via.String()) != 1 {
				t.Errorf("%s: route %s not there once:\n%s", h.Name, r.Command(), routes)
			}
		}
		if strings.Contains(routes, inv.Hosts[i].Subnet.String()+" via") {
			t.Errorf("%s: routes its own subnet:\n%s", h.Name, routes)
		}
	}
	if _, failed := c.Reachability(ctx); len(failed) != 0 {
		t.Fatalf("not reachable after routes.sh: %v", failed)
	}

	// The ifupdown hook: routes gone with the link come back when ifup runs
	// it for the data interface, and it ignores other interfaces.
	h, ih := c.Hosts[0], &inv.Hosts[0]
	hook := filepath.Join(t.TempDir(), "rdggen-routes")
	if err := exefile.Write(hook, RoutesPersist(inv, ih), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Exec(h.NS, "ip", "route", "flush", "proto", "boot", "dev", "data0"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, _ := c.Exec(h.NS, "env", "IFACE=lo", "sh", hook); out != "" {
		t.Errorf("hook for lo printed %q", out)
	}
	if routes, _ := c.Exec(h.NS, "ip", "-4", "route", "show", "dev", "data0"); strings.Contains(routes, " via ") {
		t.Fatalf("routes after flush / hook for lo:\n%s", routes)
	}
	if out, err := c.Exec(h.NS, "env", "IFACE=data0", "sh", hook); err != nil || out != "" {
		t.Fatalf("hook: %v %s", err, out)
	}
	routes, _ := c.Exec(h.NS, "ip", "-4", "route", "show", "dev", "data0")
	if strings.Count(routes, " via ") != len(inv.Hosts)-1 {
		t.Errorf("routes after the hook:\n%s", routes)
	}
}
