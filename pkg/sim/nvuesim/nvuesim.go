// Package nvuesim is a small NVIDIA Cumulus Linux switch behind the NVUE
// REST API over HTTPS, for tests: rdggen's and those of programs that
// configure a switch the way rdggen does (as govmomi's simulator serves
// vSphere clients, and pkg/sim/onyxsim serves ONYX's CLI). Import it from
// _test.go files; it listens on loopback only.
//
// It follows the NVUE API as NVIDIA documents it ("NVUE API" in the Cumulus
// Linux 5.x user guide,
// https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-511/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-API/,
// and the NVUE command reference,
// https://docs.nvidia.com/networking-ethernet-software/nvue-reference/):
//
//   - HTTP basic authentication with a switch user;
//   - POST /nvue_v1/revision creates a revision, answered as
//     {"changeset/cumulus/2026-12-02_01.20.00_A1B2": {"state": "pending", …}};
//     the id goes into paths URL-encoded ("/" → %2F);
//   - PATCH /nvue_v1/<path>?rev=<id> (a targeted patch) and PATCH
//     /nvue_v1/?rev=<id> (a root patch) change the revision; null unsets;
//   - PATCH /nvue_v1/revision/<id> with {"state": "apply", "auto-prompt":
//     {"ays": "ays_yes"}} applies it; without the auto-prompt the apply ends
//     in state "ays_fail" with the issue "client_timeout" ("Timeout while
//     waiting for client response"), as the Cumulus Linux 4.4 NVUE page
//     shows. With "state-controls": {"confirm": SECONDS} it waits in state
//     "confirm" until the same apply body comes again, and rolls back by
//     itself when the time runs out (`nv config apply --confirm`: "If you
//     do not confirm within ten minutes, the configuration rolls back
//     automatically", NVUE reference "Config Commands"; the REST bodies are
//     those of a public NVUE client, docs/nvue.md);
//   - an applied revision is "applied", or "applied_and_saved" from Cumulus
//     Linux 5.9, whose apply saves ("In Cumulus Linux 5.9 and later, auto
//     save is on by default", NVUE reference "Config Commands"); before,
//     {"state": "save"} on the revision "applied" saves it;
//   - GET /nvue_v1/<path>?rev=applied (or startup, or a revision id) reads
//     the configuration, GET without rev the operational state: `nv show
//     qos roce` (mode, PFC priority, ECN thresholds and enabled traffic
//     classes, as the RoCE page of the Cumulus Linux user guide lists its
//     defaults), each swp port's link (admin-status, down when the
//     configuration shuts the port; oper-status; mtu; speed "100G"
//     unless the data plane says otherwise) and its PFC
//     counters (`nv show interface swp1 counters qos pfc-stats`), and
//     from a data plane's hooks the BGP neighbors (SetBGPNeighbors), the
//     ports' links and LLDP neighbors (SetInterfaces), the default
//     VRF's BFD sessions (SetBFDPeers) and its IPv4 routing table (SetRIB;
//     empty without it);
//   - malformed bodies are refused with 400 and a problem document.
//
// docs/nvue.md lists each behaviour with its source and marks what is
// inferred (the JSON shape of the operational views, the exact REST form of
// --confirm); those are guesses here too. Faults are injected with FailApply
// and CutOffApply (on the switch), and Inject and InjectAfter (between the
// client and the switch: an answer lost after the switch acted, a proxy's
// 504 after it acted or 502 before, a reset before it; Local reaches the
// switch from itself, without those); the operational
// state is set with SetLink,
// SetPauseCounters and SetRoCEOperational.
package nvuesim

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options describe the simulated switch.
type Options struct {
	// Version is the Cumulus Linux release, default "5.9.1"; from 5.9 an
	// apply also saves.
	Version string
	// Hostname is the switch's hostname until the configuration sets
	// system.hostname; default "cumulus".
	Hostname string
	// Ports is the number of front-panel ports swp1 … swpPorts, default 32.
	Ports int
	// Model is the Spectrum model, e.g. "SN5600": it decides the breakout
	// modes its ports take (pkg/inventory's table: 2x, 4x and 8x on an
	// SN5600); "" for the 2x and 4x of a port of 4 lanes.
	Model string
	// User and Password for basic authentication, default cumulus/cumulus.
	User, Password string
	// Applied is the configuration the switch starts with, applied and
	// saved (the user's own configuration, e.g. a description on swp20).
	Applied Tree
	// Listen is the loopback address to listen on, e.g. "127.0.0.1:8765";
	// default a free port of 127.0.0.1.
	Listen string
}

// Request is one request the server answered (or cut off).
type Request struct {
	// Method is GET, POST, PATCH or DELETE; Path the decoded path below
	// /nvue_v1 ("/interface/swp1/link", "/revision/changeset/cumulus/…");
	// Rev the rev query parameter.
	Method, Path, Rev string
}

// Server is a running simulated switch.
type Server struct {
	// URL is https://127.0.0.1:PORT; Addr is 127.0.0.1:PORT.
	URL, Addr string

	srv *httptest.Server
	opt Options
	// A data plane's hooks (OnApply, SetBGPNeighbors, SetInterfaces,
	// SetRIB), under mu.
	onApply func()
	bgpOp   func() map[string]any
	ifOp    func() map[string]any
	ribOp   func() map[string]any
	bfdOp   func() map[string]any

	mu       sync.Mutex
	applied  Tree
	startup  Tree
	revs     map[string]*revision
	last     *revision // the applied revision
	order    []string
	seq      int
	requests []Request
	down     map[string]bool
	pause    map[string]map[int][2]int64
	roceOp   map[string]any // overrides of the operational qos roce view
	failNext string
	cutOff   time.Duration
	deaf     time.Time
	closed   bool
	faults   []fault
}

// Start starts a simulated switch on loopback and stops it when the test
// ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	s := New(o)
	t.Cleanup(s.Close)
	return s
}

// New starts a simulated switch on loopback; Close stops it. It panics
// when Options.Listen cannot be listened on or is not a loopback address.
func New(o Options) *Server {
	if o.Version == "" {
		o.Version = "5.9.1"
	}
	if o.Hostname == "" {
		o.Hostname = "cumulus"
	}
	if o.Ports <= 0 {
		o.Ports = 32
	}
	if o.User == "" {
		o.User = "cumulus"
	}
	if o.Password == "" {
		o.Password = "cumulus"
	}
	s := &Server{opt: o, applied: cloneTree(o.Applied), revs: map[string]*revision{},
		down: map[string]bool{}, pause: map[string]map[int][2]int64{}}
	s.startup = cloneTree(s.applied)
	s.srv = httptest.NewUnstartedServer(s)
	if o.Listen != "" {
		host, _, err := net.SplitHostPort(o.Listen)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			panic(fmt.Sprintf("nvuesim: Listen %q is not a loopback address with a port", o.Listen))
		}
		l, err := net.Listen("tcp", o.Listen)
		if err != nil {
			panic(fmt.Sprintf("nvuesim: %v", err))
		}
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.StartTLS()
	s.URL = s.srv.URL
	s.Addr = strings.TrimPrefix(s.srv.URL, "https://")
	return s
}

// Local is a transport to the NVUE API from the switch itself, as a person
// logged in to it reaches nvued with `nv set …; nv config apply` (for
// Client.Transport; the URL's host is not dialled): the switch's own faults
// (FailApply, and CutOffApply's apply, which answers nothing) act on its
// requests, those between a client and the switch (Inject, InjectAfter,
// the management path CutOffApply cuts) do not, and stay pending for the
// next client across the network. Requests() lists its requests too.
func (s *Server) Local() http.RoundTripper { return local{s} }

type local struct{ s *Server }

func (l local) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	// hangUp aborts the handler (an apply CutOffApply cut off): the
	// connection closed without an answer.
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler {
				panic(v)
			}
			resp, err = nil, fmt.Errorf("%s %s: the switch closed the connection without an answer", r.Method, r.URL)
		}
	}()
	w := httptest.NewRecorder()
	l.s.serve(w, r, false)
	return w.Result(), nil
}

// Close stops the server and every confirm timer.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for _, r := range s.revs {
		if r.timer != nil {
			r.timer.Stop()
		}
	}
	s.mu.Unlock()
	s.srv.Close()
}

// Certificate is the server's self-signed certificate (for 127.0.0.1). It
// is net/http/httptest's, the same on every run and with a private key
// published in Go's source: trust it in tests and demos only.
func (s *Server) Certificate() *x509.Certificate { return s.srv.Certificate() }

// Fingerprint is the SHA-256 of the certificate's DER bytes in hex, the
// form `openssl x509 -fingerprint -sha256` prints without the colons.
func (s *Server) Fingerprint() string {
	sum := sha256.Sum256(s.Certificate().Raw)
	return hex.EncodeToString(sum[:])
}

// WriteCA writes the certificate as PEM to dir/name and returns the path.
func (s *Server) WriteCA(dir, name string) (string, error) {
	path := filepath.Join(dir, name)
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return path, os.WriteFile(path, b, 0o644)
}

// OnApply registers f to run, in its own goroutine, each time the applied
// configuration changes (an apply, or the rollback of an unconfirmed one).
// A data plane that follows the configuration (a network namespace routing
// as the switch would) reads Applied there.
func (s *Server) OnApply(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onApply = f
}

// SetBGPNeighbors backs the operational view of the default VRF's BGP
// neighbors (GET /nvue_v1/vrf/default/router/bgp/neighbor, `nv show vrf
// default router bgp neighbor`) by f: its entries, keyed by neighbor, are
// merged over the configured neighbors, e.g. {"swp31": {"state":
// "established", "remote-as": 65199}} from routing daemons that run the
// configuration. f runs on every operational read that reaches the view (a
// GET of it, of a node in it or of one that holds it), with the server
// locked: it must not call the server.
func (s *Server) SetBGPNeighbors(f func() map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bgpOp = f
}

// SetInterfaces backs the operational view of the interfaces (GET
// /nvue_v1/interface/<id>, `nv show interface <id>`) by f: its entries,
// keyed by interface name, are merged over the view, e.g. {"swp63":
// {"link": {"mtu": 1500, "admin-status": "up", "oper-status": "up", "speed":
// "400G"}, "lldp": {"neighbor":
// {"spine1": {"chassis": {"system-name": "spine1"}, "port": {"name":
// "swp1"}}}}}} from the kernel and lldpd of a data plane. The LLDP shape
// (`nv show interface <id> lldp neighbor <neighbor-id>`, its system name
// and port as the documented `nv show interface lldp` table's "Remote
// Host" and "Remote Port") is inferred, as docs/nvue.md says of the other
// operational views. A port is administratively down when f says so
// (admin-status "down": the port set down outside NVUE, `ip link set
// down`) or the configuration shuts it (`link state down`, which f need
// not reflect), and then its oper-status is "down" whatever f says. f runs
// on every operational read that reaches the interfaces (a GET of
// /interface or below), with the server locked: it must not call the
// server.
func (s *Server) SetInterfaces(f func() map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ifOp = f
}

// SetRIB backs the operational view of the default VRF's IPv4 routing
// table (GET /nvue_v1/vrf/default/router/rib/ipv4/route, `nv show vrf
// default router rib ipv4 route`, and GET …/route/<prefix>, `nv show vrf
// default router rib ipv4 route <prefix>`; NVUE command reference, "RIB",
// https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Show-Commands/RIB/)
// by f: its entries, keyed by prefix ("10.1.2.0/24"), are the routes. Each
// is {"protocol": {<protocol>: {"entry-index": {<n>: {"distance",
// "metric", "table-id", "nexthop-group-id", "flags": {"installed": {},
// "selected": {}, "fib-selected": {}}, "via": {<next hop address or
// interface>: {"interface": "swp63", "weight": 1, "flags": {"active": {},
// "installed": {}}}}}}}}}. The path below route/<prefix> (protocol,
// entry-index, via, flags, resolved-via) is the reference page's command
// tree; the leaf names are inferred from the documented tables' columns
// (Distance, Metric, TblId, NHGId, ResolvedViaIntf, Weight, Flags "i -
// installed", "A - active") — NVIDIA shows no JSON of this view.
// Without f the switch reports no routes (an empty table). f runs on every
// operational read that reaches the view (a GET of it, of a node in it or
// of one that holds it), with the server locked: it must not call the
// server.
func (s *Server) SetRIB(f func() map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ribOp = f
}

// SetBFDPeers backs the operational view of the default VRF's BFD
// sessions (GET /nvue_v1/vrf/default/router/bfd/peers, `nv show vrf
// default router bfd peers`; NVUE command reference, "BFD" show commands)
// by f: its entries, keyed by session, e.g. {"1": {"interface": "swp63",
// "peer": "fe80::…", "state": "up", "detect-multiplier": 3,
// "min-rx-interval": 300, "min-tx-interval": 300}}. NVIDIA shows no JSON
// of this view: the leaf names are inferred from FRR's (bfdd) and NVUE's
// BFD settings. Without f the view is empty. f runs on every operational
// read that reaches the view (a GET of it, of a node in it or of one that
// holds it), with the server locked: it must not call the server.
func (s *Server) SetBFDPeers(f func() map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bfdOp = f
}

// changed runs the OnApply callback (s.mu held).
func (s *Server) changed() {
	if f := s.onApply; f != nil {
		go f()
	}
}

// Version is the simulated release.
func (s *Server) Version() string { return s.opt.Version }

// Ports is the number of front-panel ports, swp1 … swpPorts.
func (s *Server) Ports() int { return s.opt.Ports }

// Applied returns a copy of the applied configuration.
func (s *Server) Applied() Tree {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneTree(s.applied)
}

// Startup returns a copy of the saved configuration.
func (s *Server) Startup() Tree {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneTree(s.startup)
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count is the number of requests with the method (and, when prefix is
// not "", a Path that starts with it).
func (s *Server) Count(method, prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Method == method && strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}

// ResetRequests forgets the requests answered so far.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	s.requests = nil
	s.mu.Unlock()
}

// RevisionState is the state of the revision id ("" when unknown).
func (s *Server) RevisionState(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.revs[id]; r != nil {
		return r.state
	}
	return ""
}

// Revisions are the revision ids in creation order.
func (s *Server) Revisions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.order...)
}

// FailApply makes the next apply fail with message: the revision ends in
// state "ignore_fail" with that issue and the applied configuration stays
// as it was (the switch applies a revision whole or not at all).
func (s *Server) FailApply(message string) {
	s.mu.Lock()
	s.failNext = message
	s.mu.Unlock()
}

// CutOffApply makes the next apply cut its client off: the switch applies
// the revision (waiting for a confirmation when asked), then closes the
// connection without an answer and drops every request for d, as a change
// that takes the management path down would. A confirm timeout shorter
// than d rolls the change back.
func (s *Server) CutOffApply(d time.Duration) {
	s.mu.Lock()
	s.cutOff = d
	s.mu.Unlock()
}

// Fault is what goes wrong between the client and the switch on one
// request, as a proxy or a network in between makes it go wrong.
type Fault int

const (
	// LoseAnswer: the switch acts on the request, then the connection is
	// closed without an answer (a dropped connection after the switch
	// acted).
	LoseAnswer Fault = iota + 1
	// ProxyTimeout: the switch acts on the request, and the client gets a
	// 504 Gateway Timeout from the proxy in front of it (nginx's page, not
	// NVUE's JSON).
	ProxyTimeout
	// ProxyError: the proxy answers 502 Bad Gateway and the switch never
	// sees the request.
	ProxyError
	// ResetBefore: the connection is reset before the request reaches the
	// switch, which does nothing.
	ResetBefore
)

type fault struct {
	method, prefix string
	skip           int
	kind           Fault
}

// Inject makes the next request with the method whose decoded path below
// /nvue_v1 starts with prefix ("/revision" for revision creation and
// state changes, "/" for a root PATCH) fail as kind says, once. Faults
// queue in the order injected; each is used by the first request that
// matches it.
func (s *Server) Inject(method, prefix string, kind Fault) { s.InjectAfter(method, prefix, 0, kind) }

// InjectAfter is Inject for the request after the next skip matching ones
// (skip 1 on PATCH "/revision": the second state change, the
// confirmation of an apply with a confirm window).
func (s *Server) InjectAfter(method, prefix string, skip int, kind Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, fault{method, prefix, skip, kind})
	s.mu.Unlock()
}

// takeFault returns and removes the first fault the request matches.
func (s *Server) takeFault(method, path string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.faults {
		f := &s.faults[i]
		if f.method != method || !strings.HasPrefix(path, f.prefix) {
			continue
		}
		if f.skip > 0 {
			f.skip--
			continue
		}
		kind := f.kind
		s.faults = append(s.faults[:i], s.faults[i+1:]...)
		return kind
	}
	return 0
}

// SetLink sets a port's operational link state (ports are up unless the
// configuration shuts them down).
func (s *Server) SetLink(port string, up bool) {
	s.mu.Lock()
	s.down[port] = !up
	s.mu.Unlock()
}

// SetPauseCounters sets a port's PFC pause frames received and sent on a
// switch priority.
func (s *Server) SetPauseCounters(port string, priority int, rx, tx int64) {
	s.mu.Lock()
	if s.pause[port] == nil {
		s.pause[port] = map[int][2]int64{}
	}
	s.pause[port][priority] = [2]int64{rx, tx}
	s.mu.Unlock()
}

// SetRoCEOperational overrides keys of the operational `qos roce` view
// ("mode", "pfc-priority", "enabled-tc", "min-threshold",
// "max-threshold"), for a switch whose data plane did not follow its
// applied configuration; "" removes an override.
func (s *Server) SetRoCEOperational(key, value string) {
	s.mu.Lock()
	if s.roceOp == nil {
		s.roceOp = map[string]any{}
	}
	if value == "" {
		delete(s.roceOp, key)
	} else {
		s.roceOp[key] = value
	}
	s.mu.Unlock()
}

// autoSaves reports whether an apply saves by itself: from Cumulus Linux
// 5.9, unless the configuration turns auto-save off (`nv set system config
// auto-save enable off`, or `state disabled` in later releases).
func (s *Server) autoSaves() bool {
	if !versionAtLeast(s.opt.Version, 5, 9) {
		v, _ := subtree(s.applied, []string{"system", "config", "auto-save", "enable"})
		return v == "on"
	}
	if v, _ := subtree(s.applied, []string{"system", "config", "auto-save", "enable"}); v == "off" {
		return false
	}
	if v, _ := subtree(s.applied, []string{"system", "config", "auto-save", "state"}); v == "disabled" {
		return false
	}
	return true
}

// versionAtLeast compares a dotted release with major.minor.
func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	ma, _ := strconv.Atoi(parts[0])
	mi := 0
	if len(parts) > 1 {
		mi, _ = strconv.Atoi(parts[1])
	}
	return ma > major || ma == major && mi >= minor
}

// newID is a revision id in NVUE's form, changeset/<user>/<UTC time>_<tag>.
func (s *Server) newID() string {
	s.seq++
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	n := s.seq*7919 + int(time.Now().UnixNano()%1000)
	tag := make([]byte, 4)
	for i := range tag {
		tag[i] = alphabet[n%len(alphabet)]
		n /= len(alphabet)
	}
	return fmt.Sprintf("changeset/%s/%s_%s", s.opt.User, time.Now().UTC().Format("2006-01-02_15.04.05"), tag)
}
