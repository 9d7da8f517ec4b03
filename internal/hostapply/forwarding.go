package hostapply

import "strings"

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
