package workerapply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/inventory"
)

func testKeys(t *testing.T) horovod.WorkerKeys {
	t.Helper()
	k, err := horovod.GenerateWorkerKeys()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// goodState is a host whose worker is exactly as desired.
func goodState(d *desired) *workerState {
	st := &workerState{Docker: "20.10.24", DirExists: true, DirMode: 0o700, Files: map[string]fileState{}, Image: true}
	for _, f := range d.Files {
		st.Files[f.Name] = fileState{Mode: f.Mode, Sum: sum(f.Data)}
	}
	c := &container{}
	c.Config.Image = d.Image
	c.Config.Labels = map[string]string{horovod.ConfigLabel: d.Hash}
	c.State.Status, c.State.Running = "running", true
	c.NetworkSettings.IPAddress = d.Address.String()
	st.Container = c
	ks := "# 172.16.41.2:12345 SSH-2.0-OpenSSH_9.2p1\n[172.16.41.2]:12345 " + d.HostKey + "\n"
	st.Keyscan = &ks
	return st
}

func TestPlan(t *testing.T) {
	inv := inventory.Reference()
	k := testKeys(t)
	d := desiredFor(inv, &inv.Hosts[0], k, "")
	if p, err := makePlan(d, goodState(d)); err != nil || !p.empty() {
		t.Fatalf("converged worker: %v %v", err, p.describe())
	}
	other := testKeys(t)
	for _, tc := range []struct {
		name   string
		change func(st *workerState)
		want   []string
	}{
		{"nothing there", func(st *workerState) {
			st.DirExists, st.Files, st.Container, st.Keyscan = false, map[string]fileState{}, nil, nil
		}, []string{
			"~ /etc/rdggen/worker-ssh: directory, mode 0700",
			"+ /etc/rdggen/worker-ssh/sshd_config",
			"+ /etc/rdggen/worker-ssh/ssh_host_ed25519_key (private key, never shown)",
			"+ /etc/rdggen/worker-ssh/ssh_host_ed25519_key.pub",
			"+ /etc/rdggen/worker-ssh/id_ed25519 (private key, never shown)",
			"+ /etc/rdggen/worker-ssh/id_ed25519.pub (" + Fingerprint(k.ClientPublic) + ")",
			"+ /etc/rdggen/worker-ssh/authorized_keys (" + Fingerprint(k.ClientPublic) + ")",
			"+ /etc/rdggen/worker-ssh/known_hosts",
			"+ /etc/rdggen/worker-ssh/config",
			"+ container hvd-worker: horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5, bridge network (docker0), sshd on port 12345",
		}},
		{"a worker made by hand", func(st *workerState) {
			st.Container.Config.Labels = nil
			st.Container.Config.Image = "horovod/horovod:latest"
		}, []string{"~ container hvd-worker: re-create (configuration none -> " + d.Hash + ", image horovod/horovod:latest -> horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5)"}},
		{"stopped", func(st *workerState) {
			st.Container.State.Running, st.Container.State.Status, st.Container.State.ExitCode = false, "exited", 255
		}, []string{"~ container hvd-worker: start (it is exited (exit code 255))"}},
		{"restart loop", func(st *workerState) {
			st.Container.State.Restarting, st.Container.RestartCount = true, 7
		}, []string{"~ container hvd-worker: restart (it keeps restarting (7 restarts): its sshd does not stay up)"}},
		{"host key file changed, group-readable directory", func(st *workerState) {
			st.Files[horovod.HostKeyName] = fileState{Mode: 0o600, Sum: "0"}
			st.DirMode = 0o755
		}, []string{
			"~ /etc/rdggen/worker-ssh: directory, mode 0700",
			"~ /etc/rdggen/worker-ssh/ssh_host_ed25519_key (private key, never shown)",
			"~ container hvd-worker: restart (sshd's configuration or host key changed)",
		}},
		{"authorized_keys readable by all: no restart needed", func(st *workerState) {
			st.Files[horovod.AuthorizedKeyName] = fileState{Mode: 0o644, Sum: st.Files[horovod.AuthorizedKeyName].Sum}
		}, []string{"~ /etc/rdggen/worker-ssh/authorized_keys (" + Fingerprint(k.ClientPublic) + ")"}},
		{"sshd silent", func(st *workerState) { empty := ""; st.Keyscan = &empty },
			[]string{"~ container hvd-worker: restart (its sshd does not answer on 172.16.41.2 port 12345)"}},
		{"sshd with another host key", func(st *workerState) {
			ks := "[172.16.41.2]:12345 " + string(other.HostPublic) + "\n"
			st.Keyscan = &ks
		}, []string{"~ container hvd-worker: restart (its sshd on 172.16.41.2 port 12345 presents host key " + Fingerprint(other.HostPublic) + ", not the cluster's " + Fingerprint(k.HostPublic) + ")"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := goodState(d)
			tc.change(st)
			p, err := makePlan(d, st)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, p.describe()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if len(p.changes()) != len(tc.want) {
				t.Errorf("count %d, %d lines", len(p.changes()), len(tc.want))
			}
		})
	}
}

func TestPlanRefuses(t *testing.T) {
	inv := inventory.Reference()
	d := desiredFor(inv, &inv.Hosts[0], testKeys(t), "")
	for addr, want := range map[string]string{
		"172.17.0.2":  "hvd-worker has address 172.17.0.2, outside the host's container subnet 172.16.41.0/24: docker0 does not have daemon.json's bip yet; run 'rdggen apply --target hosts' first",
		"172.16.41.3": "hvd-worker has address 172.16.41.3 but the hostfile says 172.16.41.2: the worker must be the first container started on docker0",
	} {
		st := goodState(d)
		st.Container.NetworkSettings.IPAddress = addr
		if _, err := makePlan(d, st); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("address %s: %v", addr, err)
		}
	}
}

func TestParseState(t *testing.T) {
	rs := []remote.Result{
		{Name: "docker", Status: "0", Data: []byte("20.10.24+dfsg1\n")},
		{Name: "dir", Status: "0", Data: []byte("700\n")},
		{Name: "files", Status: "0", Data: []byte("sshd_config 644 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  -\nid_ed25519 600 aaaa  -\n")},
		{Name: "inspect", Status: "0", Data: []byte(`[{"Config":{"Image":"x","Labels":{"org.rdggen.worker-config":"abc"}},"State":{"Status":"running","Running":true},"RestartCount":0,"NetworkSettings":{"IPAddress":"172.16.41.2"},"HostConfig":{"NetworkMode":"default"}}]`)},
		{Name: "image", Status: "1", Data: []byte("Error: No such image: x\n")},
		{Name: "keyscan", Status: "0", Data: []byte("[172.16.41.2]:12345 ssh-ed25519 AAAAC3Nza\n")},
	}
	st, err := parseState(rs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Docker != "20.10.24+dfsg1" || st.DirMode != 0o700 || st.Files["id_ed25519"].Mode != 0o600 || st.Files["sshd_config"].Sum[:4] != "9f86" ||
		st.Container == nil || st.Container.Config.Labels[horovod.ConfigLabel] != "abc" || st.Image || keyscanKey(st.Keyscan) != "ssh-ed25519 AAAAC3Nza" {
		t.Errorf("%+v %+v", st, st.Container)
	}
	rs[3] = remote.Result{Name: "inspect", Status: "1", Data: []byte("Error: No such container: hvd-worker\n")}
	if st, err := parseState(rs); err != nil || st.Container != nil {
		t.Errorf("no container: %v %+v", err, st)
	}
	rs[0] = remote.Result{Name: "docker", Status: "1", Data: []byte("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n")}
	if _, err := parseState(rs); err == nil || !strings.Contains(err.Error(), "docker does not answer: Cannot connect to the Docker daemon") {
		t.Errorf("docker down: %v", err)
	}
}

func TestKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	if _, found, err := LoadKeys(dir); found || err != nil {
		t.Fatalf("empty: %v %v", found, err)
	}
	k := testKeys(t)
	if err := SaveKeys(dir, k); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir: %v %v", err, fi)
	}
	got, found, err := LoadKeys(dir)
	if err != nil || !found || string(got.ClientPublic) != string(k.ClientPublic) || string(got.HostPrivate) != string(k.HostPrivate) {
		t.Fatalf("round trip: %v %v", found, err)
	}
	if err := SaveKeys(dir, testKeys(t)); err == nil {
		t.Error("SaveKeys replaced existing keys")
	}
	if err := os.Chmod(filepath.Join(dir, HostKeyFile), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKeys(dir); err == nil || !strings.Contains(err.Error(), "permissions 0640 are too open") {
		t.Errorf("loose key: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, HostKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKeys(dir); err == nil || !strings.Contains(err.Error(), "holds mpi_ed25519 but not the other worker key") {
		t.Errorf("half a key set: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, HostKeyFile), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadKeys(dir); err == nil || !strings.Contains(err.Error(), "not an unencrypted OpenSSH private key") {
		t.Errorf("garbage key: %v", err)
	}
	if d, _ := DefaultKeyDir("clx", func(k string) string { return map[string]string{"HOME": "/home/u"}[k] }); d != "/home/u/.config/rdggen/clx" {
		t.Errorf("default dir %s", d)
	}
	if d, _ := DefaultKeyDir("clx", func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/x"}[k] }); d != "/x/rdggen/clx" {
		t.Errorf("XDG dir %s", d)
	}
}
