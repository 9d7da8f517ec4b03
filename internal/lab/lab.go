// Package lab runs a stand-in for every machine an inventory names on this
// machine, for rehearsing `rdggen apply`, `check`, `bench` and `run` without
// hardware (docs/lab.md): vCenter with the inventory's ESXi hosts, GPUs,
// ConnectX PFs and VMs (govmomi's simulator as internal/testing/vcsimtest
// extends it), and each switch (pkg/sim/onyxsim over SSH, or
// pkg/sim/nvuesim over HTTPS), all on 127.0.0.1.
//
// A lab lives in a directory DIR. Up starts a supervisor process (the
// caller's executable re-run as `rdggen lab serve`, in its own session) that
// holds the simulators in memory, and waits until everything answers. The
// supervisor writes DIR/lab.yaml (the user's inventory with every management
// address and vcenter pointing at its stand-in), DIR/known_hosts,
// DIR/nvue-ca.pem, DIR/vcenter-ca.pem and DIR/env (the variables rdggen
// reads), then DIR/lab.json (State) last, when it is ready. Down stops the
// supervisor by the PID recorded in DIR/lab.pid and deletes the files; a lab
// whose `up` was killed half-way is cleaned up by the next Down or Up.
// Faults are sent to the supervisor over DIR/control.sock (mode 0600).
// Up and Down hold DIR/lab.lock while they work (one at a time per
// directory) and refuse a directory that is not the user's own.
//
// The simulators' state (what apply configured) lives in the supervisor's
// memory only: it is gone with `lab down`.
package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/ownfs"
	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// The files of a lab directory.
const (
	// FileInventory is the user's inventory pointed at the stand-ins.
	FileInventory = "lab.yaml"
	// FileKnownHosts holds the SSH host keys of the simulated ONYX switches.
	FileKnownHosts = "known_hosts"
	// FileVCenterCA is the simulated vCenter's certificate (PEM).
	FileVCenterCA = "vcenter-ca.pem"
	// FileEnv is a POSIX sh file of export lines (mode 0600).
	FileEnv = "env"
	// FileState is State as JSON, written when the lab is ready.
	FileState = "lab.json"
	// FilePID holds the supervisor's process ID.
	FilePID = "lab.pid"
	// FileLog is the supervisor's standard output and error.
	FileLog = "serve.log"
	// FileSocket is the supervisor's control socket (mode 0600).
	FileSocket = "control.sock"
	// DirTemp is the supervisor's TMPDIR (the vCenter simulator's files), so
	// that a supervisor killed with SIGKILL leaves nothing outside DIR.
	DirTemp = "tmp"
	// DirCache is the env file's XDG_CACHE_HOME: apply --target esxi keeps
	// its record of the lab's VMs (rdggen/esxi-<vCenter uuid>.json) below
	// it, inside the lab, and lab down removes it.
	DirCache = "cache"
	// FileLock is the lab's lock and its mark: Up and Down hold an
	// exclusive flock(2) on it while they work (one lab up or down per
	// directory at a time), and a directory that holds it is a lab's (Down
	// removes the lab's files only from such a directory). Down removes it
	// last.
	FileLock = "lab.lock"
)

// ErrBusy is the error of Up and Down when another lab up or lab down holds
// the directory's lock.
var ErrBusy = errors.New("another rdggen lab up or lab down is under way")

// Interrupted is Up's error when its context ends (the CLI's SIGINT or
// SIGTERM) before the lab is ready: Up stopped where it was and removed
// what it had started and made, as Down does.
type Interrupted struct {
	// Cause is the context's error (context.Canceled).
	Cause error
	// Removed is what Up removed, one line each as Down returns them: the
	// supervisor (which stops its simulators, namespace hosts, dockerds
	// and the fabric's daemons and deletes their namespaces), the files
	// and directories it made. Empty when it had made nothing yet.
	Removed []string
	// Err is what could not be removed (nil: everything was).
	Err error
}

func (e *Interrupted) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("lab up interrupted (%v) before the lab was ready; removing what it had started failed: %v", e.Cause, e.Err)
	}
	return fmt.Sprintf("lab up interrupted (%v) before the lab was ready; what it had started and made is removed", e.Cause)
}

func (e *Interrupted) Unwrap() error { return e.Cause }

// files are every file a lab writes into its directory, in the order Down
// removes them: the switch OSes' CA files (switchos.Lab.CAFile, e.g. the
// simulated NVUE APIs' certificates, nvue-ca.pem) after known_hosts.
func files() []string {
	out := []string{FileState, FileInventory, FileKnownHosts}
	for _, os := range switchos.All() {
		if os.Lab.CAFile != "" {
			out = append(out, os.Lab.CAFile)
		}
	}
	return append(out, FileVCenterCA, FileEnv, FileSocket, FileAgent, FileHostsDirs, FileLog, FilePID)
}

// Endpoint is one simulated machine.
type Endpoint struct {
	// Name is the inventory's name (switch, ESXi host or VM).
	Name string `json:"name"`
	// Kind is "vcenter", "host", or a switch's OS (inventory.SwitchOS:
	// "onyx", "cumulus").
	Kind string `json:"kind"`
	// Addr is where it answers, 127.0.0.1:PORT (a URL for vCenter).
	Addr string `json:"addr"`
}

// Switch is what the endpoint serves when it is a simulated switch: its
// OS's words, "ONYX CLI over SSH on 127.0.0.1:2201" (switchos.Lab.Serves);
// false for vCenter and the hosts.
func (e Endpoint) Switch() (string, bool) {
	os, ok := switchos.For(inventory.SwitchOS(e.Kind))
	if !ok {
		return "", false
	}
	return os.Lab.Serves(e.Addr), true
}

// State is a ready lab, as DIR/lab.json records it.
type State struct {
	// PID is the supervisor's process ID.
	PID int `json:"pid"`
	// Inventory is the user's inventory file (absolute).
	Inventory string `json:"inventory"`
	// Started is when the supervisor was ready (UTC).
	Started time.Time `json:"started"`
	// Endpoints are vCenter, then the switches in inventory order.
	Endpoints []Endpoint `json:"endpoints"`
	// ESXi and VMs count the simulated ESXi hosts and VMs (inside vCenter).
	ESXi int `json:"esxi"`
	VMs  int `json:"vms"`
	// NotSimulated says, one line each, which targets have no stand-in and why.
	NotSimulated []string `json:"not_simulated,omitempty"`
	// Namespaces are the network namespaces the lab created: the namespace
	// hosts' and their switch's, then the fabric's switches'.
	Namespaces []string `json:"namespaces,omitempty"`
	// Fabric says what runs behind the switches when the lab runs the
	// inventory's fabric ("" when it does not).
	Fabric string `json:"fabric,omitempty"`
}

// UpOptions shape Up.
type UpOptions struct {
	// Inventory is the user's inventory file; Dir the lab directory
	// (created with mode 0700 when missing).
	Inventory, Dir string
	// Exe is the rdggen executable the supervisor runs as (`Exe lab serve
	// --dir DIR -f INVENTORY`); Env its environment.
	Exe string
	Env []string
	// Timeout bounds the wait for the supervisor to be ready (default 3m:
	// a dockerd per namespace host starts in a few seconds each).
	Timeout time.Duration
	// Log receives progress lines (may be nil).
	Log io.Writer
	// NoHosts leaves the namespace hosts out even as root (vCenter and the
	// switches only, as without root).
	NoHosts bool
}

// Up cleans up whatever a previous lab left in o.Dir, starts the
// supervisor and waits until it is ready and every endpoint answers.
//
// When ctx ends before the lab is ready, Up stops where it is and removes
// what it started and made, as Down does (the supervisor's process group
// is sent SIGTERM and waited for, the files are removed, and the
// directories Up made, when empty): the error is an *Interrupted that says
// what went. A directory that existed before is kept, with what it held.
//
// One lab per directory: Up holds the directory's lock (FileLock) from
// before it changes anything in the directory until the lab is ready or
// removed again, and fails at once (ErrBusy, having changed nothing) when
// another lab up or lab down holds it. A lab up that comes after a ready lab
// replaces it (its supervisor is stopped first).
//
// The directory must be the user's own and writable by no one else (the
// rule of internal/ownfs; docs/lab.md promises a directory of mode 0700 and
// files of mode 0600): anyone else able to write it could plant symbolic
// links for root's lab to write the switches' passwords through, or read
// them. Every directory above it must be root's or the user's and writable
// by no one else unless sticky (ownfs.CheckAncestors): anyone else able to
// write one could move the lab directory away and put their own in its
// place, whose vcenter-ca.pem and known_hosts the env file would trust.
// Such a directory is refused before anything is written or started,
// and so is a directory that is not a lab's (no FileLock, no FilePID) and
// holds something at one of the lab's names. The lab's files are created
// anew (O_CREAT|O_EXCL|O_NOFOLLOW, or a temporary file renamed into place),
// after whatever a previous lab left at their names is removed: nothing is
// written through a link.
func Up(ctx context.Context, o UpOptions) (*State, error) {
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	inv, err := filepath.Abs(o.Inventory)
	if err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &Interrupted{Cause: err}
	}
	made := missing(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil { // made meanwhile by someone else
		return nil, err
	}
	if !isLab(dir) {
		if taken := labNames(dir); len(taken) > 0 {
			return nil, fmt.Errorf("%s holds %s, a lab file's name, and no lab ran there (no %s): lab up neither replaces nor removes what is not a lab's; move it away, or give another --dir",
				dir, strings.Join(taken, ", "), FileLock)
		}
	}
	lk, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	gone, err := down(dir, false, nil)
	if err != nil {
		return nil, fmt.Errorf("cleaning up the previous lab in %s: %w", dir, err)
	}
	for _, g := range gone {
		fmt.Fprintf(logw, "cleaned up a previous lab: %s\n", g)
	}
	fail := func(err error) (*State, error) {
		gone, derr := down(dir, true, made)
		if ctx.Err() != nil {
			return nil, &Interrupted{Cause: ctx.Err(), Removed: gone, Err: derr}
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	logf, err := atomicfile.New(filepath.Join(dir, FileLog), 0o600)
	if err != nil {
		return fail(err)
	}
	defer logf.Close()
	if err := os.Mkdir(filepath.Join(dir, DirTemp), 0o700); err != nil {
		return fail(err)
	}
	args := []string{"lab", "serve", "--dir", dir, "-f", inv}
	if o.NoHosts {
		args = append(args, "--no-hosts")
	}
	cmd := exec.Command(o.Exe, args...)
	cmd.Env = append(append([]string(nil), o.Env...), "TMPDIR="+filepath.Join(dir, DirTemp))
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("starting the supervisor: %w", err))
	}
	if err := atomicfile.Replace(filepath.Join(dir, FilePID), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		return fail(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(o.Timeout)
	for {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if st, err := ReadState(dir); err == nil && st.PID == cmd.Process.Pid {
			if err := st.probe(); err != nil {
				return fail(err)
			}
			return st, nil
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case err := <-exited:
			msg := tail(filepath.Join(dir, FileLog))
			return fail(fmt.Errorf("the supervisor exited (%v) before the lab was ready:\n%s", err, msg))
		case <-deadline:
			msg := tail(filepath.Join(dir, FileLog))
			return fail(fmt.Errorf("the lab was not ready within %s:\n%s", o.Timeout, msg))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe checks that every endpoint accepts a TCP connection.
func (s *State) probe() error {
	for _, e := range s.Endpoints {
		addr := e.Addr
		if i := strings.Index(addr, "://"); i >= 0 {
			addr = strings.SplitN(addr[i+3:], "/", 2)[0]
		}
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return fmt.Errorf("%s %s does not answer: %w", e.Kind, e.Name, err)
		}
		c.Close()
	}
	return nil
}

// maxLabFile bounds what the lab reads of its own files (lab.json,
// lab.pid, hosts.dirs, the log's tail): 16 MiB, far above what it writes
// (a State of 4,096 hosts is about 400 KB).
const maxLabFile = 16 << 20

// ReadState reads DIR/lab.json (userfile.Read: a regular file, never
// waited on).
func ReadState(dir string) (*State, error) {
	b, err := userfile.Read(filepath.Join(dir, FileState), maxLabFile)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileState), err)
	}
	return &s, nil
}

// Status is what `lab status` shows: the state (nil when the lab never
// became ready), whether the supervisor runs, and the lab's files present.
type Status struct {
	State *State
	// PID is the recorded supervisor (0: none); Running whether it is alive
	// and is this lab's supervisor.
	PID     int
	Running bool
	// Files are the lab's files and directories present in the directory,
	// in the order Down removes them: files(), DirConfig, DirCache,
	// DirTemp, then FileLock.
	Files []string
}

// ReadStatus inspects dir without changing anything.
func ReadStatus(dir string) (*Status, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	st := &Status{PID: readPID(dir)}
	st.State, _ = ReadState(dir)
	if st.PID > 0 {
		st.Running = isSupervisor(st.PID, dir)
	}
	st.Files = labNames(dir)
	if exists(filepath.Join(dir, FileLock)) {
		st.Files = append(st.Files, FileLock)
	}
	return st, nil
}

// Down stops the lab's supervisor (SIGTERM to its process group, SIGKILL
// after 30 s), deletes its files and, when it is then empty, the directory.
// It returns what it removed, one line each. A directory without a lab (no
// FileLock, no FilePID) is not an error: nothing is removed. A directory
// whose lock another lab up or lab down holds is refused (ErrBusy).
//
// A directory Up's rule refuses (not the user's own, or below a directory
// another user could move it out of: checkDir) is left untouched: nothing
// in it is read, and no file is removed through a path someone else may
// have redirected. The lab's supervisor is stopped all the same when it
// can be told safely, without the directory: a process of the user's own
// (its effective uid) that leads its own session and whose command line
// is `lab serve --dir DIR` (supervisorsOf). The error then says which
// process was stopped and where its directory is now (the supervisor's
// working directory, which follows the directory when it is renamed), so
// that the user removes the files there.
func Down(dir string) ([]string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return stopRefused(dir, err)
	}
	if !isLab(dir) {
		return nil, nil
	}
	lk, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	return down(dir, true, []string{dir})
}

// stopRefused is Down for a directory checkDir refused (refused): the
// supervisors of dir that supervisorsOf finds are stopped, nothing in dir
// is touched. With no supervisor found the error is refused alone.
func stopRefused(dir string, refused error) ([]string, error) {
	var gone, where []string
	var errs []error
	for _, pid := range supervisorsOf(dir) {
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		if err := stopSupervisor(pid); err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, fmt.Sprintf("process %d (rdggen lab serve --dir %s, found by its command line; with it its simulators, namespaces and daemons)", pid, dir))
		gone = append(gone, removeOrphans(pid)...)
		if cwd != "" && !slices.Contains(where, cwd) {
			where = append(where, cwd)
		}
	}
	if len(gone) == 0 && len(errs) == 0 {
		return nil, refused
	}
	msg := "the lab's supervisor was stopped all the same, but no file was removed"
	if len(where) > 0 {
		msg += fmt.Sprintf(": its directory was %s when it stopped (lab up made it, mode 0700); check that it is, then remove it yourself (rm -r)", strings.Join(where, ", "))
	}
	return gone, errors.Join(append([]error{fmt.Errorf("%w; %s", refused, msg)}, errs...)...)
}

// supervisorsOf finds, without reading dir, the lab supervisors of dir
// that may be stopped safely: processes of the user running rdggen (their
// effective uid, /proc/PID/status), each leading its own session (lab up
// starts it with setsid, so that SIGTERM to its process group reaches
// what it started and nothing else), whose command line is `lab serve
// --dir DIR` (isSupervisor). Another user's process is never one.
func supervisorsOf(dir string) []int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || !isSupervisor(pid, dir) {
			continue
		}
		status, err := os.ReadFile(p + "/status")
		if err != nil {
			continue
		}
		euid := -1
		for _, l := range strings.Split(string(status), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "Uid:" {
				euid, _ = strconv.Atoi(f[2])
			}
		}
		if euid != os.Geteuid() {
			continue
		}
		if sid, err := unix.Getsid(pid); err != nil || sid != pid {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// stopSupervisor sends SIGTERM to the supervisor's process group and waits
// until it is gone (SIGKILL after 30 s).
func stopSupervisor(pid int) error {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	// 30 s: stopping every host's dockerd and sshd and deleting the
	// namespaces and the fabric's daemons takes a few seconds, more on
	// a busy machine; a supervisor killed halfway leaves its slot to
	// removeOrphans.
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		for i := 0; alive(pid) && i < 100; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if alive(pid) {
		return fmt.Errorf("the supervisor (pid %d) does not stop", pid)
	}
	return nil
}

// missing lists dir and the directories above it that do not exist,
// deepest first: those os.MkdirAll(dir) makes.
func missing(dir string) []string {
	var out []string
	for d := dir; !exists(d) && d != filepath.Dir(d); d = filepath.Dir(d) {
		out = append(out, d)
	}
	return out
}

// down is Down under the lock: the supervisor stopped and the lab's files
// removed; with all, the lock file too, then each of dirs (deepest first)
// that is empty: Down's directory, or those Up made.
func down(dir string, all bool, dirs []string) ([]string, error) {
	var gone []string
	if pid := readPID(dir); pid > 0 && isSupervisor(pid, dir) {
		if err := stopSupervisor(pid); err != nil {
			return gone, err
		}
		gone = append(gone, fmt.Sprintf("process %d (rdggen lab serve)", pid))
	}
	// The namespace hosts of a supervisor that died without tearing them
	// down (SIGKILL); never those of a live process that reuses its PID.
	if pid := readPID(dir); pid > 0 && !alive(pid) {
		gone = append(gone, removeOrphans(pid)...)
	}
	hd, err := removeHostsDirs(dir)
	gone = append(gone, hd...)
	errs := []error{err}
	for _, f := range files() {
		p := filepath.Join(dir, f)
		if err := os.Remove(p); err == nil {
			gone = append(gone, "file "+p)
		} else if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if cfg := filepath.Join(dir, DirConfig); exists(cfg) {
		if err := os.RemoveAll(cfg); err != nil {
			errs = append(errs, err)
		} else {
			gone = append(gone, "directory "+cfg+" (the worker SSH keys)")
		}
	}
	if c := filepath.Join(dir, DirCache); exists(c) {
		if err := os.RemoveAll(c); err != nil {
			errs = append(errs, err)
		} else {
			gone = append(gone, "directory "+c+" (apply's record of the lab's VMs)")
		}
	}
	if tmp := filepath.Join(dir, DirTemp); exists(tmp) {
		if err := os.RemoveAll(tmp); err != nil {
			errs = append(errs, err)
		} else {
			gone = append(gone, "directory "+tmp+" (the simulators' temporary files)")
		}
	}
	if !all {
		return gone, errors.Join(errs...)
	}
	// The lock file goes while it is held: a lab up that opened it before
	// sees, once it has the lock, that it is no longer the directory's
	// (lock), and starts over.
	if err := os.Remove(filepath.Join(dir, FileLock)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, d := range dirs {
		if err := os.Remove(d); err == nil {
			gone = append(gone, "directory "+d)
		}
	}
	return gone, errors.Join(errs...)
}

// checkDir refuses a lab directory that is not the user's own (ownfs.CheckDir:
// a symbolic link, not a directory, another user's, or writable by its group
// or others), or one below a directory that would let another user move it
// away and put their own in its place (ownfs.CheckAncestors: a directory
// above it of another user than root and the caller, or writable by its
// group or others without the sticky bit). A missing directory is fine (Up
// makes it, mode 0700).
func checkDir(dir string) error {
	err := ownfs.CheckDir(dir)
	var e *ownfs.Error
	if errors.As(err, &e) {
		return fmt.Errorf("lab directory %w: the lab writes the switches' passwords and its keys there, as the user running it, so the directory must be yours and writable by no one else (mode 0700 when lab up makes it); give another --dir", e)
	}
	if err != nil {
		return err
	}
	err = ownfs.CheckAncestors(dir)
	if errors.As(err, &e) {
		return fmt.Errorf("lab directory %s refused: %w: someone else could move the lab directory away and put their own in its place, whose %s and %s the lab's %s file would then trust; %s; give another --dir",
			dir, e, FileVCenterCA, FileKnownHosts, FileEnv, ownfs.AncestorRule)
	}
	return err
}

// isLab reports whether dir holds a lab's mark: its lock file, or the PID
// file every lab writes (a lab of an rdggen before the lock).
func isLab(dir string) bool {
	return exists(filepath.Join(dir, FileLock)) || exists(filepath.Join(dir, FilePID))
}

// labNames lists what dir holds at the names of the lab's files and
// directories.
func labNames(dir string) []string {
	var taken []string
	for _, f := range append(files(), DirConfig, DirCache, DirTemp) {
		if exists(filepath.Join(dir, f)) {
			taken = append(taken, f)
		}
	}
	return taken
}

// lock takes the lab's lock, without waiting: an exclusive flock(2) on
// DIR/FileLock (made when missing: a regular file of the user's own, never
// through a link), held until the returned file is closed; the kernel
// releases it when the holder exits, even by SIGKILL (flock(2)). The
// supervisor does not inherit it (Go opens files close-on-exec). ErrBusy
// when another holds it.
func lock(dir string) (*os.File, error) {
	p := filepath.Join(dir, FileLock)
	for range 10 {
		f, err := os.OpenFile(p, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link: not a lab's lock", p)
		}
		if errors.Is(err, os.ErrNotExist) { // the directory itself is gone
			return nil, fmt.Errorf("%w in %s (it removed the directory meanwhile)", ErrBusy, dir)
		}
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		if err == nil {
			err = ownfs.Check(p, fi, false)
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w in %s (%s is locked): one lab per directory; wait until it ends, or give another --dir", ErrBusy, dir, FileLock)
			}
			return nil, err
		}
		// A lab down removes the lock file while it holds it: a lock on a
		// file no longer at p locks nothing.
		if now, err := os.Lstat(p); err == nil && os.SameFile(fi, now) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("%w in %s (%s keeps being replaced)", ErrBusy, dir, FileLock)
}

// readPID returns the PID recorded in DIR/lab.pid, 0 when none.
func readPID(dir string) int {
	b, err := userfile.Read(filepath.Join(dir, FilePID), maxLabFile)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool { return netnstest.Running(pid) }

// isSupervisor reports whether pid is alive and runs `lab serve --dir DIR`
// (a recycled PID of another program is never signalled).
func isSupervisor(pid int, dir string) bool {
	if !alive(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	for i := 0; i+3 < len(args); i++ {
		if args[i] == "lab" && args[i+1] == "serve" && args[i+2] == "--dir" && args[i+3] == dir {
			return true
		}
	}
	return false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// tail returns the last lines of a file (the supervisor's log).
func tail(p string) string {
	b, _ := userfile.Read(p, maxLabFile)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// Fault sends one fault line (e.g. "hide-gpu clx-mld-41") to the lab's
// supervisor and returns its answer.
func Fault(dir string, args []string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for _, a := range args {
		if strings.ContainsAny(a, "\n\r") || a == "" {
			return "", fmt.Errorf("fault argument %q: empty or with a line break", a)
		}
	}
	c, err := net.DialTimeout("unix", filepath.Join(dir, FileSocket), 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("no lab runs in %s (%v): start one with rdggen lab up", dir, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(c, "%s\n", strings.Join(args, "\t")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("the supervisor did not answer: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return "", errors.New(msg)
	}
	return strings.TrimPrefix(line, "ok: "), nil
}
