// Package sshconn dials SSH for every apply target (switch CLI sessions and VM
// commands) the same way: host keys verified against known_hosts, keys from
// ssh-agent or identity files, a password only from the environment. The
// known_hosts and identity files are read as internal/userfile reads every
// file a user names: never waited on.
package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdggen/rdggen/internal/transport"
	"github.com/rdggen/rdggen/internal/userfile"
)

// Config says how to reach and authenticate to one SSH server.
type Config struct {
	// Addr is host or host:port; port 22 is added when missing.
	Addr string
	// User is the login name.
	User string
	// KnownHosts is the known_hosts file that host keys are checked against;
	// "" means ~/.ssh/known_hosts. There is no way to skip the check.
	KnownHosts string
	// Identities are private key files to offer (unencrypted, or decrypted by
	// an agent); tried after the agent's keys.
	Identities []string
	// Agent, when true, offers the keys of the agent at $SSH_AUTH_SOCK.
	Agent bool
	// Password, when non-empty, is offered for password and
	// keyboard-interactive authentication. Never logged or printed.
	Password string
	// Timeout bounds the TCP connect and the SSH handshake; default 15 s.
	Timeout time.Duration
	// TimeoutFlag, when set, is the flag that sets Timeout ("--ssh-timeout");
	// a timeout error names it.
	TimeoutFlag string
	// PasswordVar, when set, is the environment variable a password comes
	// from ("RDGGEN_SSH_PASSWORD"); the no-credentials error names it.
	PasswordVar string
}

// DefaultKnownHosts is ~/.ssh/known_hosts.
func DefaultKnownHosts() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".ssh/known_hosts"
	}
	return filepath.Join(home, ".ssh", "known_hosts")
}

// HostKeyError is returned when the server's key is unknown or has changed.
type HostKeyError struct {
	Addr string
	Err  error
}

func (e *HostKeyError) Error() string {
	var ke *knownhosts.KeyError
	if errors.As(e.Err, &ke) && len(ke.Want) > 0 {
		return fmt.Sprintf("%s: host key does not match known_hosts (%s:%d): refusing to connect; if the host was reinstalled, remove the old key with ssh-keygen -R",
			e.Addr, ke.Want[0].Filename, ke.Want[0].Line)
	}
	return fmt.Sprintf("%s: host key is not in known_hosts: refusing to connect; add it first (ssh-keyscan, or ssh once and check the fingerprint)", e.Addr)
}

func (e *HostKeyError) Unwrap() error { return e.Err }

// KnownHostsError is returned when the known_hosts file cannot be read: host
// keys are always verified, so there is nothing to connect with.
type KnownHostsError struct {
	File string
	Err  error
}

func (e *KnownHostsError) Error() string {
	var ue *userfile.Error
	if errors.As(e.Err, &ue) { // there, but not a file to read (a named pipe)
		return fmt.Sprintf("cannot read known_hosts %s (%v): host keys are always verified against a known_hosts file: point --known-hosts at yours",
			e.File, e.Err)
	}
	why := errors.Unwrap(e.Err) // a *PathError's errno, without the path again
	if why == nil {
		why = e.Err
	}
	return fmt.Sprintf("cannot read known_hosts %s (%v): host keys are always verified; add the hosts' keys first (ssh-keyscan HOST >> %s, then compare the fingerprints) or point --known-hosts at your file",
		e.File, why, e.File)
}

func (e *KnownHostsError) Unwrap() error { return e.Err }

// AuthError is returned when the server refused every credential offered.
type AuthError struct {
	Addr, User string
	Offered    string
	Err        error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s: authentication failed for user %s (offered: %s)", e.Addr, e.User, e.Offered)
}

func (e *AuthError) Unwrap() error { return e.Err }

// offered names the kinds of credentials c offers, never their values.
func offered(c Config) string {
	var kinds []string
	if c.Agent && os.Getenv("SSH_AUTH_SOCK") != "" {
		kinds = append(kinds, "ssh-agent keys")
	}
	if len(c.Identities) > 0 {
		kinds = append(kinds, "identity files "+strings.Join(c.Identities, ", "))
	}
	if c.Password != "" {
		kinds = append(kinds, "a password")
	}
	if len(kinds) == 0 {
		return "nothing"
	}
	return strings.Join(kinds, ", ")
}

// UnreachableError is transport.UnreachableError: no TCP connection to
// the machine's SSH port (refused, no route, no answer within the
// timeout), or no SSH banner within the timeout: nothing was sent to it.
type UnreachableError = transport.UnreachableError

// banner remembers whether the server sent anything: a handshake that
// timed out before its first byte met no SSH server (a listener that
// never accepts, a host that drops the packets).
type banner struct {
	net.Conn
	got atomic.Bool
}

func (b *banner) Read(p []byte) (int, error) {
	n, err := b.Conn.Read(p)
	if n > 0 {
		b.got.Store(true)
	}
	return n, err
}

// KnownHosts reads the known_hosts file at path into a host key callback
// (x/crypto's knownhosts). The file is opened as every file a user names
// (userfile.Open: never waiting on a named pipe or a device, a regular
// file of at most userfile.Limit bytes), and knownhosts reads that very
// open file through /proc/self/fd (proc(5)), so what it parses is what was
// checked; the file names in its errors and in a *knownhosts.KeyError's
// Want are path. An error is a *KnownHostsError.
func KnownHosts(path string) (ssh.HostKeyCallback, error) {
	f, err := userfile.Open(path, userfile.Limit)
	if err != nil {
		return nil, &KnownHostsError{File: path, Err: err}
	}
	defer f.Close()
	fd := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	cb, err := knownhosts.New(fd)
	if err != nil {
		return nil, &KnownHostsError{File: path, Err: errors.New(strings.ReplaceAll(err.Error(), fd, path))}
	}
	return func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(host, remote, key)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			for i := range ke.Want {
				ke.Want[i].Filename = path
			}
		}
		var re *knownhosts.RevokedError
		if errors.As(err, &re) {
			re.Revoked.Filename = path
		}
		return err
	}, nil
}

// Dial connects and authenticates. Errors name the address; a host key
// problem is a *HostKeyError, no connection (or no banner within the
// timeout) an *UnreachableError, an unreadable known_hosts a
// *KnownHostsError, a refused login an *AuthError.
func Dial(ctx context.Context, c Config) (*ssh.Client, error) {
	addr := c.Addr
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(strings.Trim(addr, "[]"), "22")
	}
	khFile := c.KnownHosts
	if khFile == "" {
		khFile = DefaultKnownHosts()
	}
	hostKeys, err := KnownHosts(khFile)
	if err != nil {
		return nil, err
	}
	auth, closeAgent, err := authMethods(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Addr, err)
	}
	defer closeAgent()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	cfg := &ssh.ClientConfig{
		User:            c.User,
		Auth:            auth,
		HostKeyCallback: hostKeys,
		Timeout:         timeout,
	}
	d := net.Dialer{Timeout: timeout}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", c.Addr, ctx.Err())
		}
		return nil, &UnreachableError{Addr: c.Addr, Err: c.timeoutHint(err, timeout)}
	}
	conn := &banner{Conn: raw}
	_ = conn.SetDeadline(time.Now().Add(timeout))
	// The handshake does not watch ctx: closing the connection ends it.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	stop()
	if err == nil && ctx.Err() != nil {
		sc.Close()
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", c.Addr, ctx.Err())
		}
		var ne net.Error
		if !conn.got.Load() && errors.As(err, &ne) && ne.Timeout() {
			return nil, &UnreachableError{Addr: c.Addr, Err: c.timeoutHint(err, timeout)}
		}
		err = c.timeoutHint(err, timeout)
		var ke *knownhosts.KeyError
		if errors.As(err, &ke) {
			return nil, &HostKeyError{Addr: c.Addr, Err: ke}
		}
		if msg := err.Error(); strings.Contains(msg, "unable to authenticate") || strings.Contains(msg, "unexpected message type 51") {
			// 51 is SSH_MSG_USERAUTH_FAILURE, which some servers send where
			// x/crypto expects a keyboard-interactive prompt: a refusal too.
			return nil, &AuthError{Addr: c.Addr, User: c.User, Offered: offered(c), Err: err}
		}
		return nil, fmt.Errorf("%s: %w", c.Addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// timeoutHint adds, to a timeout, how long the bound was and the flag that
// sets it.
func (c Config) timeoutHint(err error, timeout time.Duration) error {
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		return err
	}
	if c.TimeoutFlag == "" {
		return fmt.Errorf("no answer within %s: %w", timeout, err)
	}
	return fmt.Errorf("no answer within %s (%s): %w", timeout, c.TimeoutFlag, err)
}

// CheckCredentials reports, without connecting to any server, whether c
// has something to authenticate with: a key of the agent (c.Agent), an
// identity file that parses, or a password. Its error is the one Dial
// would return for every server, so a caller can say it once.
func CheckCredentials(c Config) error {
	_, closer, err := authMethods(c)
	if err == nil {
		closer()
	}
	return err
}

func authMethods(c Config) ([]ssh.AuthMethod, func(), error) {
	var methods []ssh.AuthMethod
	closer := func() {}
	var signers []ssh.Signer
	if c.Agent {
		if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
			conn, err := net.Dial("unix", sock)
			if err == nil {
				closer = func() { conn.Close() }
				if s, err := agent.NewClient(conn).Signers(); err == nil {
					signers = append(signers, s...)
				}
			}
		}
	}
	for _, f := range c.Identities {
		pem, err := userfile.Read(f, userfile.Limit)
		if err != nil {
			closer()
			return nil, nil, fmt.Errorf("read identity: %w", err)
		}
		s, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			closer()
			return nil, nil, fmt.Errorf("identity %s: %w (use ssh-agent for passphrase-protected keys)", f, err)
		}
		signers = append(signers, s)
	}
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if c.Password != "" {
		pw := c.Password
		methods = append(methods, ssh.Password(pw),
			ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
				ans := make([]string, len(qs))
				for i := range qs {
					ans[i] = pw
				}
				return ans, nil
			}))
	}
	if len(methods) == 0 {
		closer()
		pw := "set a password variable"
		if c.PasswordVar != "" {
			pw = "set " + c.PasswordVar
		}
		return nil, nil, errors.New("no SSH credentials: start ssh-agent with a key (SSH_AUTH_SOCK), pass an identity file (--identity), or " + pw)
	}
	return methods, closer, nil
}
