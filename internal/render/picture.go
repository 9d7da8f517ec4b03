package render

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/cumulus"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
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
		iface := pictureOS[sw.OS()].gateway
		fmt.Fprintf(&b, "routing: the switch %s routes the pool (gateway %s on interface %s); each host has one route, %s via %s\n",
			sw.Name, inv.GatewayPrefix(), iface, inv.Docker.Pool, inv.Docker.Gateway)
	}
	fmt.Fprintf(&b, "MTU per hop: switch ports %s, ESXi vSwitch of the PF %d, VM data interface %d, docker0 %d (bytes)\n",
		switchPortMTU(inv), inv.DataMTU(), inv.DataMTU(), inv.Docker.MTU)
	if inv.IsFabric() {
		fabricPicture(&b, inv)
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
				fmt.Fprintf(&b, "; gateway %s/%d of %s; %d Gb/s to hosts, %d Gb/s to spines (oversubscription %s)",
					sw.Fabric.Gateway, sw.Fabric.Subnet.Bits(), sw.Fabric.Subnet, down, up, ratio)
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
			fmt.Fprintf(&b, "  split ports: %s; rdggen does not split ports: split them on the switch before apply (docs/rules.md, split ports)\n", split)
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

// splitPorts names the switch's split (broken-out) ports that the
// inventory cables, hosts' data ports and fabric uplinks, each with the
// lanes in use, e.g. "swp1 (swp1s0 swp1s1)"; "" when none is split.
func splitPorts(inv *inventory.Inventory, sw inventory.Switch, hosts []*inventory.Host) string {
	lanes := map[int][]string{}
	var parents []int
	add := func(p inventory.Port) {
		if p.Lane == 0 || slices.Contains(lanes[p.Number], sw.PortName(p)) {
			return
		}
		if lanes[p.Number] == nil {
			parents = append(parents, p.Number)
		}
		lanes[p.Number] = append(lanes[p.Number], sw.PortName(p))
	}
	for _, h := range hosts {
		add(h.Data.Port)
	}
	for _, u := range inv.Uplinks(sw.Name) {
		add(u.Port)
	}
	slices.Sort(parents)
	var parts []string
	for _, n := range parents {
		l := lanes[n]
		slices.Sort(l)
		parts = append(parts, fmt.Sprintf("%s (%s)", sw.PortName(inventory.Port{Module: 1, Number: n}), strings.Join(l, " ")))
	}
	return strings.Join(parts, ", ")
}

// switchPortMTU is the MTU rdggen gives the switches' data ports: ONYX's
// (onyx.PortMTU), Cumulus's (cumulus.PortMTU), or both, named by OS, when
// the cluster has switches of both.
func switchPortMTU(inv *inventory.Inventory) string {
	var parts []string
	for _, os := range inventory.SwitchOSes {
		if len(inv.SwitchesOf(os)) > 0 {
			parts = append(parts, fmt.Sprintf("%d (%s)", pictureOS[os].portMTU(inv), pictureOS[os].short))
		}
	}
	switch len(parts) {
	case 0:
		return fmt.Sprint(pictureOS[inventory.OSONYX].portMTU(inv))
	case 1:
		mtu, _, _ := strings.Cut(parts[0], " ")
		return mtu
	}
	return strings.Join(parts, ", ")
}

// pictureOS is what the picture says of a switch OS: the gateway's
// interface, the data ports' MTU, the OS's short name.
var pictureOS = map[inventory.SwitchOS]struct {
	gateway string
	portMTU func(*inventory.Inventory) int
	short   string
}{
	inventory.OSONYX:    {gateway: fmt.Sprintf("vlan %d", onyx.DataVLAN), portMTU: onyx.PortMTU, short: "ONYX"},
	inventory.OSCumulus: {gateway: cumulus.SVI, portMTU: func(*inventory.Inventory) int { return cumulus.PortMTU }, short: "Cumulus"},
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
