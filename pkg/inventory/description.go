package inventory

import (
	"regexp"
	"strconv"
	"strings"
)

// DescriptionMax is the longest port description rdggen writes, in bytes:
// 64. NVUE's `interface <id> description` is the Linux interface alias
// (255 bytes, IFALIASZ in include/uapi/linux/if.h); ONYX's limit was not
// found in its manuals, and `show interfaces status` shows a short column,
// so rdggen keeps well under both (docs/rules.md#port-descriptions).
const DescriptionMax = 64

// PortDescriptions are the descriptions rdggen gives the ports of switch
// sw that it configures, naming what is cabled to each, as NOC staff read
// them in `nv show interface` or `show interfaces status`:
//
//   - a host's data port: its VM(s) at the ESXi host and PF the cable
//     comes from, "h11@esx-11.example/vmnic4" (VMs on one ESXi host share
//     its PF's port: "h11,h12@esx-11.example/vmnic4");
//   - in an inventory of several rails, every rail's port so, with the
//     rail after a colon: "gpu1@esx-1.example/vmnic6:rail2" is rail 2 of
//     VM gpu1, from vmnic6 of esx-1.example (rail 0 too: ":rail0");
//   - an uplink: the far switch and its own name of the far port,
//     "spine1:swp1", "spine2:1/1".
//
// Every part is held to a grammar at validation (host names, VM names,
// vmnicN, switch names, port names), so a description has no spaces,
// quotes or shell characters: letters, digits and .-_@,:+/ only. One longer
// than DescriptionMax keeps the VMs that fit and counts the others
// ("h11,+7@…"), then is cut at DescriptionMax bytes.
func (inv *Inventory) PortDescriptions(sw string) map[Port]string {
	out := map[Port]string{}
	type group struct {
		vms  []string
		esxi string
		pf   string
		rail string // ":rail2" in an inventory of several rails, else ""
	}
	groups := map[Port]*group{}
	multi := inv.MultiRail()
	for _, hr := range inv.RailsOnSwitch(sw) {
		h, r := hr.Host, hr.Rail
		if r.Port.Number == 0 {
			continue
		}
		g := groups[r.Port]
		if g == nil {
			g = &group{esxi: h.ESXi, pf: r.PF}
			if multi {
				g.rail = ":rail" + strconv.Itoa(r.Index)
			}
			groups[r.Port] = g
		}
		g.vms = append(g.vms, h.VM)
	}
	for p, g := range groups {
		out[p] = hostDescription(g.vms, g.esxi, g.pf+g.rail)
	}
	for _, u := range inv.Uplinks(sw) {
		if u.Peer == nil {
			continue
		}
		out[u.Port] = cut(u.Peer.Name + ":" + u.Peer.PortName(u.PeerPort))
	}
	return out
}

// hostDescription is "vm1,vm2@esxi/pf", within DescriptionMax.
func hostDescription(vms []string, esxi, pf string) string {
	tail := "@" + esxi + "/" + pf
	for keep := len(vms); keep >= 1; keep-- {
		head := strings.Join(vms[:keep], ",")
		if keep < len(vms) {
			head += ",+" + strconv.Itoa(len(vms)-keep)
		}
		if s := head + tail; len(s) <= DescriptionMax {
			return s
		}
	}
	return cut(vms[0] + tail)
}

func cut(s string) string {
	if len(s) > DescriptionMax {
		return s[:DescriptionMax]
	}
	return s
}

// rePortDescription matches rdggen's own descriptions, PortDescriptions'
// two forms: VMs@ESXi host/PF (with :railN in an inventory of several
// rails) and switch:port.
var rePortDescription = regexp.MustCompile(`^([A-Za-z0-9._-]+,)*([A-Za-z0-9._-]+|\+[0-9]+)@[A-Za-z0-9.-]+/vmnic[0-9]+(:rail[0-9])?$|^[A-Za-z0-9-]+:(swp[0-9]+(s[0-9])?|[0-9]+/[0-9]+(/[0-9]+)?)$`)

// IsPortDescription reports whether a port's description is in one of
// rdggen's forms (PortDescriptions), so that apply may replace it when the
// cabling changes; any other description is the user's, and apply leaves
// it as it is.
func IsPortDescription(s string) bool { return rePortDescription.MatchString(s) }
