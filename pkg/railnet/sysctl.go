package railnet

import (
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/pkg/quote"
)

// Sysctl is one kernel setting a VM with several rails gets.
type Sysctl struct {
	// Key is the sysctl's name, e.g. "net.ipv4.conf.all.arp_ignore".
	Key string
	// Value is its value as sysctl(8) writes it.
	Value string
	// Why says what it does and where the rule comes from.
	Why string
}

// Sysctls are the settings of a VM with several rails, in order
// (docs/rules.md, "Several rails in one VM"). Each is set on conf.all
// only: for arp_ignore, arp_announce and rp_filter the kernel uses the
// larger of conf.all and conf.<interface> (Linux
// Documentation/networking/ip-sysctl.rst; include/linux/inetdevice.h,
// IN_DEV_MAXCONF), so conf.all = 2 sets every interface, present or
// future, to at least 2 — exactly 2 for arp_announce and rp_filter, whose
// largest value is 2; an interface whose own arp_ignore is higher (3–8,
// stricter) keeps it. conf.default is not needed for the same reason.
func Sysctls() []Sysctl {
	return []Sysctl{
		{"net.ipv4.conf.all.arp_ignore", "2",
			"answer an ARP request only for an address of the interface it came in on, and only from a sender in that address's subnet: " +
				"with several interfaces the RDMA stack may otherwise map a peer's address to the wrong RDMA device (rdma-core Documentation/librdmacm.md)"},
		{"net.ipv4.conf.all.arp_announce", "2",
			"an ARP request carries the sending interface's own address, never another rail's (IBM, SMC-R over RoCE v2; ip-sysctl.rst)"},
		{"net.ipv4.conf.all.rp_filter", "2",
			"loose reverse-path filter: a strict one (1) drops RoCE v2 and IP packets that arrive on another rail than the main table's route back (IBM, SMC-R over RoCE v2: \"silently dropped\")"},
	}
}

// Sysctl is the sysctl.d file with Sysctls, to be installed at SysctlPath.
func (g *Guest) Sysctl() []byte {
	var b strings.Builder
	b.WriteString("# rdggen: ARP and reverse-path settings of " + quote.Line(g.vm.Name) + ", a VM with " + strconv.Itoa(len(g.vm.Rails)) + " rails (RDMA interfaces).\n")
	b.WriteString("# Installed as " + SysctlPath + "; systemd-sysctl applies it at boot. Now: sysctl -p <this file>.\n")
	b.WriteString("# conf.all is enough: for each of these the kernel uses the larger of conf.all and conf.<interface>.\n")
	for _, s := range Sysctls() {
		b.WriteString("# " + s.Why + "\n")
		b.WriteString(s.Key + " = " + s.Value + "\n")
	}
	return []byte(b.String())
}
