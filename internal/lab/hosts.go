package lab

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/rdggen/rdggen/internal/engines/hostapply"
	"github.com/rdggen/rdggen/internal/testing/fabricnet"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Environment variables DIR/env sets for the namespace hosts: the hosts
// target's file root and Docker commands (rdggen's --host-root,
// --docker-restart and --docker-validate), and ssh-agent's socket.
const (
	EnvHostRoot       = "RDGGEN_HOST_ROOT"
	EnvDockerRestart  = "RDGGEN_DOCKER_RESTART"
	EnvDockerValidate = "RDGGEN_DOCKER_VALIDATE"
	EnvAgent          = "SSH_AUTH_SOCK"
)

// FileAgent is the supervisor's SSH agent socket (mode 0600), holding the
// key the namespace hosts' sshd accept.
const FileAgent = "agent.sock"

// DirConfig is XDG_CONFIG_HOME in DIR/env with namespace hosts: apply
// --target workers keeps the cluster's worker SSH keys below it
// (rdggen/<cluster>), inside the lab.
const DirConfig = "config"

// FileHostsDirs lists the namespace hosts' directories (their keys, sshd
// configurations and file roots, dockerd's state), one per line: short
// paths /tmp/rdglab*, outside DIR, that lab down removes.
const FileHostsDirs = "hosts.dirs"

// removeHostsDirs removes the directories FileHostsDirs lists.
func removeHostsDirs(dir string) ([]string, error) {
	b, err := userfile.Read(filepath.Join(dir, FileHostsDirs), maxLabFile)
	if err != nil {
		return nil, nil
	}
	var gone []string
	var errs []error
	for _, d := range strings.Fields(string(b)) {
		if !strings.HasPrefix(d, "/tmp/rdglab") || strings.Contains(d, "..") {
			continue // not one the lab made
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, "directory "+d+" (the namespace hosts' files)")
	}
	return gone, errors.Join(errs...)
}

// hostsTB runs netnstest outside a test: Fatal and Skipf panic with a
// tbStop that buildHosts recovers; Cleanup's functions run at teardown.
type hostsTB struct {
	dir      string
	log      io.Writer
	mu       sync.Mutex
	cleanups []func()
}

type tbStop struct {
	msg  string
	skip bool
}

// stopped, deferred by a build that runs a harness through h, ends the
// build that one of h's Fatal or Skip calls stopped (a tbStop panic): it
// tears down what the build made, logs the message under what (serve.log),
// and gives fail the reason lab up prints — the message without "CI=true,
// but " and the harness's prefix, cut to its first line. Any other panic
// goes on.
func (h *hostsTB) stopped(what, prefix string, fail func(reason string)) {
	r := recover()
	if r == nil {
		return
	}
	stop, ok := r.(tbStop)
	if !ok {
		panic(r)
	}
	h.teardown()
	fmt.Fprintf(h.log, "%s: %s\n", what, stop.msg)
	fail(firstLine(strings.TrimPrefix(strings.TrimPrefix(stop.msg, "CI=true, but "), prefix)))
}

func (h *hostsTB) Helper()                      {}
func (h *hostsTB) Fatal(args ...any)            { panic(tbStop{msg: fmt.Sprint(args...)}) }
func (h *hostsTB) Fatalf(f string, args ...any) { panic(tbStop{msg: fmt.Sprintf(f, args...)}) }
func (h *hostsTB) Skipf(f string, args ...any) {
	panic(tbStop{msg: fmt.Sprintf(f, args...), skip: true})
}
func (h *hostsTB) Errorf(f string, args ...any) { fmt.Fprintf(h.log, "hosts: "+f+"\n", args...) }
func (h *hostsTB) Cleanup(f func())             { h.mu.Lock(); h.cleanups = append(h.cleanups, f); h.mu.Unlock() }
func (h *hostsTB) TempDir() string {
	// Short: dockerd's and containerd's sockets live below it, and a unix
	// socket's path has at most 104 bytes. Recorded in DIR before use, so
	// that lab down removes it even after a SIGKILL.
	d, err := os.MkdirTemp("/tmp", "rdglab")
	if err != nil {
		panic(tbStop{msg: err.Error()})
	}
	f, err := os.OpenFile(filepath.Join(h.dir, FileHostsDirs), os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		_, err = fmt.Fprintln(f, d)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = os.RemoveAll(d)
		panic(tbStop{msg: err.Error()})
	}
	return d
}

// teardown runs the cleanups, last first.
func (h *hostsTB) teardown() {
	h.mu.Lock()
	fs := h.cleanups
	h.cleanups = nil
	h.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// hosts are the lab's namespace hosts.
type hosts struct {
	tb      *hostsTB
	cluster *netnstest.Cluster
	agent   net.Listener
	// image is why the worker image could not be made ("" when it was).
	image string
}

// buildHosts makes every VM of inv a namespace host with its own sshd and
// dockerd (netnstest, Docker mode), cabled to one switch namespace. It
// returns nil and the reason when this machine cannot (not root, no sshd
// or dockerd, …): the reason is netnstest's.
func buildHosts(inv *inventory.Inventory, dir string, log io.Writer) (h *hosts, reason string) {
	if os.Geteuid() != 0 {
		return nil, fmt.Sprintf("the lab runs as uid %d, and namespace hosts need root (ip netns)", os.Geteuid())
	}
	tb := &hostsTB{dir: dir, log: log}
	defer tb.stopped("namespace hosts", "netnstest: ", func(why string) { h, reason = nil, why })
	netnstest.Require(tb)
	netnstest.RequireDocker(tb)
	// The worker image is built while the hosts and their dockerds start:
	// neither needs the other. A failed start waits for the build before
	// its teardown (deferred after tb.stopped, this runs first), so that
	// nothing is made after it.
	img := make(chan builtImage, 1)
	var building sync.WaitGroup
	building.Add(1)
	defer building.Wait()
	go func() { defer building.Done(); img <- buildWorkerImage(tb) }()
	c := netnstest.New(tb, netnstest.Options{Inventory: inv, Docker: true})
	h = &hosts{tb: tb, cluster: c}
	h.image = h.importWorkerImage(inv.Horovod.Image, <-img)
	return h, ""
}

// builtImage is buildWorkerImage's result: the image's root filesystem
// tar, or why it could not be made (the message of netnstest's Fatal).
type builtImage struct {
	tar  []byte
	fail string
}

// buildWorkerImage builds the worker image offline from this machine's
// own binaries (sh, OpenSSH, Open MPI and an MPI test program, as the
// tests build it: netnstest.WorkerImage). It runs beside netnstest.New, so
// a Fatal of tb (a tbStop panic) is recovered here and returned.
func buildWorkerImage(tb *hostsTB) (b builtImage) {
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(tbStop)
			if !ok {
				panic(r)
			}
			b = builtImage{fail: stop.msg}
		}
	}()
	prog := netnstest.BuildMPIProgram(tb)
	return builtImage{tar: netnstest.WorkerImage(tb, prog)}
}

// importWorkerImage imports the built worker image into every host's
// dockerd under the inventory's image name. It returns "" or why not (the
// build's failure or the import's).
func (h *hosts) importWorkerImage(name string, img builtImage) (why string) {
	failed := func(msg string) string {
		why = strings.TrimPrefix(strings.TrimPrefix(msg, "CI=true, but "), "netnstest: ")
		if first, _, more := strings.Cut(why, "\n"); more {
			why = first + " (the rest in serve.log)"
		}
		fmt.Fprintf(h.tb.log, "worker image: %s\n", msg)
		return why
	}
	if img.fail != "" {
		return failed(img.fail)
	}
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(tbStop)
			if !ok {
				panic(r)
			}
			why = failed(stop.msg)
		}
	}()
	h.cluster.ImportImage(name, img.tar)
	fmt.Fprintf(h.tb.log, "worker image %s: built from this machine's binaries, imported into every host's dockerd\n", name)
	return ""
}

// serveAgent serves an SSH agent holding the hosts' client key on path.
func (h *hosts) serveAgent(path string) error {
	b, err := os.ReadFile(h.cluster.Identity)
	if err != nil {
		return err
	}
	key, err := ssh.ParseRawPrivateKey(b)
	if err != nil {
		return err
	}
	ring := agent.NewKeyring()
	if err := ring.Add(agent.AddedKey{PrivateKey: key, Comment: "rdggen lab"}); err != nil {
		return err
	}
	_ = os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return err
	}
	h.agent = ln
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _ = agent.ServeAgent(ring, c) }()
		}
	}()
	return nil
}

// env are the hosts' lines of DIR/env.
func (h *hosts) env(q func(string) string, dir string) []string {
	c := h.cluster
	return []string{
		"export XDG_CONFIG_HOME=" + q(filepath.Join(dir, DirConfig)),
		"export " + EnvHostRoot + "=" + q(c.RootTemplate()),
		"export " + EnvDockerRestart + "=" + q(c.DockerRestartCommand()),
		"export " + EnvDockerValidate + "=" + q(c.DockerValidateCommand()),
	}
}

// knownHosts is the hosts' known_hosts lines.
func (h *hosts) knownHosts() ([]byte, error) { return os.ReadFile(h.cluster.KnownHosts) }

// mgmt maps each host's name to its management address.
func (h *hosts) mgmt() map[string]string {
	m := map[string]string{}
	for _, x := range h.cluster.Hosts {
		m[x.Name] = x.Mgmt.String()
	}
	return m
}

// namespaces lists the hosts' and the switch's network namespaces.
func (h *hosts) namespaces() []string {
	ns := []string{h.cluster.SwitchNS()}
	for _, x := range h.cluster.Hosts {
		ns = append(ns, x.NS)
	}
	return ns
}

func (h *hosts) close() {
	if h.agent != nil {
		h.agent.Close()
	}
	h.tb.teardown()
}

// hostsUnanswered is the NotSimulated line of a lab with namespace hosts:
// the checks of `check --target hosts` a namespace host cannot pass, and
// why (internal/engines/hostapply names them). Each is FAILED or COULD NOT
// TELL there, as on a VM without GPUs and RDMA devices; the networking
// checks (and, with several rails, every rail's link, routing, gateway and
// sysctls) pass. multiRail adds NCCL's topology file, which the hosts
// target writes from the guest's GPUs and the rails' VFs (docs/rails.md):
// without them apply notes that it cannot write it and check finds none.
func hostsUnanswered(multiRail bool) string {
	checks := []string{hostapply.CheckEFI, hostapply.CheckGPUs, hostapply.CheckDriver, hostapply.CheckPeermem, hostapply.CheckRuntime,
		hostapply.CheckRDMADevice, hostapply.CheckVerbs, hostapply.CheckPortState, hostapply.CheckGID}
	why := "the namespace hosts have no EFI firmware, GPUs, NVIDIA driver or container runtime, and no RDMA devices"
	if multiRail {
		checks = append(checks, hostapply.CheckTopology)
		why += "; NCCL's topology file is written from the guest's GPUs and rails' VFs, so apply --target hosts says it cannot write it"
	}
	return "check --target hosts: " + strings.Join(checks, ", ") + " (failed or could not tell): " + why
}

// removeOrphans removes the namespace clusters and fabrics a dead
// supervisor (pid) left behind, and the fabrics' files; it returns what it
// removed. A slot another process has taken since is not touched
// (netnstest.RemoveSlotsOf).
func removeOrphans(pid int) []string {
	slots, _ := netnstest.RemoveSlotsOf(pid, func(s int) { _ = os.RemoveAll(fabricnet.SlotDir(s)) })
	var gone []string
	for _, s := range slots {
		gone = append(gone, fmt.Sprintf("namespace hosts and fabric of slot %d (rdg%dh*, rdg%dsw, rdg%df*, rdgm%d)", s, s, s, s, s))
	}
	return gone
}
