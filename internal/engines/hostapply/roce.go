package hostapply

import (
	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/hostqos"
)

// planRoCE plans the in-VM RoCE settings the RoCE script's check found
// different or failed.
func (p *plan) planRoCE(st *hostState) error {
	// In-VM RoCE settings.
	rs := roceResults(st.RoCE.Out)
	if len(rs) == 0 {
		return hostErrorf("RoCE check did not run (exit %d): %s", st.RoCE.RC, remote.FirstLine(st.RoCE.Out))
	}
	for _, r := range rs {
		if r.State == hostqos.StateDiffers || r.State == hostqos.StateFailed {
			p.roce = append(p.roce, r)
		}
	}
	return nil
}

// applyRoCE appends the RoCE script's apply.
func (p *plan) applyRoCE(w *remote.Script) {
	if len(p.roce) > 0 {
		w.Line(`step roce env RDGGEN_SYSFS="$R/sys" sh -c "$RS" rdggen-roce-qos apply`)
	}
}
