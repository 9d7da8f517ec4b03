package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// From another module: a program tells a wrong host key, a wrong password
// and an unreachable switch apart with errors.As on the error pkg/apply
// returns, and finds the same error on the failed machine.
func TestTellFailuresApart(t *testing.T) {
	sim := onyxsim.Start(t, onyxsim.Options{Hostname: "leaf1", Ports: 16, Version: "3.9.3210"})
	other := onyxsim.Start(t, onyxsim.Options{Hostname: "impostor"})
	inv, err := lab(sim.Addr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "known_hosts")
	sim.WriteKnownHosts(t, good)
	// known_hosts holds another machine's key for the switch's address.
	wrong := filepath.Join(dir, "known_hosts.wrong")
	line := knownhosts.Line([]string{knownhosts.Normalize(sim.Addr)}, other.HostKey)
	if err := os.WriteFile(wrong, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(s apply.SSH) (*apply.Result, error) {
		return apply.Switches(context.Background(), inv, apply.SwitchOptions{SSH: s, BackupDir: filepath.Join(dir, "bk")})
	}

	res, err := run(apply.SSH{Password: "admin", KnownHosts: wrong})
	var hk *apply.HostKeyError
	var auth *apply.AuthError
	if !errors.As(err, &hk) || errors.As(err, &auth) || !errors.Is(err, apply.ErrMachines) {
		t.Fatalf("wrong host key: %T %v", err, err)
	}
	if hk.Addr != sim.Addr {
		t.Errorf("host key error for %q, want %q", hk.Addr, sim.Addr)
	}
	if m := res.Failed(); len(m) != 1 || !errors.As(m[0].Err, &hk) {
		t.Errorf("the failed machine does not carry the host key error: %+v", m)
	}
	var me *apply.MachineError
	if !errors.As(err, &me) || me.Machine != "leaf1" || me.Target != "switch" {
		t.Errorf("machine error %+v", me)
	}

	res, err = run(apply.SSH{Password: "not-the-password", KnownHosts: good})
	if !errors.As(err, &auth) || errors.As(err, &hk) {
		t.Fatalf("wrong password: %T %v", err, err)
	}
	if auth.User != "admin" || auth.Offered != "a password" {
		t.Errorf("auth error %+v", auth)
	}
	if m := res.Failed(); len(m) != 1 || m[0].Status != applyplan.Failed {
		t.Errorf("failed machines %+v", m)
	}
	if len(sim.Received()) != 0 {
		t.Errorf("the switch received %q", sim.Received())
	}

	// A port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	if inv, err = lab(closed); err != nil {
		t.Fatal(err)
	}
	_, err = run(apply.SSH{Password: "admin", KnownHosts: good})
	var un *apply.UnreachableError
	if !errors.As(err, &un) || errors.As(err, &auth) || errors.As(err, &hk) {
		t.Fatalf("unreachable: %T %v", err, err)
	}
}
