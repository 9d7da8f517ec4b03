package hostapply

import (
	"fmt"
	"slices"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// planFirewall plans rdggen's chains, each as a block, and each jump first
// in its chain, once.
func (p *plan) planFirewall(st *hostState) {
	d := p.d
	// Firewall and address translation: each chain as a block, each jump
	// first in its chain, once.
	for _, c := range []struct {
		table, chain string
		st           cmdOut
		want         []string
	}{
		{"filter", dockernet.FirewallChain, st.Chain, d.ChainRules},
		{"nat", dockernet.NATChain, st.NAT, d.NATRules},
	} {
		if have := chainRules(c.st.Out); c.st.RC != 0 || !slices.Equal(have, c.want) {
			p.chains = append(p.chains, chainChange{Table: c.table, Chain: c.chain, Want: len(c.want), Was: have, New: c.st.RC != 0})
		}
	}
	for i, in := range []cmdOut{st.DockerUser, st.Postrouting} {
		if why := jumpProblem(dockernet.Jumps[i], in); why != "" {
			p.jumps = append(p.jumps, jumpChange{Jump: dockernet.Jumps[i], Why: why})
		}
	}
}

// jumpProblem says why j is not the first rule of its chain exactly once
// ("" when it is); in is `iptables -S <chain>`.
func jumpProblem(j dockernet.Jump, in cmdOut) string {
	if in.RC != 0 {
		return "no chain " + j.Chain
	}
	rules := chainRules(in.Out)
	var at []int
	for i, r := range rules {
		if r == j.Rule() {
			at = append(at, i+1)
		}
	}
	switch {
	case len(at) == 0:
		return "absent"
	case at[0] != 1:
		return fmt.Sprintf("rule %d, after %q", at[0], rules[0])
	case len(at) > 1:
		return fmt.Sprintf("%d copies", len(at))
	}
	return ""
}

// applyFirewall appends the firewall step (dockernet.FirewallScript).
func (p *plan) applyFirewall(w *remote.Script) {
	if p.firewall() {
		w.Line("step firewall sh ", w.Data(p.d.Firewall))
	}
}

// differs, or Docker restarts (it puts its MASQUERADE rule back on top).
func (p *plan) firewall() bool {
	return len(p.chains)+len(p.jumps) > 0 || p.daemon != nil || p.restart != ""
}
