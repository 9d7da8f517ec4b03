package progress

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/applyplan"
)

// syncBuffer is a bytes.Buffer safe for the display's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The plain display: lines come whole, prefixed when several targets share
// the output (not a summary line), cleaned; a quiet target gets a line
// saying what it waits for, the machines in flight or the Wait text; none
// while paused or after Finish.
func TestPlainDisplay(t *testing.T) {
	var out syncBuffer
	d := newPlain(&out, 30*time.Millisecond, 10*time.Millisecond)
	d.Prefix = true
	d.Clean = strings.NewReplacer("ns-01", "NS-01").Replace
	hosts := d.Track("hosts")
	esxi := d.Track("esxi")
	w := hosts.Writer()
	w.Write([]byte("ns-01: up to"))
	w.Write([]byte(" date\nhosts: 1 up to date\n"))
	hosts.Finish()

	esxi.Phase("changing 2 VM(s)", 2)
	esxi.Begin("vm b")
	esxi.Begin("vm a")
	time.Sleep(80 * time.Millisecond)
	esxi.End("vm a")
	esxi.End("vm b")
	done := esxi.Wait("vCenter to answer")
	time.Sleep(80 * time.Millisecond)
	done()
	d.Pause()
	time.Sleep(80 * time.Millisecond)
	paused := out.String()
	d.Resume()
	d.Close()

	got := out.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`^\[hosts\] NS-01: up to date\nhosts: 1 up to date\n`),
		regexp.MustCompile(`\n\[esxi\] changing 2 VM\(s\): 0 of 2 done; waiting for vm a, vm b \([\d.]+m?s\) \[[\d.]+m?s\]\n`),
		regexp.MustCompile(`\n\[esxi\] changing 2 VM\(s\): 2 of 2 done; waiting for vCenter to answer \([\d.]+m?s\) \[[\d.]+m?s\]\n`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output does not match %s:\n%s", want, got)
		}
	}
	if strings.Count(got, "[hosts] ") != 1 {
		t.Errorf("a finished target was reminded of:\n%s", got)
	}
	if !strings.HasPrefix(got, paused) || strings.Count(got[len(paused):], "\n") > 1 {
		t.Errorf("reminders while paused:\n%s", got)
	}
}

// Methods of a nil *Tracker do nothing (engines call them unconditionally).
func TestNilTracker(t *testing.T) {
	var tr *Tracker
	tr.Phase("x", 1)
	tr.Begin("a")
	tr.End("a")
	tr.Wait("y")()
	tr.Finish()
}

// The live display (mpb) draws the targets' lines above its bars and
// removes the bars of finished targets.
func TestLiveDisplay(t *testing.T) {
	var out syncBuffer
	d := NewDisplay(&out, true, 80)
	tr := d.Track("switch")
	tr.Phase("reading the running-config of 1 switch(es)", 1)
	tr.Writer().Write([]byte("sw1 (10.0.0.2): up to date\n"))
	time.Sleep(400 * time.Millisecond)
	d.Pause()
	d.Resume()
	tr.Finish()
	d.Close()
	got := out.String()
	if !strings.Contains(got, "sw1 (10.0.0.2): up to date\n") || !strings.Contains(got, "reading the running-config of 1 switch(es): 0 of 1 done") {
		t.Errorf("live output:\n%q", got)
	}
}

// Listen hears every step and line of every tracker, in order per target.
func TestListen(t *testing.T) {
	var mu sync.Mutex
	var got []string
	d := newPlain(io.Discard, time.Hour, time.Hour)
	d.Listen = func(e applyplan.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Time.IsZero() || e.Target != "hosts" {
			t.Errorf("event %+v", e)
		}
		got = append(got, fmt.Sprintf("%s %s %s %d", e.Kind, e.Machine, e.What, e.Machines))
	}
	tr := d.Track("hosts")
	tr.Phase("reading 1 VM(s)", 1)
	tr.Begin("ns-01")
	tr.End("ns-01")
	tr.Wait("the confirmation")()
	tr.Writer().Write([]byte("ns-01: up to date\nhosts: done\n"))
	tr.Finish()
	tr.Finish()
	d.Close()
	want := []string{"phase  reading 1 VM(s) 1", "begin ns-01  0", "end ns-01  0", "wait  the confirmation 0", "waited  the confirmation 0",
		"line  ns-01: up to date 0", "line  hosts: done 0", "finish   0"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Follow replays one tracker's events on another: its phase, machines and
// waits show on the second display.
func TestFollow(t *testing.T) {
	var out syncBuffer
	shown := newPlain(&out, 20*time.Millisecond, 5*time.Millisecond)
	target := shown.Track("esxi")
	engine := Lines(io.Discard)
	engine.Listen = target.Follow()
	tr := engine.Track("esxi")
	tr.Phase("changing 2 VM(s)", 2)
	tr.Begin("vm a")
	tr.End("vm a")
	done := tr.Wait("vCenter to answer")
	time.Sleep(60 * time.Millisecond)
	done()
	engine.Close()
	shown.Close()
	if !regexp.MustCompile(`\[esxi\] changing 2 VM\(s\): 1 of 2 done; waiting for vCenter to answer \(`).MatchString(out.String()) {
		t.Errorf("the followed wait is not shown:\n%s", out.String())
	}
	if (*Tracker)(nil).Follow() != nil {
		t.Error("a nil tracker follows")
	}
}
