package vcenter

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Environment variables read the way govc reads them.
const (
	EnvURL      = "GOVC_URL"          // vCenter or ESXi: host, https://host/sdk, user:pass@host
	EnvUsername = "GOVC_USERNAME"     // overrides the URL's user
	EnvPassword = "GOVC_PASSWORD"     // overrides the URL's password
	EnvInsecure = "GOVC_INSECURE"     // 1/true: skip TLS verification (explicit opt-out)
	EnvCACerts  = "GOVC_TLS_CA_CERTS" // PEM file(s), path-list separated: the only roots trusted (CAPool)
)

// ErrNoURL is ConfigFromEnv's error when neither GOVC_URL, the flag nor the
// inventory names a vCenter.
var ErrNoURL = errors.New("no vCenter to connect to: set GOVC_URL (or --vcenter, or the inventory's vcenter)")

// Config says where and how to connect. The zero Insecure verifies TLS.
type Config struct {
	// URL is the SDK endpoint, e.g. https://vcenter.example/sdk, without
	// credentials.
	URL *url.URL
	// Username and Password log in; Password is never printed (String).
	Username, Password string
	// Insecure skips TLS certificate verification; only an explicit
	// GOVC_INSECURE=1 or --vcenter-insecure sets it.
	Insecure bool
	// CACerts are PEM files trusted for the server certificate.
	CACerts string
	// Source says where URL came from, for messages: "GOVC_URL", "--vcenter"
	// or "inventory vcenter".
	Source string
	// Timeout bounds every API request (connect, TLS handshake and reply);
	// 0 means no bound. A vCenter that accepts the connection but never
	// answers then fails instead of hanging the apply.
	Timeout time.Duration
}

// String describes the connection without the password.
func (c Config) String() string {
	s := c.URL.Redacted()
	if c.Username != "" {
		s += " as " + c.Username
	}
	if c.Insecure {
		s += " (TLS not verified)"
	}
	return s
}

// ConfigFromEnv builds the connection from, in order of precedence: flagURL
// (--vcenter), GOVC_URL, the inventory's vcenter, each read by
// inventory.ParseVCenterURL; credentials from GOVC_URL (the only source
// that may carry them), overridden by GOVC_USERNAME / GOVC_PASSWORD; GOVC_INSECURE or flagInsecure
// to skip TLS verification; GOVC_TLS_CA_CERTS for extra CAs.
func ConfigFromEnv(inv *inventory.Inventory, getenv func(string) string, flagURL string, flagInsecure bool) (Config, error) {
	var cfg Config
	raw := ""
	switch {
	case flagURL != "":
		raw, cfg.Source = flagURL, "--vcenter"
	case getenv(EnvURL) != "":
		raw, cfg.Source = getenv(EnvURL), EnvURL
	case inv != nil && inv.VCenter != "":
		raw, cfg.Source = inv.VCenter, "inventory vcenter"
	default:
		return cfg, ErrNoURL
	}
	// One grammar for the three sources; credentials only in GOVC_URL,
	// where govc reads them (a command line shows in the process list, and
	// the inventory refuses them).
	u, err := inventory.ParseVCenterURL(raw, cfg.Source == EnvURL)
	if err != nil {
		return cfg, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		cfg.Password, _ = u.User.Password()
		u.User = nil
	}
	cfg.URL = u
	if v := getenv(EnvUsername); v != "" {
		cfg.Username = v
	}
	if v := getenv(EnvPassword); v != "" {
		cfg.Password = v
	}
	cfg.Insecure = flagInsecure
	if v := getenv(EnvInsecure); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return cfg, fmt.Errorf("%s=%q: want 1/true or 0/false", EnvInsecure, v)
		}
		cfg.Insecure = cfg.Insecure || b
	}
	cfg.CACerts = getenv(EnvCACerts)
	return cfg, nil
}

// CAPool reads the PEM files of a GOVC_TLS_CA_CERTS value (paths separated
// as in $PATH, filepath.SplitList) into the only roots vCenter's
// certificate is verified against, as govmomi's soap.Client.SetRootCAs
// does, but each file read as every file a user names is
// (userfile.Read: a regular file, never waited on, at most
// userfile.Limit bytes). A file without a PEM certificate is an error
// naming it.
func CAPool(paths string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	for _, name := range filepath.SplitList(paths) {
		pem, err := userfile.Read(filepath.Clean(name), userfile.Limit)
		if err != nil {
			return nil, err
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in it", name)
		}
	}
	return pool, nil
}

// ErrPlainHTTP is the error of RequireTLS for an http:// vCenter URL.
var ErrPlainHTTP = errors.New("plain http: the vCenter password would cross the network unencrypted")

// RequireTLS refuses an http:// URL unless allowHTTP is set (the user said so
// explicitly): the login sends the password with the request.
func (c Config) RequireTLS(allowHTTP bool) error {
	if c.URL != nil && c.URL.Scheme == "http" && !allowHTTP {
		return fmt.Errorf("%s: %s is %w; use https, or pass --vcenter-allow-http if this network is trusted", c.Source, c.URL, ErrPlainHTTP)
	}
	return nil
}

// Session is a logged-in vSphere API client.
type Session struct {
	Client *vim25.Client
	cfg    Config
}

// Connect dials, verifies TLS (unless cfg.Insecure) and logs in. wrap, when
// not nil, wraps the HTTP transport (tests count SOAP calls with it); conns is
// how many connections to keep open for parallel calls.
func Connect(ctx context.Context, cfg Config, conns int, wrap func(http.RoundTripper) http.RoundTripper) (*Session, error) {
	sc := soap.NewClient(cfg.URL, cfg.Insecure)
	if cfg.CACerts != "" {
		pool, err := CAPool(cfg.CACerts)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvCACerts, cfg.CACerts, err)
		}
		sc.DefaultTransport().TLSClientConfig.RootCAs = pool
	}
	if conns < 2 {
		conns = 2
	}
	if cfg.Timeout > 0 {
		sc.Client.Timeout = cfg.Timeout
	}
	sc.DefaultTransport().MaxIdleConnsPerHost = conns
	if wrap != nil {
		sc.Client.Transport = wrap(sc.Client.Transport)
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, connectError(cfg, err)
	}
	if err := session.NewManager(vc).Login(ctx, url.UserPassword(cfg.Username, cfg.Password)); err != nil {
		if isInvalidLogin(err) {
			return nil, fmt.Errorf("vCenter %s: login as %q failed: incorrect user name or password (GOVC_USERNAME, GOVC_PASSWORD)", cfg.URL.Host, cfg.Username)
		}
		return nil, fmt.Errorf("vCenter %s: login as %q: %w", cfg.URL.Host, cfg.Username, err)
	}
	return &Session{Client: vc, cfg: cfg}, nil
}

func isInvalidLogin(err error) bool {
	if !soap.IsSoapFault(err) {
		return false
	}
	switch soap.ToSoapFault(err).VimFault().(type) {
	case types.InvalidLogin, *types.InvalidLogin:
		return true
	}
	return false
}

func connectError(cfg Config, err error) error {
	if soap.IsCertificateUntrusted(err) {
		return fmt.Errorf("vCenter %s: its TLS certificate is not trusted (%v); trust its CA with %s=<pem file>, or skip verification with %s=1 (not recommended)",
			cfg.URL.Host, err, EnvCACerts, EnvInsecure)
	}
	return fmt.Errorf("vCenter %s: %w", cfg.URL.Host, err)
}

// Grace is how long a call that cleans up after a run (a logout, the
// destruction of a view the run made) still waits for vCenter once the
// run's context has ended (an interrupted apply or check).
const Grace = 5 * time.Second

// Cleanup runs f, a call that cleans up after a run (Logout, a view's
// Destroy), with a context that outlives ctx (an interrupted run still
// cleans up) by Grace at most, so that a vCenter that stopped answering
// does not hold an interrupt for the whole request timeout (Config.Timeout,
// --vcenter-timeout). f's error is dropped: what is not cleaned up expires
// with the session.
func Cleanup(ctx context.Context, f func(context.Context) error) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(Grace, cancel) })
	defer stop()
	_ = f(c)
}

// Logout ends the session (Cleanup: it outlives ctx by Grace at most).
func (s *Session) Logout(ctx context.Context) {
	Cleanup(ctx, session.NewManager(s.Client).Logout)
}
