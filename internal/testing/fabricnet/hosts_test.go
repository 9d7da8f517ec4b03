package fabricnet

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// Two netnstest hosts behind different leaves of a Cumulus 2×2 reach each
// other across the spines with a 1,500-byte packet that may not be
// fragmented, and the fabric shares the cluster's slot.
func TestNamespaceHostsAcrossLeaves(t *testing.T) {
	t.Parallel()
	Require(t)
	netnstest.Require(t)
	c := netnstest.New(t, netnstest.Options{Hosts: 2})
	f := New(t, cumulusSpec(), Options{Slot: c.Slot})
	for _, sw := range f.Switches() {
		var n int
		var tree nvuesim.Tree
		if _, err := fmt.Sscanf(sw.Name, "leaf%d", &n); err == nil {
			tree = leafTree(n)
		} else if _, err := fmt.Sscanf(sw.Name, "spine%d", &n); err == nil {
			tree = spineTree(n)
		}
		f.FollowNVUE(sw.Name, nvuesim.Start(t, nvuesim.Options{Hostname: sw.Name, Applied: forRelease(tree, false)}))
	}
	for i, h := range c.Hosts {
		n := i + 1
		f.AttachHost(h, fmt.Sprintf("leaf%d", n), "swp1",
			netip.MustParsePrefix(fmt.Sprintf("31.31.%d.11/24", n)), netip.MustParseAddr(fmt.Sprintf("31.31.%d.1", n)))
	}
	for n := 1; n <= 2; n++ {
		leaf, other := fmt.Sprintf("leaf%d", n), netip.MustParsePrefix(fmt.Sprintf("31.31.%d.0/24", 3-n))
		waitFor(t, 60*time.Second, leaf+" routes the other leaf's data subnet over both spines", func() (bool, string) {
			r, ok, err := f.Route(leaf, other)
			return err == nil && ok && len(r.NextHops) == 2, fmt.Sprint(r, ok, err)
		})
	}
	for i, h := range c.Hosts {
		peer := fmt.Sprintf("31.31.%d.11", 2-i)
		// The first answer may wait for the neighbors' ARP entries.
		waitFor(t, 10*time.Second, h.Name+" reaches "+peer, func() (bool, string) {
			out, err := c.Exec(h.NS, "ping", "-c", "1", "-W", "1", peer)
			return err == nil, out
		})
		out, err := c.Exec(h.NS, "ping", "-c", "2", "-W", "2", "-M", "do", "-s", "1472", peer)
		if err != nil || !strings.Contains(out, " 0% packet loss") {
			t.Errorf("%s → %s, DF 1500 bytes: %v\n%s", h.Name, peer, err, out)
		} else {
			t.Logf("%s (%s) → %s: %s", h.Name, h.NS, peer, strings.TrimSpace(out[strings.LastIndex(out, "\n2 packets"):]))
		}
	}
	// One byte more does not fit the hosts' 1,500-byte MTU.
	if out, err := c.Exec(c.Hosts[0].NS, "ping", "-c", "1", "-W", "1", "-M", "do", "-s", "1473", "31.31.2.11"); err == nil {
		t.Errorf("a DF 1501-byte ping went through:\n%s", out)
	}
}
