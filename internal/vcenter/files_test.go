package vcenter

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vmware/govmomi/simulator"
)

// vcsim serves govmomi's simulator over HTTPS and returns its URL and a
// PEM file of its certificate.
func vcsim(t *testing.T) (*url.URL, string) {
	t.Helper()
	m := simulator.VPX()
	if err := m.Create(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Remove)
	m.Service.TLS = new(tls.Config)
	s := m.Service.NewServer()
	t.Cleanup(s.Close)
	ca := filepath.Join(t.TempDir(), "vcenter-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	u := *s.URL
	u.User = nil
	return &u, ca
}

// GOVC_TLS_CA_CERTS is read as every file a user names: its PEM files are
// the roots vCenter is verified against (the simulator's certificate
// passes with them and fails without), and a named pipe among them is
// refused at once, naming the variable, not waited on.
func TestConnectCACerts(t *testing.T) {
	u, ca := vcsim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{URL: u, Username: "user", Password: "pass", Timeout: 10 * time.Second}
	cfg.CACerts = ca
	s, err := Connect(ctx, cfg, 2, nil)
	if err != nil {
		t.Fatalf("with the simulator's CA: %v", err)
	}
	s.Logout(ctx)
	other := filepath.Join(t.TempDir(), "other.pem")
	if err := os.WriteFile(other, selfSigned(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.CACerts = other
	if _, err := Connect(ctx, cfg, 2, nil); err == nil || !strings.Contains(err.Error(), "its TLS certificate is not trusted") {
		t.Errorf("with another CA: %v", err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.CACerts = ca + string(filepath.ListSeparator) + fifo
	done := make(chan error, 1)
	go func() { _, err := Connect(ctx, cfg, 2, nil); done <- err }()
	select {
	case err := <-done:
		if want := "GOVC_TLS_CA_CERTS=" + cfg.CACerts + ": " + fifo + " is not a regular file (a named pipe)"; err == nil || err.Error() != want {
			t.Errorf("a FIFO among the CA files: %v, want %q", err, want)
		}
	case <-ctx.Done():
		t.Fatal("Connect waits on a FIFO in GOVC_TLS_CA_CERTS")
	}
	if _, err := CAPool(filepath.Join(t.TempDir(), "absent.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing CA file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CAPool(empty); err == nil || err.Error() != empty+": no PEM certificate in it" {
		t.Errorf("a file without a certificate: %v", err)
	}
}

// hanging is a transport that, once hang is set, holds every request until
// the request's own context ends: a vCenter that stopped answering.
type hanging struct {
	next http.RoundTripper
	hang atomic.Bool
}

func (h *hanging) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.hang.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return h.next.RoundTrip(r)
}

// After an interrupt (ctx ended), Logout waits for a vCenter that stopped
// answering no longer than Grace, not for the request timeout
// (--vcenter-timeout, 2 minutes by default): SIGTERM is not held by it.
func TestLogoutAfterInterrupt(t *testing.T) {
	u, _ := vcsim(t)
	var h *hanging
	cfg := Config{URL: u, Username: "user", Password: "pass", Insecure: true, Timeout: 2 * time.Minute}
	s, err := Connect(context.Background(), cfg, 2, func(rt http.RoundTripper) http.RoundTripper {
		h = &hanging{next: rt}
		return h
	})
	if err != nil {
		t.Fatal(err)
	}
	h.hang.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	done := make(chan struct{})
	go func() { s.Logout(ctx); close(done) }()
	select {
	case <-done:
		if d := time.Since(start); d < Grace-time.Second || d > Grace+5*time.Second {
			t.Errorf("Logout took %s, want about %s", d, Grace)
		}
	case <-time.After(Grace + 20*time.Second):
		t.Fatalf("Logout still waits %s after the interrupt", time.Since(start))
	}
}

// selfSigned is the PEM of a new self-signed certificate of no server
// here.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
