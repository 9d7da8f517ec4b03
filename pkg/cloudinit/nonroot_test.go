package cloudinit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// `go test` of this package as a user other than root passes: the networkd
// half of TestNetworkConfigRenders, which needs root, is skipped with the
// reason (and fails with CI=true, where every prerequisite is set up). Run
// as root, this test runs this package's own test binary as nobody.
func TestNonRoot(t *testing.T) {
	if os.Getenv("RDGGEN_CLOUDINIT_NONROOT") != "" || os.Geteuid() != 0 {
		t.Skip("runs the package's tests as nobody, from root")
	}
	cloudInit(t)
	dir, err := os.MkdirTemp("", "rdggen-cloudinit-nonroot-") // t.TempDir's parent is root's only
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cloudinit.test")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := exefile.Write(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	runAs := func(ci string) (string, error) {
		cmd := exec.Command(bin, "-test.run", "TestNetworkConfigRenders|TestUserDataSchema", "-test.v", "-test.count=1")
		cmd.Dir = wd
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TMPDIR=" + dir, "RDGGEN_CLOUDINIT_NONROOT=1", "CI=" + ci}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := runAs("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestNetworkConfigRenders/by_MAC") ||
		!strings.Contains(out, "cloud-init's networkd renderer chowns the files it writes") || !strings.Contains(out, "--- PASS: TestUserDataSchema") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
	if out, err := runAs("true"); err == nil || !strings.Contains(out, "CI=true, but cloud-init's networkd renderer chowns") {
		t.Errorf("as nobody with CI=true: want a failure, got %v\n%s", err, out)
	}
}
