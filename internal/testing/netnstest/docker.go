package netnstest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rdggen/rdggen/internal/testing/exefile"
)

// A real dockerd per namespace host (Options.Docker).
//
// Debian's docker.io (20.10) runs in each host's network namespace once it
// has a private mount namespace with:
//   - tmpfs on /run/docker and /etc/docker (the machine's own stay untouched),
//   - the cgroup v1 hierarchies mounted on a tmpfs at /sys/fs/cgroup (ip netns
//     exec mounts a new /sys, without them),
//   - an overlay on /dev whose upper layer adds /dev/infiniband with one
//     stand-in device node (c 1:3, /dev/null's numbers), so that the worker's
//     `--device=/dev/infiniband` resolves as on a VM with a ConnectX VF,
//   - its own --data-root, --exec-root, --pidfile and socket,
//   - on its PATH a stand-in nvidia-container-runtime-hook (exits 0), which
//     makes dockerd accept `--gpus all` as on a host with nvidia-docker2.
//
// The hosts' daemon.json (under their root prefix, managed by the hosts
// target) registers the runtime "rdgtest" as the default: runc, with the
// containers' RLIMIT_MEMLOCK clamped to what this machine allows (a sandbox
// without CAP_SYS_RESOURCE refuses `--ulimit memlock=-1`, which the worker
// asks for; the container's configuration still says -1). The same runtime
// binds host directories read-only into a container whose image lists them
// in HostMountsFile, as nvidia-container-toolkit's runtime adds the host's
// driver libraries to a container's spec: so a worker (WorkerImage,
// TorchWorkerImage) runs this machine's own shared libraries, Open MPI's
// plugins and python3-torch without a copy of them in every host's image
// store.
//
// The hosts' sshd sessions find their dockerd through DOCKER_HOST.

// RequireDocker is Unavailable unless dockerd, containerd and runc are
// installed (Debian: docker.io) and cgroup v1 controllers exist.
func RequireDocker(t TB) {
	t.Helper()
	for _, tool := range []string{"dockerd", "containerd", "runc", "docker", "ssh-keyscan"} {
		if _, err := exec.LookPath(tool); err != nil {
			Unavailable(t, "netnstest: %s not found (install docker.io and openssh-client)", tool)
		}
	}
	b, err := os.ReadFile("/proc/cgroups")
	if err != nil || !bytes.Contains(b, []byte("\ndevices\t")) || !bytes.Contains(b, []byte("\nmemory\t")) {
		Unavailable(t, "netnstest: dockerd needs the cgroup v1 devices and memory controllers (/proc/cgroups: %v)", err)
	}
}

// dockerDir is where h's dockerd keeps its state, below h's root prefix.
func (h *Host) dockerDir() string { return filepath.Join(h.Root, ".dockerd") }

// DockerSocket is h's dockerd socket.
func (h *Host) DockerSocket() string { return filepath.Join(h.dockerDir(), "docker.sock") }

// Docker runs the docker CLI against h's dockerd and returns its combined output.
func (h *Host) Docker(args ...string) (string, error) {
	cmd := exec.Command("docker", args...)
	cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+h.DockerSocket())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestRuntime is the name of the default runtime the hosts' daemon.json
// registers (see above).
const TestRuntime = "rdgtest"

// HostMountsFile is the file, in an image's root filesystem, that lists
// (one absolute path a line, of letters, digits and "/._-") the directories
// or files of this machine that the hosts' runtime (TestRuntime) binds
// read-only at the same paths into each container of the image, ahead of
// Docker's mounts. A bad or missing path makes the container fail to start,
// with the runtime's message in dockerd's error.
const HostMountsFile = "/etc/netnstest/host-mounts"

// InitialDaemonJSON is h's /etc/docker/daemon.json before rdggen: the test
// runtime as default, as nvidia-docker2 registers its own, and the same
// runtime under nvidia-docker2's name "nvidia" too, which a worker asks
// for with `--runtime=nvidia` on Docker before 19.03 (no `--gpus`).
func (c *Cluster) InitialDaemonJSON() string {
	runc := filepath.Join(c.Dir, "dockerbin", "runc-memlock")
	return fmt.Sprintf("{\n    \"runtimes\": {\n        %q: {\n            \"path\": %q\n        },\n        \"nvidia\": {\n            \"path\": %q\n        }\n    },\n    \"default-runtime\": %q\n}\n",
		TestRuntime, runc, runc, TestRuntime)
}

const dockerdScript = `#!/bin/sh
# netnstest: start this host's dockerd in a private mount namespace (run by
# docker-restart.sh under unshare -m).
set -eu
D=$(dirname "$0")
R=$(dirname "$D")
for d in /run/docker /etc/docker; do mkdir -p "$d"; mount -t tmpfs none "$d"; done
mount -t tmpfs none /sys/fs/cgroup
for c in cpu cpuacct cpuset memory devices freezer blkio pids; do
	mkdir -p /sys/fs/cgroup/$c
	mount -t cgroup -o $c cgroup /sys/fs/cgroup/$c
done
mkdir -p /sys/fs/cgroup/systemd
mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
rm -rf "$D/dev-upper" "$D/dev-work"
mkdir -p "$D/dev-upper" "$D/dev-work"
mount -t overlay overlay -o lowerdir=/dev,upperdir="$D/dev-upper",workdir="$D/dev-work" /dev
mkdir -p /dev/infiniband /dev/pts /dev/shm
mknod /dev/infiniband/uverbs0 c 1 3
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs shm /dev/shm
PATH=BIN:$PATH
export PATH
exec dockerd --data-root "$D/data" --exec-root "$D/exec" --pidfile "$D/dockerd.pid" \
	-H "unix://$D/docker.sock" --config-file "$R/etc/docker/daemon.json"
`

// dockerRestartScript stops the host's dockerd (containers stop with it)
// and starts it again; Docker's own start-up does the rest (docker0 at
// daemon.json's bip, its iptables rules, containers with a restart policy).
// RDGGEN_ROOT is the host's root prefix.
const dockerRestartScript = `#!/bin/sh
# netnstest's stand-in for "systemctl restart docker" on a namespace host
# with a real dockerd.
set -eu
D="$RDGGEN_ROOT/.dockerd"
if [ -f "$D/dockerd.pid" ] && pid=$(cat "$D/dockerd.pid") && kill -0 "$pid" 2>/dev/null; then
	kill "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1)); [ "$i" -lt 300 ] || { echo "dockerd $pid does not stop" >&2; exit 1; }
		sleep 0.1
	done
fi
setsid unshare -m --propagation private sh "$D/dockerd.sh" </dev/null >>"$D/dockerd.log" 2>&1 &
i=0
until DOCKER_HOST="unix://$D/docker.sock" docker version >/dev/null 2>&1; do
	i=$((i + 1)); [ "$i" -lt 300 ] || { echo "dockerd does not start:" >&2; tail -n 20 "$D/dockerd.log" >&2; exit 1; }
	sleep 0.1
done
echo restart >>"$RDGGEN_ROOT/docker-restarts"
`

// dockerBin writes the stand-ins of the GPU tooling once per cluster.
func (c *Cluster) dockerBin() string {
	bin := filepath.Join(c.Dir, "dockerbin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		c.t.Fatal(err)
	}
	for name, body := range map[string]string{
		"nvidia-container-runtime-hook": "#!/bin/sh\n# netnstest: stand-in for nvidia-container-toolkit's hook (no GPUs here).\nexit 0\n",
		"runc-memlock": `#!/bin/sh
# netnstest: runc with RLIMIT_MEMLOCK clamped to this machine's hard limit,
# in the container's spec (create --bundle) and in exec's (exec --process);
# and, for a container whose root filesystem has HOSTMOUNTS, the host paths
# it lists (one a line) bound read-only at the same places, ahead of
# Docker's own mounts in the spec.
f=; prev=; bundle=
for a in "$@"; do
	case $prev in --bundle) f=$a/config.json bundle=$a;; --process) f=$a;; esac
	prev=$a
done
h=$(ulimit -H -l)
if [ -n "$f" ] && [ -f "$f" ] && [ "$h" != unlimited ]; then
	h=$((h * 1024))
	sed -i "s/\"RLIMIT_MEMLOCK\",\"hard\":[0-9]*,\"soft\":[0-9]*/\"RLIMIT_MEMLOCK\",\"hard\":$h,\"soft\":$h/" "$f"
fi
if [ -n "$bundle" ] && [ -f "$f" ]; then
	root=$(sed -n 's/.*"root":{"path":"\([^"]*\)".*/\1/p' "$f")
	case $root in /*) ;; *) root=$bundle/$root;; esac
	if [ -f "$root/HOSTMOUNTS" ]; then
		add=
		while IFS= read -r p; do
			case $p in
			*[!A-Za-z0-9/._-]* | */../* | */.. | "" | [!/]*)
				echo "netnstest runc: $root/HOSTMOUNTS: bad path $p" >&2; exit 1;;
			esac
			[ -e "$p" ] || { echo "netnstest runc: $root/HOSTMOUNTS: no $p on this machine" >&2; exit 1; }
			add="$add{\"destination\":\"$p\",\"type\":\"bind\",\"source\":\"$p\",\"options\":[\"rbind\",\"ro\"]},"
		done <"$root/HOSTMOUNTS"
		sed -i "s|\"mounts\":\[|\"mounts\":[$add|" "$f"
		grep -qF "$add" "$f" || { echo "netnstest runc: no mounts in $f" >&2; exit 1; }
	fi
fi
exec runc "$@"
`,
	} {
		body = strings.ReplaceAll(body, "HOSTMOUNTS", strings.TrimPrefix(HostMountsFile, "/"))
		if err := exefile.Write(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
	return bin
}

// startDocker writes h's dockerd scripts and the initial daemon.json, and
// starts dockerd.
func (c *Cluster) startDocker(h *Host, bin string) error {
	d := h.dockerDir()
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(h.File("/etc/docker"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(h.File("/etc/docker/daemon.json"), []byte(c.InitialDaemonJSON()), 0o644); err != nil {
		return err
	}
	if err := exefile.Write(filepath.Join(d, "dockerd.sh"), []byte(strings.Replace(dockerdScript, "BIN", bin, 1)), 0o755); err != nil {
		return err
	}
	out, err := c.Exec(h.NS, "env", "RDGGEN_ROOT="+h.Root, "sh", "-c", c.DockerRestartCommand())
	if err != nil {
		return fmt.Errorf("%s: dockerd: %v\n%s", h.Name, err, out)
	}
	return os.Remove(h.File("/docker-restarts")) // the start is not a restart
}

// stopDocker removes h's containers and stops its dockerd.
func (c *Cluster) stopDocker(h *Host) {
	if ids, err := h.Docker("ps", "-aq"); err == nil && strings.TrimSpace(ids) != "" {
		_, _ = h.Docker(append([]string{"rm", "-f"}, strings.Fields(ids)...)...)
	}
	b, err := os.ReadFile(filepath.Join(h.dockerDir(), "dockerd.pid"))
	if err != nil {
		return
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 1 {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 150 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
}

// ImportImage loads a root filesystem tar (BuildImage) into every host's
// dockerd as image name; nothing is pulled.
// The hosts import it at the same time.
func (c *Cluster) ImportImage(name string, tarball []byte) {
	c.t.Helper()
	errs := make([]error, len(c.Hosts))
	var wg sync.WaitGroup
	for i, h := range c.Hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("docker", "import", "-", name)
			cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+h.DockerSocket())
			cmd.Stdin = bytes.NewReader(tarball)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%s: docker import: %v\n%s", h.Name, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.t.Fatal(err)
	}
}
