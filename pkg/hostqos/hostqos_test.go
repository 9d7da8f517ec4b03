package hostqos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func TestSettingsReference(t *testing.T) {
	inv := inventory.Reference()
	var got []string
	for _, s := range Settings(inv, &inv.Hosts[0]) {
		got = append(got, s.Name+" "+s.Path+" = "+s.Value)
	}
	want := []string{
		"tcp_ecn /proc/sys/net/ipv4/tcp_ecn = 1",
		"cma_roce_tos /sys/kernel/config/rdma_cm/<dev>/ports/1/default_roce_tos = 106",
		"traffic_class /sys/class/infiniband/<dev>/tc/1/traffic_class = 106",
		"ecn_np /sys/class/net/enp1f0/ecn/roce_np/enable/3 = 1",
		"ecn_rp /sys/class/net/enp1f0/ecn/roce_rp/enable/3 = 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	script := string(Script(inv, &inv.Hosts[0]))
	for _, s := range []string{"esxi/esx-41.example.sh", "NCCL_IB_TC=106", "not applicable on a VF"} {
		if !strings.Contains(script, s) {
			t.Errorf("script lacks %q", s)
		}
	}
	if u := string(Unit(inv, &inv.Hosts[0])); !strings.Contains(u, "ExecStart="+ScriptPath+" apply") || !strings.Contains(u, "WantedBy=multi-user.target") {
		t.Errorf("unit:\n%s", u)
	}
}

func TestArtifacts(t *testing.T) {
	inv := inventory.Reference()
	files := Artifacts(inv)
	if len(files) != 24 || files[0].Path != "hosts/clx-mld-41/roce-qos.sh" || files[0].Mode != 0o755 || files[1].Path != "hosts/clx-mld-41/rdggen-roce-qos.service" ||
		files[2].Path != "hosts/clx-mld-41/60-rdggen-nvidia-peermem.conf" || files[2].Mode != 0o644 || !strings.HasSuffix(string(files[2].Data), "\nnvidia-peermem\n") {
		t.Fatalf("artifacts: %d, first %s %o", len(files), files[0].Path, files[0].Mode)
	}
}

// fakeTree writes files (path → content) under dir.
func fakeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runScript runs the script on fake /sys and /proc trees (never the real ones).
func runScript(t *testing.T, script []byte, sys, proc, mode string) ([]Result, int) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	p := filepath.Join(t.TempDir(), "roce-qos.sh")
	if err := exefile.Write(p, script, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", p, mode)
	cmd.Env = append(os.Environ(), "RDGGEN_SYSFS="+sys, "RDGGEN_PROCFS="+proc)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ParseReport(out), code
}

func states(rs []Result) map[string]string {
	m := map[string]string{}
	for _, r := range rs {
		m[r.Name] = r.State + " " + r.Detail
	}
	return m
}

func TestScriptOnAVF(t *testing.T) {
	inv := inventory.Reference()
	script := Script(inv, &inv.Hosts[0])
	sys, proc := t.TempDir(), t.TempDir()
	// A VF with MLNX_OFED: an RDMA device, rdma_cm in configfs (the device's
	// group as mkdir would create it), a traffic_class file, no ecn/.
	fakeTree(t, sys, map[string]string{
		"class/net/enp1f0/device/infiniband/mlx5_3/":            "",
		"kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos": "0\n",
		"class/infiniband/mlx5_3/tc/1/traffic_class":            "Global tclass=0\n",
	})
	fakeTree(t, proc, map[string]string{"sys/net/ipv4/tcp_ecn": "2\n"})

	rs, code := runScript(t, script, sys, proc, "check")
	got := states(rs)
	if code != 1 || got["tcp_ecn"] != "differs 2 -> 1" || got["cma_roce_tos"] != "differs 0 -> 106" || got["traffic_class"] != "differs 0 -> 106" ||
		!strings.HasPrefix(got["ecn_np"], "n/a not applicable on a VF") || !strings.HasPrefix(got["pf_qos"], "esxi not applicable on a VF") {
		t.Fatalf("check: exit %d %v", code, got)
	}
	if b, _ := os.ReadFile(filepath.Join(proc, "sys/net/ipv4/tcp_ecn")); string(b) != "2\n" {
		t.Fatal("check changed tcp_ecn")
	}

	rs, code = runScript(t, script, sys, proc, "apply")
	got = states(rs)
	if code != 0 || got["tcp_ecn"] != "set 2 -> 1" || got["cma_roce_tos"] != "set 0 -> 106" || got["rdma_device"] != "ok mlx5_3" {
		t.Fatalf("apply: exit %d %v", code, got)
	}
	for p, want := range map[string]string{
		filepath.Join(proc, "sys/net/ipv4/tcp_ecn"):                                 "1\n",
		filepath.Join(sys, "kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos"): "106\n",
		filepath.Join(sys, "class/infiniband/mlx5_3/tc/1/traffic_class"):            "106\n",
	} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s = %q, want %q", p, b, want)
		}
	}
	rs, code = runScript(t, script, sys, proc, "check")
	for _, r := range rs {
		if r.State == StateDiffers || r.State == StateFailed {
			t.Errorf("after apply: %+v", r)
		}
	}
	if code != 0 {
		t.Errorf("check after apply: exit %d", code)
	}
}

func TestScriptNoRDMAAndPF(t *testing.T) {
	inv := inventory.Reference()
	script := Script(inv, &inv.Hosts[0])
	// No RDMA stack at all: everything but tcp_ecn is not applicable, nothing fails.
	sys, proc := t.TempDir(), t.TempDir()
	fakeTree(t, proc, map[string]string{"sys/net/ipv4/tcp_ecn": "1\n"})
	rs, code := runScript(t, script, sys, proc, "apply")
	got := states(rs)
	if code != 0 || got["tcp_ecn"] != "ok 1" || !strings.HasPrefix(got["rdma_device"], "n/a no RDMA device behind enp1f0") ||
		!strings.HasPrefix(got["cma_roce_tos"], "n/a") || !strings.HasPrefix(got["traffic_class"], "n/a") {
		t.Fatalf("no RDMA: exit %d %v", code, got)
	}
	// A PF (ecn/ present): ECN on priority 3 is set too.
	fakeTree(t, sys, map[string]string{
		"class/net/enp1f0/ecn/roce_np/enable/3": "0\n",
		"class/net/enp1f0/ecn/roce_rp/enable/3": "1\n",
	})
	rs, code = runScript(t, script, sys, proc, "apply")
	got = states(rs)
	if code != 0 || got["ecn_np"] != "set 0 -> 1" || got["ecn_rp"] != "ok 1" {
		t.Fatalf("PF: exit %d %v", code, got)
	}
}

func TestParseReport(t *testing.T) {
	got := ParseReport([]byte("noise\nrdggen-roce tcp_ecn differs 2 -> 1\nrdggen-roce x ok\n"))
	want := []Result{{"tcp_ecn", "differs", "2 -> 1"}, {"x", "ok", ""}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}
