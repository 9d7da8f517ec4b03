package sshcli_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/internal/transport/sshconn"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

func dialSim(t *testing.T, sim *onyxsim.Server, p *sshcli.Platform) *sshcli.Session {
	t.Helper()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	sim.WriteKnownHosts(t, kh)
	ctx := context.Background()
	client, err := sshconn.Dial(ctx, sshconn.Config{Addr: sim.Addr, User: "admin", Password: "admin", KnownHosts: kh})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	s, err := sshcli.Open(ctx, client, p, sshcli.Options{CommandTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var generatedAt = regexp.MustCompile(`(?m)^## Generated at .*\n`)

// With paging left on, the session answers every `lines a-b` pager and the
// output equals the whole running-config.
func TestPagedRunningConfig(t *testing.T) {
	var seed []string
	for i := 1; i <= 40; i++ {
		seed = append(seed, "interface ethernet 1/"+strconv.Itoa(i%32+1)+" description port-"+strconv.Itoa(i))
	}
	sim := onyxsim.Start(t, onyxsim.Options{Seed: seed})
	noPagingOff := *sshcli.ONYX
	noPagingOff.OnOpen = nil
	s := dialSim(t, sim, &noPagingOff)
	ctx := context.Background()
	if err := s.Acquire(ctx, sshcli.Enable); err != nil {
		t.Fatal(err)
	}
	out, err := s.Send(ctx, "show running-config")
	if err != nil {
		t.Fatal(err)
	}
	got := generatedAt.ReplaceAllString(out+"\n", "")
	want := generatedAt.ReplaceAllString("\n"+sim.RunningConfig(), "")
	if got != want {
		t.Errorf("paged output differs:\n--- got\n%s\n--- want\n%s", got, want)
	}
	if n := strings.Count(want, "\n"); n < 60 {
		t.Fatalf("running-config has only %d lines; the pager was not exercised", n)
	}
}

func TestSimLevelsAndDeviceErrors(t *testing.T) {
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "swx-mld-1-2"})
	s := dialSim(t, sim, sshcli.ONYX)
	ctx := context.Background()
	if s.Level() != sshcli.Exec || s.Prompt() != "swx-mld-1-2 [standalone: master] > " {
		t.Fatalf("level %q prompt %q", s.Level(), s.Prompt())
	}
	if err := s.Acquire(ctx, sshcli.Config); err != nil {
		t.Fatal(err)
	}
	_, err := s.Send(ctx, "traffic-pool roce")
	var de *sshcli.DeviceError
	if !errors.As(err, &de) || !strings.HasPrefix(de.Message, `% Unrecognized command "traffic-pool".`) {
		t.Fatalf("err = %v", err)
	}
	// Non-force forms ask; the session declines and nothing changes.
	_, err = s.Send(ctx, "dcb priority-flow-control enable")
	if !errors.As(err, &de) || !strings.Contains(de.Message, "declined") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(sim.RunningConfig(), "priority-flow-control") {
		t.Error("a declined command changed the config")
	}
	// A sub-mode (prefix modes are on by default) and back.
	if _, err := s.Send(ctx, "interface ethernet 1/3"); err != nil {
		t.Fatal(err)
	}
	if s.Level() != sshcli.ConfigSub {
		t.Fatalf("level %q prompt %q", s.Level(), s.Prompt())
	}
	if _, err := s.Send(ctx, "description from sub-mode"); err != nil {
		t.Fatal(err)
	}
	if err := s.Acquire(ctx, sshcli.Config); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sim.RunningConfig(), "   interface ethernet 1/3 description from sub-mode\n") {
		t.Errorf("sub-mode command missing:\n%s", sim.RunningConfig())
	}
	// hostname changes the prompt; the session follows.
	if _, err := s.Send(ctx, "hostname renamed"); err != nil {
		t.Fatal(err)
	}
	if s.Prompt() != "renamed [standalone: master] (config) # " {
		t.Errorf("prompt %q", s.Prompt())
	}
}

// A block pasted in one write: every line gets its own reply, a refused
// line does not stop the others (the device runs them), a question takes
// the next line as its answer (that line never runs), and a question on
// the last line is declined; the session is at its prompt afterwards.
func TestSendBlock(t *testing.T) {
	sim := onyxsim.Start(t, onyxsim.Options{})
	s := dialSim(t, sim, sshcli.ONYX)
	ctx := context.Background()
	if err := s.Acquire(ctx, sshcli.Config); err != nil {
		t.Fatal(err)
	}
	sim.ResetLog()
	w0 := s.Writes()
	cmds := []string{
		"lldp",
		"dcb priority-flow-control enable", // asks; the next line answers
		"ip route vrf default 10.1.0.0/24 10.0.0.9",
		"no lldp",
		"frobnicate now",
		"ip routing vrf default",
		"dcb priority-flow-control enable", // asks, last line: declined
	}
	replies, err := s.SendBlock(ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Writes() - w0; got != 2 {
		t.Errorf("%d writes, want 2 (the block, the last question's answer)", got)
	}
	type want struct {
		err      string
		consumed bool
	}
	wants := []want{
		{},
		{err: `asked Type 'yes' to confirm: and rdggen declined (use the command's force form)`},
		{err: `not run: the switch read it as the answer to "Type 'yes' to confirm:", asked by the line before it`, consumed: true},
		{},
		{err: `% Unrecognized command "frobnicate". Type "?" for help.`},
		{},
		{err: `asked Type 'yes' to confirm: and rdggen declined (use the command's force form)`},
	}
	if len(replies) != len(cmds) {
		t.Fatalf("%d replies for %d lines: %+v", len(replies), len(cmds), replies)
	}
	for i, r := range replies {
		var de *sshcli.DeviceError
		msg := ""
		if errors.As(r.Err, &de) {
			msg = de.Message
		} else if r.Err != nil {
			msg = r.Err.Error()
		}
		if r.Command != cmds[i] || msg != wants[i].err || r.Consumed != wants[i].consumed || r.Level != sshcli.Config {
			t.Errorf("line %d %q: err %q consumed %v level %q; want err %q consumed %v", i+1, r.Command, msg, r.Consumed, r.Level, wants[i].err, wants[i].consumed)
		}
	}
	// What the switch ran: the consumed line never reached it as a command.
	if got, want := strings.Join(sim.Received(), "|"), "lldp|dcb priority-flow-control enable|no lldp|frobnicate now|ip routing vrf default|dcb priority-flow-control enable"; got != want {
		t.Errorf("switch ran %q, want %q", got, want)
	}
	if s.Level() != sshcli.Config {
		t.Errorf("level %q after the block", s.Level())
	}
	if out, err := s.Send(ctx, "show running-config"); err != nil || !strings.Contains(out, "ip routing vrf default") || strings.Contains(out, "10.1.0.0/24") {
		t.Errorf("after the block: err %v\n%s", err, out)
	}
}
