package horovod

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io/fs"
	"strings"

	"github.com/rdggen/rdggen/pkg/inventory"
	"golang.org/x/crypto/ssh"
)

// The worker container and its SSH files.
//
// mpirun and horovodrun start the ranks of the other hosts over SSH, from the
// launching worker to each other worker's sshd (Horovod's docs/docker.rst:
// sshd on port 12345 inside the image). Every worker therefore holds the
// cluster's own client key pair, an authorized_keys that admits it, and one
// host key shared by all workers, which the client pins through a known_hosts
// entry under a fixed alias (HostKeyAlias): no StrictHostKeyChecking=no, no
// trust on first use, and the files are the same on every VM whatever the
// cluster's size. CheckHostIP is off: the key is pinned under the alias, not
// the address, and with it on (the default of OpenSSH before 8.5) ssh tries
// to add each address to the read-only known_hosts and warns on stderr on
// every connection (ssh_config(5)). They live on each VM in WorkerSSHDir, owned by rdggen and
// mounted read-only at /root/.ssh of the worker — never the VM's own
// /root/.ssh.
const (
	// WorkerSSHDir is the directory of the workers' SSH files on every VM.
	WorkerSSHDir = "/etc/rdggen/worker-ssh"
	// ContainerSSHDir is where the worker sees WorkerSSHDir.
	ContainerSSHDir = "/root/.ssh"
	// ConfigLabel is the worker container's label that holds WorkerConfigHash,
	// so that apply recognises a worker created from the same configuration.
	ConfigLabel = "org.rdggen.worker-config"
)

// Names of the files in WorkerSSHDir.
const (
	SSHDConfigName    = "sshd_config"
	HostKeyName       = "ssh_host_ed25519_key"
	ClientKeyName     = "id_ed25519"
	AuthorizedKeyName = "authorized_keys"
	KnownHostsName    = "known_hosts"
	ClientConfigName  = "config"
)

// WorkerKeys are the cluster's SSH keys for the workers: ed25519 private keys
// in OpenSSH PEM form and their public keys in authorized_keys form
// ("ssh-ed25519 AAAA…", no comment).
type WorkerKeys struct {
	ClientPrivate, ClientPublic []byte
	HostPrivate, HostPublic     []byte
}

// WorkerFile is one file of WorkerSSHDir.
type WorkerFile struct {
	// Name is the file name inside WorkerSSHDir.
	Name string
	// Mode is 0600 for private keys and authorized_keys, 0644 otherwise.
	Mode fs.FileMode
	Data []byte
	// Secret files (private keys) are never printed or read back; apply
	// compares them by digest.
	Secret bool
	// SSHD reports whether sshd reads the file only when it starts, so that a
	// change needs the worker restarted.
	SSHD bool
}

// HostKeyAlias is the name under which every worker's host key is pinned in
// known_hosts and looked up by the client (ssh_config HostKeyAlias).
func HostKeyAlias(inv *inventory.Inventory) string { return "rdggen-worker." + inv.Name }

// WorkerFiles returns WorkerSSHDir's files, the same on every VM of the cluster.
func WorkerFiles(inv *inventory.Inventory, k WorkerKeys) []WorkerFile {
	comment := " rdggen-mpi@" + inv.Name + "\n"
	return []WorkerFile{
		{Name: SSHDConfigName, Mode: 0o644, Data: sshdConfig(inv), SSHD: true},
		{Name: HostKeyName, Mode: 0o600, Data: k.HostPrivate, Secret: true, SSHD: true},
		{Name: HostKeyName + ".pub", Mode: 0o644, Data: []byte(strings.TrimSpace(string(k.HostPublic)) + " rdggen-worker@" + inv.Name + "\n")},
		{Name: ClientKeyName, Mode: 0o600, Data: k.ClientPrivate, Secret: true},
		{Name: ClientKeyName + ".pub", Mode: 0o644, Data: []byte(strings.TrimSpace(string(k.ClientPublic)) + comment)},
		{Name: AuthorizedKeyName, Mode: 0o600, Data: []byte(strings.TrimSpace(string(k.ClientPublic)) + comment)},
		{Name: KnownHostsName, Mode: 0o644, Data: []byte(HostKeyAlias(inv) + " " + strings.TrimSpace(string(k.HostPublic)) + "\n")},
		{Name: ClientConfigName, Mode: 0o644, Data: clientConfig(inv)},
	}
}

// sshdConfig is the worker's complete sshd configuration: the image's own
// (which may have another port, password logins or no host key) is not used.
// Keywords that OpenSSH 7.2 (Ubuntu 16.04 images) already knows.
func sshdConfig(inv *inventory.Inventory) []byte {
	return []byte(`# rdggen: sshd of the Horovod workers of cluster ` + inv.Name + `, started by the worker
# container as: sshd -D -e -f ` + ContainerSSHDir + `/` + SSHDConfigName + `
Port ` + fmt.Sprint(inv.Horovod.SSHPort) + `
HostKey ` + ContainerSSHDir + `/` + HostKeyName + `
AuthorizedKeysFile ` + ContainerSSHDir + `/` + AuthorizedKeyName + `
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
ChallengeResponseAuthentication no
UsePAM no
UseDNS no
PrintMotd no
`)
}

// MaxSSHLine is the longest line, in bytes with its newline, of every
// OpenSSH file rdggen writes (the workers' config, known_hosts,
// authorized_keys, sshd_config), whatever the cluster's size. OpenSSH before
// 7.5 reads ssh_config and sshd_config with a 1,024-byte line buffer, so a
// longer line is cut into pieces, each parsed as its own line ("Bad
// configuration option: …"; Ubuntu 16.04 ships 7.2); 7.5 to 7.7 refuse lines
// of 4,096 bytes or more ("line too long"); 7.8 reads lines of any length
// (openssh-portable readconf.c and servconf.c: a fixed line buffer before
// 7.8, getline from it; docs/rules.md#worker-ssh).
const MaxSSHLine = 1000

// clientConfig is the SSH client configuration inside the workers: every
// worker address gets the worker port, the cluster key and the pinned host
// key. The addresses go on as many Host lines as keep each line within
// MaxSSHLine, each followed by the same settings (a Host block's settings
// apply to the addresses of its own line only; ssh_config(5)), so that
// OpenSSH 7.2 reads the file at any cluster size.
func clientConfig(inv *inventory.Inventory) []byte {
	settings := fmt.Sprintf(`	Port %d
	User root
	IdentityFile %s/%s
	IdentitiesOnly yes
	HostKeyAlias %s
	UserKnownHostsFile %s/%s
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	CheckHostIP no
	BatchMode yes
`, inv.Horovod.SSHPort, ContainerSSHDir, ClientKeyName, HostKeyAlias(inv), ContainerSSHDir, KnownHostsName)
	var b strings.Builder
	b.WriteString("# rdggen: how mpirun and horovodrun reach the other workers of cluster " + inv.Name + ".\n")
	line := ""
	flush := func() {
		if line != "" {
			b.WriteString(line + "\n" + settings)
		}
		line = ""
	}
	for _, w := range Workers(inv) {
		a := w.Address.String()
		if line != "" && len(line)+1+len(a)+1 > MaxSSHLine {
			flush()
		}
		if line == "" {
			line = "Host"
		}
		line += " " + a
	}
	flush()
	return []byte(b.String())
}

// WorkerCommand is what the worker container runs: sshd in the foreground as
// its main process, with rdggen's configuration. /run/sshd (sshd's privilege
// separation directory, which images built with `apt-get install
// openssh-server` lack until the init script runs) is created first. When sshd
// cannot start, the container stops and its log says why.
func WorkerCommand() []string {
	return []string{"sh", "-c", "mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e -f " + ContainerSSHDir + "/" + SSHDConfigName}
}

// TopologyMount is the -v argument that gives a worker of a VM with several
// rails NCCL's topology file: the directory of nccltopo.DefaultPath,
// read-only at the same path, where NCCL loads the file by default
// (NVIDIA/nccl env.rst, NCCL_TOPO_FILE). The directory is mounted, not the
// file, so that the file the VM writes again at boot (a tmpfs; pkg/railguest
// renames the new file into the same directory) is the one the container
// sees.
const TopologyMount = topologyDir + ":" + topologyDir + ":ro"

// topologyDir is the directory of nccltopo.DefaultPath.
const topologyDir = "/var/run/nvidia-topologyd"

// WorkerRunArgs is the worker container's `docker run` argv with the SSH
// files mounted from sshDir: GPUs (nvidia-docker2's runtime before Docker
// 19.03, `--gpus all` from it), the RDMA devices, IPC_LOCK and unlimited
// memlock for memory registration, a larger /dev/shm, NCCL's topology file
// for VMs with several rails (TopologyMount), NCCL's settings (WorkerEnv),
// host networking in host mode, the configuration label (WorkerConfigHash)
// and WorkerCommand.
func WorkerRunArgs(inv *inventory.Inventory, sshDir string) []string {
	body := workerRunBody(inv, sshDir)
	args := []string{"docker", "run", "-d", "--name", WorkerName, "--restart", "unless-stopped",
		"--label", ConfigLabel + "=" + hashArgs(body)}
	return append(args, body...)
}

// DockerRunArgs is WorkerRunArgs with the SSH files at WorkerSSHDir.
func DockerRunArgs(inv *inventory.Inventory) []string { return WorkerRunArgs(inv, WorkerSSHDir) }

// WorkerConfigHash is the value of the worker's ConfigLabel: a digest of
// everything WorkerRunArgs passes besides its name, restart policy and the
// label itself. 16 hex digits.
func WorkerConfigHash(inv *inventory.Inventory, sshDir string) string {
	return hashArgs(workerRunBody(inv, sshDir))
}

func workerRunBody(inv *inventory.Inventory, sshDir string) []string {
	var args []string
	if inv.Docker.Version.AtLeast(19, 3) {
		args = append(args, "--gpus", "all")
	} else {
		args = append(args, "--runtime=nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=all")
	}
	args = append(args, "--device=/dev/infiniband", "--cap-add=IPC_LOCK", "--ulimit", "memlock=-1",
		"--shm-size="+ShmSize, "-v", sshDir+":"+ContainerSSHDir+":ro")
	if inv.MultiRail() {
		args = append(args, "-v", TopologyMount)
	}
	for _, e := range WorkerEnv(inv) {
		args = append(args, "-e", e.Name+"="+e.Value)
	}
	if inv.Horovod.Network == inventory.NetworkHost {
		args = append(args, "--network=host")
	}
	args = append(args, inv.Horovod.Image)
	return append(args, WorkerCommand()...)
}

func hashArgs(args []string) string {
	h := sha256.New()
	for _, a := range args {
		h.Write([]byte(a))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// GenerateWorkerKeys makes a new client key pair and host key, ed25519.
func GenerateWorkerKeys() (WorkerKeys, error) {
	var k WorkerKeys
	var err error
	if k.ClientPrivate, k.ClientPublic, err = newKey(); err != nil {
		return k, err
	}
	k.HostPrivate, k.HostPublic, err = newKey()
	return k, err
}

// newKey is an ed25519 key: the private key as an OpenSSH PEM block, the
// public key in authorized_keys form without a comment.
func newKey() (private, public []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, nil, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(block), bytes.TrimSpace(ssh.MarshalAuthorizedKey(sp)), nil
}
