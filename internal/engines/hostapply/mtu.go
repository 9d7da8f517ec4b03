package hostapply

import (
	"strconv"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/dockernet"
)

// planMTU plans the data network's MTU on the data interface.
func (p *plan) planMTU(st *hostState) {
	h := p.d.Host
	// The data network's MTU on the data interface.
	if cur, _ := parseLink(st.Link.Out); st.Link.RC != 0 || cur != h.DataMTU {
		p.mtu = strconv.Itoa(cur)
		if cur == 0 {
			p.mtu = "unknown"
		}
	}
}

// applyMTU appends the MTU step.
func (p *plan) applyMTU(w *remote.Script) {
	if p.mtu != "" {
		w.Line("step mtu ip ", dockernet.MTUCommand(p.d.Host))
	}
}
