package vmx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func TestMaxVFs(t *testing.T) {
	for _, tc := range []struct {
		cur  string
		port int
		want string
	}{
		{"", 0, "8"},
		{"", 1, "0,8"},
		{"4", 1, "4,8"},
		{"4", 0, "8"},
		{"8", 0, "8"},
		{"2,6", 0, "8,6"},
		{"2,6", 1, "2,8"},
		{"2,6", 3, "2,6,0,8"},
		{"8,8", 0, "8,8"},
		{"0x8", 0, "0x8"}, // the same number: left as it is
		{"4,,4", 1, "4,8,4"},
	} {
		if got := MaxVFs(tc.cur, tc.port, 8); got != tc.want {
			t.Errorf("MaxVFs(%q, %d, 8) = %q, want %q", tc.cur, tc.port, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v    string
		port int
		n    int
		ok   bool
	}{{"", 0, 0, true}, {"8", 0, 8, true}, {"8", 1, 0, true}, {"0,8", 1, 8, true}, {"x,8", 0, 0, false}} {
		if n, ok := PortMaxVFs(tc.v, tc.port); n != tc.n || ok != tc.ok {
			t.Errorf("PortMaxVFs(%q, %d) = %d, %v; want %d, %v", tc.v, tc.port, n, ok, tc.n, tc.ok)
		}
	}
	ports := []NICPort{{"vmnic0", "0000:01:00.0", "ntg3"}, {"vmnic5", "0000:D8:00.1", "nmlx5_core"}, {"vmnic4", "0000:d8:00.0", "nmlx5_core"}, {"vmnic2", "0000:3b:00.0", "nmlx5_core"}}
	for pf, want := range map[string]int{"vmnic2": 0, "vmnic4": 1, "vmnic5": 2, "vmnic0": -1, "vmnic9": -1} {
		got, ok := NICPortIndex(ports, pf)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("NICPortIndex(%s) = %d, want %d", pf, got, want)
		}
	}
}

// TestHostScriptMaxVFs runs esxi/<host>.sh's module-parameter step in a
// POSIX shell against stand-ins for ESXi's esxcli and esxcfg-module: the PF
// gets its VFs at its own position among the nmlx5_core ports in PCI
// order, the other ports keep their values, and the result is the string
// apply would set (HostModuleParams).
func TestHostScriptMaxVFs(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	inv := inventory.Reference()
	const esxi = "esx-41.example"
	script := HostScript(inv, esxi)
	nic, _ := HostNIC(inv, esxi)
	const rest = " pfctx=0x08 pfcrx=0x08 trust_state=2 ecn=1"
	for _, tc := range []struct {
		name    string
		ports   []NICPort
		options string
		want    string // the -p string; "" = the script fails with fail
		fail    string
	}{
		{"the only ConnectX port", []NICPort{{"vmnic0", "0000:01:00.0", "ntg3"}, {"vmnic4", "0000:d8:00.0", "nmlx5_core"}}, "",
			"max_vfs=8" + rest, ""},
		{"a second card's port", []NICPort{{"vmnic2", "0000:3b:00.0", "nmlx5_core"}, {"vmnic4", "0000:d8:00.0", "nmlx5_core"}}, "",
			"max_vfs=0,8" + rest, ""},
		{"a second card's port, the first keeps its VFs", []NICPort{{"vmnic2", "0000:3b:00.0", "nmlx5_core"}, {"vmnic4", "0000:d8:00.0", "nmlx5_core"}},
			"max_vfs=4 pfctx=0x08", "max_vfs=4,8" + rest, ""},
		{"the card's second port", []NICPort{{"vmnic4", "0000:d8:00.1", "nmlx5_core"}, {"vmnic3", "0000:d8:00.0", "nmlx5_core"}},
			"max_vfs=2,2,2", "max_vfs=2,8,2" + rest, ""},
		{"the first of two", []NICPort{{"vmnic4", "0000:3b:00.0", "nmlx5_core"}, {"vmnic5", "0000:3b:00.1", "nmlx5_core"}},
			"max_vfs=2,6", "max_vfs=8,6" + rest, ""},
		{"not an nmlx5_core port", []NICPort{{"vmnic4", "0000:d8:00.0", "nmlx4_en"}}, "", "",
			"vmnic4 is not an nmlx5_core port in 'esxcli network nic list': check nic.pf in the inventory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var nics strings.Builder
			nics.WriteString("Name    PCI Device    Driver      Admin Status  Link Status  Speed   Duplex  MAC Address         MTU   Description\n")
			nics.WriteString("------  ------------  ----------  ------------  -----------  ------  ------  -----------------   ----  -----------\n")
			for _, p := range tc.ports {
				fmt.Fprintf(&nics, "%-6s  %s  %-10s  Up            Up           100000  Full    0c:42:a1:00:00:01  1500  Mellanox ConnectX-5\n", p.Device, p.PCI, p.Driver)
			}
			files := map[string]string{
				"nics":    nics.String(),
				"options": tc.options,
				"bin/esxcli": `#!/bin/sh
case "$*" in
"network nic list") cat "$STUB/nics" ;;
"system module parameters set -m nmlx5_core -p "*) shift 7; printf '%s' "$1" > "$STUB/set" ;;
"system module parameters list -m nmlx5_core") printf 'max_vfs      int  8  Number of VFs\necn          int  1  ECN\n' ;;
*) echo "unexpected: esxcli $*" >&2; exit 2 ;;
esac
`,
				"bin/esxcfg-module": `#!/bin/sh
[ "$*" = "-g nmlx5_core" ] || { echo "unexpected: esxcfg-module $*" >&2; exit 2; }
echo "nmlx5_core enabled = 1 options = '$(cat "$STUB/options")'"
`,
			}
			for name, content := range files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := exefile.Write(p, []byte(content), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(sh, "-c", string(script))
			cmd.Env = append(os.Environ(), "STUB="+dir, "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			set, _ := os.ReadFile(filepath.Join(dir, "set"))
			if tc.want == "" {
				if err == nil || !strings.Contains(string(out), tc.fail) || len(set) > 0 {
					t.Errorf("want a failure %q, nothing set; got %v, set %q:\n%s", tc.fail, err, set, out)
				}
				return
			}
			if err != nil || string(set) != tc.want {
				t.Fatalf("set %q, want %q (%v):\n%s", set, tc.want, err, out)
			}
			// apply computes the same string from vCenter's pnic list.
			port, ok := NICPortIndex(tc.ports, nic.PF)
			merged, _ := MergeParams(tc.options, HostModuleParams(nic, inv.RoCE, port, tc.options))
			if !ok || merged != tc.want {
				t.Errorf("apply would set %q (port %d, %v), the script %q", merged, port, ok, tc.want)
			}
		})
	}
}
