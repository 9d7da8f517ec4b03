package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestDialerUsesInventoryPort: a mgmt address with its own :port is dialled
// there, not at --hosts-ssh-port.
func TestDialerUsesInventoryPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // now nothing listens there: the dial is refused at once
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dial := SSH{User: "root", Port: 2222, KnownHosts: kh, Password: "x"}.Dialer()
	_, err = dial(context.Background(), &inventory.Host{Name: "h1", Mgmt: addr})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("dial %s: %v", addr, err)
	}
	_, err = dial(context.Background(), &inventory.Host{Name: "h1", Mgmt: "127.0.0.1"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:2222") {
		t.Fatalf("dial without port: %v", err)
	}
}

// DialError names the step that failed: a refused login, a server that
// hung up during the handshake, an interrupt, an unreachable address.
func TestDialError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&sshconn.AuthError{Addr: "10.0.0.1:22", User: "root", Offered: "publickey", Err: errors.New("unable to authenticate")}, "SSH login failed: "},
		{fmt.Errorf("10.0.0.1:22: ssh: handshake failed: %w", io.EOF), "SSH handshake failed: the server closed the connection before login"},
		{fmt.Errorf("10.0.0.1:22: %w", context.Canceled), "not connected: interrupted"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, "unreachable: "},
		{errors.New("something else"), "SSH connection failed: something else"},
	} {
		if got := DialError(tc.err).Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("DialError(%v) = %q, want it to start with %q", tc.err, got, tc.want)
		}
	}
}
