package fabricnet

import "github.com/rdggen/rdggen/pkg/inventory"

// SpecOf is the fabric an inventory describes: each switch (Cumulus or
// ONYX by its OS) and each fabric.links entry as a cable between the two
// ports, named as the switch OS names them (swp63, 1/31). Hosts are not
// cabled: Attach or AttachHost them to their leaf ports.
func SpecOf(inv *inventory.Inventory) Spec {
	var s Spec
	for _, sw := range inv.Switches {
		// fabricnet's OS values are the inventory's.
		s.Switches = append(s.Switches, Switch{Name: sw.Name, OS: OS(sw.OS())})
	}
	end := func(e inventory.LinkEnd) End {
		sw := inv.Switch(e.Switch)
		return End{Switch: e.Switch, Port: sw.PortName(e.Port)}
	}
	for _, l := range inv.Fabric.Links {
		s.Links = append(s.Links, Link{A: end(l.A), B: end(l.B)})
	}
	return s
}
