package vcenter

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestConnectTimeout: a vCenter that accepts TCP but never answers fails
// within the request timeout instead of hanging the apply.
func TestConnectTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, say nothing
		}
	}()
	u := &url.URL{Scheme: "https", Host: l.Addr().String(), Path: "/sdk"}
	start := time.Now()
	_, err = Connect(context.Background(), Config{URL: u, Username: "u", Password: "p", Timeout: 300 * time.Millisecond}, 2, nil)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %s", err, time.Since(start))
	}
	if !strings.Contains(err.Error(), l.Addr().String()) {
		t.Errorf("error does not name the vCenter: %v", err)
	}
}
