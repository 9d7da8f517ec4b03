package sshconn

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// server is a minimal SSH server on loopback that accepts one password.
func server(t *testing.T, password string) (addr string, key ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PasswordCallback: func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
		if string(pw) == password {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	cfg.AddHostKey(signer)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
				if err != nil {
					c.Close()
					return
				}
				go ssh.DiscardRequests(reqs)
				for ch := range chans {
					ch.Reject(ssh.Prohibited, "no channels")
				}
				sc.Close()
			}()
		}
	}()
	return l.Addr().String(), signer.PublicKey()
}

func knownHosts(t *testing.T, addr string, key ssh.PublicKey) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "known_hosts")
	var line string
	if key != nil {
		line = knownhosts.Line([]string{knownhosts.Normalize(addr)}, key) + "\n"
	}
	if err := os.WriteFile(f, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestDial(t *testing.T) {
	const secret = "s3cret-pw"
	addr, key := server(t, secret)
	ctx := context.Background()
	kh := knownHosts(t, addr, key)

	c, err := Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: kh, Password: secret})
	if err != nil {
		t.Fatalf("good login: %v", err)
	}
	c.Close()

	_, err = Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: kh, Password: "wrong-pw"})
	var ae *AuthError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "authentication failed for user ops (offered: a password)") ||
		strings.Contains(err.Error(), "wrong-pw") {
		t.Errorf("wrong password: %v", err)
	}

	_, err = Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: filepath.Join(t.TempDir(), "absent"), Password: secret})
	var khe *KnownHostsError
	if !errors.As(err, &khe) || !strings.Contains(err.Error(), "host keys are always verified") {
		t.Errorf("missing known_hosts: %v", err)
	}

	_, other := server(t, secret) // a different key, written for addr: "changed"
	_, err = Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: knownHosts(t, addr, other), Password: secret})
	var hke *HostKeyError
	if !errors.As(err, &hke) || !strings.Contains(err.Error(), "does not match known_hosts") {
		t.Errorf("changed host key: %v", err)
	}
	_, err = Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: knownHosts(t, addr, nil), Password: secret})
	if !errors.As(err, &hke) || !strings.Contains(err.Error(), "is not in known_hosts") {
		t.Errorf("unknown host key: %v", err)
	}

	_, err = Dial(ctx, Config{Addr: addr, User: "ops", KnownHosts: kh})
	if err == nil || !strings.Contains(err.Error(), "no SSH credentials") {
		t.Errorf("no credentials: %v", err)
	}
}
