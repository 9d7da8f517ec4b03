package inventory

// The switch rules: names, models and ports, ONYX versions, one port per host.

import (
	"fmt"
	"strings"
)

func (c *checker) switches(raw []SwitchSpec) {
	if len(raw) == 0 {
		c.missing("", "switches", " (at least one switch)")
	}
	seen := map[string]int{}
	for i, r := range raw {
		p := fmt.Sprintf("switches[%d]", i)
		sw := Switch{Name: r.Name, Model: r.Model, Mgmt: r.Mgmt}
		switch {
		case r.Name == "":
			c.missing(p, "name", "")
		case !reSwName.MatchString(r.Name):
			rule := hostnameRule(r.Name)
			if rule == "" {
				rule = "it is one label, without dots"
			}
			c.errf(p+".name", "%q is not a switch hostname (one DNS label: 1–%d letters, digits and '-'): %s", r.Name, MaxLabelLen, rule)
		default:
			if j, dup := seen[r.Name]; dup {
				c.errf(p+".name", "duplicate switch name %q (also switches[%d])", r.Name, j)
			}
			seen[r.Name] = i
		}
		if r.Model == "" {
			c.missing(p, "model", " (e.g. SN2700; it decides the port count)")
		} else if n, ok := switchPorts[strings.ToUpper(r.Model)]; ok {
			sw.Model, sw.Ports = strings.ToUpper(r.Model), n
		} else {
			c.errf(p+".model", "unknown switch model %q (known: %s)", r.Model, knownKeys(switchPorts))
		}
		if r.ONYX == nil {
			c.missing(p, "onyx", " (the ONYX version, e.g. 3.6.8190; it decides explicit commands vs `roce`)")
		} else {
			sw.ONYX = *r.ONYX
			if sw.ONYX.IsZero() { // a Spec made in Go; a file's "" is the decoder's finding
				c.errf(p+".onyx", "%v", zeroVersionError())
			} else if !sw.ONYX.AtLeast(3, 6, 5000) {
				c.errf(p+".onyx", "ONYX %s has no `traffic pool` commands (from 3.6.5000; the guide needs 3.6.8190 or later)", sw.ONYX)
			}
		}
		if r.Mgmt != "" && !validMgmt(r.Mgmt) {
			c.errf(p+".mgmt", "%q is not an IP address or host name, optionally with :port", r.Mgmt)
		}
		c.inv.Switches = append(c.inv.Switches, sw)
	}
}

func (c *checker) switchNames() string {
	var names []string
	for _, s := range c.inv.Switches {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// ports checks that no two hosts share a switch port, unless they are VMs on
// one ESXi host (their VFs share the physical function's cable), and that VMs
// on one ESXi host name the same port.
func (c *checker) ports() {
	inv := c.inv
	seen := map[string]int{}
	for i, h := range inv.Hosts {
		if h.Data.Port.Number == 0 {
			continue
		}
		key := h.Data.Switch + " " + h.Data.Port.String()
		if j, ok := seen[key]; ok && inv.Hosts[j].ESXi != h.ESXi {
			c.errf(fmt.Sprintf("hosts[%d].data.port", i), "duplicate switch port %s (also hosts[%d]); only VMs on one ESXi host share a port", key, j)
			continue
		} else if !ok {
			seen[key] = i
		}
	}
	for _, g := range c.esxiGroups() {
		e, hosts := g.name, g.hosts
		for _, h := range hosts[1:] {
			if h.Data.Port.Number > 0 && hosts[0].Data.Port.Number > 0 && (h.Data.Switch != hosts[0].Data.Switch || h.Data.Port != hosts[0].Data.Port) {
				c.errf(fmt.Sprintf("hosts[%d].data.port", h.Index), "%s shares ESXi host %s (and its uplink %s) with %s, so its data port is %s %s, not %s %s",
					h.Name, e, h.NIC.PF, hosts[0].Name, hosts[0].Data.Switch, hosts[0].Data.Port, h.Data.Switch, h.Data.Port)
			}
		}
	}
}
