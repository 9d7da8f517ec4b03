package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/quote"
)

const usageLab = `Usage:
  rdggen lab up -f cluster.yaml [--dir DIR]
                      start a stand-in for every machine of the inventory on this
                      machine, in the background, and wait until each answers
  rdggen lab status [--dir DIR]
                      what runs and which files the lab wrote
  rdggen lab fault [--dir DIR] FAULT
                      break the lab the way production breaks:
                        hide-gpu VM          a VM loses a GPU passthrough device in vCenter
                        mtu HOST N           a namespace host's data interface MTU set to N
                        mtu SWITCH:PORT N    a switch port's MTU set by hand to N
                        lose-answer SWITCH   a Cumulus switch applies rdggen's next revision
                                             and the answer is lost on the way
                      and, when the lab runs the fabric:
                        miswire SWITCH:PORT SWITCH:PORT
                                             the cables at two fabric.links ports swapped
                        stop-bgp SWITCH      the switch's BGP daemon stops, as in a crash
                        link-down SWITCH:PORT
                                             the port set administratively down
                        link-speed SWITCH:PORT GBPS
                                             the port's link comes up at GBPS, at most
                                             its planned speed (a slower cable or optic)
                        repair               undo the fabric's faults (cabling, ports, speeds, bgpd)
  rdggen lab power-on|power-off [--dir DIR] [VM...]
                      power the VMs (default all) on or off, as a person does in
                      vSphere (apply never powers a VM off; a device change needs it)
  rdggen lab down [--dir DIR]
                      stop every process the lab started and delete its files

The stand-ins, on 127.0.0.1: vCenter with the inventory's ESXi hosts, GPUs
(BAR1 sizes from the inventory), ConnectX PFs with SR-IOV and the VMs (govmomi's
simulator, extended); each ONYX switch as a CLI over SSH, each Cumulus Linux
switch as its NVUE REST API over HTTPS. As root with sshd and dockerd
installed, each VM also becomes a network namespace with its own sshd and
dockerd, its data interface (one per rail) cabled to a switch namespace (target hosts),
and the worker image is built from this machine's Open MPI and sshd (target
workers); --no-hosts leaves them out. For an inventory with a fabric (switch
roles), as root with FRR and lldpd installed, FRR (bgpd, bfdd, zebra) and lldpd
run behind each switch in a namespace of its own, cabled by fabric.links, the
hosts on their leaf ports; otherwise lab up says the fabric is not rehearsed
and why. run and bench need RDMA devices and GPUs,
which a namespace has not: lab up says what is not simulated, and why. What apply changes on vCenter and
the switches lives in the lab's memory and is gone with lab down.

lab up writes into DIR (default ./rdg-lab, mode 0700; an existing DIR must be
yours and writable by no one else, every directory above it root's or yours and
writable by no one else unless sticky like /tmp, and, unless a lab ran there,
DIR must hold nothing at the names below; each file is created anew, mode 0600,
never through a link):
  lab.yaml        the inventory with vcenter and every switch's mgmt pointing at
                  its stand-in (comments kept)
  env             GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, GOVC_TLS_CA_CERTS and
                  RDGGEN_SWITCH_*, RDGGEN_NVUE_*, RDGGEN_KNOWN_HOSTS, RDGGEN_NVUE_CA
                  (with namespace hosts: SSH_AUTH_SOCK, an agent holding their
                  login key, and RDGGEN_HOST_ROOT, RDGGEN_DOCKER_RESTART,
                  RDGGEN_DOCKER_VALIDATE: the hosts' file root and Docker commands,
                  XDG_CONFIG_HOME: where the worker SSH keys are kept, in DIR)
  known_hosts, nvue-ca.pem, vcenter-ca.pem, lab.pid, lab.json, serve.log, control.sock,
  agent.sock, hosts.dirs (the namespace hosts' files, under /tmp/rdglab*), tmp/,
  lab.lock (one lab up or down at a time in DIR: another one exits 3 at once)

Then, unchanged (as root with namespace hosts: --target esxi,switch,hosts,workers):
  . rdg-lab/env
  rdggen apply -f rdg-lab/lab.yaml --target esxi,switch --yes
  rdggen lab power-on
  rdggen check -f rdg-lab/lab.yaml --target esxi,switch
  rdggen lab down

A lab left behind (lab up or its supervisor killed) is cleaned up by the next
lab down or lab up in the same DIR; lab up replaces a lab running in DIR.
One lab up or down at a time per DIR: another one exits 3 at once.
See docs/lab.md.

lab up stops at SIGINT (Ctrl-C) or SIGTERM: it removes what it had started
and made, as lab down does, and exits 3.

Exit status: 0 done, 2 usage error, 3 the lab could not start, stop or take the
fault, or lab up was interrupted.
`

func cmdLab(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	fs := newFlagSet("lab", usageLab, stdout, stderr)
	dir := fs.String("dir", "rdg-lab", "the lab's `DIR`ectory")
	// -f and --no-hosts are lab up's; registered for every subcommand so
	// that help lists them, refused below elsewhere.
	file := fs.StringP("file", "f", "", "lab up: the inventory `FILE` (required)")
	noHosts := fs.Bool("no-hosts", false, "lab up: no namespace hosts even as root: vCenter and the switches only, as without root")
	var err error
	switch sub {
	case "fault", "power-on", "power-off":
		fs.SetInterspersed(false)
		err = fs.Parse(args)
	default:
		err = fs.Parse(args)
	}
	if code, ok := parsedArgs(fs, err, stdout, sub == "fault" || sub == "power-on" || sub == "power-off"); !ok {
		return code
	}
	if sub != "up" && sub != "serve" {
		for _, name := range []string{"file", "no-hosts"} {
			if fs.Changed(name) {
				fmt.Fprintf(stderr, "rdggen: --%s is lab up's flag, not lab %s's (see rdggen help lab)\n", name, sub)
				return exitUsage
			}
		}
	}
	switch sub {
	case "up":
		if *file == "" {
			fmt.Fprintln(stderr, "rdggen: lab up needs -f cluster.yaml: the inventory whose machines to stand in for")
			return exitUsage
		}
		// The supervisor reads the inventory again: a pipe would give it
		// nothing (or wait), so only a regular file is one to stand in for.
		f, err := userfile.Handle(*file, 0, func(fi os.FileInfo) error {
			if !fi.Mode().IsRegular() {
				return &userfile.Error{Path: *file, Mode: fi.Mode()}
			}
			return nil
		})
		var ue *userfile.Error
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "rdggen: -f: %s: lab up reads the inventory twice (here, and in its supervisor), so it must be a regular file; save it to one\n",
				quote.Line(err.Error()))
			return exitUsage
		}
		if err == nil {
			f.Close()
		}
		if _, code, ok := load(ctx, fs, *file, stderr); !ok {
			return code
		}
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab up: %v\n", err)
			return exitFailed
		}
		st, err := lab.Up(ctx, lab.UpOptions{Inventory: *file, Dir: *dir, Exe: exe, Env: os.Environ(), Log: stdout, NoHosts: *noHosts})
		var ie *lab.Interrupted
		if errors.As(err, &ie) {
			// SIGINT or SIGTERM (main's ctx): Up stopped and removed what
			// it had started; say what, as lab down does.
			for _, g := range ie.Removed {
				fmt.Fprintf(stdout, "removed %s\n", quote.Terminal(g))
			}
			if ie.Err != nil {
				fmt.Fprintf(stderr, "rdggen: interrupted: lab up stopped before the lab was ready; removing what it had started failed: %s; rdggen lab down --dir %s removes the rest\n",
					quote.Terminal(ie.Err.Error()), quote.Sh(*dir))
				return exitFailed
			}
			fmt.Fprintln(stderr, "rdggen: interrupted: lab up stopped before the lab was ready; what it had started and made is removed (above), nothing of the lab runs")
			return exitFailed
		}
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab up: %s\n", quote.Terminal(err.Error()))
			return exitFailed
		}
		abs, _ := filepath.Abs(*dir)
		printLab(stdout, st, abs)
		targets := "esxi,switch"
		for _, e := range st.Endpoints {
			if e.Kind == "host" {
				targets = "esxi,switch,hosts,workers"
			}
		}
		fmt.Fprintf(stdout, "lab up in %s (pid %d); next:\n  . %s\n  rdggen apply -f %s --target %s\n  rdggen lab down --dir %s\n",
			abs, st.PID, quote.Sh(filepath.Join(abs, lab.FileEnv)), quote.Sh(filepath.Join(abs, lab.FileInventory)), targets, quote.Sh(abs))
		return exitOK
	case "serve":
		if *file == "" {
			fmt.Fprintln(stderr, "rdggen: lab serve needs -f (it is started by lab up)")
			return exitUsage
		}
		if err := lab.Serve(ctx, lab.ServeOptions{Dir: *dir, Inventory: *file, Log: stdout, NoHosts: *noHosts}); err != nil {
			fmt.Fprintf(stderr, "rdggen: lab serve: %v\n", err)
			return exitFailed
		}
		return exitOK
	case "down":
		gone, err := lab.Down(*dir)
		for _, g := range gone {
			fmt.Fprintf(stdout, "removed %s\n", quote.Terminal(g))
		}
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab down: %s\n", quote.Terminal(err.Error()))
			return exitFailed
		}
		if len(gone) == 0 {
			fmt.Fprintf(stdout, "no lab in %s: nothing to do\n", quote.Terminal(*dir))
		}
		return exitOK
	case "status":
		st, err := lab.ReadStatus(*dir)
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab status: %v\n", err)
			return exitFailed
		}
		abs, _ := filepath.Abs(*dir)
		switch {
		case st.PID == 0 && len(st.Files) == 0:
			fmt.Fprintf(stdout, "no lab in %s\n", quote.Terminal(abs))
			return exitOK
		case st.Running && st.State != nil:
			printLab(stdout, st.State, abs)
		case st.Running:
			fmt.Fprintf(stdout, "supervisor pid %d running, not ready yet (see %s)\n", st.PID, filepath.Join(abs, lab.FileLog))
		default:
			fmt.Fprintf(stdout, "no supervisor runs (recorded pid %d): a lab left behind; rdggen lab down --dir %s removes it\n", st.PID, quote.Sh(abs))
		}
		fmt.Fprintf(stdout, "files: %s\n", strings.Join(st.Files, " "))
		return exitOK
	case "fault":
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "rdggen: lab fault needs a fault: "+lab.FaultShapes+" (see rdggen lab --help)")
			return exitUsage
		}
		if err := lab.CheckFault(fs.Args()); err != nil {
			fmt.Fprintf(stderr, "rdggen: lab fault: %v (see rdggen lab --help)\n", err)
			return exitUsage
		}
		msg, err := lab.Fault(*dir, fs.Args())
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab fault: %s\n", quote.Terminal(err.Error()))
			return exitFailed
		}
		fmt.Fprintln(stdout, quote.Terminal(msg))
		return exitOK
	case "power-on", "power-off":
		msg, err := lab.Fault(*dir, append([]string{sub}, fs.Args()...))
		if err != nil {
			fmt.Fprintf(stderr, "rdggen: lab %s: %s\n", sub, quote.Terminal(err.Error()))
			return exitFailed
		}
		fmt.Fprintln(stdout, quote.Terminal(msg))
		return exitOK
	case "":
		fmt.Fprint(stderr, "rdggen: lab needs a command: up, status, fault, power-on, power-off or down\n\n"+usageLab)
		return exitUsage
	}
	fmt.Fprintf(stderr, "rdggen: unknown lab command %q (up, status, fault, power-on, power-off, down)\n", sub)
	return exitUsage
}

// parsedArgs is parsed for lab's commands; withArgs allows arguments after
// the flags (lab fault's FAULT).
func parsedArgs(fs *pflag.FlagSet, err error, stdout io.Writer, withArgs bool) (int, bool) {
	if withArgs && err == nil {
		return 0, true
	}
	return parsed(fs, err, stdout)
}

// printLab prints what a lab runs.
func printLab(w io.Writer, st *lab.State, dir string) {
	for _, e := range st.Endpoints {
		serves, isSwitch := e.Switch()
		switch {
		case e.Kind == "vcenter":
			fmt.Fprintf(w, "vCenter     %s  (%d ESXi hosts, %d VMs, GPUs and ConnectX SR-IOV from the inventory)\n", e.Addr, st.ESXi, st.VMs)
		case isSwitch:
			fmt.Fprintf(w, "switch      %s  %s\n", e.Name, serves)
		default:
			fmt.Fprintf(w, "%-11s %s  %s\n", e.Kind, e.Name, e.Addr)
		}
	}
	if st.Fabric != "" {
		fmt.Fprintf(w, "fabric      %s\n", st.Fabric)
	}
	for _, n := range st.NotSimulated {
		fmt.Fprintf(w, "not simulated: %s\n", n)
	}
}
