package lab

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	_ "github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Rewrite points vcenter and the switches' mgmt at the stand-ins, adds
// the keys where the user left them out, keeps every comment, and the
// result loads with the new addresses.
func TestRewrite(t *testing.T) {
	src := []byte(`# my cluster
name: c1
switches:
  - {name: leaf1, model: SN2700, onyx: 3.6.8190}   # rack 1
  - name: leaf2
    model: SN3700
    cumulus: 5.9.1
    mgmt: 10.0.0.2  # the real one
vcenter: https://vc.example/sdk  # production!
docker: {version: "20.10", pool: 172.16.0.0/16, prefix: 24}
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  gpus: [{model: A100-PCIE-40GB, memory_gb: 40}]
  nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 8}
hosts:
  - {name: h1, esxi: e1, data: {address: 10.10.0.1/24, switch: leaf1, port: 1/1}}
  - {name: h2, esxi: e2, data: {address: 10.10.0.2/24, switch: leaf2, port: swp1}}
`)
	out, err := Rewrite(src, "https://127.0.0.1:4443/sdk", map[string]string{"leaf1": "127.0.0.1:2201", "leaf2": "127.0.0.1:8765"}, "cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# my cluster", "# rack 1", "# rdggen lab: cluster.yaml with every management address pointing at its stand-in"} {
		if !strings.Contains(s, want) {
			t.Errorf("lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "vc.example") || strings.Contains(s, "10.0.0.2") {
		t.Errorf("a production address remains:\n%s", s)
	}
	inv, err := inventory.Load("lab.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	if inv.VCenter != "https://127.0.0.1:4443/sdk" || inv.Switches[0].Mgmt != "127.0.0.1:2201" || inv.Switches[1].Mgmt != "127.0.0.1:8765" {
		t.Errorf("vcenter %q, mgmt %q %q", inv.VCenter, inv.Switches[0].Mgmt, inv.Switches[1].Mgmt)
	}
	if _, err := Rewrite([]byte("- a list\n"), "u", nil, "x.yaml"); err == nil {
		t.Error("a YAML list was rewritten")
	}
}

// Down never signals a PID that is not this lab's supervisor (a recycled
// PID, another program), and a directory without a lab is left alone.
func TestDownForeignPID(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FilePID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if isSupervisor(os.Getpid(), dir) {
		t.Fatal("the test process taken for a supervisor")
	}
	gone, err := Down(dir) // would kill this test if it signalled the PID
	if err != nil || len(gone) != 2 || gone[0] != "file "+filepath.Join(dir, FilePID) {
		t.Fatalf("%q, %v", gone, err)
	}
	if gone, err := Down(filepath.Join(dir, "none")); err != nil || len(gone) != 0 {
		t.Errorf("no lab: %q, %v", gone, err)
	}
	if _, err := Fault(dir, []string{"hide-gpu", "vm1"}); err == nil || !strings.Contains(err.Error(), "start one with rdggen lab up") {
		t.Errorf("fault without a lab: %v", err)
	}
	if _, err := Fault(dir, []string{"hide-gpu", "a\nstop"}); err == nil {
		t.Error("a line break went to the control socket")
	}
}
