package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// EnvKnownHosts is the variable DIR/env sets beyond govc's GOVC_* and the
// switch OSes' logins (switchos.Lab): the known_hosts file rdggen reads.
const EnvKnownHosts = "RDGGEN_KNOWN_HOSTS"

// ServeOptions shape Serve.
type ServeOptions struct {
	// Dir is the lab directory, Inventory the user's inventory file.
	Dir, Inventory string
	// Log receives the supervisor's lines (its log file).
	Log io.Writer
	// NoHosts leaves the namespace hosts out (UpOptions.NoHosts).
	NoHosts bool
}

// supervisor holds a running lab's simulators.
type supervisor struct {
	dir string
	inv *inventory.Inventory
	vc  *vcsimtest.Sim
	log io.Writer
	// switches are the simulated switches by name, each with its OS.
	switches map[string]labSwitch
	// hosts are the namespace hosts (nil without).
	hosts *hosts
	// fabric is the switches' data plane (nil without: fabricWhy says
	// why, "" for an inventory without a fabric).
	fabric    *labFabric
	fabricWhy string
	mu        sync.Mutex // serializes faults
	stop      chan struct{}
	once      sync.Once
}

// Serve runs the lab's supervisor until ctx ends, SIGTERM or SIGINT
// arrives, or a client sends "stop" on the control socket. When ctx ends
// while it starts (lab up interrupted sends SIGTERM), it stops after the
// stage under way (vCenter, the switches, the namespace hosts, the fabric)
// and tears down what it started. It records
// its PID, starts the simulators, writes the lab's files and State last.
// The directory must pass Up's check (the user's own, writable by no one
// else); each file is created anew (atomicfile.Create: never through a
// link, never over a file Up did not clear), lab.pid and lab.json through a
// temporary file renamed into place (atomicfile.Replace).
func Serve(ctx context.Context, o ServeOptions) error {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	syscall.Umask(0o077)
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	if err := checkDir(dir); err != nil {
		return err
	}
	if err := atomicfile.Replace(filepath.Join(dir, FilePID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	src, err := userfile.Read(o.Inventory, inventory.MaxFileSize)
	if err != nil {
		return fmt.Errorf("the inventory (-f): %w", err)
	}
	inv, err := inventory.Load(o.Inventory, src)
	if err != nil {
		return err
	}
	oses, err := switchos.Of(inv)
	if err != nil {
		return err
	}
	s := &supervisor{dir: dir, inv: inv, switches: map[string]labSwitch{}, log: log, stop: make(chan struct{})}
	defer s.close()
	// stopping is the error of a supervisor whose ctx ended while it
	// started: the deferred closes tear down what it started.
	stopping := func() error {
		if ctx.Err() != nil {
			fmt.Fprintln(log, "stopped while starting: tearing down what was started")
			return fmt.Errorf("stopped while starting: %w", ctx.Err())
		}
		return nil
	}

	st := &State{PID: os.Getpid(), Inventory: o.Inventory, ESXi: len(inv.ESXiHosts()), VMs: len(inv.Hosts)}
	fmt.Fprintf(log, "rdggen lab serve: pid %d, inventory %s\n", os.Getpid(), o.Inventory)
	s.vc, err = vcsimtest.New(inv, vcenterOptions(inv))
	if err != nil {
		return fmt.Errorf("vCenter simulator: %w", err)
	}
	st.Endpoints = append(st.Endpoints, Endpoint{Name: "vcenter", Kind: "vcenter", Addr: s.vc.URL.String()})
	fmt.Fprintf(log, "vCenter %s: %d ESXi host(s), %d VM(s)\n", s.vc.URL, st.ESXi, st.VMs)

	// Each switch OS's simulator (switchos.Lab), one password per OS; the
	// env file logs in to every OS rdggen has, whether the cluster runs it
	// or not.
	passwords, cas := map[inventory.SwitchOS]string{}, map[inventory.SwitchOS]*bytes.Buffer{}
	for _, os := range switchos.All() {
		passwords[os.OS], cas[os.OS] = secret(), &bytes.Buffer{}
	}
	var knownHosts bytes.Buffer
	mgmt := map[string]string{}
	for _, sw := range inv.Switches {
		os := oses[slices.IndexFunc(oses, func(r switchos.OS) bool { return r.OS == sw.OS() })]
		srv, err := os.Lab.Start(sw, os.Lab.User, passwords[os.OS])
		if err != nil {
			return fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		s.switches[sw.Name] = labSwitch{srv, os}
		mgmt[sw.Name] = srv.Addr()
		if l := srv.KnownHosts(); l != "" {
			knownHosts.WriteString(l + "\n")
		}
		cas[os.OS].Write(srv.CA())
		st.Endpoints = append(st.Endpoints, Endpoint{Name: sw.Name, Kind: sw.OS().String(), Addr: srv.Addr()})
		fmt.Fprintln(log, os.Lab.Log(sw, srv.Addr()))
	}
	if err := stopping(); err != nil {
		return err
	}
	var hs *hosts
	why := "lab up --no-hosts"
	if !o.NoHosts {
		fmt.Fprintln(log, "namespace hosts: building")
		hs, why = buildHosts(inv, dir, log)
	}
	if hs != nil {
		s.hosts = hs
		defer hs.close()
		if err := hs.serveAgent(filepath.Join(dir, FileAgent)); err != nil {
			return err
		}
		kh, err := hs.knownHosts()
		if err != nil {
			return err
		}
		knownHosts.Write(kh)
		for name, addr := range hs.mgmt() {
			mgmt[name] = addr
		}
		for _, x := range hs.cluster.Hosts {
			st.Endpoints = append(st.Endpoints, Endpoint{Name: x.Name, Kind: "host", Addr: net.JoinHostPort(x.Mgmt.String(), "22")})
			fmt.Fprintf(log, "host %s: namespace %s, sshd on %s, dockerd\n", x.Name, x.NS, x.Mgmt)
		}
		st.Namespaces = hs.namespaces()
		st.NotSimulated = []string{hostsUnanswered(inv.MultiRail()), "run and bench: the namespace hosts have no GPUs and no RDMA devices (GID tables) for the job and the benchmarks"}
		if hs.image != "" {
			st.NotSimulated = append([]string{"target workers: no worker image " + inv.Horovod.Image + " (it is built from this machine's Open MPI and sshd): " + hs.image}, st.NotSimulated...)
		}
	} else {
		st.NotSimulated = []string{"targets hosts, workers (the VMs' operating systems and containers): " + why +
			"; use --target esxi,switch"}
	}

	if err := stopping(); err != nil {
		return err
	}
	servers := map[string]any{}
	for name, sw := range s.switches {
		servers[name] = sw.Server()
	}
	fb, why := buildFabric(inv, dir, log, hs, servers)
	switch {
	case fb != nil:
		s.fabric = fb
		defer fb.close()
		st.Namespaces = append(st.Namespaces, fb.namespaces()...)
		st.Fabric = fabricSummary
		st.NotSimulated = append(st.NotSimulated, fabricUnanswered...)
	case why != "":
		s.fabricWhy = why
		st.NotSimulated = append(st.NotSimulated, fabricNotRehearsed(why))
	}

	if err := stopping(); err != nil {
		return err
	}
	lab, err := Rewrite(src, s.vc.URL.String(), mgmt, o.Inventory)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(s.vc.CAFile)
	if err != nil {
		return err
	}
	path := func(f string) string { return filepath.Join(dir, f) }
	env := []string{
		"# rdggen lab (rdggen lab up -f " + o.Inventory + "): . this file, then rdggen apply|check -f " + path(FileInventory),
		"export GOVC_URL=" + quote.Sh(s.vc.URL.String()),
		"export GOVC_USERNAME=" + quote.Sh(vcsimtest.Username),
		"export GOVC_PASSWORD=" + quote.Sh(vcsimtest.Password),
		"export GOVC_TLS_CA_CERTS=" + quote.Sh(path(FileVCenterCA)),
	}
	for _, os := range switchos.All() {
		env = append(env, "export "+os.Lab.UserVar+"="+quote.Sh(os.Lab.User), "export "+os.Lab.PasswordVar+"="+passwords[os.OS])
	}
	env = append(env, "export "+EnvKnownHosts+"="+quote.Sh(path(FileKnownHosts)))
	write := map[string][]byte{FileInventory: lab, FileKnownHosts: knownHosts.Bytes(), FileVCenterCA: ca}
	for _, os := range switchos.All() {
		if os.Lab.CAFile != "" {
			env = append(env, "export "+os.Lab.CAVar+"="+quote.Sh(path(os.Lab.CAFile)))
			write[os.Lab.CAFile] = cas[os.OS].Bytes()
		}
	}
	env = append(env, "export XDG_CACHE_HOME="+quote.Sh(path(DirCache))+" # apply's record of the lab's VMs stays in the lab")
	if hs != nil {
		env = append(env, "export "+EnvAgent+"="+quote.Sh(path(FileAgent)))
		env = append(env, hs.env(quote.Sh, dir)...)
	}
	write[FileEnv] = []byte(strings.Join(env, "\n") + "\n")
	for name, data := range write {
		if err := atomicfile.Create(path(name), data, 0o600); err != nil {
			return err
		}
	}

	sock := path(FileSocket)
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := os.Chmod(sock, 0o600); err != nil {
		return err
	}
	go s.control(ln)

	if err := st.probe(); err != nil {
		return err
	}
	st.Started = time.Now().UTC().Truncate(time.Second)
	b, _ := json.MarshalIndent(st, "", "  ")
	if err := atomicfile.Replace(path(FileState), append(b, '\n'), 0o600); err != nil {
		return err
	}
	fmt.Fprintln(log, "ready")

	sig := make(chan os.Signal, 1)
	notify(sig)
	select {
	case <-ctx.Done():
	case v := <-sig:
		fmt.Fprintf(log, "%v: stopping\n", v)
	case <-s.stop:
		fmt.Fprintln(log, "stop: stopping")
	}
	return nil
}

func (s *supervisor) close() {
	for _, sw := range s.switches {
		sw.Close()
	}
	if s.vc != nil {
		s.vc.Close()
	}
	_ = os.Remove(filepath.Join(s.dir, FileSocket))
}

// secret is a random password of 24 hex digits.
func secret() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// control serves the control socket: one request line (fields separated
// by tabs) per connection, one answer line ("ok: …" or "error: …").
func (s *supervisor) control(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			line, err := bufio.NewReader(io.LimitReader(c, 4096)).ReadString('\n')
			if err != nil {
				return
			}
			args := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
			s.mu.Lock()
			msg, err := s.fault(args)
			s.mu.Unlock()
			if err != nil {
				fmt.Fprintf(s.log, "fault %s: %v\n", strings.Join(args, " "), err)
				fmt.Fprintf(c, "error: %s\n", oneLine(err.Error()))
				return
			}
			fmt.Fprintf(s.log, "fault %s: %s\n", strings.Join(args, " "), msg)
			fmt.Fprintf(c, "ok: %s\n", oneLine(msg))
		}()
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

var errUsage = errors.New("faults: " + FaultShapes + " | power-on|power-off [VM...] | stop")

// labSwitch is a simulated switch of the lab, with its OS.
type labSwitch struct {
	switchos.LabSwitch
	os switchos.OS
}
