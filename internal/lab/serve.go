package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// Users of the simulated switches (the passwords are random per lab, in
// DIR/env).
const (
	ONYXUser = "admin"
	NVUEUser = "cumulus"
)

// Environment variables DIR/env sets beyond govc's GOVC_*: the ones rdggen
// reads for the switches' logins, known_hosts and the NVUE CA.
const (
	EnvSwitchUser     = "RDGGEN_SWITCH_USER"
	EnvSwitchPassword = "RDGGEN_SWITCH_PASSWORD"
	EnvNVUEUser       = "RDGGEN_NVUE_USER"
	EnvNVUEPassword   = "RDGGEN_NVUE_PASSWORD"
	EnvKnownHosts     = "RDGGEN_KNOWN_HOSTS"
	EnvNVUECA         = "RDGGEN_NVUE_CA"
)

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
	dir  string
	inv  *inventory.Inventory
	vc   *vcsimtest.Sim
	onyx map[string]*onyxsim.Server
	nvue map[string]*nvuesim.Server
	log  io.Writer
	// nvuePW is the Cumulus switches' NVUE password.
	nvuePW string
	// hosts are the namespace hosts (nil without).
	hosts *hosts
	mu    sync.Mutex // serializes faults
	stop  chan struct{}
	once  sync.Once
}

// Serve runs the lab's supervisor until ctx ends, SIGTERM or SIGINT
// arrives, or a client sends "stop" on the control socket. It records
// its PID, starts the simulators, writes the lab's files and State last.
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
	if err := os.WriteFile(filepath.Join(dir, FilePID), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	src, err := os.ReadFile(o.Inventory)
	if err != nil {
		return err
	}
	inv, err := inventory.Load(o.Inventory, src)
	if err != nil {
		return err
	}
	s := &supervisor{dir: dir, inv: inv, onyx: map[string]*onyxsim.Server{}, nvue: map[string]*nvuesim.Server{},
		log: log, stop: make(chan struct{})}
	defer s.close()

	st := &State{PID: os.Getpid(), Inventory: o.Inventory, ESXi: len(inv.ESXiHosts()), VMs: len(inv.Hosts)}
	fmt.Fprintf(log, "rdggen lab serve: pid %d, inventory %s\n", os.Getpid(), o.Inventory)
	s.vc, err = vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		return fmt.Errorf("vCenter simulator: %w", err)
	}
	st.Endpoints = append(st.Endpoints, Endpoint{Name: "vcenter", Kind: "vcenter", Addr: s.vc.URL.String()})
	fmt.Fprintf(log, "vCenter %s: %d ESXi host(s), %d VM(s)\n", s.vc.URL, st.ESXi, st.VMs)

	onyxPW, nvuePW := secret(), secret()
	s.nvuePW = nvuePW
	var knownHosts, nvueCA bytes.Buffer
	mgmt := map[string]string{}
	for _, sw := range inv.Switches {
		if sw.OS() == inventory.OSCumulus {
			srv := nvuesim.New(nvuesim.Options{Hostname: sw.Name, Ports: sw.Ports, Version: sw.Cumulus.String(),
				User: NVUEUser, Password: nvuePW})
			s.nvue[sw.Name] = srv
			mgmt[sw.Name] = srv.Addr
			_ = pem.Encode(&nvueCA, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
			st.Endpoints = append(st.Endpoints, Endpoint{Name: sw.Name, Kind: inventory.OSCumulus.String(), Addr: srv.Addr})
			fmt.Fprintf(log, "switch %s: NVUE API (Cumulus Linux %s) on https://%s\n", sw.Name, sw.Cumulus, srv.Addr)
			continue
		}
		srv, err := onyxsim.New(onyxsim.Options{Hostname: sw.Name, Ports: sw.Ports, Version: sw.ONYX.String(),
			User: ONYXUser, Password: onyxPW})
		if err != nil {
			return fmt.Errorf("switch %s: %w", sw.Name, err)
		}
		s.onyx[sw.Name] = srv
		mgmt[sw.Name] = srv.Addr
		knownHosts.WriteString(srv.KnownHostsLine() + "\n")
		st.Endpoints = append(st.Endpoints, Endpoint{Name: sw.Name, Kind: inventory.OSONYX.String(), Addr: srv.Addr})
		fmt.Fprintf(log, "switch %s: ONYX %s CLI over SSH on %s\n", sw.Name, sw.ONYX, srv.Addr)
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
		st.NotSimulated = []string{"run and bench: the namespace hosts have no GPUs and no RDMA devices (GID tables) for the job and the benchmarks"}
		if hs.image != "" {
			st.NotSimulated = append([]string{"target workers: no worker image " + inv.Horovod.Image + " (it is built from this machine's Open MPI and sshd): " + hs.image}, st.NotSimulated...)
		}
	} else {
		st.NotSimulated = []string{"targets hosts, workers (the VMs' operating systems and containers): " + why +
			"; use --target esxi,switch"}
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
		"export " + EnvSwitchUser + "=" + ONYXUser,
		"export " + EnvSwitchPassword + "=" + onyxPW,
		"export " + EnvNVUEUser + "=" + NVUEUser,
		"export " + EnvNVUEPassword + "=" + nvuePW,
		"export " + EnvKnownHosts + "=" + quote.Sh(path(FileKnownHosts)),
		"export " + EnvNVUECA + "=" + quote.Sh(path(FileNVUECA)),
		"export XDG_CACHE_HOME=" + quote.Sh(path(DirCache)) + " # apply's record of the lab's VMs stays in the lab",
	}
	if hs != nil {
		env = append(env, "export "+EnvAgent+"="+quote.Sh(path(FileAgent)))
		env = append(env, hs.env(quote.Sh, dir)...)
	}
	for name, data := range map[string][]byte{
		FileInventory: lab, FileKnownHosts: knownHosts.Bytes(), FileNVUECA: nvueCA.Bytes(),
		FileVCenterCA: ca, FileEnv: []byte(strings.Join(env, "\n") + "\n"),
	} {
		if err := os.WriteFile(path(name), data, 0o600); err != nil {
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
	tmp := path(FileState) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path(FileState)); err != nil {
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
	for _, srv := range s.onyx {
		srv.Close()
	}
	for _, srv := range s.nvue {
		srv.Close()
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

var errUsage = errors.New("faults: hide-gpu VM | mtu HOST|SWITCH:PORT N | lose-answer SWITCH | power-on|power-off [VM...] | stop")
