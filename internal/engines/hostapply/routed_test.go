package hostapply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// routedReference is the reference cluster with docker.routing set.
func routedReference(t *testing.T, routing string) *inventory.Inventory {
	t.Helper()
	src := strings.Replace(string(inventory.ReferenceYAML), "  # routing: switch     #", "  routing: "+routing+"     #", 1)
	inv, err := inventory.Load("cluster.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// Switching a converged host between the modes: the plan adds the new
// routes and removes the old ones (in the apply script, in that order), and
// replaces both chains; back, the reverse.
func TestPlanSwitchesRoutingMode(t *testing.T) {
	perHost, routed := routedReference(t, "hosts"), routedReference(t, "switch")
	for _, tc := range []struct {
		name     string
		from, to *inventory.Inventory
		want     []string
	}{
		{"into the routed pool", perHost, routed, []string{
			"~ iptables filter chain RDGGEN-CONTAINERS: 2 rule(s), replaced as one block (was 4 rule(s))",
			"~ iptables nat chain RDGGEN-POSTROUTING: 1 rule(s), replaced as one block (was 3 rule(s))",
			"+ route 172.16.0.0/16 via 31.31.31.254 dev enp1f0 (the container pool, routed by switch swx-mld-1-2)",
			"- route 172.16.42.0/24 via 31.31.31.42 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.43.0/24 via 31.31.31.43 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.44.0/24 via 31.31.31.44 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.45.0/24 via 31.31.31.45 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.46.0/24 via 31.31.31.46 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.47.0/24 via 31.31.31.47 dev enp1f0 (into the container pool, not in the inventory)",
			"- route 172.16.48.0/24 via 31.31.31.48 dev enp1f0 (into the container pool, not in the inventory)",
			"~ /etc/network/if-up.d/rdggen-routes",
			"~ /etc/rdggen/firewall.sh",
		}},
		{"back to per-host routes", routed, perHost, []string{
			"~ iptables filter chain RDGGEN-CONTAINERS: 4 rule(s), replaced as one block (was 2 rule(s))",
			"~ iptables nat chain RDGGEN-POSTROUTING: 3 rule(s), replaced as one block (was 1 rule(s))",
			"+ route 172.16.42.0/24 via 31.31.31.42 dev enp1f0 (clx-mld-42)",
			"+ route 172.16.43.0/24 via 31.31.31.43 dev enp1f0 (clx-mld-43)",
			"+ route 172.16.44.0/24 via 31.31.31.44 dev enp1f0 (clx-mld-44)",
			"+ route 172.16.45.0/24 via 31.31.31.45 dev enp1f0 (clx-mld-45)",
			"+ route 172.16.46.0/24 via 31.31.31.46 dev enp1f0 (clx-mld-46)",
			"+ route 172.16.47.0/24 via 31.31.31.47 dev enp1f0 (clx-mld-47)",
			"+ route 172.16.48.0/24 via 31.31.31.48 dev enp1f0 (clx-mld-48)",
			"- route 172.16.0.0/16 via 31.31.31.254 dev enp1f0 (into the container pool, not in the inventory)",
			"~ /etc/network/if-up.d/rdggen-routes",
			"~ /etc/rdggen/firewall.sh",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := goodState(tc.from, desiredFor(tc.from, &tc.from.Hosts[0]))
			p, err := makePlan(tc.to, desiredFor(tc.to, &tc.to.Hosts[0]), st, planOpts{docker0: true, modules: true})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, p.describe()); d != "" {
				t.Errorf("plan (-want +got):\n%s", d)
			}
		})
	}
}
