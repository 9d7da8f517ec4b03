package railnet

import (
	_ "embed"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/quote"
)

// fragment is scripts/rails.sh: the functions that apply the rails live,
// headed by what they do and the variables Go sets before them (Vars).
//
//go:embed scripts/rails.sh
var fragment string

// Fragment is the embedded shell file scripts/rails.sh (POSIX sh). It
// defines rails_apply, which applies the rails live as Netplan and Sysctl
// set them up at boot, and the functions it uses (rails_*); it runs
// nothing itself. A script that uses it sets Vars first, then adds
// Fragment, then calls rails_apply — as Script does, or the hosts engine
// within its own round trip:
//
//	for _, v := range g.Vars() {
//		w.Set(v.Name, v.Value) // internal/transport/remote
//	}
//	w.Text(railnet.Fragment())
//	w.Line("step rails rails_apply")
//
// rails_apply returns 0 when every rail is in place, else 1 with the
// failing rail and step on stderr. It needs ip (iproute2), awk and
// sysctl, and acts on the machine's (or the network namespace's) live
// state, not on files: the root prefix R of the engines' scripts does not
// apply.
func Fragment() string { return fragment }

// Scripts are the package's embedded shell files by name, for the tests
// that parse them and run shellcheck on them.
func Scripts() map[string]string { return map[string]string{"rails.sh": fragment} }

// Var is one shell variable Fragment reads: set Name to Value, quoted as
// one sh word (quote.Sh; remote.Script.Set).
type Var struct {
	Name, Value string
}

// Vars are the variables Fragment reads for g, in order:
//
//   - rails_sysctl: Sysctls as "key=value" words;
//   - rails: one line per rail in rail order, the words "interface mac
//     address subnet gateway mtu table priority metric peer…" (mac "-"
//     when the rail has none), e.g. "rail1 00:50:56:aa:00:11 10.1.1.11/24
//     10.1.1.0/24 10.1.1.1 9000 101 1001 101 10.0.1.0/24 10.0.2.0/24".
//
// Every word is held to a grammar by New (an interface name, a canonical
// MAC address) or a number or address Go wrote: none holds white space or
// a character the script would read as anything but itself.
func (g *Guest) Vars() []Var {
	var sys []string
	for _, s := range Sysctls() {
		sys = append(sys, s.Key+"="+s.Value)
	}
	var b strings.Builder
	for i, r := range g.vm.Rails {
		mac := g.macs[i]
		if mac == "" {
			mac = "-"
		}
		b.WriteString(r.Interface + " " + mac + " " + r.Address.String() + " " + r.Subnet().String() + " " + r.Gateway.String() + " " +
			strconv.Itoa(r.MTU) + " " + strconv.Itoa(Table(i)) + " " + strconv.Itoa(Priority(i)) + " " + strconv.Itoa(Metric(i)))
		for _, p := range r.Peers {
			b.WriteString(" " + p.String())
		}
		b.WriteByte('\n')
	}
	return []Var{{"rails_sysctl", strings.Join(sys, " ")}, {"rails", b.String()}}
}

// Script is the rails' script for running by hand as root (rails.sh in the
// output tree): Vars, Fragment and a call of rails_apply, under set -eu.
// It is safe to run again: a second run changes nothing.
func (g *Guest) Script() []byte {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# rdggen: the " + strconv.Itoa(len(g.vm.Rails)) + " rails of " + quote.Line(g.vm.Name) + ", applied live. Run as root; safe to run again.\n")
	b.WriteString("# The same at boot: " + NetplanPath + " and " + SysctlPath + ".\n")
	b.WriteString("set -eu\n")
	for _, v := range g.Vars() {
		b.WriteString(v.Name + "=" + quote.Sh(v.Value) + "\n")
	}
	b.WriteString(fragment)
	b.WriteString("rails_apply\n")
	return []byte(b.String())
}
