package apply_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// A VM that cannot be reached: nothing is launched, and the error is a
// *MachinesError of the hosts (the GID tables) through which errors.As
// finds the UnreachableError, with the host's readiness result in
// NotReady.
func TestRunUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	inv := inventory.Reference()
	for i := range inv.Hosts {
		inv.Hosts[i].Mgmt = addr
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	res, err := apply.Run(context.Background(), inv, apply.RunOptions{Launcher: apply.LauncherMpirun,
		SSH: apply.SSH{User: "root", Password: "x", KnownHosts: kh, Timeout: 5 * time.Second}, Out: &out, Err: &errb})
	var me *apply.MachinesError
	var un *apply.UnreachableError
	if !errors.As(err, &me) || me.Target != readiness.TargetHosts || !errors.As(err, &un) || !errors.Is(err, apply.ErrMachines) {
		t.Fatalf("err %T %v ", err, err)
	}
	if len(me.Machines) != len(inv.Hosts) || me.Machines[0].Machine != inv.Hosts[0].Name || len(res.NotReady) != len(inv.Hosts) {
		t.Errorf("machines %+v, not ready %+v", me.Machines, res.NotReady)
	}
	if res.Launcher != apply.LauncherMpirun || res.Launch != nil || out.Len() != 0 || res.GIDIndexes[0] != -1 {
		t.Errorf("launched: %+v, out %q", res, out.String())
	}
}

// stageGID writes, under h's root, the sysfs of a RoCE device dev behind
// iface whose RoCE v2 GID of the data address is at index at (the
// kernel's layout: drivers/infiniband/core/sysfs.c).
func stageGID(t *testing.T, h *netnstest.Host, dev, iface string, at int) {
	t.Helper()
	a := h.Data.Addr().As4()
	files := map[string]string{"state": "4: ACTIVE\n", "phys_state": "5: LinkUp\n", "link_layer": "Ethernet\n", "rate": "100 Gb/sec (4X EDR)\n"}
	for i := 0; i <= at; i++ {
		files[fmt.Sprintf("gids/%d", i)] = "0000:0000:0000:0000:0000:0000:0000:0000\n"
	}
	files[fmt.Sprintf("gids/%d", at)] = fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n", a[0], a[1], a[2], a[3])
	files[fmt.Sprintf("gid_attrs/types/%d", at)] = "RoCE v2\n"
	files[fmt.Sprintf("gid_attrs/ndevs/%d", at)] = iface + "\n"
	port := h.File("/sys/class/infiniband/" + dev + "/ports/1")
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

// Run's dry run against namespace VMs with real sshd: it reads each VM's
// GID table over SSH (ns-02's RoCE v2 GID at index 5, ns-01's at 3) and
// returns the launch without starting it — with mpirun one line in the
// first worker carrying each rank's index, with torchrun one per host with
// its own.
func TestRunDryRun(t *testing.T) {
	c := netnstest.New(t, netnstest.Options{Hosts: 2})
	inv := c.Inventory
	for i, h := range c.Hosts {
		stageGID(t, h, inv.Horovod.HCA, inv.Hosts[i].DataInterface, 3+2*i)
	}
	o := apply.RunOptions{Launcher: apply.LauncherMpirun, DryRun: true, Command: []string{"/work/train.py", "--epochs", "3"}, Parallel: 2,
		SSH: apply.SSH{User: "root", Identities: []string{c.Identity}, KnownHosts: c.KnownHosts}, Root: c.RootTemplate()}
	var out, errb bytes.Buffer
	o.Out, o.Err = &out, &errb
	res, err := apply.Run(context.Background(), inv, o)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if len(res.GIDIndexes) != 2 || res.GIDIndexes[0] != 3 || res.GIDIndexes[1] != 5 || res.Status != 0 || len(res.Launch) != 1 {
		t.Fatalf("result %+v", res)
	}
	l := res.Launch[0]
	if l.Host != "ns-01" || l.Argv[0] != "mpirun" || l.Argv[len(l.Argv)-1] != "3" || !strings.Contains(strings.Join(l.Argv, " "), " -x RDGGEN_GID_INDEXES=1:3 2:5 ") {
		t.Errorf("launch %+v", l)
	}
	if !strings.HasPrefix(out.String(), "docker exec hvd-worker mpirun ") || !strings.Contains(errb.String(), "rdggen run: the hosts' GID indexes differ (ns-01 3, ns-02 5): each rank sets its own") {
		t.Errorf("out %q\nerr %q", out.String(), errb.String())
	}

	o.Launcher = apply.LauncherTorchrun
	out.Reset()
	if res, err = apply.Run(context.Background(), inv, o); err != nil {
		t.Fatal(err)
	}
	if len(res.Launch) != 2 || res.Launch[1].Host != "ns-02" || res.Launch[1].Argv[0] != "torchrun" ||
		!strings.Contains(strings.Join(res.Launch[1].Env, " "), "NCCL_IB_GID_INDEX=5") || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("torchrun launch %+v\n%s", res.Launch, out.String())
	}
}
