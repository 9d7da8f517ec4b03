package remote

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
