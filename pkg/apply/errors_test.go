package apply_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/apply"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// closedPort is a loopback address nothing listens on: a connection to it
// is refused.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// silentPort is a loopback listener that never accepts: the kernel
// completes the TCP handshake, and no server ever answers (no SSH banner,
// no TLS handshake).
func silentPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// emptyKnownHosts is a known_hosts file with no key: nothing gets as far
// as a host key here.
func emptyKnownHosts(t *testing.T) string {
	t.Helper()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return kh
}

// unreachable checks that err is a *MachinesError whose machines are all
// *UnreachableError (found by errors.As), that a timeout says so, and that
// every failed machine's text names it once.
func unreachable(t *testing.T, what string, res *apply.Result, err error, timeout bool) *apply.UnreachableError {
	t.Helper()
	var me *apply.MachinesError
	var un *apply.UnreachableError
	if !errors.As(err, &me) || !errors.Is(err, apply.ErrMachines) || !errors.As(err, &un) {
		t.Fatalf("%s: %T %v, want a *MachinesError reaching an *UnreachableError", what, err, err)
	}
	if res == nil || len(res.Failed()) != len(me.Machines) || len(me.Machines) == 0 {
		t.Fatalf("%s: result %+v, machines %v", what, res, me.Machines)
	}
	var ne net.Error
	if timeout != (errors.As(un, &ne) && ne.Timeout()) {
		t.Errorf("%s: %v: a timeout is %v, want %v", what, un, !timeout, timeout)
	}
	for _, m := range me.Machines {
		var mu *apply.UnreachableError
		if !errors.As(m, &mu) {
			t.Errorf("%s: %s: %T %v, want an *UnreachableError", what, m.Machine, m.Err, m.Err)
		}
		if n := strings.Count(m.Error(), m.Machine); n != 1 {
			t.Errorf("%s: %q names %s %d times, want once", what, m.Error(), m.Machine, n)
		}
	}
	return un
}

// An ONYX switch that refuses the connection, and one that never answers
// (a listener that never accepts: no SSH banner), are unreachable through
// pkg/apply, and a library caller's error names the switch once:
// "switch swx-mld-1-2: ADDR: …", not "switch swx-mld-1-2: switch
// swx-mld-1-2: …".
func TestSwitchesUnreachableONYX(t *testing.T) {
	inv := inventory.Reference()
	addr := closedPort(t)
	inv.Switches[0].Mgmt = addr
	o := apply.SwitchOptions{SSH: apply.SSH{Password: "admin", KnownHosts: emptyKnownHosts(t), Timeout: 2 * time.Second}, BackupDir: t.TempDir()}
	res, err := apply.Switches(context.Background(), inv, o)
	unreachable(t, "refused", res, err, false)
	var me *apply.MachinesError
	errors.As(err, &me)
	want := "switch swx-mld-1-2: " + addr + ": dial tcp " + addr + ": connect: connection refused"
	if got := me.Machines[0].Error(); got != want {
		t.Errorf("the library caller reads\n%q\nwant\n%q", got, want)
	}
	if got := res.Machines[0].Error; got != addr+": dial tcp "+addr+": connect: connection refused" {
		t.Errorf("Machine.Error %q", got)
	}
	if me.Detail() != "1 of 1 switch(es) failed: swx-mld-1-2" || err.Error() != "some machines failed: 1 of 1 switch(es) failed: swx-mld-1-2" {
		t.Errorf("detail %q, error %q", me.Detail(), err)
	}

	inv.Switches[0].Mgmt = silentPort(t)
	o.SSH.Timeout, o.SSH.TimeoutFlag = 300*time.Millisecond, "--ssh-timeout"
	t0 := time.Now()
	res, err = apply.Switches(context.Background(), inv, o)
	un := unreachable(t, "silent", res, err, true)
	if !strings.Contains(un.Error(), "no answer within 300ms (--ssh-timeout)") || time.Since(t0) > 10*time.Second {
		t.Errorf("after %s: %v", time.Since(t0), un)
	}
}

// A Cumulus Linux switch whose NVUE API refuses the connection, or never
// answers the TLS handshake, is unreachable as an SSH machine is: the same
// error type, through pkg/apply, its name once.
func TestSwitchesUnreachableNVUE(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "cumulus", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("cumulus.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	addr := closedPort(t)
	inv.Switches[0].Mgmt = addr
	o := apply.SwitchOptions{NVUE: apply.NVUE{User: "cumulus", Password: "x", RequestTimeout: 2 * time.Second}, BackupDir: t.TempDir()}
	res, err := apply.Switches(context.Background(), inv, o)
	un := unreachable(t, "refused", res, err, false)
	if un.Addr != addr {
		t.Errorf("unreachable %q, want %q", un.Addr, addr)
	}
	var me *apply.MachinesError
	errors.As(err, &me)
	if got := me.Machines[0].Error(); !strings.HasPrefix(got, "switch swx-mld-1-2: reading the applied configuration: "+addr+": Get ") ||
		!strings.HasSuffix(got, ": connect: connection refused") {
		t.Errorf("the library caller reads %q", got)
	}

	inv.Switches[0].Mgmt = silentPort(t)
	o.NVUE.RequestTimeout = 300 * time.Millisecond
	res, err = apply.Switches(context.Background(), inv, o)
	unreachable(t, "silent", res, err, true)
}

// The VMs of the hosts target (the workers' go the same way) that refuse
// the connection, or never answer, are unreachable through pkg/apply.
func TestHostsUnreachable(t *testing.T) {
	inv := inventory.Reference()
	refused, silent := closedPort(t), silentPort(t)
	for i := range inv.Hosts {
		inv.Hosts[i].Mgmt = refused
		if i%2 == 1 {
			inv.Hosts[i].Mgmt = silent
		}
	}
	o := apply.HostsOptions{Common: apply.Common{Parallel: 8},
		SSH: apply.SSH{User: "root", Password: "x", KnownHosts: emptyKnownHosts(t), Timeout: 300 * time.Millisecond}}
	res, err := apply.Hosts(context.Background(), inv, o)
	unreachable(t, "hosts", res, err, false)
	var me *apply.MachinesError
	errors.As(err, &me)
	for i, m := range me.Machines {
		var ne net.Error
		var un *apply.UnreachableError
		if !errors.As(m, &un) {
			continue
		}
		if timedOut := errors.As(un, &ne) && ne.Timeout(); timedOut != (i%2 == 1) {
			t.Errorf("%s: %v", m.Machine, m)
		}
	}
	if want := "hosts clx-mld-41: unreachable: " + refused + ": dial tcp " + refused + ": connect: connection refused"; me.Machines[0].Error() != want {
		t.Errorf("the library caller reads\n%q\nwant\n%q", me.Machines[0].Error(), want)
	}
	if len(res.Machines) != 8 || res.Machines[0].Status != applyplan.Failed {
		t.Errorf("machines %+v", res.Machines)
	}
}
