package render

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Picture is the review picture of the cluster (docs/architecture.md#review-pictures): per switch, the
// ports and what is cabled to them, each host's addresses, container subnet,
// GPUs and ESXi host.
func Picture(inv *inventory.Inventory) artifact.File {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s (from %s): %d hosts, %d ESXi hosts, %d switch(es)\n",
		inv.Name, inv.File, len(inv.Hosts), len(inv.ESXiHosts()), len(inv.Switches))
	fmt.Fprintf(&b, "RoCE: DSCP %d -> priority %d (lossless, PFC, ECN %d-%d KB), CNP DSCP %d -> priority %d (strict), ToS %d\n",
		inv.RoCE.DSCP, inv.RoCE.Priority, inv.RoCE.ECNMinKB, inv.RoCE.ECNMaxKB, inv.RoCE.CNPDSCP, inv.RoCE.CNPPriority, inv.RoCE.ToS())
	fmt.Fprintf(&b, "containers: pool %s, /%d per host, MTU %d, Horovod network %s\n",
		inv.Docker.Pool, inv.Docker.Prefix, inv.Docker.MTU, inv.Horovod.Network)
	if sw := inv.GatewaySwitch(); sw != nil {
		iface := picture(sw.OS()).Gateway(inv, *sw)
		fmt.Fprintf(&b, "routing: the switch %s routes the pool (gateway %s on interface %s); each host has one route, %s via %s\n",
			sw.Name, inv.GatewayPrefix(), iface, inv.Docker.Pool, inv.Docker.Gateway)
	}
	fmt.Fprintf(&b, "MTU per hop: switch ports %s, ESXi vSwitch of the PF %d, VM data interface %d, docker0 %d (bytes)\n",
		switchPortMTU(inv), inv.DataMTU(), inv.DataMTU(), inv.Docker.MTU)
	if inv.IsFabric() {
		fabricPicture(&b, inv)
	}
	if inv.MultiRail() {
		railsPicture(&b, inv)
	}
	bySwitch := hostsBySwitch(inv)
	for _, sw := range fabricOrder(inv) {
		fmt.Fprintf(&b, "\nswitch %s  %s, %d ports, %s\n", sw.Name, sw.Model, sw.Ports, sw.Release())
		if sw.Fabric.Role != "" {
			fmt.Fprintf(&b, "  %s, AS %d, loopback %s", sw.Fabric.Role, sw.Fabric.ASN, sw.Fabric.Loopback)
			if sw.IsLeaf() {
				down, up := inv.Oversubscription(sw.Name)
				ratio := "no uplink"
				if up > 0 {
					ratio = fmt.Sprintf("%.2g:1", float64(down)/float64(up))
				}
				if inv.MultiRail() {
					for _, lr := range sw.Fabric.Rails {
						fmt.Fprintf(&b, "; rail %d gateway %s/%d of %s (VLAN %d)", lr.Rail, lr.Gateway, lr.Subnet.Bits(), lr.Subnet, inventory.RailVLAN(lr.Rail))
					}
					fmt.Fprintf(&b, "; %d Gb/s to hosts, %d Gb/s to spines (oversubscription %s)", down, up, ratio)
				} else {
					fmt.Fprintf(&b, "; gateway %s/%d of %s; %d Gb/s to hosts, %d Gb/s to spines (oversubscription %s)",
						sw.Fabric.Gateway, sw.Fabric.Subnet.Bits(), sw.Fabric.Subnet, down, up, ratio)
				}
			}
			b.WriteString("\n")
			for _, u := range inv.Uplinks(sw.Name) {
				how := "unnumbered eBGP"
				if u.Numbered {
					how = fmt.Sprintf("%s, numbered eBGP to %s", u.Local, u.Remote.Addr())
				}
				fmt.Fprintf(&b, "  uplink %s -> %s (%s)\n", sw.PortName(u.Port), uplinkPeer(u), how)
			}
		}
		if split := splitPorts(inv, sw, bySwitch[sw.Name]); split != "" {
			fmt.Fprintf(&b, "  split ports: %s; the breakouts are in the switch's files, and applying one flaps the port\n", split)
		}
		if inv.MultiRail() {
			if rails := inv.RailsOnSwitch(sw.Name); len(rails) > 0 {
				railTable(&b, inv, sw, rails)
			}
			continue
		}
		if len(bySwitch[sw.Name]) == 0 {
			continue // a spine: no hosts, no host table
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  port\thost\tdata address\tinterface\tcontainer subnet\tdocker0 (bip)\tGPUs\tESXi host\tVM")
		for _, h := range bySwitch[sw.Name] {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sw.PortName(h.Data.Port), h.Name, h.Data.Address,
				h.DataInterface, h.Subnet, h.Bridge().Addr(), gpuSummary(h.GPUs), h.ESXi, h.VM)
		}
		tw.Flush()
	}
	return artifact.File{Path: "cluster.txt", Mode: 0o644, Data: []byte(b.String())}
}

// splitPorts names the switch's split (broken-out) ports, each with its
// mode, the speed of each lane and the lanes in use, e.g. "swp1 2x at 400
// Gb/s a lane (swp1s0 swp1s1)"; "" when none is split.
func splitPorts(inv *inventory.Inventory, sw inventory.Switch, hosts []*inventory.Host) string {
	lanes := map[int][]string{}
	add := func(p inventory.Port) {
		if p.Lane == 0 || slices.Contains(lanes[p.Number], sw.PortName(p)) {
			return
		}
		lanes[p.Number] = append(lanes[p.Number], sw.PortName(p))
	}
	for _, h := range hosts {
		add(h.Data.Port)
	}
	for _, hr := range inv.RailsOnSwitch(sw.Name) {
		add(hr.Rail.Port)
	}
	for _, u := range inv.Uplinks(sw.Name) {
		add(u.Port)
	}
	var parts []string
	for _, n := range sw.SplitPorts() {
		mode := sw.Breakout(n)
		l := lanes[n]
		slices.SortFunc(l, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) }) // s2 before s10
		used := "none cabled"
		if len(l) > 0 {
			used = strings.Join(l, " ")
		}
		if sw.Blocks(mode) {
			used += "; " + sw.PortName(inventory.Port{Module: 1, Number: n + 1}) + " disabled"
		}
		parts = append(parts, fmt.Sprintf("%s %dx at %d Gb/s a lane (%s)", sw.PortName(inventory.Port{Module: 1, Number: n}), mode,
			sw.PortSpeedGbps(inventory.Port{Module: 1, Number: n, Lane: 1}), used))
	}
	return strings.Join(parts, ", ")
}

// switchPortMTU is the MTU rdggen gives the switches' data ports: their
// OS's (internal/switchos: onyx.PortMTU, cumulus.PortMTU), or each OS's,
// named by OS, when the cluster has switches of several.
func switchPortMTU(inv *inventory.Inventory) string {
	var parts []string
	for _, os := range inventory.SwitchOSes {
		if len(inv.SwitchesOf(os)) > 0 {
			parts = append(parts, fmt.Sprintf("%d (%s)", picture(os).PortMTU(inv), os.Short()))
		}
	}
	switch len(parts) {
	case 0:
		return fmt.Sprint(picture(inventory.SwitchOSes[0]).PortMTU(inv))
	case 1:
		mtu, _, _ := strings.Cut(parts[0], " ")
		return mtu
	}
	return strings.Join(parts, ", ")
}

// picture is what the picture says of a switch OS (its registration's
// Picture); "?" and 0 for an OS without one.
func picture(os inventory.SwitchOS) switchos.Picture {
	if r, ok := switchos.For(os); ok {
		return r.Picture
	}
	return switchos.Picture{
		Gateway: func(*inventory.Inventory, inventory.Switch) string { return "?" },
		PortMTU: func(*inventory.Inventory) int { return 0 },
	}
}

// hostsBySwitch is Inventory.HostsOnSwitch for every switch at once, in
// one pass over the hosts.
func hostsBySwitch(inv *inventory.Inventory) map[string][]*inventory.Host {
	m := map[string][]*inventory.Host{}
	for i := range inv.Hosts {
		h := &inv.Hosts[i]
		m[h.Data.Switch] = append(m[h.Data.Switch], h)
	}
	return m
}

// gpuSummary writes a GPU list compactly: "2x V100-PCIE-16GB".
func gpuSummary(gpus []inventory.GPU) string {
	var parts []string
	for i := 0; i < len(gpus); {
		j := i
		for j < len(gpus) && gpus[j].Model == gpus[i].Model {
			j++
		}
		parts = append(parts, fmt.Sprintf("%dx %s", j-i, gpus[i].Model))
		i = j
	}
	return strings.Join(parts, ", ")
}

// fabricPicture is cluster.txt's fabric summary: the routing, and the
// links with both ends.
func fabricPicture(b *strings.Builder, inv *inventory.Inventory) {
	fmt.Fprintf(b, "fabric: %d spine(s), %d leaf(s), %d link(s); eBGP, each leaf its own AS, the spines AS %d; MTU 9216 on every fabric port\n",
		len(inv.Spines()), len(inv.Leaves()), len(inv.Fabric.Links), inv.Fabric.SpineASN)
	fmt.Fprintf(b, "routing: each leaf is its hosts' gateway and routes their container subnets (advertised in BGP); each host routes the pool %s and the other leaves' subnets via its leaf\n",
		inv.Docker.Pool)
}

// railsPicture is the picture's rails section, for hosts with several:
// per rail its leaves and (leaf, rail) subnets, the VF's guest name, and
// which GPUs each VM pairs with it; then how NCCL is told (docs/rails.md).
func railsPicture(b *strings.Builder, inv *inventory.Inventory) {
	n := inv.RailCount()
	joined := "not joined (NCCL_CROSS_NIC=0)"
	switch {
	case inv.RailsOnOneSwitch():
		joined = "all on one switch (NCCL_CROSS_NIC=1)"
	case inv.RailsJoined():
		joined = "joined by the spines (NCCL_CROSS_NIC=2)"
	}
	fmt.Fprintf(b, "rails: %d per host, one SR-IOV VF each; rails %s\n", n, joined)
	h0 := &inv.Hosts[0]
	for r := range n {
		var nets []string
		for _, rn := range inv.RailNets() {
			if rn.Rail == r {
				nets = append(nets, fmt.Sprintf("%s %s gw %s", rn.Leaf.Name, rn.Subnet, rn.Gateway))
			}
		}
		gpus := "none"
		if g := h0.Rails[r].GPUs; len(g) > 0 {
			gpus = gpuRange(g)
		}
		fmt.Fprintf(b, "  rail %d  VLAN %d  guest %s, HCA %s, GPUs %s (%s)  %s\n", r, inventory.RailVLAN(r), h0.Rails[r].Interface,
			inv.Horovod.RailHCA(r), gpus, h0.Name, strings.Join(nets, "; "))
	}
}

// railTable is the table of the host rails cabled to switch sw.
func railTable(b *strings.Builder, inv *inventory.Inventory, sw inventory.Switch, rails []inventory.HostRail) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  port	rail	host	address	interface	PF	GPUs	container subnet	ESXi host	VM")
	for _, hr := range rails {
		h, r := hr.Host, hr.Rail
		sub := "-"
		if r.Index == 0 {
			sub = h.Subnet.String()
		}
		gpus := "-"
		if len(r.GPUs) > 0 {
			gpus = gpuRange(r.GPUs)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", sw.PortName(r.Port), r.Index, h.Name, r.Address,
			r.Interface, r.PF, gpus, sub, h.ESXi, h.VM)
	}
	tw.Flush()
}

// gpuRange names GPU positions: "0-1", "3", "0,2".
func gpuRange(g []int) string {
	if len(g) > 1 && g[len(g)-1]-g[0] == len(g)-1 {
		return fmt.Sprintf("%d-%d", g[0], g[len(g)-1])
	}
	parts := make([]string, len(g))
	for i, x := range g {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}
