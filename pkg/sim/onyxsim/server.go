// Package onyxsim is a small NVIDIA ONYX switch behind an SSH server, for
// tests: rdggen's and those of programs that drive a switch the way rdggen
// does (as govmomi's simulator serves vSphere clients). Import it from
// _test.go files; it listens on loopback only. It behaves as
// docs/rules.md ("Switch (ONYX)") documents: the three prompt forms, `enable`,
// `configure terminal`, `exit`, the pager until `no cli session paging
// enable`, `% Unrecognized command "…".` errors, confirmation questions for
// the non-`force` forms, and a running-config re-rendered the way ONYX does
// it (ranges merged, `50.00`, `##` banners, secrets as `# … ********`).
// Faults can be injected per command. Lines pasted ahead of their prompt
// are read and run one at a time, each after its own prompt (Waits counts
// the prompts at which it had to wait for the client: its round trips;
// Latency adds a network's round-trip time to each). What docs/rules.md
// marks as inferred is a guess here too.
//
// It also answers, in every mode and without changing anything, the show
// commands of a readiness check (show.go): `show interfaces ethernet`,
// `show dcb priority-flow-control`, a port's `congestion-control` and
// `counters pfc prio`, from its configuration and each port's live state,
// which tests set with SetLink, SetPauseCounters and SetECNMarked.
//
// It holds the L3 statements of the routed container pool too (l3.go:
// `ip routing vrf default`, VLAN interfaces and their addresses, static
// routes), refuses malformed ones, and exposes what it routes with
// (Routes, VLANAddresses, L3State) for a test that makes a namespace route
// the same way, and the statements of a routed leaf-spine fabric (fabric.go:
// routed ports and their addresses, loopbacks, `router bgp … vrf default`),
// with OnChange for a data plane that follows the configuration
// (internal/testing/fabricnet).
package onyxsim

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options describe the simulated switch.
type Options struct {
	// Hostname, default "swx-sim".
	Hostname string
	// Ports is the number of front-panel ports 1/1 … 1/Ports, default 32.
	Ports int
	// Model is the Spectrum model, e.g. "SN2410": which ports split and
	// into how many lanes (pkg/inventory's table); "" lets every port
	// split 2 or 4 ways.
	Model string
	// Version is the ONYX release, default "3.6.8190"; `roce` exists from 3.8.2000.
	Version string
	// User and Password for password authentication, default admin/admin.
	User, Password string
	// AuthorizedKeys may log in as User with public-key authentication.
	AuthorizedKeys []ssh.PublicKey
	// Seed are config-mode commands applied before the server starts, e.g.
	// unrelated configuration; a failing seed command fails the test.
	Seed []string
	// Faults make commands fail (see Fault).
	Faults []Fault
	// Role is the prompt's bracket segment, default "standalone: master".
	Role string
	// Speed is every port's "Actual speed" at start, default "100 Gbps";
	// every port starts with its link up (see SetLink).
	Speed string
	// NoShow are show commands the switch refuses (prefixes of the line as
	// typed, e.g. "show interfaces ethernet 1/3 counters pfc"): it answers
	// them `% Unrecognized command "<last word of the prefix>".` in every
	// mode, as an older ONYX or a user without the right would.
	NoShow []string
	// Hang are lines (prefixes, as typed) the switch never answers: the
	// session waits for the client to give up and close it.
	Hang []string
	// Latency is added before every prompt at which no input is waiting
	// (each of the client's round trips, see Waits), as a management
	// network's round-trip time would; 0 for none.
	Latency time.Duration
}

// Fault makes one configuration command fail with a device error.
type Fault struct {
	// N fails the N-th configuration command (1-based, counted since Start
	// or the last ResetLog, over all sessions); 0 means no position.
	N int
	// Command fails every configuration command equal to it (words
	// single-spaced); "" means any.
	Command string
	// Message is the device's message after "% "; default "Internal error: injected fault".
	Message string
}

// Server is a running simulated switch.
type Server struct {
	// Addr is the listening address, 127.0.0.1:<port>.
	Addr string
	// HostKey is the server's public host key (ed25519, new per server).
	HostKey ssh.PublicKey

	opts Options
	ln   net.Listener
	wg   sync.WaitGroup

	mu          sync.Mutex
	cfg         *config
	prefixModes bool
	faults      []Fault
	count       int      // configuration commands since the last ResetLog
	received    []string // configuration commands received, in order
	typed       []string // every line typed at a prompt, in order
	links       []PortState
	refused     []string // the ones that failed
	saves       int
	waits       int // prompts at which no input was waiting
	saved       string
	sessions    int
	conns       map[net.Conn]bool
	closed      bool
	onChange    func()
	op          Operational // operational.go
}

// New runs a simulated switch on 127.0.0.1 (a free port, in Addr) until
// Close; the error is a failed listen, key or Seed command.
func New(o Options) (*Server, error) {
	if o.Hostname == "" {
		o.Hostname = "swx-sim"
	}
	if o.Ports == 0 {
		o.Ports = 32
	}
	if o.Version == "" {
		o.Version = "3.6.8190"
	}
	if o.User == "" {
		o.User = "admin"
	}
	if o.Password == "" {
		o.Password = "admin"
	}
	if o.Role == "" {
		o.Role = "standalone: master"
	}
	if o.Speed == "" {
		o.Speed = "100 Gbps"
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, err
	}
	cfg := newConfig(o.Hostname, o.Ports, o.Version)
	cfg.model = o.Model
	s := &Server{opts: o, HostKey: signer.PublicKey(), cfg: cfg,
		prefixModes: true, conns: map[net.Conn]bool{}, links: make([]PortState, o.Ports)}
	for i := range s.links {
		s.links[i] = PortState{Up: true, Speed: o.Speed}
	}
	for _, cmd := range o.Seed {
		out := s.cfg.configCommand(cmd, false)
		if out.err != "" {
			return nil, fmt.Errorf("onyxsim: seed %q: %% %s", cmd, out.err)
		}
		out.apply()
	}
	s.faults = o.Faults
	sc := &ssh.ServerConfig{
		PasswordCallback: func(m ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if m.User() == o.User && string(pw) == o.Password {
				return nil, nil
			}
			return nil, fmt.Errorf("password rejected for %q", m.User())
		},
		PublicKeyCallback: func(m ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range o.AuthorizedKeys {
				if m.User() == o.User && bytes.Equal(k.Marshal(), key.Marshal()) {
					return nil, nil
				}
			}
			return nil, fmt.Errorf("unknown public key for %q", m.User())
		},
	}
	sc.AddHostKey(signer)
	s.ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.Addr = s.ln.Addr().String()
	s.wg.Add(1)
	go s.accept(sc)
	return s, nil
}

// Start is New for a test: a failure fails tb, and the server closes when
// the test ends.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	s, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and ends its sessions.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// KnownHostsLine is the known_hosts line for the server's address and key.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey)
}

// WriteKnownHosts writes a known_hosts file at path that trusts this server.
func (s *Server) WriteKnownHosts(tb testing.TB, path string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(s.KnownHostsLine()+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// RunningConfig is what `show running-config` prints now (with a fixed
// "Generated at" time).
func (s *Server) RunningConfig() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.render(time.Date(2018, 3, 10, 9, 38, 38, 0, time.UTC))
}

// Received returns the configuration commands received since Start or the
// last ResetLog, including refused ones (not `configuration write`, `exit`,
// mode changes or show commands).
func (s *Server) Received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.received...)
}

// Typed returns every line typed at a prompt since Start or the last
// ResetLog, in every mode: show commands, mode changes (`enable`,
// `configure terminal`, `exit`) and configuration commands alike.
func (s *Server) Typed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.typed...)
}

// Configure applies configuration commands as a person at the console
// would, between two test steps (like Options.Seed, the confirmation
// questions of non-`force` forms are taken as answered yes). It stops at
// the first refused command and returns its error. The commands are not
// logged in Received or Typed and do not count for Faults.
func (s *Server) Configure(cmds ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cmd := range cmds {
		out := s.cfg.configCommand(strings.Join(strings.Fields(cmd), " "), false)
		if out.err != "" {
			return fmt.Errorf("onyxsim: %q: %% %s", cmd, out.err)
		}
		out.apply()
		s.changed()
	}
	return nil
}

// Refused returns the received commands that failed.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

// Waits counts the prompts, over all sessions since Start or the last
// ResetLog, at which the switch found no input waiting and had to wait for
// the client: the client's round trips (a block pasted in one write costs
// one; one that arrives in several packets may count more, never fewer).
func (s *Server) Waits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits
}

// Saves is how many times the configuration was saved (`configuration
// write` / `write memory`) since Start or the last ResetLog.
func (s *Server) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// Saved is the running-config at the last save, "" before any.
func (s *Server) Saved() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// Sessions is the number of shell sessions opened so far.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions
}

// ResetLog clears Received, Typed, Refused, Saves and the fault counter.
func (s *Server) ResetLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received, s.typed, s.refused, s.saves, s.count, s.waits = nil, nil, nil, 0, 0, 0
}

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

func (s *Server) accept(sc *ssh.ServerConfig) {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return
		}
		s.conns[conn] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				conn.Close()
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
			}()
			s.serveConn(conn, sc)
		}()
	}
}

func (s *Server) serveConn(conn net.Conn, sc *ssh.ServerConfig) {
	_, chans, reqs, err := ssh.NewServerConn(conn, sc)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveSession(ch, creqs)
		}()
	}
	wg.Wait()
}

func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	rows := 24
	for req := range reqs {
		switch req.Type {
		case "pty-req":
			// string term, uint32 cols, uint32 rows, …
			if len(req.Payload) >= 4 {
				n := binary.BigEndian.Uint32(req.Payload)
				if p := req.Payload[4+n:]; len(p) >= 8 {
					if r := int(binary.BigEndian.Uint32(p[4:8])); r > 1 {
						rows = r
					}
				}
			}
			req.Reply(true, nil)
		case "env", "window-change":
			req.Reply(true, nil)
		case "shell":
			req.Reply(true, nil)
			go ssh.DiscardRequests(reqs)
			s.mu.Lock()
			s.sessions++
			s.mu.Unlock()
			c := &cli{srv: s, out: ch, in: bufio.NewReaderSize(ch, 64<<10), page: rows - 1, paging: true}
			c.run()
			ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{0}))
			return
		default:
			req.Reply(false, nil)
		}
	}
}

// CLI modes.
const (
	modeExec = iota
	modeEnable
	modeConfig
	modeSub
)

// cli is one interactive session.
type cli struct {
	srv    *Server
	out    io.Writer
	in     *bufio.Reader
	mode   int
	sub    string // the sub-mode's context, e.g. "interface ethernet 1/1" or "pool roce"
	paging bool
	page   int
	skipLF bool // the last line ended with CR: drop an LF right after it
}

func (c *cli) write(s string) { io.WriteString(c.out, s) }

func (c *cli) prompt() string {
	c.srv.mu.Lock()
	h := c.srv.cfg.hostname
	c.srv.mu.Unlock()
	head := h + " [" + c.srv.opts.Role + "] "
	switch c.mode {
	case modeEnable:
		return head + "# "
	case modeConfig:
		return head + "(config) # "
	case modeSub:
		return head + "(config " + c.sub + ") # "
	}
	return head + "> "
}

// readLine reads one input line and echoes it as a pty does. A line ends at
// CR, LF or CRLF (ssh clients send either).
func (c *cli) readLine() (string, error) {
	var line []byte
	for {
		b, err := c.in.ReadByte()
		if err != nil {
			return "", err
		}
		skip := c.skipLF && b == '\n'
		c.skipLF = false
		switch {
		case skip:
		case b == '\r' || b == '\n':
			c.skipLF = b == '\r'
			c.write(string(line) + "\r\n")
			return string(line), nil
		case b == 0x03: // Ctrl-C
			c.write("^C\r\n")
			return "", nil
		default:
			line = append(line, b)
		}
	}
}

// run is the session's loop: a prompt, then one line. Lines that arrived
// before their prompt (pasted, or typed ahead) wait in the input and are
// read, echoed and run one at a time, each after its own prompt, as a CLI
// in non-canonical terminal mode reads type-ahead (termios(3)); this is
// how the guide's commands reach a switch, pasted in config mode. A line
// that follows a confirmation question is read as its answer. Each prompt
// at which no input is waiting is one client round trip (Waits; the input
// buffer holds 64 KiB, so a pasted block is usually read whole).
func (c *cli) run() {
	c.write("\r\nNVIDIA Onyx Switch Management\r\n\r\n")
	for {
		if c.in.Buffered() == 0 { // counted before the prompt goes out
			c.srv.mu.Lock()
			c.srv.waits++
			c.srv.mu.Unlock()
			if c.srv.opts.Latency > 0 {
				time.Sleep(c.srv.opts.Latency)
			}
		}
		c.write(c.prompt())
		line, err := c.readLine()
		if err != nil {
			return
		}
		if !c.command(strings.Join(strings.Fields(line), " ")) {
			c.write("\r\n")
			return
		}
	}
}

// print writes output lines, paged when paging is on: `lines a-b ` between
// pages and `lines a-b/n (END) ` on the last one, answered by any key
// (`q` stops) and then erased (docs/rules.md#cli-session, §5).
func (c *cli) print(text string) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if !c.paging || c.page < 1 || len(lines) <= c.page {
		c.write(strings.Join(lines, "\r\n") + "\r\n")
		return
	}
	for i := 0; i < len(lines); i += c.page {
		j := min(i+c.page, len(lines))
		c.write(strings.Join(lines[i:j], "\r\n") + "\r\n")
		pager := fmt.Sprintf("lines %d-%d ", i+1, j)
		if j == len(lines) {
			pager = fmt.Sprintf("lines %d-%d/%d (END) ", i+1, j, len(lines))
		}
		c.write(pager)
		key, err := c.in.ReadByte()
		c.skipLF = false
		c.write("\r" + strings.Repeat(" ", len(pager)) + "\r")
		if err != nil || key == 'q' {
			return
		}
	}
}

func (c *cli) unrecognized(line string) {
	word := line
	if f := strings.Fields(line); len(f) > 0 {
		word = f[0]
	}
	c.write(fmt.Sprintf("%% Unrecognized command %q.\r\nType \"?\" for help.\r\n", word))
}

// command runs one line; false ends the session.
func (c *cli) command(line string) bool {
	if line != "" {
		c.srv.mu.Lock()
		c.srv.typed = append(c.srv.typed, line)
		c.srv.mu.Unlock()
	}
	for _, p := range c.srv.opts.Hang {
		if line != "" && strings.HasPrefix(line, p) {
			io.Copy(io.Discard, c.in)
			return false
		}
	}
	if out, ok := c.show(line); ok {
		c.print(out)
		return true
	}
	switch line {
	case "":
		return true
	case "no cli session paging enable":
		c.paging = false
		return true
	case "cli session paging enable":
		c.paging = true
		return true
	case "show version":
		c.srv.mu.Lock()
		v := c.srv.opts.Version
		c.srv.mu.Unlock()
		c.print("Product name:      Onyx\nProduct release:   " + v + "\nProduct model:     x86onie\n")
		return true
	}
	switch c.mode {
	case modeExec:
		switch line {
		case "enable":
			c.mode = modeEnable
		case "exit", "logout":
			return false
		default:
			c.unrecognized(line)
		}
		return true
	case modeEnable:
		switch line {
		case "configure terminal", "config terminal":
			c.mode = modeConfig
		case "disable":
			c.mode = modeExec
		case "exit", "logout":
			return false
		case "show running-config":
			c.print("\n" + c.srv.running())
		case "write memory":
			c.srv.save()
		default:
			c.unrecognized(line)
		}
		return true
	}
	// config and its sub-modes
	switch line {
	case "exit":
		if c.mode == modeSub {
			c.mode, c.sub = modeConfig, ""
		} else {
			c.mode = modeEnable
		}
		return true
	case "show running-config":
		c.print("\n" + c.srv.running())
		return true
	case "configuration write", "write memory":
		c.srv.save()
		return true
	case "cli default prefix-modes enable", "no cli default prefix-modes enable":
		c.srv.mu.Lock()
		c.srv.prefixModes = !strings.HasPrefix(line, "no ")
		c.srv.mu.Unlock()
		return true
	}
	if c.mode == modeSub {
		if strings.HasPrefix(c.sub, "pool ") {
			line = "traffic " + c.sub + " " + line
		} else {
			line = c.sub + " " + line
		}
	}
	c.configure(line)
	return true
}

// configure applies one configuration command, with faults, confirmations
// and sub-modes.
func (c *cli) configure(line string) {
	s := c.srv
	s.mu.Lock()
	s.count++
	s.received = append(s.received, line)
	for _, f := range s.faults {
		if (f.N == 0 || f.N == s.count) && (f.Command == "" || f.Command == line) && (f.N != 0 || f.Command != "") {
			msg := f.Message
			if msg == "" {
				msg = "Internal error: injected fault"
			}
			s.refused = append(s.refused, line)
			s.mu.Unlock()
			c.write("% " + msg + "\r\n")
			return
		}
	}
	out := s.cfg.configCommand(line, s.prefixModes)
	if out.err != "" {
		s.refused = append(s.refused, line)
		s.mu.Unlock()
		c.write("% " + out.err + "\r\n")
		return
	}
	if out.confirm == "" {
		out.apply()
		s.changed()
		s.mu.Unlock()
	} else {
		s.mu.Unlock()
		c.write(out.confirm)
		answer, err := c.readLine()
		if err != nil {
			return
		}
		want := out.answer
		if want == "" {
			want = "yes"
		}
		if strings.TrimSpace(answer) != want {
			s.mu.Lock()
			s.refused = append(s.refused, line)
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		out.apply()
		s.changed()
		s.mu.Unlock()
	}
	if out.enter != "" {
		c.mode, c.sub = modeSub, out.enter
	}
}

func (s *Server) running() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.render(time.Now())
}

func (s *Server) save() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	s.saved = s.cfg.render(time.Date(2018, 3, 10, 9, 38, 38, 0, time.UTC))
}
