package hostapply

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// runLocal runs a script with the local sh as the hosts would. Its files
// are under the test's root prefix; what is live state (the firewall step's
// iptables, sysctl) goes to a network namespace of its own when the test
// runs as root (unshare -n), so the machine's own is never changed; without
// root those commands fail and change nothing.
func runLocal(t *testing.T, w *remote.Script) map[string]remote.Result {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command("sh", "-s")
	if os.Geteuid() == 0 {
		cmd = exec.Command("unshare", "--net", "sh", "-s")
	}
	cmd.Stdin = bytes.NewReader(w.End())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("script: %v\n%s\n%s", err, out, stderr.String())
	}
	rs, err := remote.ParseResults(out, w.Nonce())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]remote.Result{}
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// daemonScript is the apply script of a plan that only installs daemon.json.
func daemonScript(root string, dc *daemonChange, validate, restart string) *remote.Script {
	inv := inventory.Reference()
	p := &plan{d: desiredFor(inv, &inv.Hosts[0]), daemon: dc}
	w := remote.NewScript(root).WithTemp()
	applyScript(w, p, &Options{Root: root, DockerValidate: validate, DockerRestart: restart}, "20250101T000000Z")
	return w
}

// iptablesSave is the machine's own iptables state ("" without root).
func iptablesSave(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	out, err := exec.Command("iptables-save").Output()
	if err != nil {
		t.Fatalf("iptables-save: %v", err)
	}
	var keep []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "#") { // the dump's time stamps
			keep = append(keep, strings.TrimSpace(strings.Split(l, " [")[0]))
		}
	}
	return strings.Join(keep, "\n")
}

// TestDaemonInstall installs daemon.json as the apply script does (a
// change of it also runs the firewall script, which Docker's restart
// needs) and leaves the machine's own iptables as they were.
func TestDaemonInstall(t *testing.T) {
	before := iptablesSave(t)
	t.Cleanup(func() {
		if after := iptablesSave(t); after != before {
			t.Errorf("the test changed the machine's own iptables:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	})
	oldJSON := []byte(`{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}` + "\n")
	newJSON := []byte("{\"runtimes\": {\"nvidia\": {\"path\": \"nvidia-container-runtime\"}}, \"bip\": \"172.16.41.1/24\"}\n")
	for _, tc := range []struct {
		name              string
		existing          []byte // nil: no file
		oldSum            string // "" = the right one
		validate, restart string
		wantRC            string
		wantFile          []byte
		wantBackup        bool
		wantOut           string
	}{
		{name: "new file", validate: "true", restart: `test -s "$RDGGEN_ROOT/etc/docker/daemon.json"`, wantRC: "0", wantFile: newJSON},
		{name: "replace with backup", existing: oldJSON, validate: `grep -q bip "$1"`, restart: "true", wantRC: "0", wantFile: newJSON, wantBackup: true, wantOut: "backup: "},
		{name: "validation rejects", existing: oldJSON, validate: `echo "bad file $1"; exit 1`, restart: "true", wantRC: "4", wantFile: oldJSON, wantOut: "the new file was rejected"},
		{name: "restart fails: old file back", existing: oldJSON, validate: "true", restart: `grep -q bip "$RDGGEN_ROOT/etc/docker/daemon.json" && exit 1; exit 0`, wantRC: "5", wantFile: oldJSON, wantBackup: true, wantOut: "the previous one is back in place"},
		{name: "restart fails on a new file: removed", validate: "true", restart: `test ! -e "$RDGGEN_ROOT/etc/docker/daemon.json"`, wantRC: "5", wantOut: "it was removed again"},
		{name: "changed since the probe", existing: oldJSON, oldSum: "0000", validate: "true", restart: "true", wantRC: "3", wantFile: oldJSON, wantOut: "changed since the plan was made"},
		{name: "none modes", existing: oldJSON, validate: ModeNone, restart: ModeNone, wantRC: "0", wantFile: newJSON, wantBackup: true, wantOut: "docker restart skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "etc/docker/daemon.json")
			dc := &daemonChange{Mode: 0o644, New: newJSON}
			if tc.existing != nil {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, tc.existing, 0o600); err != nil {
					t.Fatal(err)
				}
				dc.Existed, dc.Old, dc.Mode, dc.OldSum = true, tc.existing, 0o600, sum(tc.existing)
				if tc.oldSum != "" {
					dc.OldSum = tc.oldSum
				}
			}
			rs := runLocal(t, daemonScript(root, dc, tc.validate, tc.restart))
			r := rs["step:daemon"]
			if r.Status != tc.wantRC || !strings.Contains(string(r.Data), tc.wantOut) {
				t.Errorf("daemon step: exit %s, want %s; output %q, want %q", r.Status, tc.wantRC, r.Data, tc.wantOut)
			}
			got, err := os.ReadFile(path)
			switch {
			case tc.wantFile == nil && err == nil:
				t.Errorf("daemon.json exists:\n%s", got)
			case tc.wantFile != nil && !bytes.Equal(got, tc.wantFile):
				t.Errorf("daemon.json:\n%s\nwant:\n%s", got, tc.wantFile)
			}
			if tc.wantFile != nil && tc.existing != nil {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("mode not kept: %v %v", fi.Mode(), err)
				}
			}
			backup := path + ".rdggen-20250101T000000Z.bak"
			b, err := os.ReadFile(backup)
			if tc.wantBackup != (err == nil) || (tc.wantBackup && !bytes.Equal(b, tc.existing)) {
				t.Errorf("backup: %q %v (want one: %v)", b, err, tc.wantBackup)
			}
			if tc.wantBackup {
				// A second install in the same second keeps both backups.
				dc2 := *dc
				dc2.Old, dc2.OldSum, dc2.New = tc.wantFile, sum(tc.wantFile), []byte("{\"bip\": \"172.16.41.1/24\", \"debug\": true}\n")
				if tc.wantFile != nil && tc.wantRC == "0" {
					runLocal(t, daemonScript(root, &dc2, "true", "true"))
					if b, _ := os.ReadFile(backup + ".1"); !bytes.Equal(b, tc.wantFile) {
						t.Errorf("second backup: %q", b)
					}
				}
			}
			if left, _ := filepath.Glob(filepath.Join(root, "etc/docker/.*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestFilesLinksAndRemoval(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0])
	root := t.TempDir()
	foreign := filepath.Join(root, dockernet.NetplanPath)
	if err := os.MkdirAll(filepath.Dir(foreign), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foreign, []byte("# rdggen: persistent routes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &plan{d: d, files: d.Files, links: d.Links, remove: d.Foreign, reload: true}
	w := remote.NewScript(root).WithTemp()
	applyScript(w, p, &Options{Root: root}, "x")
	rs := runLocal(t, w)
	for name, r := range rs {
		if r.RC() != 0 {
			t.Errorf("%s: exit %s: %s", name, r.Status, r.Data)
		}
	}
	if !strings.Contains(string(rs["step:reload"].Data), "root prefix set: no daemon-reload") {
		t.Errorf("reload: %q", rs["step:reload"].Data)
	}
	for _, f := range d.Files {
		p := filepath.Join(root, f.Path)
		b, err := os.ReadFile(p)
		fi, _ := os.Stat(p)
		if err != nil || !bytes.Equal(b, f.Data) || fi.Mode().Perm() != f.Mode {
			t.Errorf("%s: %v mode %v", f.Path, err, fi.Mode())
		}
	}
	for _, l := range d.Links {
		if target, err := os.Readlink(filepath.Join(root, l.Path)); err != nil || target != l.Target {
			t.Errorf("%s -> %q %v", l.Path, target, err)
		}
	}
	if _, err := os.Stat(foreign); err == nil {
		t.Error("rdggen's netplan file for another OS form is still there")
	}

	// Probing the result finds every file as written (the same script
	// functions the hosts run; ip/iptables results are not looked at here).
	w = remote.NewScript(root)
	roceVar(w, []byte("echo rdggen-roce tcp_ecn ok 1\n"))
	probe(w, d)
	script := w.End()
	cmd := exec.Command("sh", "-s")
	cmd.Stdin = bytes.NewReader(script)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	list, err := remote.ParseResults(out, w.Nonce())
	if err != nil {
		t.Fatal(err)
	}
	st, err := parseState(list, root, d.paths())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.Files {
		s := st.Files[f.Path]
		if s.Kind != "file" || s.Mode != f.Mode || !bytes.Equal(s.Data, f.Data) {
			t.Errorf("probe %s: %s %o", f.Path, s.Kind, s.Mode)
		}
	}
	for _, l := range d.Links {
		if s := st.Files[l.Path]; s.Kind != "link" || string(s.Data) != l.Target {
			t.Errorf("probe %s: %s %q", l.Path, s.Kind, s.Data)
		}
	}
	if s := st.Files[dockernet.DaemonPath]; s.Kind != "absent" {
		t.Errorf("probe daemon.json: %s", s.Kind)
	}
	if st.RoCE.Out != "rdggen-roce tcp_ecn ok 1\n" {
		t.Errorf("roce: %q", st.RoCE.Out)
	}
}

func TestParseResultsFraming(t *testing.T) {
	out := []byte("motd line\n@rdggen abc a\nx\n@rdggen abc end 0\n@rdggen abc b\n\n@rdggen abc end 3\n@rdggen abc c\nno newline at end\n@rdggen abc end 1\n@rdggen abc done\n")
	rs, err := remote.ParseResults(out, "abc")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || string(rs[0].Data) != "x" || rs[1].Status != "3" || len(rs[1].Data) != 0 || string(rs[2].Data) != "no newline at end" {
		t.Fatalf("%+v", rs)
	}
	for _, cut := range []int{20, 40, len(out) - 5} {
		if _, err := remote.ParseResults(out[:cut], "abc"); err == nil {
			t.Errorf("output cut at %d: no error", cut)
		}
	}
	if _, err := remote.ParseResults(out, "other"); err == nil {
		t.Error("another nonce's output accepted")
	}
}

// A hardened daemon.json (mode 0600) on a host whose dockerd is older than
// 23.0 (Debian's 20.10: no --validate): the auto check runs the real dockerd
// as nobody on the staged 0600 copy, tells a good file from a bad one, and
// the installed file keeps its mode and owner.
func TestValidateHardenedDaemonJSON(t *testing.T) {
	if os.Geteuid() != 0 {
		netnstest.Unavailable(t, "needs root to run dockerd as nobody")
	}
	for _, tool := range []string{"dockerd", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			netnstest.Unavailable(t, "%s not found (install docker.io and util-linux)", tool)
		}
	}
	if out, _ := exec.Command("dockerd", "--validate").CombinedOutput(); !strings.Contains(string(out), "unknown flag: --validate") {
		t.Skipf("this dockerd has --validate; the nobody path is for dockerd < 23 (%s)", strings.TrimSpace(string(out)))
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, data string
		rc         string
		want       string
	}{
		{"good", "{\"bip\": \"172.16.41.1/24\", \"mtu\": 9000}\n", "0", "loads the file as nobody without complaint"},
		{"bad", "{\"bip\": 12}\n", "1", "cannot unmarshal number into Go struct field Config.bip of type string"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := os.WriteFile(p, []byte(tc.data), 0o600); err != nil {
			t.Fatal(err)
		}
		w := remote.NewScript("")
		w.Line(validateFunc(ModeAuto))
		w.Line("fr check validate_daemon ", remote.Quote(p))
		r := runLocal(t, w)["check"]
		if r.Status != tc.rc || !strings.Contains(string(r.Data), tc.want) {
			t.Errorf("%s: exit %s, %s", tc.name, r.Status, r.Data)
		}
	}
	// The install keeps the hardened mode and the owner.
	root := t.TempDir()
	path := filepath.Join(root, "etc/docker/daemon.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	old := []byte("{\"debug\": true}\n")
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	dc := &daemonChange{Existed: true, Old: old, OldSum: sum(old), Mode: 0o600, New: []byte("{\"debug\": true, \"bip\": \"172.16.41.1/24\"}\n")}
	if r := runLocal(t, daemonScript(root, dc, "true", "true"))["step:daemon"]; r.Status != "0" {
		t.Fatalf("install: %s %s", r.Status, r.Data)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Sys().(*syscall.Stat_t).Uid != 4242 {
		t.Errorf("installed daemon.json: %v %v", fi.Mode(), err)
	}
}
