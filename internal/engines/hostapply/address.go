package hostapply

import (
	"slices"

	"github.com/rdggen/rdggen/internal/transport/remote"
)

// planAddress: the data interface must carry the inventory's address
// (the routes' next hops must be on-link), else the host is not changed.
func (p *plan) planAddress(st *hostState) error {
	h := p.d.Host
	// The data interface must carry the inventory's address: routes use it.
	if st.Addr.RC != 0 {
		return hostErrorf("data interface %s: %s", h.DataInterface, remote.FirstLine(st.Addr.Out))
	}
	if addrs := parseAddrs(st.Addr.Out); !slices.Contains(addrs, h.Data.Address) {
		return hostErrorf("data interface %s does not carry %s (hosts[%d].data.address; it has %v): configure it first, the routes' next hops must be on-link",
			h.DataInterface, h.Data.Address, h.Index, addrs)
	}
	return nil
}
