package railpair

import (
	"fmt"
	"strings"
)

// Lines returns the pairing as plan lines, one per rail:
//
//	rail 1 (vmnic5 0000:5e:00.0): GPUs 0000:5b:00.0, 0000:5c:00.0 (chosen) — same PCIe switch 0000:5a:00.0
//	rail 2 (vmnic6 0000:9e:00.0): GPU 0000:9b:00.0 (given) — same NUMA node 1, no common PCIe switch
//	rail 3 (vmnic7 0000:d4:00.0): GPU 0000:1b:00.0 (given) — crosses sockets: GPU on NUMA node 0, PF on node 1 (rail 0's vmnic4 shares its PCIe switch)
//	rail 4 (vmnic8 0000:e4:00.0): no GPUs
//
// "(chosen)": Pair chose the GPU; "(given)": the request fixed it (the
// inventory's gpus[].pci, or a GPU the VM already has) and it is checked.
// GPUs of one rail with the same locality (and switch or node) share one
// clause; clauses are separated by "; " in slot order of their first GPU.
func (p Pairing) Lines() []string {
	out := make([]string, 0, len(p.Rails))
	for _, r := range p.Rails {
		head := fmt.Sprintf("rail %d (%s %s): ", r.Index, r.VMNIC, r.PF)
		if len(r.GPUs) == 0 {
			out = append(out, head+"no GPUs")
			continue
		}
		type clause struct {
			key  string
			gpus []string
			g    GPU
		}
		var cs []*clause
		for _, g := range r.GPUs {
			k := fmt.Sprint(g.Chosen, g.Locality, g.Switch, g.Node, g.Nearer)
			var c *clause
			for _, x := range cs {
				if x.key == k {
					c = x
				}
			}
			if c == nil {
				c = &clause{key: k, g: g}
				cs = append(cs, c)
			}
			c.gpus = append(c.gpus, g.PCI)
		}
		parts := make([]string, len(cs))
		for i, c := range cs {
			noun := "GPU"
			if len(c.gpus) > 1 {
				noun = "GPUs"
			}
			how := "given"
			if c.g.Chosen {
				how = "chosen"
			}
			parts[i] = fmt.Sprintf("%s %s (%s) — %s", noun, strings.Join(c.gpus, ", "), how, p.where(r, c.g))
		}
		out = append(out, head+strings.Join(parts, "; "))
	}
	return out
}

// where says how near g is to its rail's PF, for Lines.
func (p Pairing) where(r Rail, g GPU) string {
	var s string
	switch g.Locality {
	case SameSwitch:
		s = "same PCIe switch " + g.Switch
	case SameNode:
		s = fmt.Sprintf("same NUMA node %d, no common PCIe switch", g.Node)
	case CrossSocket:
		s = fmt.Sprintf("crosses sockets: GPU on NUMA node %d, PF on node %d", g.Node, r.Node)
	default:
		s = "NUMA node unknown: " + unknownWhat(r, g)
	}
	if g.Nearer >= 0 {
		s += " (" + p.nearer(g) + ")"
	}
	return s
}

// nearer names the rail nearer to g than its own.
func (p Pairing) nearer(g GPU) string {
	o := p.Rails[g.Nearer]
	if g.NearerBy == SameSwitch {
		return fmt.Sprintf("rail %d's %s shares its PCIe switch", o.Index, o.VMNIC)
	}
	return fmt.Sprintf("rail %d's %s is on its NUMA node", o.Index, o.VMNIC)
}

// unknownWhat says whose NUMA node the host does not list.
func unknownWhat(r Rail, g GPU) string {
	switch {
	case g.Node < 0 && r.Node < 0:
		return "the host lists none for the GPU or the PF"
	case g.Node < 0:
		return "the host lists none for the GPU"
	}
	return "the host lists none for the PF"
}

// Warnings returns a sentence for every GPU whose path to its rail's PF
// crosses sockets, or whose NUMA node (or the PF's) the host does not list,
// naming the rail, the GPU, the PF and their nodes, and why it was not
// paired better:
//
//	rail 0 (vmnic4 0000:1d:00.0): GPU 0000:9b:00.0 is on NUMA node 1 and the PF on node 0, so GPUDirect RDMA between them crosses the link between the sockets; no free GPU on node 0 was left
func (p Pairing) Warnings() []string {
	var out []string
	for _, r := range p.Rails {
		for _, g := range r.GPUs {
			head := fmt.Sprintf("rail %d (%s %s): GPU %s ", r.Index, r.VMNIC, r.PF, g.PCI)
			var s string
			switch g.Locality {
			case CrossSocket:
				s = head + fmt.Sprintf("is on NUMA node %d and the PF on node %d, so GPUDirect RDMA between them crosses the link between the sockets", g.Node, r.Node)
				if g.Chosen {
					s += fmt.Sprintf("; no free GPU on node %d was left", r.Node)
				}
			case Unknown:
				s = head + "and its PF share no PCIe switch and " + unknownWhat(r, g) + " (hardware.numaInfo), so whether GPUDirect RDMA between them crosses sockets is unknown"
			default:
				continue
			}
			if !g.Chosen {
				s += "; the GPU is given, not chosen"
			}
			if g.Nearer >= 0 {
				s += "; " + p.nearer(g)
			}
			out = append(out, s)
		}
	}
	return out
}
