package hostapply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/ssh"

	"github.com/rdggen/rdggen/internal/sshconn"
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

// SSH is how Run reaches the hosts over SSH.
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
}

// Dialer returns a DialFunc that connects to each host's management address
// with sshconn (known_hosts verified, agent and identity files).
func (s SSH) Dialer() DialFunc {
	return func(ctx context.Context, h *inventory.Host) (Conn, error) {
		addr := h.Mgmt
		if _, _, err := net.SplitHostPort(addr); err != nil { // no port in the inventory
			port := s.Port
			if port == 0 {
				port = 22
			}
			addr = net.JoinHostPort(h.Mgmt, strconv.Itoa(port))
		}
		c, err := sshconn.Dial(ctx, sshconn.Config{
			Addr: addr, User: s.User, KnownHosts: s.KnownHosts,
			Identities: s.Identities, Agent: true, Password: s.Password,
		})
		if err != nil {
			return nil, err
		}
		return &sshConn{c: c, user: s.User}, nil
	}
}

type sshConn struct {
	c    *ssh.Client
	user string
}

// Run executes remoteCommand in a new session with script on stdin. A
// cancelled ctx closes the connection, which ends the session.
func (c *sshConn) Run(ctx context.Context, script []byte) ([]byte, []byte, error) {
	sess, err := c.c.NewSession()
	if err != nil {
		return nil, nil, fmt.Errorf("open session: %w", err)
	}
	defer sess.Close()
	var stdout, stderr bytes.Buffer
	sess.Stdin = bytes.NewReader(script)
	sess.Stdout, sess.Stderr = &stdout, &stderr
	var cancelled atomic.Bool
	stop := context.AfterFunc(ctx, func() { cancelled.Store(true); c.c.Close() })
	err = sess.Run(remoteCommand)
	stop()
	if cancelled.Load() {
		return stdout.Bytes(), stderr.Bytes(), ctx.Err()
	}
	return stdout.Bytes(), stderr.Bytes(), remoteError(err, stderr.Bytes(), c.user)
}

func (c *sshConn) Close() error { return c.c.Close() }

// remoteError explains a failed session: sudo refusing is the common case.
func remoteError(err error, stderr []byte, user string) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(stderr))
	var ee *ssh.ExitError
	if errors.As(err, &ee) {
		if strings.Contains(msg, "sudo:") {
			return fmt.Errorf("sudo -n refused for user %s (%s): allow %s passwordless sudo for /bin/sh, or connect as root", user, firstLine(msg), user)
		}
		return fmt.Errorf("remote script exited with status %d: %s", ee.ExitStatus(), firstLine(msg))
	}
	return err
}
