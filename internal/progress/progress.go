// Package progress shows what the apply targets are doing while they run. On
// a terminal it is a live display (github.com/vbauerster/mpb): one line per
// target still running, with its phase, how many machines are done, what it
// waits for and for how long, and the targets' own lines printed above it.
// Elsewhere (a log, a pipe, CI) the targets' lines are printed as they come
// and a target that has been quiet for longer than Quiet gets a line saying
// what it is waiting for, so that no wait is ever silent.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// Quiet is how long a target may go without a line or a finished machine
// before the plain display says what it is waiting for (and again every
// Quiet while it stays quiet).
const Quiet = 5 * time.Second

// Display owns the trackers of one apply and the output they share.
type Display struct {
	mu       sync.Mutex // serializes writes to out and the trackers' state
	out      io.Writer
	lm       sync.RWMutex  // guards live and the trackers' bars
	live     *mpb.Progress // nil: plain lines
	terminal bool
	width    int
	paused   bool // guarded by mu: no reminders while a question is asked
	trackers []*Tracker
	now      func() time.Time
	quiet    time.Duration // see Quiet
	tick     time.Duration // how often the plain display looks for quiet targets
	stop     chan struct{}
	done     chan struct{}
	// Clean, when set, is applied to every line before it is shown (the
	// live display writes to the terminal itself, past any escaping writer).
	Clean func(string) string
	// Prefix puts "[target] " in front of the targets' lines (set when
	// several targets share the output).
	Prefix bool
	// Listen, when set before the first Track, hears every tracker's steps
	// and lines as applyplan.Events (called outside the display's lock,
	// from the targets' goroutines).
	Listen func(applyplan.Event)
}

// emit sends an event to Listen, if any.
func (t *Tracker) emit(kind applyplan.EventKind, machine, what string, machines int) {
	if t.d.Listen != nil {
		t.d.Listen(applyplan.Event{Target: t.name, Kind: kind, Machine: machine, What: what, Machines: machines, Time: t.d.now()})
	}
}

// NewDisplay writes to out, live when terminal is true (out is a terminal
// at least width columns wide; 0 means mpb's default), plain otherwise.
func NewDisplay(out io.Writer, terminal bool, width int) *Display {
	d := &Display{out: out, terminal: terminal, width: width, now: time.Now, quiet: Quiet, tick: time.Second,
		stop: make(chan struct{}), done: make(chan struct{})}
	if terminal {
		d.live = d.newLive()
		close(d.done)
		return d
	}
	go d.watch()
	return d
}

// Lines is a display that only passes the targets' lines to out and their
// steps to Listen: no live lines, no reminders (a library caller shows
// waits its own way, from the events).
func Lines(out io.Writer) *Display {
	d := &Display{out: out, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}
	close(d.done)
	return d
}

// newPlain is a plain display with its timing set, for tests.
func newPlain(out io.Writer, quiet, tick time.Duration) *Display {
	d := &Display{out: out, now: time.Now, quiet: quiet, tick: tick, stop: make(chan struct{}), done: make(chan struct{})}
	go d.watch()
	return d
}

func (d *Display) newLive() *mpb.Progress {
	opts := []mpb.ContainerOption{mpb.WithOutput(d.out), mpb.WithRefreshRate(150 * time.Millisecond), mpb.WithAutoRefresh()}
	if d.width > 0 {
		opts = append(opts, mpb.WithWidth(d.width))
	}
	return mpb.New(opts...)
}

// addBar gives t its live line (lm held for writing).
func (d *Display) addBar(t *Tracker) {
	t.bar = d.live.New(0, mpb.SpinnerStyle(),
		mpb.BarRemoveOnComplete(),
		mpb.PrependDecorators(decor.Name(t.name, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return t.status() })))
}

// Pause takes the display off the output while a question is asked: the
// live lines are removed, reminders stop. Resume brings them back.
func (d *Display) Pause() {
	d.mu.Lock()
	d.paused = true
	d.mu.Unlock()
	d.lm.Lock()
	defer d.lm.Unlock()
	if d.live == nil {
		return
	}
	for _, t := range d.trackers {
		if t.bar != nil {
			t.bar.Abort(true)
			t.bar = nil
		}
	}
	d.live.Wait()
	d.live = nil
}

// Resume undoes Pause.
func (d *Display) Resume() {
	d.mu.Lock()
	d.paused = false
	for _, t := range d.trackers {
		t.last = d.now()
	}
	d.mu.Unlock()
	d.lm.Lock()
	defer d.lm.Unlock()
	if !d.terminal || d.live != nil {
		return
	}
	d.live = d.newLive()
	for _, t := range d.trackers {
		if !t.finished {
			d.addBar(t)
		}
	}
}

// Track starts following a target named name.
func (d *Display) Track(name string) *Tracker {
	t := &Tracker{d: d, name: name, start: d.now(), active: map[string]time.Time{}}
	t.last = t.start
	d.mu.Lock()
	d.trackers = append(d.trackers, t)
	d.mu.Unlock()
	d.lm.Lock()
	if d.live != nil {
		d.addBar(t)
	}
	d.lm.Unlock()
	return t
}

// Println prints one line of the apply itself (not of a target).
func (d *Display) Println(line string) { d.write([]byte(line + "\n")) }

func (d *Display) write(p []byte) {
	if d.Clean != nil {
		lines := strings.SplitAfter(string(p), "\n")
		for i, l := range lines {
			body, nl := strings.CutSuffix(l, "\n")
			lines[i] = d.Clean(body)
			if nl {
				lines[i] += "\n"
			}
		}
		p = []byte(strings.Join(lines, ""))
	}
	d.lm.RLock()
	if d.live != nil {
		// Printed above the bars at the next refresh.
		_, err := d.live.Write(p)
		if err == nil {
			d.lm.RUnlock()
			return
		}
	}
	d.lm.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _ = d.out.Write(p)
}

// Close ends the display: every tracker is finished, the live display
// removed. Lines written afterwards go straight to out.
func (d *Display) Close() {
	d.mu.Lock()
	ts := slices.Clone(d.trackers)
	d.mu.Unlock()
	for _, t := range ts {
		t.Finish()
	}
	d.lm.Lock()
	live := d.live
	d.live = nil
	d.lm.Unlock()
	if live != nil {
		live.Wait()
		return
	}
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
	<-d.done
}

// watch prints, on the plain display, what a quiet target waits for.
func (d *Display) watch() {
	defer close(d.done)
	tick := time.NewTicker(d.tick)
	defer tick.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-tick.C:
			d.remind()
		}
	}
}

func (d *Display) remind() {
	d.mu.Lock()
	now := d.now()
	var lines []string
	for _, t := range d.trackers {
		if d.paused || t.finished || now.Sub(t.last) < d.quiet {
			continue
		}
		t.last = now
		lines = append(lines, "["+t.name+"] "+t.statusLocked(now))
	}
	d.mu.Unlock()
	for _, l := range lines {
		d.write([]byte(l + "\n"))
	}
}

// Tracker follows one target. Its methods are safe for concurrent use and do
// nothing on a nil *Tracker, so engines call them unconditionally.
type Tracker struct {
	d           *Display
	name        string
	bar         *mpb.Bar
	start, last time.Time
	// Guarded by d.mu:
	phase       string
	total, done int
	active      map[string]time.Time // machines in flight, since when
	waiting     string
	waitSince   time.Time
	finished    bool
}

// Phase starts a phase: what it does ("probing 8 VM(s) over SSH") and over
// how many machines (0 when it is not per machine).
func (t *Tracker) Phase(what string, machines int) {
	if t == nil {
		return
	}
	t.d.mu.Lock()
	t.phase, t.total, t.done = what, machines, 0
	clear(t.active)
	t.waiting = ""
	t.last = t.d.now()
	t.d.mu.Unlock()
	t.emit(applyplan.EventPhase, "", what, machines)
}

// Begin marks machine as in flight in the current phase.
func (t *Tracker) Begin(machine string) {
	if t == nil {
		return
	}
	t.d.mu.Lock()
	t.active[machine] = t.d.now()
	t.d.mu.Unlock()
	t.emit(applyplan.EventBegin, machine, "", 0)
}

// End marks machine done in the current phase.
func (t *Tracker) End(machine string) {
	if t == nil {
		return
	}
	t.d.mu.Lock()
	delete(t.active, machine)
	t.done++
	t.last = t.d.now()
	t.d.mu.Unlock()
	t.emit(applyplan.EventEnd, machine, "", 0)
}

// Wait says what the target waits for ("vCenter vc.example to answer the
// login; --vcenter-timeout 2m0s") until the returned func is called.
func (t *Tracker) Wait(what string) (done func()) {
	if t == nil {
		return func() {}
	}
	t.d.mu.Lock()
	t.waiting, t.waitSince = what, t.d.now()
	t.d.mu.Unlock()
	t.emit(applyplan.EventWait, "", what, 0)
	return func() {
		t.d.mu.Lock()
		if t.waiting == what {
			t.waiting = ""
		}
		t.last = t.d.now()
		t.d.mu.Unlock()
		t.emit(applyplan.EventWaited, "", what, 0)
	}
}

// Finish ends the tracker: the target is done; its live line goes away.
func (t *Tracker) Finish() {
	if t == nil {
		return
	}
	t.d.mu.Lock()
	already := t.finished
	t.finished = true
	t.d.mu.Unlock()
	if !already {
		t.emit(applyplan.EventFinish, "", "", 0)
	}
	t.d.lm.RLock()
	if !already && t.bar != nil {
		t.bar.SetTotal(-1, true)
	}
	t.d.lm.RUnlock()
}

// Follow returns a listener that replays another tracker's steps on t (its
// phases, machines and waits; lines and the finish are the caller's): how a
// display shows an engine that reports applyplan.Events. nil for a nil t.
func (t *Tracker) Follow() func(applyplan.Event) {
	if t == nil {
		return nil
	}
	var mu sync.Mutex
	waits := map[string][]func(){}
	return func(e applyplan.Event) {
		switch e.Kind {
		case applyplan.EventPhase:
			t.Phase(e.What, e.Machines)
		case applyplan.EventBegin:
			t.Begin(e.Machine)
		case applyplan.EventEnd:
			t.End(e.Machine)
		case applyplan.EventWait:
			done := t.Wait(e.What)
			mu.Lock()
			waits[e.What] = append(waits[e.What], done)
			mu.Unlock()
		case applyplan.EventWaited:
			mu.Lock()
			ds := waits[e.What]
			var done func()
			if len(ds) > 0 {
				done, waits[e.What] = ds[0], ds[1:]
			}
			mu.Unlock()
			if done != nil {
				done()
			}
		}
	}
}

// Writer returns the target's line output: each line is printed whole,
// counts as a sign of life, and, with Display.Prefix, gets "[name] " in front
// unless it already starts with "name:" (a summary line).
func (t *Tracker) Writer() io.Writer { return &lineWriter{t: t} }

type lineWriter struct {
	t   *Tracker
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i+1]
		w.t.emit(applyplan.EventLine, "", string(line[:i]), 0)
		if w.t.d.Prefix && !bytes.HasPrefix(line, []byte(w.t.name+":")) {
			out.WriteString("[" + w.t.name + "] ")
		}
		out.Write(line)
		w.buf = w.buf[i+1:]
	}
	if out.Len() > 0 {
		w.t.d.write(out.Bytes())
		w.t.d.mu.Lock()
		w.t.last = w.t.d.now()
		w.t.d.mu.Unlock()
	}
	return len(p), nil
}

// status is the live line's text.
func (t *Tracker) status() string {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	return t.statusLocked(t.d.now())
}

// statusLocked says what the target does and waits for, e.g. "probing 8
// VM(s) over SSH: 5 of 8 done; waiting for clx-mld-44, clx-mld-47 (12s)".
func (t *Tracker) statusLocked(now time.Time) string {
	var b strings.Builder
	b.WriteString(t.phase)
	if b.Len() == 0 {
		b.WriteString("starting")
	}
	if t.total > 0 {
		fmt.Fprintf(&b, ": %d of %d done", t.done, t.total)
	}
	switch {
	case t.waiting != "":
		fmt.Fprintf(&b, "; waiting for %s (%s)", t.waiting, round(now.Sub(t.waitSince)))
	case len(t.active) > 0:
		names := make([]string, 0, len(t.active))
		oldest := now
		for n, since := range t.active {
			names = append(names, n)
			if since.Before(oldest) {
				oldest = since
			}
		}
		slices.Sort(names)
		more := ""
		if len(names) > 3 {
			more = fmt.Sprintf(" and %d more", len(names)-3)
			names = names[:3]
		}
		fmt.Fprintf(&b, "; waiting for %s%s (%s)", strings.Join(names, ", "), more, round(now.Sub(oldest)))
	}
	fmt.Fprintf(&b, " [%s]", round(now.Sub(t.start)))
	return b.String()
}

func round(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// Sync returns a writer that serializes writes to w, for machines that
// finish on several goroutines and print one line (one Write) each.
func Sync(w io.Writer) io.Writer {
	if w == nil {
		w = io.Discard
	}
	return &syncWriter{w: w}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
