// Package fakeos is a switch OS made for tests: the smallest OS rdggen can
// take, registered with internal/switchos as a real one would be (Register),
// so that a test takes it through validate, generate, apply, check, bench's
// counters and the lab without any dispatch code knowing it — the proof that
// a new switch OS is its own package and one registration
// (docs/architecture.md#adding-a-switch-os).
//
// Its switch is a Sim: a TCP server on 127.0.0.1 that holds configuration
// lines behind a token (its protocol is Sim's documentation). Its generator
// writes switch/<name>.fake, the lines rdggen wants on the switch (Lines);
// its engine reads a switch's lines, plans those it lacks, backs the switch
// up (BackupExt) and sets them; its checks compare.
package fakeos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/internal/backup"
	"github.com/rdggen/rdggen/internal/driver"
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/internal/transport"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/readiness"
)

// OS is the fake OS's key: a switch with `fakeos: 1.0` runs it.
const OS inventory.SwitchOS = "fakeos"

// TokenVar is the variable that holds the token of the fake switches (the
// CLI's credentials), UserVar the one the lab sets to its user.
const (
	TokenVar = "RDGGEN_FAKEOS_TOKEN"
	UserVar  = "RDGGEN_FAKEOS_USER"
)

// BackupExt is the extension of a fake switch's backup: its lines.
const BackupExt = ".lines"

// The checks of a fake switch: CheckLines, the lines rdggen sets, present;
// CheckHostname, its hostname the inventory's.
const (
	CheckLines    = "lines"
	CheckHostname = "hostname"
)

// Options are the fake OS's own settings (switchos.Settings.Own[OS],
// pkg/apply's SwitchOptions.OS[OS]: an Options or an *Options): the token
// and the bound on each connection's exchange (0: 5 s).
type Options struct {
	Token   string
	Timeout time.Duration
}

// Register registers the fake OS once per process (its traits with the
// model, the rest with internal/switchos); later calls return the first
// call's error.
var Register = sync.OnceValue(func() error { return switchos.Register(registration()) })

// registration is the fake OS, every part.
func registration() switchos.OS {
	return switchos.OS{
		OS: OS,
		Traits: &inventory.SwitchOSTraits{
			Name: "Fake OS", Short: "Fake", PortExample: "1/1",
			PortName: func(p inventory.Port) string {
				if p.Lane > 0 {
					return fmt.Sprintf("fp%d.%d", p.Number, p.Lane)
				}
				return fmt.Sprintf("fp%d", p.Number)
			},
			PortRange: func(n int) string { return fmt.Sprintf("fp1-fp%d (1/1-1/%d)", n, n) },
			CheckVersion: func(v inventory.Version) error {
				if !v.AtLeast(1) {
					return errors.New("the fake OS starts at 1.0")
				}
				return nil
			},
		},
		Files: func(inv *inventory.Inventory, sw inventory.Switch) []artifact.File {
			return []artifact.File{{Path: "switch/" + sw.Name + ".fake", Mode: 0o644, Data: []byte(strings.Join(Lines(inv, sw), "\n") + "\n")}}
		},
		Picture: switchos.Picture{
			Gateway: func(*inventory.Inventory, inventory.Switch) string { return "fakevlan" },
			PortMTU: func(*inventory.Inventory) int { return PortMTU },
		},
		Engine: func(s switchos.Settings) switchos.Engine { return engine{s, own(s)} },
		Words: switchos.Words{What: "fake switch(es)", Reading: "reading the lines of",
			Sent: func(n int, _ bool) string { return fmt.Sprintf("%d fake line(s) set", n) }},
		Checks: switchos.Checks{How: "over its line protocol (SHOW only)", List: []switchos.Check{
			{Name: CheckLines, What: "the lines rdggen sets, present (apply's plan)"},
			{Name: CheckHostname, What: "the switch's hostname is the inventory's name"},
		}},
		BackupExt: BackupExt,
		CLI: switchos.CLI{
			Help: "fake switches over their line protocol (" + TokenVar + ")",
			Flags: func(fs switchos.FlagSet, s *switchos.Settings) {
				o := &Options{}
				fs.DurationVar(&o.Timeout, "fakeos-timeout", 5*time.Second, "bound on each exchange with a fake switch (> 0)")
				if s.Own == nil {
					s.Own = map[inventory.SwitchOS]any{}
				}
				s.Own[OS] = o
			},
			CheckFlags: func(s *switchos.Settings) error {
				if o, ok := s.Own[OS].(*Options); ok && o.Timeout <= 0 {
					return errors.New("--fakeos-timeout: must be more than 0")
				}
				return nil
			},
			Env: func(s *switchos.Settings, getenv func(string) string, _ func(string) bool) {
				if o, ok := s.Own[OS].(*Options); ok {
					o.Token = getenv(TokenVar)
				}
			},
			Credentials: func(s *switchos.Settings, sws []inventory.Switch, _ func(string) string) error {
				if own(*s).Token == "" {
					return fmt.Errorf("the fake switches (%s) need a token: set %s", names(sws), TokenVar)
				}
				return nil
			},
			CanLogIn: func(s *switchos.Settings, _ func(string) string) bool { return own(*s).Token != "" },
			Missing:  "token for the fake switches (" + TokenVar + ")",
			Needs:    TokenVar + " for Fake",
		},
		Lab: switchos.Lab{
			User: "fake", UserVar: UserVar, PasswordVar: TokenVar,
			Start: func(sw inventory.Switch, _, password string) (switchos.LabSwitch, error) {
				sim, err := NewSim(password)
				if err != nil {
					return nil, err
				}
				return labSwitch{sim, sw.Name}, nil
			},
			Serves: func(addr string) string { return "fake lines on " + addr },
			Log: func(sw inventory.Switch, addr string) string {
				return fmt.Sprintf("switch %s: %s, lines on %s", sw.Name, sw.Release(), addr)
			},
		},
	}
}

// PortMTU is the MTU of a fake switch's data ports, bytes.
const PortMTU = 9216

// Lines are the lines rdggen wants on fake switch sw: its hostname, the
// RoCE priority and DSCP, and an MTU line per data port (each rail's port
// on sw, in inventory order).
func Lines(inv *inventory.Inventory, sw inventory.Switch) []string {
	out := []string{"hostname " + sw.Name, fmt.Sprintf("roce priority %d dscp %d", inv.RoCE.Priority, inv.RoCE.DSCP)}
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		if l := fmt.Sprintf("port %s mtu %d", sw.PortName(hr.Rail.Port), PortMTU); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// own are the fake OS's options in s (zero when none), its bound 5 s by
// default.
func own(s switchos.Settings) Options {
	var o Options
	switch v := s.Own[OS].(type) {
	case Options:
		o = v
	case *Options:
		o = *v
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	return o
}

func names(sws []inventory.Switch) string {
	var out []string
	for _, sw := range sws {
		out = append(out, sw.Name)
	}
	return strings.Join(out, ", ")
}

// engine is the fake OS's engine for one run.
type engine struct {
	s switchos.Settings
	o Options
}

func (e engine) Plan(ctx context.Context, inv *inventory.Inventory, sw inventory.Switch) switchos.Unit {
	u := &unit{e: e, sw: sw, want: Lines(inv, sw)}
	u.c, u.err = dial(ctx, sw, e.o)
	if u.err == nil {
		u.have, u.err = u.c.show()
	}
	if u.err == nil {
		u.plan = missing(u.want, u.have)
	}
	return u
}

func (e engine) Check(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]readiness.Result, error) {
	var out []readiness.Result
	var failed []string
	for _, sw := range sws {
		c, err := dial(ctx, sw, e.o)
		var have []string
		if err == nil {
			have, err = c.show()
			c.close()
		}
		if err != nil {
			out = append(out, readiness.Result{Target: readiness.TargetSwitch, Machine: sw.Name, Check: driver.CheckConnect, Status: readiness.Unknown, Found: err.Error()})
			failed = append(failed, sw.Name)
			continue
		}
		r := readiness.Result{Target: readiness.TargetSwitch, Machine: sw.Name, Check: CheckLines, Status: readiness.Passed}
		if m := missing(Lines(inv, sw), have); len(m) > 0 {
			r.Status, r.Found, r.Expected, r.Fix = readiness.Failed, fmt.Sprintf("%d line(s) missing", len(m)), strings.Join(m, "; "), "rdggen apply --target switch"
		}
		h := readiness.Result{Target: readiness.TargetSwitch, Machine: sw.Name, Check: CheckHostname, Status: readiness.Failed, Found: "no hostname", Expected: sw.Name, Fix: "rdggen apply --target switch"}
		if slices.Contains(have, "hostname "+sw.Name) {
			h.Status, h.Found, h.Expected, h.Fix = readiness.Passed, "", "", ""
		}
		out = append(out, r, h)
	}
	if len(failed) > 0 {
		return out, fmt.Errorf("could not read %s", strings.Join(failed, ", "))
	}
	return out, nil
}

func (e engine) Counters(ctx context.Context, inv *inventory.Inventory, sws []inventory.Switch) ([]switchos.PortCount, error) {
	var out []switchos.PortCount
	var errs []error
	for _, sw := range sws {
		c, err := dial(ctx, sw, e.o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sw.Name, err))
			continue
		}
		lines, err := c.ask("COUNTERS")
		c.close()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", sw.Name, err))
			continue
		}
		for _, l := range lines {
			var port string
			var pause, ecn int64
			if _, err := fmt.Sscanf(l, "%s pause %d ecn %d", &port, &pause, &ecn); err == nil {
				out = append(out, switchos.PortCount{Port: sw.Name + " " + port, Pause: pause, ECN: ecn})
			}
		}
	}
	return out, errors.Join(errs...)
}

// missing are the lines of want that have lacks, in want's order.
func missing(want, have []string) []string {
	var out []string
	for _, l := range want {
		if !slices.Contains(have, l) {
			out = append(out, l)
		}
	}
	return out
}

// unit is one fake switch between its plan and the summary.
type unit struct {
	e          engine
	sw         inventory.Switch
	c          *client
	want, have []string
	plan       []string
	err        error
	pushed     bool
	sent       int
	backup     string
}

func (u *unit) WritePlan(w io.Writer) {
	switch {
	case u.err != nil:
		fmt.Fprintf(w, "%s: %v\n", u.sw.Name, u.err)
	case len(u.plan) == 0:
		fmt.Fprintf(w, "%s: up to date\n", u.sw.Name)
	default:
		fmt.Fprintf(w, "%s: %d line(s) to set\n", u.sw.Name, len(u.plan))
		for _, l := range u.plan {
			fmt.Fprintf(w, "  + %s\n", l)
		}
	}
}

func (u *unit) Machine() applyplan.Machine {
	m := applyplan.Machine{Target: applyplan.TargetSwitch, Name: u.sw.Name, Kind: applyplan.KindSwitch, Address: u.sw.Mgmt, Changes: []applyplan.Change{}}
	for _, l := range u.plan {
		m.Changes = append(m.Changes, applyplan.Change{Op: applyplan.Add, Item: l, To: l, Text: "+ " + l})
	}
	if u.backup != "" {
		m.Notes = append(m.Notes, "lines backed up to "+u.backup)
	}
	m.Status = applyplan.StatusOf(false, u.err != nil, u.err == nil && len(u.plan) == 0, u.pushed && u.err == nil)
	if u.err != nil {
		m.Error, m.Err = u.err.Error(), u.err
	}
	return m
}

func (u *unit) Pending() bool { return u.err == nil && len(u.plan) > 0 && !u.pushed }

// Push backs the switch's lines up, sets the planned ones and reads the
// lines again to verify.
func (u *unit) Push(ctx context.Context) {
	u.pushed = true
	dir := u.e.s.BackupDir
	if dir == "" {
		dir = "rdg-backup"
	}
	u.backup, u.err = backup.Write(dir, u.sw.Name, BackupExt, time.Now(), []byte(strings.Join(u.have, "\n")+"\n"))
	if u.err != nil {
		u.err = fmt.Errorf("backup before changing anything: %w", u.err)
		return
	}
	for _, l := range u.plan {
		if _, u.err = u.c.ask("SET " + l); u.err != nil {
			return
		}
		u.sent++
	}
	have, err := u.c.show()
	if err == nil {
		if m := missing(u.want, have); len(m) > 0 {
			err = fmt.Errorf("verify: %d line(s) still missing: %s", len(m), strings.Join(m, "; "))
		}
	}
	u.err = err
}

func (u *unit) WriteResult(w io.Writer) {
	if u.err != nil {
		fmt.Fprintf(w, "%s: FAILED: %v\n", u.sw.Name, u.err)
		return
	}
	fmt.Fprintf(w, "%s: set %d line(s)\n", u.sw.Name, u.sent)
}

func (u *unit) Finish() switchos.Outcome {
	if u.c != nil {
		u.c.close()
	}
	return switchos.Outcome{Err: u.err, Empty: u.err == nil && len(u.plan) == 0, Pushed: u.pushed, Sent: u.sent}
}

// client is one connection to a fake switch, logged in.
type client struct {
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

// dial connects to sw's mgmt address and logs in with the token; a refused
// or unanswered connection is a transport.UnreachableError, as every
// transport of rdggen says it.
func dial(ctx context.Context, sw inventory.Switch, o Options) (*client, error) {
	if sw.Mgmt == "" {
		return nil, errors.New("no mgmt address in the inventory: set switches[].mgmt to the fake switch's host:port")
	}
	d := net.Dialer{Timeout: o.Timeout}
	conn, err := d.DialContext(ctx, "tcp", sw.Mgmt)
	if err != nil {
		if transport.NoAnswer(ctx, err) {
			return nil, &transport.UnreachableError{Addr: sw.Mgmt, Err: err}
		}
		return nil, err
	}
	c := &client{conn: conn, r: bufio.NewReader(conn), timeout: o.Timeout}
	if _, err := c.ask("TOKEN " + o.Token); err != nil {
		conn.Close()
		return nil, fmt.Errorf("login: %w", err)
	}
	return c, nil
}

// ask sends one command and reads its answer: the lines before "." for
// SHOW and COUNTERS, the "OK" of the others; "ERR text" is an error.
func (c *client) ask(cmd string) ([]string, error) {
	_ = c.conn.SetDeadline(time.Now().Add(c.timeout))
	if _, err := fmt.Fprintf(c.conn, "%s\n", cmd); err != nil {
		return nil, err
	}
	var out []string
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l = strings.TrimSuffix(l, "\n")
		switch {
		case strings.HasPrefix(l, "ERR "):
			return nil, errors.New(strings.TrimPrefix(l, "ERR "))
		case l == "OK" || l == ".":
			return out, nil
		}
		out = append(out, l)
	}
}

func (c *client) show() ([]string, error) { return c.ask("SHOW") }
func (c *client) close()                  { c.conn.Close() }

// labSwitch is a Sim in the lab.
type labSwitch struct {
	*Sim
	name string
}

func (l labSwitch) KnownHosts() string { return "" }
func (l labSwitch) CA() []byte         { return nil }
func (l labSwitch) LoseAnswer() string { return "" }
func (l labSwitch) Server() any        { return l.Sim }

func (l labSwitch) SetMTU(port string, n int) (string, error) {
	if !strings.HasPrefix(port, "fp") {
		return "", fmt.Errorf("mtu: %s is a fake switch: name the port fpN", l.name)
	}
	line := fmt.Sprintf("port %s mtu %d", port, n)
	l.Set(line)
	return l.name + ": " + line, nil
}
