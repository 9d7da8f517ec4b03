package inventory

// The Docker and Horovod rules: pool, prefix, MTU, DNS, network mode, image.

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

func (c *checker) docker(r *DockerSpec) {
	if r == nil {
		r = &DockerSpec{}
	}
	d := &c.inv.Docker
	d.Version = MustVersion(DefaultDockerVersion)
	if r.Version != nil {
		d.Version = *r.Version
		if d.Version.IsZero() { // a Spec made in Go; a file's "" is the decoder's finding
			c.errf("docker.version", "%v", zeroVersionError())
		}
	}
	d.Pool = netip.MustParsePrefix(DefaultPool)
	poolOK := true
	if r.Pool != nil {
		p, err := netip.ParsePrefix(*r.Pool)
		switch {
		case err != nil || !p.Addr().Is4():
			c.errf("docker.pool", "%q is not an IPv4 network like 172.16.0.0/16", *r.Pool)
			poolOK = false
		case p.Masked() != p:
			c.errf("docker.pool", "%s has host bits set; the network is %s", p, p.Masked())
			poolOK = false
		case p.Bits() < 8:
			c.errf("docker.pool", "%s is larger than /8; container subnets come from a private range such as 172.16.0.0/12", p)
			poolOK = false
		default:
			if r := specialRange(p); r != "" {
				c.errf("docker.pool", "%s overlaps %s, which cannot hold container subnets", p, r)
				poolOK = false
			} else {
				d.Pool = p
			}
		}
	}
	d.Prefix = DefaultPrefix
	if r.Prefix != nil {
		d.Prefix = *r.Prefix
		switch {
		case d.Prefix > 30:
			c.errf("docker.prefix", "/%d leaves no address for docker0's bip and a container (at most /30)", d.Prefix)
		case d.Prefix < 8:
			c.errf("docker.prefix", "/%d is outside /8–/30", d.Prefix)
		case poolOK && d.Prefix < d.Pool.Bits():
			c.errf("docker.prefix", "/%d is larger than the pool %s", d.Prefix, d.Pool)
		}
	}
	d.MTU = c.intIn("docker.mtu", r.MTU, 0, 68, MaxDataMTU, "docker0 MTU, bytes") // 0: the data MTU, set in crossHost
	dns := r.DNS
	if dns == nil {
		dns = DefaultDNS
	}
	for i, s := range dns {
		a, err := netip.ParseAddr(s)
		if err != nil {
			c.errf(fmt.Sprintf("docker.dns[%d]", i), "%q is not an IP address (dockerd accepts only addresses here)", s)
			continue
		}
		if !reachable(a) || a.Unmap().IsLoopback() {
			c.errf(fmt.Sprintf("docker.dns[%d]", i), "%s cannot be a container's DNS server (unspecified, loopback, multicast or reserved)", a)
			continue
		}
		d.DNS = append(d.DNS, a)
	}
}

func (c *checker) horovod(r *HorovodSpec) {
	if r == nil {
		r = &HorovodSpec{}
	}
	h := &c.inv.Horovod
	h.Network = NetworkBridge
	if r.Network != nil {
		h.Network = *r.Network
		if h.Network != NetworkBridge && h.Network != NetworkHost {
			c.errf("horovod.network", "%q is neither %q (routed docker0, the guide's) nor %q", h.Network, NetworkBridge, NetworkHost)
		}
	}
	h.SSHPort = c.intIn("horovod.ssh_port", r.SSHPort, DefaultSSHPort, 1, 65535, "TCP port")
	h.Image = DefaultImage
	if r.Image != nil {
		h.Image = *r.Image
		if !ValidImage(h.Image) {
			c.errf("horovod.image", "%q is not a container image reference like horovod/horovod:0.16.0-tf1.12.0-torch1.0.0-mxnet1.4.0-py3.5 ([registry/]name[:tag][@digest], Docker's reference grammar)", h.Image)
		}
	}
	h.HCA = DefaultHCA
	if r.HCA != nil {
		h.HCA = *r.HCA
		if !reHCA.MatchString(h.HCA) {
			c.errf("horovod.hca", "%q is not an RDMA device name like mlx5_0", h.HCA)
		}
	}
	h.Launcher = LauncherHorovod
	if r.Launcher != nil {
		h.Launcher = Launcher(*r.Launcher)
		if h.Launcher != LauncherHorovod && h.Launcher != LauncherTorchrun {
			c.errf("horovod.launcher", "%q is neither %q (horovodrun or mpirun from the first worker, the guide's) nor %q (PyTorch's torchrun in every worker)", h.Launcher, LauncherHorovod, LauncherTorchrun)
		}
	}
	h.NprocPerNode = c.intIn("horovod.nproc_per_node", r.NprocPerNode, 0, 1, MaxNprocPerNode, "torchrun processes per worker; leave it out for each host's GPU count")
	h.RdzvPort = c.intIn("horovod.rdzv_port", r.RdzvPort, DefaultRdzvPort, 1, 65535, "TCP port")
	h.RdzvID = c.inv.Name
	if r.RdzvID != nil {
		h.RdzvID = *r.RdzvID
		if !reRdzvID.MatchString(h.RdzvID) {
			c.errf("horovod.rdzv_id", "%q is not a job id: 1–64 letters, digits, '.', '_' and '-', starting with a letter or digit", h.RdzvID)
		}
	}
	if h.Launcher != LauncherTorchrun {
		for _, k := range []struct {
			key string
			set bool
		}{{"nproc_per_node", r.NprocPerNode != nil}, {"rdzv_port", r.RdzvPort != nil}, {"rdzv_id", r.RdzvID != nil}} {
			if k.set {
				c.warnf("horovod."+k.key, "only torchrun reads it, and horovod.launcher is %s: it has no effect (set launcher: torchrun, or leave it out)", h.Launcher)
			}
		}
	}
	if h.Network == NetworkHost && h.RdzvPort == 22 {
		c.errf("horovod.rdzv_port", "22 is the VM's own sshd: with host networking torchrun's rendezvous store must listen on another port (e.g. 29400)")
	}
	if h.RdzvPort == h.SSHPort {
		c.errf("horovod.rdzv_port", "%d is also horovod.ssh_port: the first worker's sshd listens there, torchrun's rendezvous store cannot", h.RdzvPort)
	}
}

// torchrunProcesses warns when horovod.nproc_per_node is above a host's GPU
// count: a DDP job that gives each process its own GPU (LOCAL_RANK, as
// PyTorch's DDP examples do) fails on the local ranks that have none.
func (c *checker) torchrunProcesses() {
	h := c.inv.Horovod
	if h.Launcher != LauncherTorchrun || h.NprocPerNode == 0 {
		return
	}
	for _, host := range c.inv.Hosts {
		if g := len(host.GPUs); g > 0 && h.NprocPerNode > g {
			c.warnf("horovod.nproc_per_node", "%d processes per worker, but %s has %d GPU(s): a job that gives each process its own GPU (LOCAL_RANK) fails from local rank %d on; leave it out for each host's GPU count", h.NprocPerNode, host.Name, g, g)
			return
		}
	}
}

// reRdzvID is the grammar of horovod.rdzv_id: torchrun takes any string,
// rdggen a word that is safe unquoted in sh and a file name (torchrun names
// its log directory after it).
var reRdzvID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// The image reference grammar of Docker (github.com/distribution/reference,
// reference.go): [domain/]path[:tag][@digest], where a path component is
// lower-case letters and digits joined by '.', '_', '__' or runs of '-', a
// domain is a host name or [IPv6] with an optional port, a tag is up to 128
// word characters, '.' and '-' (not starting with '.' or '-'), and a digest
// is algorithm:hex. The name is at most 255 characters. An image that starts
// with '-' is therefore refused: it would be an option to `docker run`.
var (
	reImageDomain = `(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?`
	reImagePath   = `[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*`
	reImage       = regexp.MustCompile(`^(` + reImageDomain + `/)?(` + reImagePath + `)(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)
)

// ValidImage reports whether s is a container image reference by Docker's
// grammar (see reImage).
func ValidImage(s string) bool {
	m := reImage.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	// Without a '.' or ':' (or "localhost") the first component is part of
	// the path, which must then be lower case: Docker reads "Foo/bar" as a
	// repository name and refuses it.
	domain := strings.TrimSuffix(m[1], "/")
	if domain != "" && !strings.ContainsAny(domain, ".:[") && domain != "localhost" && domain != strings.ToLower(domain) {
		return false
	}
	return len(m[1])+len(m[2]) <= 255
}
