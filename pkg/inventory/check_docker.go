package inventory

// The Docker and Horovod rules: pool, prefix, MTU, DNS, network mode, image.

import (
	"fmt"
	"net/netip"
	"strings"
)

func (c *checker) docker(r *rawDocker) {
	if r == nil {
		r = &rawDocker{}
	}
	d := &c.inv.Docker
	d.Version = MustVersion(DefaultDockerVersion)
	if r.Version != nil {
		d.Version = *r.Version
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
		case poolOK && d.Prefix < d.Pool.Bits():
			c.errf("docker.prefix", "/%d is larger than the pool %s", d.Prefix, d.Pool)
		case d.Prefix < 8:
			c.errf("docker.prefix", "/%d is outside /8–/30", d.Prefix)
		}
	}
	d.MTU = c.intIn("docker.mtu", r.MTU, DefaultDockerMTU, 68, 9216, "docker0 MTU, bytes")
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
		d.DNS = append(d.DNS, a)
	}
}

func (c *checker) horovod(r *rawHorovod) {
	if r == nil {
		r = &rawHorovod{}
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
		if strings.TrimSpace(h.Image) == "" || strings.ContainsAny(h.Image, " \t'\"$`") {
			c.errf("horovod.image", "%q is not a container image reference", h.Image)
		}
	}
	h.HCA = DefaultHCA
	if r.HCA != nil {
		h.HCA = *r.HCA
		if !reHCA.MatchString(h.HCA) {
			c.errf("horovod.hca", "%q is not an RDMA device name like mlx5_0", h.HCA)
		}
	}
}
