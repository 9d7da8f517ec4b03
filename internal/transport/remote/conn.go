package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Conn runs scripts on one host as root. Each Run is one round trip.
type Conn interface {
	// Run feeds script to `sh -s` as root and returns its stdout and stderr.
	Run(ctx context.Context, script []byte) (stdout, stderr []byte, err error)
	Close() error
}

// DialFunc connects to a host.
type DialFunc func(ctx context.Context, h *inventory.Host) (Conn, error)

// SSH is how the engines reach the hosts over SSH.
type SSH struct {
	// User is the login name; privileged work goes through `sudo -n` when it
	// is not root.
	User string
	// Port is the SSH port of a host whose management address carries none;
	// 0 means 22.
	Port int
	// KnownHosts is the known_hosts file ("" = ~/.ssh/known_hosts); host keys
	// are always verified.
	KnownHosts string
	// Identities are private key files; the agent at $SSH_AUTH_SOCK is used too.
	Identities []string
	// Password, when set, is offered too (from the environment, never a flag).
	Password string
	// PasswordVar names the variable Password comes from, for messages.
	PasswordVar string
	// Timeout bounds connect and handshake (0: sshconn's 15 s); TimeoutFlag
	// is the flag that sets it, named in timeout errors.
	Timeout     time.Duration
	TimeoutFlag string
}

// Addr is where host h's sshd is: its management address, with Port (or 22)
// when the address carries no port.
func (s SSH) Addr(h *inventory.Host) string {
	if _, _, err := net.SplitHostPort(h.Mgmt); err == nil {
		return h.Mgmt
	}
	port := s.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(h.Mgmt, strconv.Itoa(port))
}

// Dial connects to host h's management address with sshconn (known_hosts
// verified, agent and identity files).
func (s SSH) Dial(ctx context.Context, h *inventory.Host) (*SSHConn, error) {
	c, err := sshconn.Dial(ctx, sshconn.Config{
		Addr: s.Addr(h), User: s.User, KnownHosts: s.KnownHosts,
		Identities: s.Identities, Agent: true, Password: s.Password, PasswordVar: s.PasswordVar,
		Timeout: s.Timeout, TimeoutFlag: s.TimeoutFlag,
	})
	if err != nil {
		return nil, err
	}
	return &SSHConn{c: c, user: s.User}, nil
}

// Dialer returns Dial as a DialFunc.
func (s SSH) Dialer() DialFunc {
	return func(ctx context.Context, h *inventory.Host) (Conn, error) {
		c, err := s.Dial(ctx, h)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// SSHConn is one SSH connection to a host.
type SSHConn struct {
	c    *ssh.Client
	user string
}

// Run executes RemoteCommand in a new session with script on stdin. A
// cancelled ctx closes the connection, which ends the session.
func (c *SSHConn) Run(ctx context.Context, script []byte) ([]byte, []byte, error) {
	var stdout, stderr bytes.Buffer
	_, err := c.Exec(ctx, RemoteCommand, bytes.NewReader(script), &stdout, &stderr)
	return stdout.Bytes(), stderr.Bytes(), err
}

// Exec runs cmd in a new session, streaming its output to stdout and stderr,
// and returns its exit status. A non-zero status is not an error; a session
// that ends without one (signal, connection lost) is. A cancelled ctx closes
// the connection, which ends the session, and Exec returns ctx.Err().
func (c *SSHConn) Exec(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	sess, err := c.c.NewSession()
	if err != nil {
		return -1, fmt.Errorf("open session: %w", err)
	}
	defer sess.Close()
	var tail tailWriter // the last bytes of stderr, for error messages
	sess.Stdin = stdin
	sess.Stdout = stdout
	sess.Stderr = io.MultiWriter(stderr, &tail)
	var cancelled atomic.Bool
	stop := context.AfterFunc(ctx, func() { cancelled.Store(true); c.c.Close() })
	err = sess.Run(cmd)
	stop()
	if cancelled.Load() {
		return -1, ctx.Err()
	}
	var ee *ssh.ExitError
	if errors.As(err, &ee) && ee.Signal() == "" {
		if cmd == RemoteCommand && ee.ExitStatus() != 0 {
			return ee.ExitStatus(), remoteError(ee, tail.String(), c.user)
		}
		return ee.ExitStatus(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// Close closes the connection.
func (c *SSHConn) Close() error { return c.c.Close() }

// tailWriter keeps the last 4 KB written to it.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// remoteError explains a failed script session: sudo refusing is the common case.
func remoteError(ee *ssh.ExitError, stderr, user string) error {
	msg := strings.TrimSpace(stderr)
	if strings.Contains(msg, "sudo:") {
		return fmt.Errorf("sudo -n refused for user %s (%s): allow %s passwordless sudo for /bin/sh, or connect as root", user, FirstLine(msg), user)
	}
	return fmt.Errorf("remote script exited with status %d: %s", ee.ExitStatus(), FirstLine(msg))
}

// DialError says which step of connecting failed.
func DialError(err error) error {
	var hk *sshconn.HostKeyError
	var kh *sshconn.KnownHostsError
	var ae *sshconn.AuthError
	var ne net.Error
	switch {
	case errors.As(err, &hk), errors.As(err, &kh):
		return fmt.Errorf("host key check failed: %w", err)
	case errors.As(err, &ae):
		return fmt.Errorf("SSH login failed: %w", err)
	case errors.As(err, &ne):
		return fmt.Errorf("unreachable: %w", err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("not connected: interrupted (%w)", err)
	case errors.Is(err, io.EOF) || strings.Contains(err.Error(), "handshake failed: EOF"):
		return fmt.Errorf("SSH handshake failed: the server closed the connection before login (not sshd, or it refuses this client): %w", err)
	}
	return fmt.Errorf("SSH connection failed: %w", err)
}
