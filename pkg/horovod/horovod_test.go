package horovod

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/testing/exefile"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func TestHostfileReference(t *testing.T) {
	inv := inventory.Reference()
	want := "172.16.41.2 slots=2\n172.16.42.2 slots=2\n172.16.43.2 slots=2\n172.16.44.2 slots=2\n" +
		"172.16.45.2 slots=2\n172.16.46.2 slots=2\n172.16.47.2 slots=2\n172.16.48.2 slots=2\n"
	if diff := cmp.Diff(want, string(Hostfile(inv))); diff != "" {
		t.Errorf("hostfile (-want +got):\n%s", diff)
	}
	if got := TotalSlots(inv); got != 16 {
		t.Errorf("total slots %d, want 16", got)
	}
}

// strictLine is the only hostfile line both horovodrun and OpenMPI accept.
var strictLine = regexp.MustCompile(`^[0-9.]+ slots=[1-9][0-9]*$`)

// TestHostfileStrictAndEquivalent: every line is strict, LF-only, and the -H
// list names the same hosts and slots in the same order.
func TestHostfileStrictAndEquivalent(t *testing.T) {
	inv := hostMode(t)
	hf := string(Hostfile(inv))
	if strings.Contains(hf, "\r") || !strings.HasSuffix(hf, "\n") || strings.Contains(hf, "\n\n") {
		t.Fatalf("hostfile has CR, blank lines or no final LF: %q", hf)
	}
	lines := strings.Split(strings.TrimSuffix(hf, "\n"), "\n")
	var fromFile []string
	for _, l := range lines {
		if !strictLine.MatchString(l) {
			t.Errorf("line %q is not `<address> slots=<n>`", l)
		}
		fromFile = append(fromFile, strings.Replace(l, " slots=", ":", 1))
	}
	if got := strings.Split(HostList(inv), ","); !cmp.Equal(got, fromFile) {
		t.Errorf("-H list %v differs from hostfile %v", got, fromFile)
	}
	// Host mode: data addresses, and the slots follow each host's GPU count.
	if want := "10.0.0.1 slots=4\n10.0.0.2 slots=1\n"; hf != want {
		t.Errorf("host-mode hostfile %q, want %q", hf, want)
	}
}

func hostMode(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Load("hm.yaml", []byte(`name: hm
switches: [{name: sw1, model: SN2100, onyx: 3.10.4006}]
docker: {version: "28.2"}
horovod: {network: host, ssh_port: 2222}
defaults:
  os: ubuntu-20.04
  data_interface: ens224
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 4}
  gpus: [{model: A100-PCIE-40GB, memory_gb: 40}]
hosts:
  - name: a
    esxi: esx-a
    gpus: [{model: A100, memory_gb: 40}, {model: A100, memory_gb: 40}, {model: A100, memory_gb: 40}, {model: A100, memory_gb: 40}]
    data: {address: 10.0.0.1/24, port: 1/1}
  - name: b
    esxi: esx-b
    data_interface: ens256
    data: {address: 10.0.0.2/24, port: 1/2}
`))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestLaunchSettings(t *testing.T) {
	inv := inventory.Reference()
	env := map[string]string{}
	for _, e := range Env(inv) {
		env[e.Name] = e.Value
	}
	want := map[string]string{"NCCL_IB_HCA": "mlx5_0", "NCCL_IB_TC": "106",
		"NCCL_SOCKET_IFNAME": "eth0", "NCCL_NET_GDR_LEVEL": "PHB", "NCCL_DEBUG": "INFO"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	run := strings.Join(DockerRunArgs(inv), " ")
	for _, part := range []string{"--runtime=nvidia", "--device=/dev/infiniband", "--cap-add=IPC_LOCK",
		"--ulimit memlock=-1", "--shm-size=1g", "-v /etc/rdggen/worker-ssh:/root/.ssh:ro",
		"-e NCCL_IB_HCA=mlx5_0 -e NCCL_IB_TC=106 -e NCCL_SOCKET_IFNAME=eth0 -e NCCL_NET_GDR_LEVEL=PHB",
		"--label org.rdggen.worker-config=" + WorkerConfigHash(inv, WorkerSSHDir),
		"sh -c mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e -f /root/.ssh/sshd_config"} {
		if !strings.Contains(run, part) {
			t.Errorf("docker run lacks %q: %s", part, run)
		}
	}
	if strings.Contains(run, "--network=host") || strings.Contains(run, "--gpus") || strings.Contains(run, "NCCL_IB_GID_INDEX") {
		t.Errorf("bridge mode on Docker 18.09: %s", run)
	}
	hr := strings.Join(HorovodrunArgs(inv), " ")
	if hr != "horovodrun -np 16 -H ${HOSTS} -p 12345 ${RANK_WRAP[@]} ${CMD[@]}" {
		t.Errorf("horovodrun: %s", hr)
	}
	hosts := HostList(inv)
	threes := []int{3, 3, 3, 3, 3, 3, 3, 3}
	if got := strings.Join(LaunchArgs(inv, false, nil, threes), " "); got != "horovodrun -np 16 -H "+hosts+" -p 12345 python "+BenchmarkScript+" --model=vgg16 --batch_size=64 --variable_update=horovod --horovod_device=gpu --num_gpus=1 --num_batches=100" {
		t.Errorf("rdggen run's horovodrun: %s", got)
	}
	if diff := cmp.Diff(append(Env(inv), EnvVar{"NCCL_IB_GID_INDEX", "3"}), LaunchEnv(inv, false, threes)); diff != "" {
		t.Errorf("horovodrun's environment (-want +got):\n%s", diff)
	}
	if got := LaunchEnv(inv, true, threes); got != nil {
		t.Errorf("mpirun's launcher environment %v, want none (its line exports)", got)
	}
	if got := strings.Join(LaunchArgs(inv, true, []string{"./allreduce", "--n", "3"}, threes), " "); !strings.HasPrefix(got, "mpirun --allow-run-as-root --tag-output -np 16 -H "+hosts+" ") ||
		!strings.HasSuffix(got, " -x NCCL_DEBUG=INFO -x NCCL_IB_GID_INDEX=3 -x LD_LIBRARY_PATH -x PATH ./allreduce --n 3") {
		t.Errorf("rdggen run's mpirun: %s", got)
	}
	// ns: clx-mld-43 and -44 have their RoCE v2 GID at index 5: their ranks
	// (4–7) get it through the rank wrapper.
	mixed := []int{3, 3, 5, 5, 3, 3, 3, 3}
	got := LaunchArgs(inv, true, []string{"./allreduce"}, mixed)
	if i := slices.Index(got, "-x"); i < 0 || !slices.Contains(got, "RDGGEN_GID_INDEXES=4:3 8:5 16:3") ||
		slices.Contains(got, "NCCL_IB_GID_INDEX=3") || !slices.Equal(got[len(got)-5:], append(RankWrapper(), "./allreduce")) {
		t.Errorf("mpirun with differing GID indexes: %q", got)
	}
	if ranks := RankHosts(inv); len(ranks) != 16 || ranks[0].Name != "clx-mld-41" || ranks[1].Name != "clx-mld-41" || ranks[2].Name != "clx-mld-42" || ranks[15].Name != "clx-mld-48" {
		t.Errorf("rank hosts: %d", len(ranks))
	}
	mr := strings.Join(MpirunArgs(inv), " ")
	for _, part := range []string{"-np 16", "-mca plm_rsh_args -p 12345", "-mca btl_tcp_if_include eth0",
		"-x NCCL_NET_GDR_LEVEL=PHB", "-x NCCL_IB_TC=106", "${GID_X[@]} -x LD_LIBRARY_PATH -x PATH ${RANK_WRAP[@]} ${CMD[@]}"} {
		if !strings.Contains(mr, part) {
			t.Errorf("mpirun lacks %q: %s", part, mr)
		}
	}
	if strings.Contains(mr, "GID_INDEX=") {
		t.Errorf("a literal GID index in run.sh's mpirun line: %s", mr)
	}

	hm := hostMode(t)
	if got := SocketInterfaces(hm); got != "ens224,ens256" {
		t.Errorf("host-mode interfaces %q", got)
	}
	run = strings.Join(DockerRunArgs(hm), " ")
	if !strings.Contains(run, "--gpus all") || !strings.Contains(run, "--network=host") {
		t.Errorf("host mode on Docker 28.2: %s", run)
	}
	if WorkerConfigHash(hm, WorkerSSHDir) == WorkerConfigHash(inv, WorkerSSHDir) || WorkerConfigHash(inv, "/x") == WorkerConfigHash(inv, WorkerSSHDir) {
		t.Error("the configuration hash does not follow the configuration")
	}
	for _, f := range WorkerFiles(hm, WorkerKeys{HostPublic: []byte("ssh-ed25519 AAAAhost"), ClientPublic: []byte("ssh-ed25519 AAAAclient")}) {
		switch f.Name {
		case "sshd_config":
			if !strings.Contains(string(f.Data), "\nPort 2222\n") || !strings.Contains(string(f.Data), "\nPasswordAuthentication no\n") {
				t.Errorf("sshd_config:\n%s", f.Data)
			}
		case "config":
			want := "Host 10.0.0.1 10.0.0.2\n\tPort 2222\n\tUser root\n\tIdentityFile /root/.ssh/id_ed25519\n\tIdentitiesOnly yes\n\tHostKeyAlias rdggen-worker.hm\n"
			if !strings.Contains(string(f.Data), want) || !strings.Contains(string(f.Data), "StrictHostKeyChecking yes") {
				t.Errorf("ssh config:\n%s", f.Data)
			}
		case "known_hosts":
			if string(f.Data) != "rdggen-worker.hm ssh-ed25519 AAAAhost\n" {
				t.Errorf("known_hosts: %q", f.Data)
			}
		case "authorized_keys":
			if string(f.Data) != "ssh-ed25519 AAAAclient rdggen-mpi@hm\n" || f.Mode != 0o600 {
				t.Errorf("authorized_keys: %q %o", f.Data, f.Mode)
			}
		}
	}
	if hr := strings.Join(HorovodrunArgs(hm), " "); !strings.Contains(hr, "-np 5 ") || !strings.Contains(hr, "--network-interfaces ens224,ens256") {
		t.Errorf("host-mode horovodrun: %s", hr)
	}
}

// TestRunScript checks run.sh with bash: syntax, and that `hostfile` prints
// exactly the hostfile, and `worker` on an unknown host fails clearly.
func TestRunScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	for _, inv := range []*inventory.Inventory{inventory.Reference(), hostMode(t)} {
		dir := t.TempDir()
		script := filepath.Join(dir, "run.sh")
		if err := exefile.Write(script, RunScript(inv), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bash, "-n", script).CombinedOutput(); err != nil {
			t.Fatalf("bash -n: %v\n%s", err, out)
		}
		out, err := exec.Command(bash, script, "hostfile").Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(Hostfile(inv)) {
			t.Errorf("run.sh hostfile:\n%s\nwant:\n%s", out, Hostfile(inv))
		}
		cmd := exec.Command(bash, script, "nonsense")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "usage:") {
			t.Errorf("unknown subcommand: %v %s", err, out)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"a b":        "'a b'",
		"it's":       `'it'\''s'`,
		"${HOSTS}":   `"${HOSTS}"`,
		"^openib":    "^openib",
		"-p 12345":   "'-p 12345'",
		"$(rm -rf)":  "'$(rm -rf)'",
		"a;b":        "'a;b'",
		"x=1,y=2:3/": "x=1,y=2:3/",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// wideCluster is an inventory of n hosts (n ≤ 8190) on one /19 data network,
// container subnets /24 from 10.0.0.0/8; network is bridge or host.
func wideCluster(t *testing.T, n int, network string) *inventory.Inventory {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: wide-cluster-with-a-long-name\nswitches:\n")
	for s := range (n + 63) / 64 {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, onyx: 3.6.8190}\n", s+1)
	}
	fmt.Fprintf(&b, `docker: {pool: 10.0.0.0/8, prefix: 24}
horovod: {network: %s, ssh_port: 12345}
defaults:
  os: ubuntu-16.04
  data_interface: ens224
  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]
  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}
hosts:
`, network)
	for i := range n {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/19, switch: leaf%d, port: 1/%d}}\n",
			i+1, i+1, off>>8, off&255, i/64+1, i%64+1)
	}
	inv, err := inventory.Load("wide.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// TestWorkerSSHLines: every line of every OpenSSH file the workers get is
// within MaxSSHLine at 4,096 workers (OpenSSH 7.2, Ubuntu 16.04's, cuts
// ssh_config lines at 1,023 bytes), and in the ssh config every worker
// address gets the settings: checked for every address by reading the file
// as ssh_config(5) says, and with the real ssh -G for the first and last
// address of every Host line (where a line cut into pieces would show).
func TestWorkerSSHLines(t *testing.T) {
	ssh, sshErr := exec.LookPath("ssh")
	for _, network := range []string{"bridge", "host"} {
		inv := wideCluster(t, 4096, network)
		files := WorkerFiles(inv, WorkerKeys{HostPublic: []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHost"), ClientPublic: []byte("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIClient")})
		var config []byte
		for _, f := range files {
			for i, l := range strings.SplitAfter(string(f.Data), "\n") {
				if len(l) > MaxSSHLine {
					t.Errorf("%s: %s line %d is %d bytes, more than %d", network, f.Name, i+1, len(l), MaxSSHLine)
				}
			}
			if f.Name == ClientConfigName {
				config = f.Data
			}
		}
		// ssh_config(5): a Host line's patterns are separated by white
		// space; its settings run to the next Host line.
		settings := map[string]string{}
		var hostLines [][]string
		var cur []string
		for _, l := range strings.Split(string(config), "\n") {
			switch {
			case strings.HasPrefix(l, "Host "):
				cur = strings.Fields(l)[1:]
				hostLines = append(hostLines, cur)
			case strings.HasPrefix(l, "\t"):
				for _, a := range cur {
					settings[a] += strings.TrimSpace(l) + "\n"
				}
			}
		}
		want := "Port 12345\nUser root\nIdentityFile /root/.ssh/id_ed25519\nIdentitiesOnly yes\nHostKeyAlias rdggen-worker.wide-cluster-with-a-long-name\n" +
			"UserKnownHostsFile /root/.ssh/known_hosts\nGlobalKnownHostsFile /dev/null\nStrictHostKeyChecking yes\nCheckHostIP no\nBatchMode yes\n"
		ws := Workers(inv)
		for _, w := range ws {
			if got := settings[w.Address.String()]; got != want {
				t.Fatalf("%s: worker %s gets\n%s\nwant (once)\n%s", network, w.Address, got, want)
			}
		}
		if len(settings) != len(ws) || len(hostLines) < 2 {
			t.Fatalf("%s: %d addresses on %d Host lines for %d workers", network, len(settings), len(hostLines), len(ws))
		}

		if sshErr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("ssh (openssh-client) is needed: %v", sshErr)
			}
			t.Skipf("ssh -G not tried: %v", sshErr)
		}
		cfg := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(cfg, config, 0o644); err != nil {
			t.Fatal(err)
		}
		resolved := func(addr string) map[string]string {
			cmd := exec.Command(ssh, "-G", "-F", cfg, addr)
			cmd.Stdin = nil
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("ssh -G %s: %v", addr, err)
			}
			m := map[string]string{}
			for _, l := range strings.Split(string(out), "\n") {
				k, v, _ := strings.Cut(l, " ")
				if _, seen := m[k]; !seen {
					m[k] = v
				}
			}
			return m
		}
		wantG := map[string]string{"port": "12345", "user": "root", "identityfile": "/root/.ssh/id_ed25519", "identitiesonly": "yes",
			"hostkeyalias": "rdggen-worker.wide-cluster-with-a-long-name", "userknownhostsfile": "/root/.ssh/known_hosts",
			"globalknownhostsfile": "/dev/null", "stricthostkeychecking": "true", "batchmode": "yes"}
		for _, line := range hostLines {
			for _, addr := range []string{line[0], line[len(line)-1]} {
				got := resolved(addr)
				for k, v := range wantG {
					if got[k] != v {
						t.Errorf("%s: ssh -G %s: %s %q, want %q", network, addr, k, got[k], v)
					}
				}
			}
		}
		if got := resolved("192.0.2.1"); got["port"] != "22" || got["hostkeyalias"] != "" {
			t.Errorf("%s: a non-worker address gets the workers' settings: port %s, hostkeyalias %q", network, got["port"], got["hostkeyalias"])
		}
	}
}

// TestRunScriptGIDLookup runs run.sh launch against a stand-in docker on
// PATH: the local worker must be running, ssh's stderr warnings are not an
// index, and an unreachable worker and a missing GID are told apart.
func TestRunScriptGIDLookup(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("timeout (coreutils) not found")
	}
	inv := inventory.Reference()
	ws := Workers(inv)
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := exefile.Write(script, RunScript(inv), 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// docker inspect prints $FAKE/state; docker exec ... ssh ... ADDR runs
	// $FAKE/ssh-ADDR; any other docker exec prints its arguments.
	fake := `#!/bin/sh
case "$1" in
  inspect) cat "$FAKE/state" ;;
  exec)
    if [ "$4" = ssh ]; then cat >/dev/null; exec sh "$FAKE/ssh-$7"; fi
    echo "EXEC $*" ;;
esac
`
	if err := exefile.Write(filepath.Join(bin, "docker"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(state string, ssh map[int]string) (string, error) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "state"), []byte(state+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, w := range ws {
			body := "echo 3\n"
			if s, ok := ssh[i]; ok {
				body = s
			}
			if err := os.WriteFile(filepath.Join(dir, "ssh-"+w.Address.String()), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bash, script, "launch", "true")
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE="+dir, "TMPDIR="+tmp)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("exited", nil)
	if err == nil || !strings.Contains(out, WorkerName+" is not running") || strings.Contains(out, "EXEC") {
		t.Errorf("local worker stopped: %v\n%s", err, out)
	}

	warn := "echo \"Warning: Permanently added '10.0.1.2' (ED25519) to the list of known hosts.\" >&2\necho 3\n"
	out, err = run("running", map[int]string{0: warn})
	if err != nil || !strings.Contains(out, "NCCL_IB_GID_INDEX=3 on every host") || !strings.Contains(out, "EXEC exec") {
		t.Errorf("a warning on ssh's stderr: %v\n%s", err, out)
	}

	out, err = run("running", map[int]string{
		1: "echo 'ssh: connect to host 10.0.2.2 port 12345: Connection refused' >&2\nexit 255\n",
		2: "exit 1\n",
	})
	h1, h2 := ws[1].Host.Name, ws[2].Host.Name
	if err == nil || strings.Contains(out, "EXEC") ||
		!strings.Contains(out, h1+": its worker "+ws[1].Address.String()+" did not answer over the workers' SSH (exit 255): ssh: connect to host 10.0.2.2 port 12345: Connection refused") ||
		!strings.Contains(out, h2+": no RoCE v2 GID of") || strings.Contains(out, ws[0].Host.Name+":") {
		t.Errorf("one worker unreachable, one without the GID: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("run.sh left %d GID directories in $TMPDIR", len(left))
	}
}
