package hostapply

import (
	"fmt"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// planDockerVersion notes a dockerd whose version disagrees with the
// inventory's docker.version.
func (p *plan) planDockerVersion(inv *inventory.Inventory, st *hostState) {
	// Docker version against the inventory's.
	if v, ok := dockerVersion(st.Dockerd.Out); ok {
		have := inventory.MustVersion(fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]))
		switch {
		case have.AtLeast(28, 2) && !inv.Docker.AllowDirectRouting():
			p.notes = append(p.notes, fmt.Sprintf("dockerd is %d.%d.%d but the inventory says docker.version %s: without \"allow-direct-routing\" Docker ≥ 28.2 drops routed traffic to containers; set docker.version", v[0], v[1], v[2], inv.Docker.Version))
		case !have.AtLeast(28, 2) && inv.Docker.AllowDirectRouting():
			p.notes = append(p.notes, fmt.Sprintf("dockerd is %d.%d.%d but the inventory says docker.version %s: dockerd < 28.2 rejects \"allow-direct-routing\"", v[0], v[1], v[2], inv.Docker.Version))
		}
	} else if st.Dockerd.RC == 127 {
		p.notes = append(p.notes, "dockerd is not installed: daemon.json and the firewall unit take effect when Docker is")
	}
}
