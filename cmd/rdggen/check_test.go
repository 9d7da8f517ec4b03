package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/netnstest"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// checkCluster runs `rdggen check` in-process against a namespace cluster
// with the flags a user would pass plus the test's root prefix.
func checkCluster(t *testing.T, c *netnstest.Cluster, extra ...string) (int, string, string) {
	t.Helper()
	args := []string{"check", "-f", c.InventoryPath, "--ssh-user", "root", "--identity", c.Identity,
		"--known-hosts", c.KnownHosts, "--host-root", c.RootTemplate(), "--keys", filepath.Join(c.Dir, "keys")}
	args = append(args, extra...)
	var out, errb bytes.Buffer
	start := time.Now()
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	t.Logf("rdggen check %s → exit %d in %.2fs\n%s%s", strings.Join(extra, " "), code, time.Since(start).Seconds(), out.String(), errb.String())
	return code, out.String(), errb.String()
}

// gidEntry is one staged GID table slot: the GID as the kernel prints it
// (eight groups, %pI6) and its type; an empty type is an unused slot.
type gidEntry struct{ gid, typ string }

// mappedGID is the RoCE GID of an IPv4 address in the kernel's text form.
func mappedGID(a netip.Addr) string {
	b := a.As4()
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3])
}

// stageRDMA writes, under host h's root, the sysfs tree of a mlx5 RoCE
// device behind the data interface, laid out as the kernel's
// drivers/infiniband/core/sysfs.c shows it: /sys/class/infiniband/<dev>/
// ports/1/{state,phys_state,link_layer,rate,gids/<i>,gid_attrs/types/<i>,
// gid_attrs/ndevs/<i>}, with the attributes of an unused (zero) slot
// absent (the kernel fails their read), and the net device's
// device/infiniband/<dev> directory the RoCE script looks up.
func stageRDMA(t *testing.T, h *netnstest.Host, dev, iface string, table []gidEntry) {
	t.Helper()
	port := h.File("/sys/class/infiniband/" + dev + "/ports/1")
	if err := os.RemoveAll(filepath.Join(port, "..", "..")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"state": "4: ACTIVE\n", "phys_state": "5: LinkUp\n", "link_layer": "Ethernet\n", "rate": "100 Gb/sec (4X EDR)\n",
	}
	for i, e := range table {
		files[fmt.Sprintf("gids/%d", i)] = e.gid + "\n"
		if e.typ != "" {
			files[fmt.Sprintf("gid_attrs/types/%d", i)] = e.typ + "\n"
			files[fmt.Sprintf("gid_attrs/ndevs/%d", i)] = iface + "\n"
		}
	}
	for name, content := range files {
		p := filepath.Join(port, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(h.File("/sys/class/net/"+iface+"/device/infiniband/"+dev), 0o755); err != nil {
		t.Fatal(err)
	}
}

// roceTable is a mlx5 port's GID table with RoCE v1 and v2 enabled, as
// NCCL's documentation describes the usual order: link-local v1 and v2,
// then the IPv4 address as v1 and v2 (index v2At), the rest unused.
func roceTable(addr netip.Addr, v2At int) []gidEntry {
	const zero = "0000:0000:0000:0000:0000:0000:0000:0000"
	ll := "fe80:0000:0000:0000:0250:56ff:fe00:0001"
	t := make([]gidEntry, 16)
	for i := range t {
		t[i] = gidEntry{gid: zero}
	}
	t[0], t[1] = gidEntry{ll, "IB/RoCE v1"}, gidEntry{ll, "RoCE v2"}
	t[2] = gidEntry{mappedGID(addr), "IB/RoCE v1"}
	t[v2At] = gidEntry{mappedGID(addr), "RoCE v2"}
	return t
}

// `rdggen check --target hosts` on 3 namespace hosts with real sshd and a
// staged mlx5 sysfs tree each: after an apply every check passes (exit 0);
// with ns-02's IPv4 RoCE v2 GID at index 5 instead of 3, exactly one check
// fails, on ns-02, naming index 5 and the fix; a route removed on ns-03 fails
// its routes check with the fix; nothing is changed by the checks.
func TestCheckHosts(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 3})
	inv := c.Inventory
	if code, _, _ := applyHosts(t, c); code != exitOK {
		t.Fatalf("apply hosts: exit %d", code)
	}
	for i, h := range c.Hosts {
		stageRDMA(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, roceTable(h.Data.Addr(), 3))
	}
	code, out, errOut := checkCluster(t, c, "--target", "hosts")
	if code != exitOK || !strings.Contains(errOut, "rdggen check: all ") || strings.Contains(out, "FAILED") || strings.Contains(out, "COULD NOT TELL") {
		t.Fatalf("healthy cluster: exit %d", code)
	}
	for i, h := range c.Hosts {
		for _, want := range []string{
			fmt.Sprintf("%s: gid mlx5_0 port 1: passed (index 3: RoCE v2 %s on %s)", h.Name, h.Data.Addr(), inv.Hosts[i].DataInterface),
			h.Name + ": port-state mlx5_0 port 1: passed (4: ACTIVE, link layer Ethernet)",
			h.Name + ": routes: passed (2 route(s) to the other hosts' container subnets via " + inv.Hosts[i].DataInterface + ")",
			h.Name + ": nat: passed", h.Name + ": firewall: passed", h.Name + ": forwarding: passed", h.Name + ": mtu: passed",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the healthy output lacks %q", want)
			}
		}
	}
	if !strings.Contains(out, "hosts: 36 passed, 0 failed, 0 could not tell") {
		t.Errorf("the tally is not 12 checks × 3 hosts")
	}

	// ns-02: the IPv4 RoCE v2 GID at index 5 (index 3 unused).
	h2 := c.Hosts[1]
	stageRDMA(t, h2, inv.Horovod.HCA, inv.Hosts[1].DataInterface, roceTable(h2.Data.Addr(), 5))
	code, out, errOut = checkCluster(t, c, "--target", "hosts", "-o", "json")
	if code != exitInvalid {
		t.Fatalf("GID at index 5: exit %d, want %d", code, exitInvalid)
	}
	var doc readiness.Document
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	var failed []readiness.Result
	for _, r := range doc.Results {
		if r.Status != readiness.Passed {
			failed = append(failed, r)
		}
	}
	want := readiness.Result{Target: "hosts", Machine: "ns-02", Check: "gid", Subject: "mlx5_0 port 1", Status: readiness.Failed,
		Found:    fmt.Sprintf("the RoCE v2 GID of %s is at index 5 (index 3: unused)", h2.Data.Addr()),
		Expected: fmt.Sprintf("RoCE v2 GID of %s at index 3 (NCCL_IB_GID_INDEX in horovod/run.sh)", h2.Data.Addr()),
		Fix:      "launch with NCCL_IB_GID_INDEX=5 on ns-02, or leave NCCL_IB_GID_INDEX unset so that NCCL 2.21 or later picks the RoCE v2 GID itself"}
	if len(failed) != 1 || failed[0] != want {
		t.Errorf("failures %+v\nwant exactly %+v", failed, want)
	}
	if doc.Schema != readiness.SchemaCheck || doc.OK || len(doc.Targets) != 1 || doc.Targets[0].Failed != 1 || doc.Targets[0].Passed != 35 {
		t.Errorf("document: %+v", doc.Targets)
	}
	if !strings.Contains(errOut, "ns-02: gid mlx5_0 port 1: FAILED: found the RoCE v2 GID of "+h2.Data.Addr().String()+" is at index 5") ||
		!strings.Contains(errOut, "rdggen check: not ready: ns-02 gid mlx5_0 port 1") {
		t.Errorf("the text (stderr with -o json) does not name the failure")
	}
	stageRDMA(t, h2, inv.Horovod.HCA, inv.Hosts[1].DataInterface, roceTable(h2.Data.Addr(), 3))

	// ns-03 loses its route to ns-01's containers.
	h3 := c.Hosts[2]
	dst := inv.Hosts[0].Subnet.String()
	if out, err := c.Exec(h3.NS, "ip", "route", "del", dst); err != nil {
		t.Fatalf("ip route del: %v %s", err, out)
	}
	code, out, _ = checkCluster(t, c, "--target", "hosts")
	wantLine := fmt.Sprintf("ns-03: routes route %s: FAILED: found absent; expected via %s dev %s; fix: rdggen apply --target hosts (or run hosts/ns-03/routes.sh on ns-03)",
		dst, c.Hosts[0].Data.Addr(), inv.Hosts[2].DataInterface)
	if code != exitInvalid || !strings.Contains(out, wantLine) || strings.Count(out, "FAILED") != 1 {
		t.Errorf("missing route: exit %d, want one failure %q", code, wantLine)
	}
	// The check changed nothing: the route is still missing.
	if routes, _ := c.Exec(h3.NS, "ip", "-4", "route", "show", dst); strings.TrimSpace(routes) != "" {
		t.Errorf("check put the route back: %s", routes)
	}
}
