package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/internal/lab"
	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/internal/testing/netnstest"
)

// labInventory is a 3-host inventory on one switch of the OS sw ("onyx:
// 3.6.8190" or "cumulus: 5.9.1").
func labInventory(t *testing.T, sw, port string) string {
	t.Helper()
	src := `# a 3-host cluster to rehearse in rdggen lab
name: lab-demo
switches:
  - {name: leaf1, model: SN2700, ` + sw + `}   # mgmt: the lab points it at the simulator
docker: {version: "20.10", pool: 172.16.0.0/16, prefix: 24}
horovod: {image: "horovod/horovod:0.28.1"}   # CUDA 11.3: native code for the A100
defaults:
  os: ubuntu-22.04
  data_interface: ens224
  data_mtu: 9000
  gpus: [{model: A100-PCIE-40GB, memory_gb: 40}]
  nic: {model: ConnectX-6 Dx, pf: vmnic4, vfs: 8}
hosts:
  - {name: gpu-1, esxi: esx-1.lab, data: {address: 10.10.0.1/24, port: ` + port + `1}}
  - {name: gpu-2, esxi: esx-2.lab, data: {address: 10.10.0.2/24, port: ` + port + `2}}
  - {name: gpu-3, esxi: esx-3.lab, data: {address: 10.10.0.3/24, port: ` + port + `3}}
`
	p := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// machineState lists what the lab in dir could leave behind on this
// machine: its processes (labProcesses: those naming dir, and those in the
// sessions of the given supervisor PIDs), network namespaces, interfaces,
// routes and iptables rules of the machine's own namespace (the last four
// as root only, with the tools present). The names of netnstest's slots
// (rdg<slot>…, rdgm<slot>) other than slot are left out: other tests on
// this machine make and remove them meanwhile.
func machineState(t *testing.T, dir string, sessions ...int) string {
	return filterSlot(machineRaw(t, dir, sessions...), 0)
}

// machineRaw is machineState with every slot's names.
func machineRaw(t *testing.T, dir string, sessions ...int) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "lab processes: %q\n", labProcesses(dir, sessions...))
	for _, args := range [][]string{{"ip", "netns", "list"}, {"ip", "-o", "link", "show"}, {"ip", "route", "show", "table", "all"}, {"iptables-save"}, {"ip6tables-save"}} {
		if _, err := exec.LookPath(args[0]); err != nil {
			continue
		}
		out, err := exec.Command(args[0], args[1:]...).Output()
		if err != nil {
			continue
		}
		// Counters and the generation time change by themselves.
		s := regexp.MustCompile(`(?m)^# .*$|\[\d+:\d+\]`).ReplaceAllString(string(out), "")
		if args[0] == "ip" && args[1] == "route" {
			// The kernel refuses a route that exists (RTNETLINK:
			// File exists), so a lab cannot add a line that is
			// already listed; the machine's own interface, though,
			// was seen listing its link-local route fe80::/64 twice
			// and then once, a minute after boot. Compared as a set.
			s = uniqueLines(s)
		}
		fmt.Fprintf(&b, "%s:\n%s\n", strings.Join(args, " "), s)
	}
	return b.String()
}

// uniqueLines is s with each line after its first occurrence left out.
func uniqueLines(s string) string {
	seen := map[string]bool{}
	var kept []string
	for _, l := range strings.Split(s, "\n") {
		if !seen[l] {
			seen[l] = true
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// labProcesses lists, sorted, the processes of this test's lab in dir and
// no other: those whose command line names dir (its supervisor `lab serve
// --dir DIR`, a `lab up --dir DIR`) and those in the session of one of
// sessions (supervisor PIDs the test saw: a supervisor leads its own
// session, and what it starts stays in it). Other tests and other people
// run labs on this machine at the same time; their processes are theirs.
func labProcesses(dir string, sessions ...int) []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, p := range procs {
		c, err := os.ReadFile(p + "/cmdline")
		if err != nil || len(c) == 0 {
			continue
		}
		mine := bytes.Contains(c, []byte(dir+"\x00")) || bytes.Contains(c, []byte(dir+"/"))
		if !mine && len(sessions) > 0 {
			if stat, err := os.ReadFile(p + "/stat"); err == nil {
				if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
					if f := strings.Fields(string(stat[i+1:])); len(f) > 3 {
						sid, _ := strconv.Atoi(f[3])
						mine = slices.Contains(sessions, sid)
					}
				}
			}
		}
		if mine {
			out = append(out, strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " ")))
		}
	}
	sort.Strings(out)
	return out
}

// goneDevice is a device ip listed by its index: see filterSlot.
var goneDevice = regexp.MustCompile(`\bdev if\d+\b`)

// filterSlot drops the empty lines and those naming a netnstest slot
// other than slot.
func filterSlot(raw string, slot int) string {
	var kept []string
	for _, l := range strings.Split(raw, "\n") {
		other := false
		for _, m := range regexp.MustCompile(`\brdgm?(\d+)`).FindAllStringSubmatch(l, -1) {
			other = other || m[1] != strconv.Itoa(slot)
		}
		// rdgprobe<pid>-<n>, rdgfprobe<pid>-<n>: the probes of
		// netnstest.Require and fabricnet.Require in another test.
		// "dev if<index>": ip names a device so when it is gone by the
		// time its name is looked up, one another test was deleting
		// while the list was made (ip route's ll_index_to_name).
		if l != "" && !other && !strings.Contains(l, "rdgprobe") && !strings.Contains(l, "rdgfprobe") && !goneDevice.MatchString(l) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// labEnv sources the lab's env file with sh, as a user does, and returns
// the variables it set as a getenv function.
func labEnv(t *testing.T, dir string) func(string) string {
	t.Helper()
	vars := labEnvVars(t, dir)
	return func(k string) string { return vars[k] }
}

// labEnvVars is labEnv's variables.
func labEnvVars(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("sh", "-c", `. "$1" && env -0`, "sh", filepath.Join(dir, lab.FileEnv))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sourcing the env file: %v", err)
	}
	vars := map[string]string{}
	for _, kv := range strings.Split(string(out), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "PATH" && k != "PWD" && k != "SHLVL" && k != "_" {
			vars[k] = v
		}
	}
	if vars["GOVC_URL"] == "" || vars[envNVUEPassword] == "" || vars[envKnownHosts] == "" || vars[envNVUECA] == "" {
		t.Fatalf("env file lacks variables: %v", vars)
	}
	return vars
}

// session runs rdggen commands and keeps a transcript: in-process, from
// the test's working directory, with getenv; or, when cwd is set, each as
// a process of this binary (rdggen, TestMain) in cwd with env, as a user
// runs them from a shell there — a test that runs in parallel with others
// cannot change the working directory its process shares with them.
type session struct {
	t      *testing.T
	dir    string
	getenv func(string) string
	cwd    string
	env    map[string]string
	log    strings.Builder
}

// exec runs one command and returns its exit status and its output
// (stdout and stderr as written, one stream).
func (s *session) exec(args ...string) (int, string) {
	s.t.Helper()
	if s.cwd == "" {
		var out bytes.Buffer
		code := run(context.Background(), args, &out, &out, func(k string) string {
			if s.getenv == nil {
				return ""
			}
			return s.getenv(k)
		})
		return code, out.String()
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = s.cwd
	// This process's environment without the variables rdggen reads
	// (GOVC_*, RDGGEN_*, SSH_AUTH_SOCK: a developer's own would leak in),
	// then the session's: the lab's env file, sourced.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(k, "GOVC_") || strings.HasPrefix(k, "RDGGEN_") || k == "SSH_AUTH_SOCK") && k != "RDGGEN_TEST_MAIN" {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	for k, v := range s.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// One pipe for stdout and stderr: the lines arrive in the order the
	// command wrote them, as in-process into one buffer.
	r, w, err := os.Pipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		w.Close()
		r.Close()
		s.t.Fatal(err)
	}
	w.Close()
	out, _ := io.ReadAll(r)
	r.Close()
	err = cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		s.t.Fatalf("rdggen %s: %v", strings.Join(args, " "), err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// run runs one command; want is its exit status.
func (s *session) run(want int, args ...string) string {
	s.t.Helper()
	code, text := s.exec(args...)
	out := text
	if args[0] == "check" {
		// The transcript keeps check's failures and totals; its passed lines
		// are many and say the same thing.
		var kept []string
		passed := 0
		for _, l := range strings.SplitAfter(text, "\n") {
			if strings.Contains(l, ": passed (") {
				passed++
				continue
			}
			kept = append(kept, l)
		}
		text = strings.Join(kept, "") + fmt.Sprintf("(%d passed line(s) left out here)\n", passed)
	}
	fmt.Fprintf(&s.log, "$ rdggen %s\n%s", strings.Join(args, " "), text)
	if code != 0 {
		fmt.Fprintf(&s.log, "(exit %d)\n", code)
	}
	fmt.Fprintln(&s.log)
	if code != want {
		s.t.Fatalf("rdggen %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, out)
	}
	return out
}

// TestLab brings a lab up for a 3-host inventory (ONYX and Cumulus
// variants), applies to vCenter and the switch through the CLI with the
// lab's env file, applies again (nothing to do), checks, breaks it with
// the faults and repairs it, then takes it down: no process, namespace,
// interface, route or iptables rule of the lab remains. The Cumulus
// session is docs/lab.md's transcript (go test -update rewrites it).
func TestLab(t *testing.T) {
	t.Setenv("RDGGEN_TEST_MAIN", "1") // the supervisor is this test binary, as rdggen
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, sw, port, portName, mtuCheck string }{
		{"onyx", "onyx: 3.6.8190", "1/", "1/2", "leaf1: mtu Eth1/2: FAILED"},
		{"cumulus", "cumulus: 5.9.1", "swp", "swp2", "leaf1: mtu swp2: FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := labInventory(t, tc.sw, tc.port)
			labDir := filepath.Join(filepath.Dir(inv), "rdg-lab")
			before := machineState(t, labDir)
			t.Chdir(filepath.Dir(inv))
			s := &session{t: t, dir: "rdg-lab"}
			t.Cleanup(func() { _, _ = lab.Down(filepath.Join(filepath.Dir(inv), "rdg-lab")) })
			out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml", "--no-hosts")
			for _, want := range []string{"vCenter     https://127.0.0.1:", "(3 ESXi hosts, 3 VMs", "switch      leaf1", "not simulated: targets hosts, workers (the VMs' operating systems and containers): lab up --no-hosts; use --target esxi,switch"} {
				if !strings.Contains(out, want) {
					t.Errorf("lab up lacks %q:\n%s", want, out)
				}
			}
			st, err := lab.ReadState("rdg-lab")
			if err != nil || !alivePID(st.PID) {
				t.Fatalf("state %+v, %v", st, err)
			}
			s.getenv = labEnv(t, "rdg-lab")
			args := []string{"-f", "rdg-lab/lab.yaml", "--target", "esxi,switch", "--parallel", "1"}
			apply := append([]string{"apply"}, append(args, "--yes", "--backup-dir", "bk")...)
			check := append([]string{"check"}, args...)
			out = s.run(exitOK, apply...)
			if !strings.Contains(out, "esxi: 3 VM(s) and 3 host(s) changed") || strings.Contains(out, "up to date, nothing to send") {
				t.Errorf("first apply changed nothing?\n%s", out)
			}
			out = s.run(exitOK, apply...)
			if !strings.Contains(out, "esxi: nothing to do") || !strings.Contains(out, "switch: 1 switch(es) up to date, nothing changed") {
				t.Errorf("second apply is not a no-op:\n%s", out)
			}
			// A VM reconfigured behind rdggen's back (its change version
			// moves on) is read again and repaired, record or not.
			s.run(exitOK, "lab", "fault", "hide-gpu", "gpu-1")
			out = s.run(exitOK, apply...)
			if strings.Contains(out, "esxi: nothing to do") || !strings.Contains(out, "gpu-1") {
				t.Errorf("apply after hide-gpu on a powered-off VM did not repair it:\n%s", out)
			}
			s.run(exitInvalid, check...) // the VMs are off until powered on (check exits 1: not ready)
			s.run(exitOK, "lab", "power-on")
			s.run(exitOK, check...)

			// Faults: check names each, apply repairs it.
			s.run(exitOK, "lab", "fault", "hide-gpu", "gpu-2")
			out = s.run(exitInvalid, check...)
			if !strings.Contains(out, "gpu-2: devices 0000:20:00.0: FAILED") {
				t.Errorf("check after hide-gpu:\n%s", out)
			}
			out = s.run(exitFailed, apply...) // gpu-2 runs: rdggen does not power it off
			if !strings.Contains(out, "vm gpu-2: cannot apply: VM gpu-2 is poweredOn") {
				t.Errorf("apply to a running VM:\n%s", out)
			}
			s.run(exitOK, "lab", "power-off", "gpu-2")
			s.run(exitOK, "lab", "fault", "mtu", "leaf1:"+tc.portName, "1500")
			out = s.run(exitInvalid, check...)
			if !strings.Contains(out, tc.mtuCheck) {
				t.Errorf("check after the mtu fault:\n%s", out)
			}
			if tc.name == "cumulus" {
				s.run(exitOK, "lab", "fault", "lose-answer", "leaf1")
			} else {
				code, _, errs := rdggen(t, "lab", "fault", "lose-answer", "leaf1")
				if code != exitFailed || !strings.Contains(errs, "leaf1 is an ONYX switch; the ONYX simulator cannot lose answers") {
					t.Errorf("lose-answer on ONYX: exit %d, %s", code, errs)
				}
				code, _, errs = rdggen(t, "lab", "fault", "unplug", "leaf1")
				if code != exitUsage || !strings.Contains(errs, `unknown fault "unplug leaf1": the faults are hide-gpu VM | mtu HOST|SWITCH:PORT N | lose-answer SWITCH`) {
					t.Errorf("an unknown fault: exit %d, %s", code, errs)
				}
			}
			out = s.run(exitOK, apply...)
			if tc.name == "cumulus" && !strings.Contains(out, "note: the answer to the apply was lost") {
				t.Errorf("apply with a lost answer:\n%s", out)
			}
			s.run(exitOK, "lab", "power-on", "gpu-2")
			s.run(exitOK, check...)
			out = s.run(exitOK, "lab", "status")
			if !strings.Contains(out, "files: lab.json lab.yaml") {
				t.Errorf("lab status:\n%s", out)
			}
			s.run(exitOK, "lab", "down")
			if alivePID(st.PID) {
				t.Errorf("the supervisor %d still runs after lab down", st.PID)
			}
			if _, err := os.Stat("rdg-lab"); !os.IsNotExist(err) {
				t.Errorf("rdg-lab remains: %v", err)
			}
			if diff := cmp.Diff(before, machineState(t, labDir, st.PID)); diff != "" {
				t.Errorf("the lab left something behind (-before +after):\n%s", diff)
			}
			if tc.name == "cumulus" {
				labTranscript(t, s.log.String(), filepath.Dir(inv), filepath.Join(wd, "..", "..", "docs", "lab.md"), "faults")
			}
		})
	}
}

// alivePID reports whether pid runs (netnstest.Running: not a zombie).
func alivePID(pid int) bool { return pid > 0 && netnstest.Running(pid) }

// labTranscript puts the session into docs/lab.md between its markers,
// with what changes from run to run (ports, PIDs, times, passwords, the
// temporary directory) made stable, and the lines of targets running side
// by side grouped by target.
func labTranscript(t *testing.T, log, tmp, path, name string) {
	t.Helper()
	for _, r := range []struct{ re, to string }{
		{regexp.QuoteMeta(tmp), "/home/you"},
		{`127\.0\.0\.1:\d+`, "127.0.0.1:PORT"},
		{`\d{4}-\d\d-\d\d_\d\d\.\d\d\.\d\d_[A-Z0-9]+`, "2026-01-01_12.00.00_ABCD"},
		{`\d{8}T\d{6}Z(-\d+)?`, "20260101T120000Z"},
		{`198\.19\.\d+\.`, "198.19.S."},
		{`SHA256:[A-Za-z0-9+/]{43}`, "SHA256:KEY"},
		{`configuration [0-9a-f]{16}`, "configuration HASH"},
		{`/tmp/rdglab\d+`, "/tmp/rdglabN"},
		{`\d+(\.\d+)?s;`, "0.0s;"},
		{`\(\d+(\.\d+)?s,`, "(0.0s,"},
		{`pid \d+`, "pid PID"},
		{`process \d+`, "process PID"},
		{`\(\d+(\.\d+)?(ms|s)\)`, "(0.0s)"},
		{`\d+(\.\d+)?(ms|s) `, "0.0s "},
	} {
		log = regexp.MustCompile(r.re).ReplaceAllString(log, r.to)
	}
	// A target quiet for 5 s prints what it waits for (internal/progress);
	// on a loaded machine such lines come and go.
	log = regexp.MustCompile(`(?m)^\[[a-z]+\] [^\n]* \[[0-9hms.]+\]\n`).ReplaceAllString(log, "")
	log = groupTargets(log)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The documentation test (TestDocs) skips the block: this test runs it.
	begin := "<!-- " + name + ": written by the test (go test ./cmd/rdggen -run TestLab -update) -->\n" +
		"<!-- doc-test: skip (starts a lab of long-running daemons; cmd/rdggen TestLab and TestLabHosts run this session and write its transcript) -->\n```console\n"
	end := "```\n<!-- " + name + " end -->\n"
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s markers", path, name)
	}
	got := string(doc[:i+len(begin)]) + log + string(doc[j:])
	if *golden.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(doc), got); diff != "" {
		t.Errorf("docs/lab.md's session differs (-doc +test; go test ./cmd/rdggen -run TestLab -update rewrites it):\n%s", diff)
	}
}

// groupTargets orders each run of "[target] …" lines, and of the
// targets' summary lines, by target, keeping each target's own order
// (targets run side by side).
func groupTargets(s string) string {
	lines := strings.Split(s, "\n")
	tag := func(l string) string {
		if strings.HasPrefix(l, "[") {
			if i := strings.Index(l, "]"); i > 0 {
				return l[:i+1]
			}
		}
		// Each target's last line. A target with nothing to push does not
		// wait for the one it pushes after (the workers for the hosts), so
		// all four come in any order.
		for _, t := range []string{"esxi", "switch", "hosts", "workers"} {
			if strings.HasPrefix(l, t+": ") {
				return "{" + t + "}"
			}
		}
		return ""
	}
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && tag(lines[j]) != "" {
			j++
		}
		if j > i {
			sort.SliceStable(lines[i:j], func(a, b int) bool { return tag(lines[i+a]) < tag(lines[i+b]) })
			i = j
		} else {
			i++
		}
	}
	// Machines finish in any order: runs of one target's completion lines
	// (ending in their time) are sorted.
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && tag(lines[j]) != "" && tag(lines[j]) == tag(lines[i]) && strings.HasSuffix(lines[j], "(0.0s)") {
			j++
		}
		sort.Strings(lines[i:j])
		i = max(j, i+1)
	}
	return strings.Join(lines, "\n")
}

// TestLabKilledHalfway kills `rdggen lab up` with SIGKILL while it waits
// for its supervisor; `lab down` then stops the supervisor and removes
// every file: nothing is left.
func TestLabKilledHalfway(t *testing.T) {
	t.Parallel()
	inv := labInventory(t, "cumulus: 5.9.1", "swp")
	dir := filepath.Join(filepath.Dir(inv), "rdg-lab")
	before := machineBefore(t, dir)
	cmd := exec.Command(os.Args[0], "lab", "up", "-f", inv, "--dir", dir)
	cmd.Env = append(os.Environ(), "RDGGEN_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, lab.FilePID))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pid == 0 {
		t.Fatal("lab up recorded no supervisor")
	}
	// As root, wait until the supervisor builds its namespace hosts (it
	// holds a netnstest slot): killed then, lab up leaves them half-built.
	slot := 0
	if os.Geteuid() == 0 {
		for deadline := time.Now().Add(30 * time.Second); slot == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if s := netnstest.SlotsOf(pid); len(s) > 0 {
				slot = s[0]
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, lab.FileState)); err == nil {
		t.Log("the lab was ready before the kill: lab up was not killed half-way")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t.Cleanup(func() { _, _ = lab.Down(dir) })
	if !alivePID(pid) {
		t.Fatalf("the supervisor %d died with lab up: nothing to clean up, the test proves nothing", pid)
	}
	// The supervisor goes on (it is in its own session); status says what is there.
	code, out, errs := rdggen(t, "lab", "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "files:") {
		t.Errorf("lab status: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = rdggen(t, "lab", "down", "--dir", dir)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("removed process %d (rdggen lab serve)", pid)) {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	if alivePID(pid) {
		t.Errorf("the supervisor %d still runs", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains: %v", dir, err)
	}
	if slot > 0 {
		t.Logf("the supervisor held netnstest slot %d", slot)
	}
	if diff := cmp.Diff(before, filterSlot(machineRaw(t, dir, pid), slot)); diff != "" && !slotRetaken(t, slot) {
		t.Errorf("left behind (-before +after):\n%s", diff)
	}
	code, out, _ = rdggen(t, "lab", "down", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "no lab in") {
		t.Errorf("a second lab down: exit %d\n%s", code, out)
	}
}

// TestLabSupervisorKilled kills the supervisor itself with SIGKILL: the
// next lab up cleans up what it left (its files and the simulators'
// temporary files, which live in DIR) and starts a new one.
func TestLabSupervisorKilled(t *testing.T) {
	t.Parallel()
	inv := labInventory(t, "onyx: 3.6.8190", "1/")
	dir := filepath.Join(filepath.Dir(inv), "rdg-lab")
	t.Cleanup(func() { _, _ = lab.Down(dir) })
	if code, out, errs := rdggen(t, "lab", "up", "-f", inv, "--dir", dir); code != exitOK {
		t.Fatalf("lab up: exit %d\n%s%s", code, out, errs)
	}
	tmp, _ := os.ReadDir(filepath.Join(dir, lab.DirTemp))
	if len(tmp) == 0 {
		t.Errorf("the simulators' temporary files are not in %s", filepath.Join(dir, lab.DirTemp))
	}
	st, err := lab.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := machineRaw(t, dir, st.PID)
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; alivePID(st.PID) && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	code, out, errs := rdggen(t, "lab", "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, fmt.Sprintf("no supervisor runs (recorded pid %d)", st.PID)) {
		t.Errorf("lab status: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = rdggen(t, "lab", "up", "-f", inv, "--dir", dir)
	if code != exitOK || !strings.Contains(out, "cleaned up a previous lab: directory "+filepath.Join(dir, lab.DirTemp)) {
		t.Fatalf("lab up over a dead lab: exit %d\n%s%s", code, out, errs)
	}
	st2, err := lab.ReadState(dir)
	if err != nil || st2.PID == st.PID || !alivePID(st2.PID) {
		t.Fatalf("new state %+v, %v", st2, err)
	}
	// The new lab's namespaces, while it runs: its slot is the smallest
	// free one, not always the dead lab's (other tests take slots too).
	before2 := machineRaw(t, dir, st2.PID)
	if code, out, errs := rdggen(t, "lab", "down", "--dir", dir); code != exitOK {
		t.Fatalf("lab down: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s remains: %v", dir, err)
	}
	// The dead supervisor's namespace hosts (as root) went with the next
	// lab up, the new one's with lab down.
	after := machineRaw(t, dir, st.PID, st2.PID)
	if procs := labProcesses(dir, st.PID, st2.PID); len(procs) != 0 {
		t.Errorf("processes of the lab remain: %q", procs)
	}
	for i, ns := range append(st.Namespaces, st2.Namespaces...) {
		while := before
		if i >= len(st.Namespaces) {
			while = before2
		}
		if !strings.Contains(while, ns) {
			t.Errorf("namespace %s was not there while the lab ran: the test proves nothing", ns)
		}
		if regexp.MustCompile(`(?m)^`+ns+`\b`).MatchString(after) && !slotRetaken(t, slotOf(ns)) {
			t.Errorf("namespace %s remains:\n%s", ns, after)
		}
	}
}

// TestLabNonRoot runs the lab as an unprivileged user (nobody, with
// rdggen copied where that user can run it): lab up starts vCenter and the
// switch and says that the VMs' insides are not simulated because it is
// not root; apply --target esxi,switch (with the lab's env file sourced
// by sh, as a user does) passes, a second apply changes nothing, and lab
// down leaves nothing. Needs root to switch to nobody.
func TestLabNonRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: TestLab runs as this user")
	}
	base, err := os.MkdirTemp("", "rdglab-nonroot")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	exe, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "rdggen")
	if err := exefile.Write(bin, exe, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(labInventory(t, "cumulus: 5.9.1", "swp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "cluster.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	sh := func(script string) (string, error) {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = home
		cmd.Env = []string{"PATH=" + base + ":/usr/bin:/bin", "HOME=" + home, "RDGGEN_TEST_MAIN=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// As nobody: lab down refuses, as root, a directory that is not root's.
	t.Cleanup(func() { _, _ = sh("rdggen lab down") })
	out, err := sh("rdggen lab up -f ../cluster.yaml")
	if err != nil || !strings.Contains(out, "not simulated: targets hosts, workers (the VMs' operating systems and containers): the lab runs as uid 65534, and namespace hosts need root (ip netns); use --target esxi,switch") {
		t.Fatalf("lab up as nobody: %v\n%s", err, out)
	}
	st, err := lab.ReadState(filepath.Join(home, "rdg-lab"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", st.PID)); !regexp.MustCompile(`(?m)^Uid:\s+65534\s`).Match(b) {
		t.Errorf("the supervisor does not run as nobody:\n%s", b)
	}
	out, err = sh(`. rdg-lab/env && rdggen apply -f rdg-lab/lab.yaml --target esxi,switch --yes &&
		rdggen apply -f rdg-lab/lab.yaml --target esxi,switch --yes`)
	if err != nil || !strings.Contains(out, "esxi: 3 VM(s) and 3 host(s) changed") || !strings.Contains(out, "switch: 1 changed") ||
		!strings.Contains(out, "esxi: nothing to do") || !strings.Contains(out, "switch: 1 switch(es) up to date, nothing changed") {
		t.Fatalf("apply as nobody: %v\n%s", err, out)
	}
	out, err = sh(`rdggen lab power-on && . rdg-lab/env && rdggen check -f rdg-lab/lab.yaml --target esxi,switch && rdggen lab down`)
	if err != nil || !strings.Contains(out, "rdggen check: all 50 check(s) passed") {
		t.Fatalf("check as nobody: %v\n%s", err, out)
	}
	if alivePID(st.PID) {
		t.Errorf("the supervisor %d still runs", st.PID)
	}
	if _, err := os.Stat(filepath.Join(home, "rdg-lab")); !os.IsNotExist(err) {
		t.Errorf("rdg-lab remains: %v", err)
	}
}

// TestLabHosts is the lab as root with sshd and dockerd: every VM of a
// 3-host inventory (ONYX and Cumulus variants) becomes a namespace host cabled to the switch
// namespace; apply to vCenter, the switch and the hosts through the CLI
// with the lab's env file (an SSH agent, known_hosts, the hosts' file root
// and Docker restart), a second apply that changes nothing, check, and lab
// down: no process, namespace, interface, route or iptables rule of the
// lab remains. The Cumulus session is docs/lab.md's (go test -update
// rewrites it).
func TestLabHosts(t *testing.T) {
	t.Parallel()
	netnstest.Require(t)
	netnstest.RequireDocker(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, sw, port string }{{"onyx", "onyx: 3.6.8190", "1/"}, {"cumulus", "cumulus: 5.9.1", "swp"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			labHosts(t, wd, tc.sw, tc.port, tc.name == "cumulus")
		})
	}
}

// labHosts is TestLabHosts for one switch OS; transcript writes the
// session into docs/lab.md.
func labHosts(t *testing.T, wd, sw, port string, transcript bool) {
	inv := labInventory(t, sw, port)
	labDir := filepath.Join(filepath.Dir(inv), "rdg-lab")
	before := machineBefore(t, labDir)
	t.Cleanup(func() { _, _ = lab.Down(labDir) })
	// The commands run in the inventory's directory, as processes.
	s := &session{t: t, dir: "rdg-lab", cwd: filepath.Dir(inv)}
	out := s.run(exitOK, "lab", "up", "-f", "cluster.yaml")
	labUp := out
	if !strings.Contains(out, "host        gpu-3  198.19.") || !strings.Contains(out, "not simulated: run and bench: the namespace hosts have no GPUs and no RDMA devices") {
		t.Fatalf("lab up:\n%s", out)
	}
	st, err := lab.ReadState(labDir)
	if err != nil || len(st.Namespaces) != 4 {
		t.Fatalf("state %+v, %v", st, err)
	}
	slot, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(st.Namespaces[0], "rdg"), "sw"))
	if slot == 0 {
		t.Fatalf("namespaces %q", st.Namespaces)
	}
	during := filterSlot(machineRaw(t, labDir, st.PID), slot)
	for _, name := range append(st.Namespaces, fmt.Sprintf("rdgm%d", slot)) {
		if !strings.Contains(during, name) {
			t.Errorf("%s is not in the listing while the lab runs: the comparison below would prove nothing", name)
		}
	}
	s.env = labEnvVars(t, labDir) // SSH_AUTH_SOCK among them, read from the process's environment, as ssh does
	parallel := "3"               // the transcript's lines come in a fixed order one machine at a time
	if transcript {
		parallel = "1"
	}
	args := []string{"-f", "rdg-lab/lab.yaml", "--parallel", parallel}
	apply := append([]string{"apply", "--target", "esxi,switch,hosts,workers", "--yes", "--backup-dir", "bk"}, args...)
	out = s.run(exitOK, apply...)
	if !strings.Contains(out, "hosts: 3 changed, 0 up to date, 0 failed") || !strings.Contains(out, "workers: 3 changed, 0 up to date, 0 failed") {
		t.Errorf("first apply:\n%s", out)
	}
	out = s.run(exitOK, apply...)
	if !strings.Contains(out, "hosts: nothing to do: 3 up to date") || !strings.Contains(out, "esxi: nothing to do") ||
		!strings.Contains(out, "workers: nothing to do: 3 up to date") {
		t.Errorf("second apply:\n%s", out)
	}
	s.run(exitOK, "lab", "power-on")
	s.run(exitOK, append([]string{"check", "--target", "esxi,switch"}, args...)...)
	// The hosts' networking checks pass; what a namespace cannot have (GPUs,
	// RDMA devices, EFI, the NVIDIA driver and runtime) fails, as it should.
	code, hostsOut, _ := rdggen2(s, append([]string{"check", "--target", "hosts"}, args...)...)
	if code != exitInvalid {
		t.Errorf("check hosts: exit %d\n%s", code, hostsOut)
	}
	for _, want := range []string{"gpu-1: forwarding: passed", "gpu-2: routes: passed", "gpu-3: gpus: FAILED"} {
		if !strings.Contains(hostsOut, want) {
			t.Errorf("check hosts lacks %q:\n%s", want, hostsOut)
		}
	}
	wantUnanswered(t, hostsUnanswered(t, labUp), hostsOut)
	// The workers run, from the image the lab built (their memlock check
	// depends on this machine's limit, so only the container is asserted).
	_, workersOut, _ := rdggen2(s, append([]string{"check", "--target", "workers"}, args...)...)
	for _, h := range []string{"gpu-1", "gpu-2", "gpu-3"} {
		if !strings.Contains(workersOut, h+": worker hvd-worker: passed (running horovod/horovod:") {
			t.Errorf("check workers: %s's worker:\n%s", h, workersOut)
		}
	}
	// run refuses, naming why: a namespace host has no RDMA device.
	out = s.run(exitFailed, append([]string{"run"}, append(args, "--", "/usr/local/bin/allreduce")...)...)
	if !strings.Contains(out, "rdggen run: not launched: no usable RoCE v2 GID on gpu-1, gpu-2, gpu-3") {
		t.Errorf("run:\n%s", out)
	}
	// A host's data MTU lowered by hand: check names it, apply sets it back.
	s.run(exitOK, "lab", "fault", "mtu", "gpu-2", "1500")
	_, hostsOut, _ = rdggen2(s, append([]string{"check", "--target", "hosts"}, args...)...)
	if !strings.Contains(hostsOut, "gpu-2: mtu link ens224 mtu: FAILED: found 1500; expected 9000") {
		t.Errorf("check hosts after the mtu fault:\n%s", hostsOut)
	}
	out = s.run(exitOK, apply...)
	if !strings.Contains(out, "hosts: 1 changed, 2 up to date, 0 failed") {
		t.Errorf("apply after the mtu fault:\n%s", out)
	}
	s.run(exitOK, "lab", "down")
	if diff := cmp.Diff(before, filterSlot(machineRaw(t, labDir, st.PID), slot)); diff != "" && !slotRetaken(t, slot) {
		t.Errorf("the lab left something behind (-before +after):\n%s", diff)
	}
	if transcript {
		labTranscript(t, s.log.String(), filepath.Dir(inv), filepath.Join(wd, "..", "..", "docs", "lab.md"), "session")
	}
}

// rdggen2 runs one command as the session does, outside its transcript.
func rdggen2(s *session, args ...string) (int, string, string) {
	s.t.Helper()
	code, out := s.exec(args...)
	return code, out, ""
}

// slotRetaken reports whether another process took netnstest slot since
// the lab freed it (other tests on this machine run at the same time):
// its names are then that process's, not the lab's leftovers.
func slotRetaken(t *testing.T, slot int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/tmp/rdggen-netnstest/%d.pid", slot))
	if err != nil {
		return false
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 && alivePID(pid) {
		t.Logf("slot %d was taken again by process %d meanwhile: its names are not compared", slot, pid)
		return true
	}
	return false
}

// machineBefore is machineState of the machine before a test's lab
// starts, without the names of any netnstest slot: none of them is the
// lab's yet. Those it lists are other tests' clusters, or what a killed
// lab left (its slot's owner is dead, its namespaces stay until the slot
// is taken again, by this lab perhaps: TestLabSupervisorKilled's leftover
// slot was seen taken by TestLabKilledHalfway's lab, which cleared it).
// Compared with filterSlot(after, slot), the lab's slot's names in after
// are what the lab left behind.
func machineBefore(t *testing.T, dir string) string {
	t.Helper()
	return filterSlot(machineRaw(t, dir), -1)
}

// slotOf is the netnstest slot of a namespace name rdg<slot>….
func slotOf(ns string) int {
	m := regexp.MustCompile(`^rdg(\d+)`).FindStringSubmatch(ns)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A fault's bad value or malformed SWITCH:PORT is a usage error (exit 2),
// as a wrong argument count is, refused before any lab is asked: here none
// runs.
func TestLabFaultBadValueIsUsage(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mtu", "leaf1:swp1", "abc"}, "mtu leaf1:swp1 abc: want HOST or SWITCH:PORT and an MTU of 68-9216 bytes"},
		{[]string{"link-speed", "leaf1:swp63", "fast"}, `link-speed: "fast": want a speed of 1-1600 Gb/s`},
		{[]string{"mtu", "leaf1:swp1"}, `fault "mtu leaf1:swp1": the faults are`},
		{[]string{"link-down", "leaf2"}, `link-down: "leaf2": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"miswire", "leaf1:swp63", "spine1"}, `miswire: "spine1": want SWITCH:PORT`},
		{[]string{"mtu", "leaf1:", "9000"}, `mtu: "leaf1:": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"mtu", ":swp1", "9000"}, `mtu: ":swp1": want SWITCH:PORT, a switch of the inventory and its port (swp63, 1/31)`},
		{[]string{"link-down", "leaf2:"}, `link-down: "leaf2:": want SWITCH:PORT`},
	} {
		code, _, errs := rdggen(t, append([]string{"lab", "fault", "--dir", dir}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d, %s; want exit %d with %q", tc.args, code, errs, exitUsage, tc.want)
		}
	}
}
