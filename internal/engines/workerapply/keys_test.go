package workerapply

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// TestKeysTrust: the keys are refused, with the path and the rule, wherever
// someone other than the user running rdggen (or root) could have chosen
// them — OpenSSH's StrictModes rules on real files, modes and owners.
func TestKeysTrust(t *testing.T) {
	const other = 12345 // a uid that is neither root nor the test's
	for _, tc := range []struct {
		name   string
		root   bool                                  // needs root (chown)
		change func(t *testing.T, base, keys string) // base holds keys
		want   string                                // "" = accepted
	}{
		{"as SaveKeys leaves them", false, func(*testing.T, string, string) {}, ""},
		{"key directory 0777", false, func(t *testing.T, _, keys string) { chmod(t, keys, 0o777) }, "keys: is writable by its group and everyone (mode 0777)"},
		{"key directory 1777", false, func(t *testing.T, _, keys string) { chmod(t, keys, 0o777|os.ModeSticky) }, "keys: is writable by its group and everyone (mode 1777)"},
		{"key directory 0770", false, func(t *testing.T, _, keys string) { chmod(t, keys, 0o770) }, "keys: is writable by its group (mode 0770)"},
		{"directory above 0777", false, func(t *testing.T, base, _ string) { chmod(t, base, 0o777) },
			"is writable by its group and everyone (mode 0777), and it is above the worker key directory"},
		{"directory above 1777, sticky like /tmp", false, func(t *testing.T, base, _ string) { chmod(t, base, 0o777|os.ModeSticky) }, ""},
		{"key 0620", false, func(t *testing.T, _, keys string) { chmod(t, filepath.Join(keys, ClientKeyFile), 0o620) }, "permissions 0620 are too open"},
		{"key a symbolic link", false, func(t *testing.T, base, keys string) {
			k := filepath.Join(keys, HostKeyFile)
			if err := os.Rename(k, filepath.Join(base, "elsewhere")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(base, "elsewhere"), k); err != nil {
				t.Fatal(err)
			}
		}, "worker_host_ed25519: is not a regular file"},
		{"key directory a symbolic link to a 0777 one", false, func(t *testing.T, base, keys string) {
			real := filepath.Join(base, "real")
			if err := os.Rename(keys, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, keys); err != nil {
				t.Fatal(err)
			}
			chmod(t, real, 0o777)
		}, "keys (" + "REAL" + "): is writable by its group and everyone"},
		{"key owned by another user", true, func(t *testing.T, _, keys string) { chown(t, filepath.Join(keys, HostKeyFile), other) },
			"worker_host_ed25519: is owned by uid 12345, not by you (uid 0 (root)) or root"},
		{"key directory owned by another user", true, func(t *testing.T, _, keys string) { chown(t, keys, other) }, "keys: is owned by uid 12345"},
		{"directory above owned by another user", true, func(t *testing.T, base, _ string) { chown(t, base, other) }, "is owned by uid 12345"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				if os.Getenv("CI") == "true" {
					t.Fatal("needs root (chown to another uid)")
				}
				t.Skip("needs root (chown to another uid)")
			}
			base := filepath.Join(t.TempDir(), "base")
			keys := filepath.Join(base, "keys")
			if err := SaveKeys(keys, testKeys(t)); err != nil {
				t.Fatal(err)
			}
			tc.change(t, base, keys)
			want := strings.ReplaceAll(tc.want, "REAL", filepath.Join(base, "real"))
			_, found, err := LoadKeys(keys)
			switch {
			case want == "" && (err != nil || !found):
				t.Errorf("refused: %v (found %v)", err, found)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Errorf("LoadKeys: %v\nwant an error containing %q", err, want)
			}
		})
	}
}

// TestCanSaveKeys: where the keys do not exist yet, a dry run promises
// them only in a directory that can be made and trusted, and makes none.
func TestCanSaveKeys(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	chmod(t, open, 0o777)
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(base, "new", "keys"), ""},
		{base, ""},
		{filepath.Join(file, "keys"), file + ": is not a directory, so the worker keys cannot be made in " + filepath.Join(file, "keys")},
		{filepath.Join(open, "keys"), open + ": is writable by its group and everyone (mode 0777), and it is above the worker key directory"},
		{open, open + ": is writable by its group and everyone (mode 0777): whoever can write there"},
	} {
		err := CanSaveKeys(tc.dir)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CanSaveKeys(%s): %v\nwant %q", tc.dir, err, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "new")); err == nil {
		t.Error("CanSaveKeys made a directory")
	}
	// SaveKeys into a directory someone else made between the check and the
	// save: refused, nothing written.
	if err := SaveKeys(open, testKeys(t)); err == nil || !strings.Contains(err.Error(), "is writable by its group and everyone") {
		t.Errorf("SaveKeys into a 0777 directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(open, ClientKeyFile)); err == nil {
		t.Error("SaveKeys wrote into the 0777 directory")
	}
}

// TestCanSaveKeysUnwritable runs CanSaveKeys as the user nobody on a
// directory of root's: the dry run must not promise keys it cannot write.
func TestCanSaveKeysUnwritable(t *testing.T) {
	if dir := os.Getenv("RDGGEN_TEST_CANSAVE"); dir != "" {
		if err := CanSaveKeys(dir); err != nil {
			io.WriteString(os.Stdout, "ERR "+err.Error()+"\n")
		} else {
			io.WriteString(os.Stdout, "OK\n")
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (runs a child as nobody)")
	}
	// A tree nobody can read but not write: the test binary and the root's
	// directory in it.
	top := t.TempDir()
	for p := top; p != filepath.Dir(os.TempDir()) && p != "/"; p = filepath.Dir(p) {
		if p == os.TempDir() {
			break
		}
		chmod(t, p, 0o755)
	}
	bin := filepath.Join(top, "workerapply.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := exefile.Write(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	roots := filepath.Join(top, "roots")
	if err := os.Mkdir(roots, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestCanSaveKeysUnwritable$")
	cmd.Env = append(os.Environ(), "RDGGEN_TEST_CANSAVE="+filepath.Join(roots, "keys"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	// The directory belongs to root, which OpenSSH trusts; only the write fails.
	if want := "ERR " + roots + ": cannot be written (permission denied), so the directory " + filepath.Join(roots, "keys") + " cannot be made there"; !strings.Contains(string(out), want) {
		t.Errorf("as nobody:\n%s\nwant %q", out, want)
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

func chown(t *testing.T, p string, uid int) {
	t.Helper()
	if err := os.Lchown(p, uid, -1); err != nil {
		t.Fatal(err)
	}
}
