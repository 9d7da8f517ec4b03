package hostapply

import (
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// planForwarding plans IPv4 forwarding.
func (p *plan) planForwarding(st *hostState) {
	d := p.d
	// Forwarding.
	if v := strings.TrimSpace(st.Forwarding.Out); st.Forwarding.RC != 0 || v != d.Forwarding {
		p.forwarding = v
		if p.forwarding == "" {
			p.forwarding = "unknown"
		}
	}
}

// applyForwarding appends the forwarding step.
func (p *plan) applyForwarding(w *remote.Script) {
	if p.forwarding != "" {
		w.Line("step forwarding sysctl -qw ", dockernet.ForwardingKey, "=", p.d.Forwarding)
	}
}
