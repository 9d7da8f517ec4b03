package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// `rdggen check --target hosts` never passes what it could not read: on 3
// namespace VMs over real sshd, an ACTIVE port whose link_layer is empty
// (ns-01) or absent (ns-02) is "could not tell" on port-state, and a RoCE
// v2 GID of the data address whose network device (gid_attrs/ndevs) is
// unreadable (ns-03) is "could not tell" on gid; each with what passes and
// how to read it, and check exits non-zero.
func TestCheckHostsCouldNotTell(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	for _, h := range c.Hosts {
		stageGuest(t, h, inv.Horovod.HCA, healthyGuest(1))
	}
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
	}
	port := func(i int, name string) string {
		return c.Hosts[i].File("/sys/class/infiniband/" + inv.Horovod.HCA + "/ports/1/" + name)
	}
	if err := os.WriteFile(port(0, "link_layer"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(port(1, "link_layer")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(port(2, "gid_attrs/ndevs/3")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := checkCluster(t, c, "--target", "hosts")
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ": FAILED: ") || strings.Contains(l, "COULD NOT TELL") {
			got = append(got, strings.TrimPrefix(l, "[hosts] "))
		}
	}
	layer := "/sys/class/infiniband/mlx5_0/ports/1/link_layer"
	want := []string{
		"ns-01: port-state mlx5_0 port 1: COULD NOT TELL: 4: ACTIVE, link layer not read (link_layer is empty); expected link layer Ethernet (RoCE); " +
			"fix: read it on ns-01: cat " + layer + " (or ibv_devinfo -d mlx5_0); it must say Ethernet",
		"ns-02: port-state mlx5_0 port 1: COULD NOT TELL: 4: ACTIVE, link layer not read (cat: " + c.Hosts[1].File(layer) + ": No such file or directory); expected link layer Ethernet (RoCE); " +
			"fix: read it on ns-02: cat " + layer + " (or ibv_devinfo -d mlx5_0); it must say Ethernet",
		fmt.Sprintf("ns-03: gid mlx5_0 port 1: COULD NOT TELL: index 3: RoCE v2 %s: its network device could not be read (gid_attrs/ndevs/3); "+
			"expected a RoCE v2 GID of %s (rdggen run and run.sh read its index at launch for NCCL_IB_GID_INDEX) on data0; "+
			"fix: read it on ns-03: cat /sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/3 (or show_gids); it must say data0",
			c.Hosts[2].Data.Addr(), c.Hosts[2].Data.Addr()),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if code == exitOK || !strings.Contains(out, "hosts: 54 passed, 0 failed, 3 could not tell") {
		t.Errorf("exit %d: three checks that could not tell must not pass", code)
	}
}
