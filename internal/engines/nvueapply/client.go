package nvueapply

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rdggen/rdggen/internal/transport"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/quote"
)

// DefaultPort is where the NVUE REST API listens: nginx in front of nvued
// on port 8765 (Cumulus Linux user guide, "NVUE API").
const DefaultPort = 8765

// apiRoot is the NVUE API's base path.
const apiRoot = "/nvue_v1"

// TLS says how the switch's certificate is verified; never skipped.
type TLS struct {
	// CAFile is a PEM file of the CA (or the self-signed certificate) that
	// signed the switch's certificate; "" uses the system's roots. It is
	// read as every file a user names (userfile.Read: a regular file of at
	// most userfile.Limit bytes; a named pipe is refused, not waited on).
	CAFile string
	// Fingerprint pins the switch's certificate instead: the SHA-256 of its
	// DER bytes, hex, with or without colons (`openssl x509 -noout
	// -fingerprint -sha256`). The certificate must then be exactly that
	// one; its name and issuer are not checked.
	Fingerprint string
}

// config builds the tls.Config for serverName.
func (t TLS) config(serverName string) (*tls.Config, error) {
	c := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if t.Fingerprint != "" {
		want, err := parseFingerprint(t.Fingerprint)
		if err != nil {
			return nil, err
		}
		// Pinning replaces the chain check: the peer must present exactly
		// the pinned certificate.
		c.InsecureSkipVerify = true
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the switch presented no certificate")
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if !bytes.Equal(got[:], want) {
				return &PinError{Want: hex.EncodeToString(want), Got: hex.EncodeToString(got[:])}
			}
			return nil
		}
		return c, nil
	}
	if t.CAFile != "" {
		pemBytes, err := userfile.Read(t.CAFile, userfile.Limit)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("CA file %s: no PEM certificate in it", t.CAFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// parseFingerprint reads a SHA-256 fingerprint: hex, colons allowed, also
// as openssl prints it ("sha256 Fingerprint=46:81:…", from `openssl x509
// -noout -fingerprint -sha256`), or OpenSSH's "SHA256:" and unpadded base64.
func parseFingerprint(s string) ([]byte, error) {
	h := strings.TrimSpace(s)
	if i := strings.LastIndex(h, "="); i >= 0 && i < len(h)-1 {
		h = h[i+1:] // openssl's "sha256 Fingerprint=" label
	}
	if rest, ok := strings.CutPrefix(h, "SHA256:"); ok {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.StdEncoding} {
			if b, err := enc.DecodeString(rest); err == nil && len(b) == sha256.Size {
				return b, nil
			}
		}
		h = rest
	}
	b, err := hex.DecodeString(strings.ToLower(strings.ReplaceAll(h, ":", "")))
	if err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("certificate fingerprint %q is not a SHA-256: give 64 hex digits (colons allowed), as `openssl x509 -noout -fingerprint -sha256 -in CERT` prints them", s)
	}
	return b, nil
}

// Check reports what is wrong with t before any switch is contacted: a CA
// file that cannot be read or holds no PEM certificate, a fingerprint that
// is not a SHA-256.
func (t TLS) Check() error {
	_, err := t.config("")
	return err
}

// PinError is a certificate that is not the pinned one.
type PinError struct{ Want, Got string }

func (e *PinError) Error() string {
	return fmt.Sprintf("the switch's certificate has SHA-256 %s, not the pinned %s (a new certificate, or another machine at that address)", e.Got, e.Want)
}

// APIError is an answer of the API other than 2xx.
type APIError struct {
	Method, Path string
	Status       int
	// Detail is the problem document's detail, or the body's start, with
	// control characters escaped (quote.Terminal).
	Detail string
	// FromNVUE: the answer is NVUE's own problem document (JSON), so the
	// switch saw the request and refused it; otherwise it may come from a
	// proxy in front of it (nginx's 502 or 504 page), which says nothing of
	// what the switch did.
	FromNVUE bool
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Detail)
}

// Client talks to one switch's NVUE API.
type Client struct {
	base     *url.URL
	user     string
	password string
	http     *http.Client
	// Patches counts the configuration PATCH requests sent (revision state
	// changes are not counted).
	Patches int
}

// ClientConfig says how to reach a switch.
type ClientConfig struct {
	// Addr is the switch's mgmt address, host or host:port; the port is
	// Port (default 8765) when it carries none.
	Addr string
	Port int
	// User and Password are the basic-auth login (a switch user).
	User, Password string
	TLS            TLS
	// Timeout bounds each request (default 30 s).
	Timeout time.Duration
}

// NewClient makes a client; nothing is sent yet.
func NewClient(c ClientConfig) (*Client, error) {
	port := c.Port
	if port == 0 {
		port = DefaultPort
	}
	host, p, err := net.SplitHostPort(c.Addr)
	if err != nil {
		host, p = strings.Trim(c.Addr, "[]"), strconv.Itoa(port)
	}
	tc, err := c.TLS.config(host)
	if err != nil {
		return nil, err
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tr := &http.Transport{TLSClientConfig: tc, Proxy: nil, MaxIdleConnsPerHost: 2,
		TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout}
	return &Client{
		base:     &url.URL{Scheme: "https", Host: net.JoinHostPort(host, p)},
		user:     c.User,
		password: c.Password,
		// No redirect is followed: Go's client would resend the login
		// (basic auth) to a same-host target, also over plain http. A 3xx
		// is an error that names its target (do).
		http: &http.Client{Transport: tr, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}, nil
}

// Addr is host:port the client connects to.
func (c *Client) Addr() string { return c.base.Host }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// endpoint is the URL of path (segments, each escaped: "/" → %2F) with
// the rev parameter.
func (c *Client) endpoint(path []string, rev string) string {
	var b strings.Builder
	b.WriteString(apiRoot + "/")
	for i, s := range path {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(url.PathEscape(s))
	}
	u := *c.base
	u.RawPath = b.String()
	u.Path, _ = url.PathUnescape(u.RawPath)
	if rev != "" {
		q := url.Values{"rev": {rev}}
		if rev == "applied" || rev == "startup" {
			// Only what is configured, not the defaults filled in.
			q.Set("filled", "false")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func (c *Client) do(ctx context.Context, method string, path []string, rev string, body any) (any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path, rev), rd)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// Whether any of the request was written: a connection refused or not
	// answered before that is an unreachable switch, which did nothing.
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaderField: func(string, []string) { wrote.Store(true) }}))
	resp, err := c.http.Do(req)
	if err != nil {
		if !wrote.Load() && transport.NoAnswer(ctx, err) {
			return nil, &transport.UnreachableError{Addr: c.base.Host, Err: err}
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	shown := apiRoot + "/" + strings.Join(path, "/")
	if resp.StatusCode/100 != 2 {
		e := &APIError{Method: method, Path: shown, Status: resp.StatusCode}
		var p struct{ Detail any }
		if json.Unmarshal(data, &p) == nil && p.Detail != nil {
			e.Detail = fmt.Sprint(p.Detail)
			e.FromNVUE = true
		} else if body := strings.TrimSpace(string(data)); strings.HasPrefix(body, "<") {
			e.Detail = "an HTML page, not NVUE's answer (from a proxy in front of nvued, such as the switch's nginx)"
		} else {
			e.Detail = body[:min(len(body), 200)]
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			e.Detail = "the switch refused the login (user and password)"
		case resp.StatusCode/100 == 3:
			e.Detail = fmt.Sprintf("a redirect to %q, which rdggen does not follow (its login would go along)", resp.Header.Get("Location"))
		}
		// The switch's (or a proxy's) text, shown as one line: no
		// terminal escapes, no line breaks.
		e.Detail = quote.Terminal(e.Detail)
		return nil, e
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s %s: the answer is not JSON: %w", method, shown, err)
	}
	return normalize(v), nil
}

// normalize turns json.Number into int64 or float64, so that equal values
// compare equal whatever their spelling.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}

// Get reads path: rev "applied" (the applied configuration), "startup", a
// revision id, or "" for the operational state.
func (c *Client) Get(ctx context.Context, path []string, rev string) (any, error) {
	return c.do(ctx, http.MethodGet, path, rev, nil)
}

// GetTree is Get of an object.
func (c *Client) GetTree(ctx context.Context, path []string, rev string) (Tree, error) {
	v, err := c.Get(ctx, path, rev)
	if err != nil {
		return nil, err
	}
	t, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("GET %s/%s: the answer is not an object", apiRoot, strings.Join(path, "/"))
	}
	return t, nil
}

// Patch changes revision rev at path (nil path: a root patch).
func (c *Client) Patch(ctx context.Context, path []string, rev string, body Tree) error {
	c.Patches++
	_, err := c.do(ctx, http.MethodPatch, path, rev, body)
	return err
}

// CreateRevision is POST /nvue_v1/revision: the new revision's id.
func (c *Client) CreateRevision(ctx context.Context) (string, error) {
	v, err := c.do(ctx, http.MethodPost, []string{"revision"}, "", nil)
	if err != nil {
		return "", err
	}
	m, _ := v.(map[string]any)
	if len(m) != 1 {
		return "", fmt.Errorf("POST %s/revision: expected one revision in the answer, got %d", apiRoot, len(m))
	}
	for id := range m {
		return id, nil
	}
	return "", nil
}

// RevisionStatus is a revision's state and the issues NVUE reports.
type RevisionStatus struct {
	State  string
	Issues []string
}

// Revision reads a revision's state.
func (c *Client) Revision(ctx context.Context, id string) (RevisionStatus, error) {
	v, err := c.do(ctx, http.MethodGet, []string{"revision", id}, "", nil)
	if err != nil {
		return RevisionStatus{}, err
	}
	m, _ := v.(map[string]any)
	st := RevisionStatus{}
	st.State, _ = m["state"].(string)
	if tr, ok := m["transition"].(map[string]any); ok {
		if issues, ok := tr["issue"].(map[string]any); ok {
			for _, k := range sortedKeys(issues) {
				is, _ := issues[k].(map[string]any)
				msg, _ := is["message"].(string)
				if code, _ := is["code"].(string); code != "" {
					msg = code + ": " + msg
				}
				st.Issues = append(st.Issues, quote.Terminal(msg))
			}
		}
	}
	return st, nil
}

// Revisions reads every revision the switch lists (GET /nvue_v1/revision):
// id → state and issues.
func (c *Client) Revisions(ctx context.Context) (map[string]RevisionStatus, error) {
	v, err := c.do(ctx, http.MethodGet, []string{"revision"}, "", nil)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("GET %s/revision: the answer is not an object", apiRoot)
	}
	out := make(map[string]RevisionStatus, len(m))
	for id, r := range m {
		rm, _ := r.(map[string]any)
		st := RevisionStatus{}
		st.State, _ = rm["state"].(string)
		out[id] = st
	}
	return out, nil
}

// Lost reports whether err leaves open what the switch did: no answer
// (the connection dropped or was reset, a timeout) or an answer that is not
// NVUE's own (a proxy's 502 or 504). An APIError from NVUE is a refusal:
// the switch saw the request and did not act on it.
func Lost(err error) bool {
	var api *APIError
	return err != nil && !(errors.As(err, &api) && api.FromNVUE)
}

// SetState is PATCH /nvue_v1/revision/<id> with body (apply, save); id
// "applied" is the applied revision.
func (c *Client) SetState(ctx context.Context, id string, body Tree) error {
	_, err := c.do(ctx, http.MethodPatch, []string{"revision", id}, "", body)
	return err
}

// DeleteRevision discards a revision that was not applied.
func (c *Client) DeleteRevision(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, []string{"revision", id}, "", nil)
	return err
}
