package nvueapply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// TestNoRedirect: a switch (or something at its address) that redirects
// to plain http on the same host gets no second request, so the login
// never travels in clear; the error names the redirect.
func TestNoRedirect(t *testing.T) {
	var leaked atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Add(1)
		}
		w.Write([]byte("{}"))
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	defer tlsSrv.Close()
	c, err := NewClient(ClientConfig{Addr: strings.TrimPrefix(tlsSrv.URL, "https://"), User: "cumulus", Password: "secret",
		TLS: TLS{Fingerprint: fingerprintOf(tlsSrv)}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTree(context.Background(), nil, "applied")
	if err == nil || !strings.Contains(err.Error(), "302 Found: a redirect to \""+plain.URL+"/nvue_v1/?filled=false&rev=applied\", which rdggen does not follow") {
		t.Errorf("want the redirect refused, got %v", err)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("the login was sent to the plain-http target %d time(s)", n)
	}
}

func fingerprintOf(s *httptest.Server) string {
	sum := sha256.Sum256(s.Certificate().Raw)
	return hex.EncodeToString(sum[:])
}

// TestSwitchTextsEscaped: an error text or issue from the switch cannot
// move the cursor or forge a line of rdggen's output.
func TestSwitchTextsEscaped(t *testing.T) {
	r := newRig(t, nvuesim.Options{})
	inv := loadInv(t, "cumulus", r.sim.Addr)
	r.sim.FailApply("boom\n\x1b[2Kswx-mld-1-2: applied revision X (37 change(s))")
	res, err := r.run(t, inv)
	if err == nil || res.Err == nil {
		t.Fatal("the failed apply succeeded")
	}
	if out := r.out.String(); strings.Contains(out, "\x1b") || strings.Contains(out, "\nswx-mld-1-2: applied revision X") ||
		!strings.Contains(out, `boom\n\x1b[2Kswx-mld-1-2: applied revision X`) {
		t.Errorf("the switch's text reached the output raw:\n%q", out)
	}
}

// TestBackupDirChecked: an existing --backup-dir that another user owns or
// that others can write is refused before anything changes on the switch.
func TestBackupDirChecked(t *testing.T) {
	cases := map[string]func(dir string) error{
		"group-writable": func(dir string) error { return os.Chmod(dir, 0o777) },
		"symlink": func(dir string) error {
			target := dir + "-target"
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			if err := os.Remove(dir); err != nil {
				return err
			}
			return os.Symlink(target, dir)
		},
	}
	if os.Geteuid() == 0 {
		cases["other-owner"] = func(dir string) error { return os.Chown(dir, 65534, 65534) }
	} else if os.Getenv("CI") == "true" {
		t.Error("CI: the other-owner case needs root (chown)")
	}
	want := map[string]string{"group-writable": "is writable by its group or others (mode 0777)", "symlink": "is a symbolic link",
		"other-owner": "belongs to uid 65534, not to the user running rdggen"}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, nvuesim.Options{})
			dir := filepath.Join(t.TempDir(), "backup")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := spoil(dir); err != nil {
				t.Fatal(err)
			}
			r.o.BackupDir = dir
			inv := loadInv(t, "cumulus", r.sim.Addr)
			res, err := r.run(t, inv)
			if err == nil || res.Err == nil || !strings.Contains(res.Err.Error(), want[name]) {
				t.Fatalf("want a refusal naming %q, got %v", want[name], res.Err)
			}
			if n := configPatches(r.sim); n != 0 || r.sim.Count("POST", "") != 0 {
				t.Errorf("the switch was changed: %v", r.sim.Requests())
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("a backup was written: %v", entries)
			}
		})
	}
}
