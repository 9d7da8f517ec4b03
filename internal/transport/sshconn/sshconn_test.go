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
	"syscall"
	"testing"
	"time"

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

// A named pipe at the known_hosts or an identity path is refused at once
// with what it is, not waited on (a FIFO nobody writes held Dial in open(2),
// deaf to a cancelled context); the known_hosts file that is read is named
// in a changed key's message and in a parse error, never as /proc/self/fd.
func TestDialWaitsOnNoPipe(t *testing.T) {
	const secret = "s3cret-pw"
	addr, key := server(t, secret)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	kh := knownHosts(t, addr, key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func(c Config) error {
		done := make(chan error, 1)
		go func() {
			cl, err := Dial(ctx, c)
			if cl != nil {
				cl.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			t.Fatalf("Dial (known_hosts %s, identities %v) still waits after 10 s", c.KnownHosts, c.Identities)
			return nil
		}
	}
	err := dial(Config{Addr: addr, User: "ops", KnownHosts: fifo, Password: secret})
	var khe *KnownHostsError
	if !errors.As(err, &khe) || !strings.Contains(err.Error(), "cannot read known_hosts "+fifo+" ("+fifo+" is not a regular file (a named pipe))") {
		t.Errorf("known_hosts a FIFO: %v", err)
	}
	err = dial(Config{Addr: addr, User: "ops", KnownHosts: kh, Identities: []string{fifo}})
	if err == nil || !strings.Contains(err.Error(), "read identity: "+fifo+" is not a regular file (a named pipe)") {
		t.Errorf("identity a FIFO: %v", err)
	}
	if err := CheckCredentials(Config{Identities: []string{fifo}}); err == nil || !strings.Contains(err.Error(), "is not a regular file (a named pipe)") {
		t.Errorf("CheckCredentials, identity a FIFO: %v", err)
	}

	_, other := server(t, secret)
	changed := knownHosts(t, addr, other)
	err = dial(Config{Addr: addr, User: "ops", KnownHosts: changed, Password: secret})
	if !strings.Contains(err.Error(), "does not match known_hosts ("+changed+":1)") {
		t.Errorf("changed host key: %v", err)
	}
	bad := filepath.Join(dir, "bad_known_hosts")
	if err := os.WriteFile(bad, []byte("host ssh-ed25519 not-base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = dial(Config{Addr: addr, User: "ops", KnownHosts: bad, Password: secret})
	if !errors.As(err, &khe) || !strings.Contains(err.Error(), "(knownhosts: "+bad+": no valid entries, line 1") || strings.Contains(err.Error(), "/proc/") {
		t.Errorf("unparsable known_hosts: %v", err)
	}
}
