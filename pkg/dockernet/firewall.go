package dockernet

import (
	"bytes"
	"net/netip"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// The firewall and address translation of a host's containers.
//
// rdggen's rules live in two chains of its own, each reached by one jump that
// is kept as the first rule of a chain Docker also uses:
//
//   - filter FirewallChain, jumped to from DOCKER-USER (Docker ≥ 17.06 evaluates
//     DOCKER-USER first in FORWARD and keeps its rules across restarts). Over the
//     data interface, new connections to this host's containers are accepted
//     from the other hosts' container subnets and dropped from anywhere else.
//     The DROP makes that true whatever FORWARD's policy is: dockerd sets the
//     policy to DROP only when it had to turn forwarding on itself, and leaves
//     ACCEPT on a host where forwarding was already on (moby
//     libnetwork/drivers/bridge/setup_ip_forwarding.go).
//   - nat NATChain, jumped to from POSTROUTING: traffic from this host's
//     containers to the other hosts' containers is accepted in the nat table,
//     i.e. not translated. Docker's own rule, `POSTROUTING -s <docker0 subnet>
//     ! -o docker0 -j MASQUERADE`, would otherwise rewrite the source to the
//     host's data address, and Open MPI's TCP transport drops connections whose
//     source is not an address the peer published (open-mpi/ompi
//     opal/mca/btl/tcp/btl_tcp_proc.c; open-mpi/ompi#2320). Traffic to anything
//     else is still masqueraded by Docker's rule.
//
// Both chains are replaced as one block by `iptables-restore --noflush`
// (declaring a chain flushes only that chain), so a re-run never duplicates a
// rule and other people's rules stay. dockerd inserts its MASQUERADE rule at
// the top of POSTROUTING every time it starts (it deletes and re-creates the
// default bridge network: moby daemon/daemon_unix.go, "Clear stale bridge
// network"), which pushes rdggen's jump below it. FirewallScript therefore
// puts each jump back in first place, and FirewallUnit runs it after every
// start of docker.service.
const (
	// FirewallChain is the filter-table chain of rdggen's FORWARD rules.
	FirewallChain = "RDGGEN-CONTAINERS"
	// NATChain is the nat-table chain that exempts container-to-container
	// traffic from Docker's masquerading.
	NATChain = "RDGGEN-POSTROUTING"
	// DockerUserChain is Docker's placeholder for user rules in FORWARD.
	DockerUserChain = "DOCKER-USER"
	// DockerBridge is the default bridge docker0.
	DockerBridge = "docker0"
	// FirewallJump is the DOCKER-USER rule, in `iptables -S` form, that sends
	// forwarded traffic through FirewallChain.
	FirewallJump = "-A " + DockerUserChain + " -j " + FirewallChain
	// NATJump is the nat POSTROUTING rule, in `iptables -S` form, that sends
	// outgoing traffic through NATChain.
	NATJump = "-A POSTROUTING -j " + NATChain
)

// Jump is a rule that must be the first of Chain in Table, exactly once:
// "-A <Chain> -j <Target>".
type Jump struct {
	Table, Chain, Target string
}

// Rule is the jump in `iptables -S` form.
func (j Jump) Rule() string { return "-A " + j.Chain + " -j " + j.Target }

// Jumps are rdggen's two jumps, filter table first.
var Jumps = []Jump{
	{Table: "filter", Chain: DockerUserChain, Target: FirewallChain},
	{Table: "nat", Chain: "POSTROUTING", Target: NATChain},
}

// FirewallSources returns the other hosts' container subnets, aggregated into
// the fewest prefixes that cover exactly those hosts (for clx-mld-41 of the
// reference cluster: 172.16.42.0/23, 172.16.44.0/22, 172.16.48.0/24). They are
// both who may open connections to host h's containers over the data interface
// and where h's containers' traffic goes untranslated.
//
// With docker.routing: switch it is the whole pool, docker.pool (one prefix,
// the same on every host): the other hosts' containers are all in it, and a
// host's files then do not depend on the cluster's size. The security
// property stays: over the data interface, new connections are accepted
// only from container-pool sources and every other one is dropped. (Both
// modes judge by source address alone, so the pool also admits h's own
// subnet arriving from outside; the per-host lists admitted any other
// host's subnet from anywhere on the data network just as well.)
func FirewallSources(inv *inventory.Inventory, h *inventory.Host) []netip.Prefix {
	return newFirewallTable(inv).sources(h.Index)
}

// firewallTable holds the aggregated container subnets of all hosts, computed
// once, so that each host's sources are the cluster's minus its own: a binary
// search and a split of one prefix. In switch-routed mode it holds only the
// pool.
type firewallTable struct {
	subnets []netip.Prefix // aggregated, sorted
	own     []netip.Prefix
	pool    netip.Prefix // valid in switch-routed mode: every host's one source
}

func newFirewallTable(inv *inventory.Inventory) *firewallTable {
	if inv.Docker.SwitchRouted() {
		return &firewallTable{pool: inv.Docker.Pool}
	}
	t := &firewallTable{own: make([]netip.Prefix, len(inv.Hosts))}
	for i := range inv.Hosts {
		t.own[i], _ = RouteTo(&inv.Hosts[i])
	}
	t.subnets = aggregate(t.own)
	return t
}

func (t *firewallTable) sources(self int) []netip.Prefix {
	if t.pool.IsValid() {
		return []netip.Prefix{t.pool}
	}
	return without(t.subnets, t.own[self])
}

// FirewallRules returns host h's rules of FirewallChain in `iptables -S` form
// (the order iptables prints: -s -d -i -o -m -j), so that the apply engine can
// compare them with the host's `iptables -S` text: accept new connections
// arriving on the data interface for docker0 and h's container subnet from
// FirewallSources, then drop every other connection that is not a reply.
// Replies to the containers' own connections pass (RELATED,ESTABLISHED);
// traffic the containers send is Docker's "-i docker0 ! -o docker0 -j ACCEPT".
func FirewallRules(inv *inventory.Inventory, h *inventory.Host) []string {
	return newFirewallTable(inv).filterRules(h)
}

func (t *firewallTable) filterRules(h *inventory.Host) []string {
	to := " -d " + h.Subnet.String() + " -i " + h.DataInterface + " -o " + DockerBridge
	src := t.sources(h.Index)
	out := make([]string, 0, len(src)+1)
	for _, s := range src {
		out = append(out, "-A "+FirewallChain+" -s "+s.String()+to+" -j ACCEPT")
	}
	return append(out, "-A "+FirewallChain+to+" -m conntrack ! --ctstate RELATED,ESTABLISHED -j DROP")
}

// NATRules returns host h's rules of NATChain in `iptables -S` form: from h's
// container subnet to each prefix of FirewallSources, accept (no translation).
func NATRules(inv *inventory.Inventory, h *inventory.Host) []string {
	return newFirewallTable(inv).natRules(h)
}

func (t *firewallTable) natRules(h *inventory.Host) []string {
	src := t.sources(h.Index)
	out := make([]string, 0, len(src))
	for _, s := range src {
		out = append(out, "-A "+NATChain+" -s "+h.Subnet.String()+" -d "+s.String()+" -j ACCEPT")
	}
	return out
}

// FirewallRestore is host h's two chains as `iptables-restore --noflush`
// input: each chain declared (which creates or flushes it) and refilled.
func FirewallRestore(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	newFirewallTable(inv).restore(h, &b)
	return b.Bytes()
}

func (t *firewallTable) restore(h *inventory.Host, b *bytes.Buffer) {
	for _, c := range []struct {
		table, chain string
		rules        []string
	}{{"filter", FirewallChain, t.filterRules(h)}, {"nat", NATChain, t.natRules(h)}} {
		b.WriteString("*" + c.table + "\n:" + c.chain + " - [0:0]\n")
		for _, r := range c.rules {
			b.WriteString(r)
			b.WriteByte('\n')
		}
		b.WriteString("COMMIT\n")
	}
}

// firstRuleFunc is the shell function that makes a jump the first rule of
// its chain, exactly once: insert it at the top, then delete every other copy
// from the bottom up (`iptables -S CHAIN` prints the policy or -N line first,
// so line n+1 is rule n). Inserting before deleting leaves no moment without
// the jump.
const firstRuleFunc = `# first_rule TABLE CHAIN TARGET: CHAIN's first rule jumps to TARGET, and no other rule does.
first_rule() {
	iptables -w -t "$1" -I "$2" 1 -j "$3"
	iptables -w -t "$1" -S "$2" | awk -v r="-A $2 -j $3" 'NR > 2 && $0 == r { print NR - 1 }' | sort -rn |
	while read -r n; do iptables -w -t "$1" -D "$2" "$n"; done
}
`

// firewallBody writes the commands that load both chains and put both jumps
// first: the part of FirewallScript and routes.sh that does the work.
func (t *firewallTable) firewallBody(h *inventory.Host, b *bytes.Buffer) {
	b.WriteString(firstRuleFunc)
	b.WriteString("iptables -w -n -L " + DockerUserChain + " >/dev/null 2>&1 || iptables -w -N " + DockerUserChain + "\n")
	b.WriteString("iptables-restore --noflush <<'EOF'\n")
	t.restore(h, b)
	b.WriteString("EOF\n")
	for _, j := range Jumps {
		b.WriteString("first_rule " + j.Table + " " + j.Chain + " " + j.Target + "\n")
	}
}

// FirewallScript is host h's /etc/rdggen/firewall.sh (FirewallScriptPath):
// both chains loaded and both jumps put first, idempotent. FirewallUnit runs
// it after every start of docker.service; `rdggen apply --target hosts` runs
// the same bytes when the live rules differ.
func FirewallScript(inv *inventory.Inventory, h *inventory.Host) []byte {
	return newFirewallTable(inv).script(inv, h)
}

func (t *firewallTable) script(inv *inventory.Inventory, h *inventory.Host) []byte {
	var b bytes.Buffer
	b.WriteString("#!/bin/sh\n")
	b.WriteString("# rdggen: firewall and address translation of " + h.Name + "'s containers (cluster " + inv.Name + ").\n")
	b.WriteString("# Installed as " + FirewallScriptPath + "; " + FirewallUnitName + " runs it after every start of\n")
	b.WriteString("# docker.service, because dockerd puts its MASQUERADE rule back on top of POSTROUTING when it starts.\n")
	t.comment(h, &b, "# ")
	b.WriteString("set -eu\n")
	t.firewallBody(h, &b)
	return b.Bytes()
}

// comment explains both chains, each line starting with lead.
func (t *firewallTable) comment(h *inventory.Host, b *bytes.Buffer, lead string) {
	own := h.Subnet.String()
	if t.pool.IsValid() {
		pool := t.pool.String()
		for _, l := range []string{
			FirewallChain + " (filter, first rule of " + DockerUserChain + "): over " + h.DataInterface + ", new connections to this",
			"host's containers (" + own + ") are accepted from the container pool " + pool + " (the",
			"cluster's containers, routed by the switch) and dropped from anywhere else, whatever the",
			"FORWARD policy (dockerd leaves it at ACCEPT where forwarding was already on when it started).",
			NATChain + " (nat, first rule of POSTROUTING): traffic from " + own + " to the",
			"container pool " + pool + " keeps its container source address (Open MPI's TCP transport",
			"drops connections from an address the peer did not publish); Docker's MASQUERADE still",
			"applies to everything else.",
		} {
			b.WriteString(lead + l + "\n")
		}
		return
	}
	for _, l := range []string{
		FirewallChain + " (filter, first rule of " + DockerUserChain + "): over " + h.DataInterface + ", new connections to this",
		"host's containers (" + own + ") are accepted from the other hosts' containers and dropped from",
		"anywhere else, whatever the FORWARD policy (dockerd leaves it at ACCEPT where forwarding was",
		"already on when it started).",
		NATChain + " (nat, first rule of POSTROUTING): traffic from " + own + " to the other hosts'",
		"containers keeps its container source address (Open MPI's TCP transport drops connections from",
		"an address the peer did not publish); Docker's MASQUERADE still applies to everything else.",
	} {
		b.WriteString(lead + l + "\n")
	}
}
