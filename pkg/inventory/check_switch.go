package inventory

// The switch rules: names, models and ports, ONYX versions, one port per host.

import (
	"fmt"
	"maps"
	"slices"
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
		c.switchOS(p, r, &sw)
		if sw.OS() == OSONYX && r.ONYX != nil && noONYX[sw.Model] {
			c.errf(p+".onyx", "ONYX does not run on the %s (Spectrum-4): NVIDIA ships Spectrum-4 switches with Cumulus Linux or SONiC, and no ONYX release lists it; write cumulus: <version> for this switch", sw.Model)
		}
		c.switchFabric(p, r.SwitchFabricSpec, &sw)
		if r.Mgmt != "" && !validMgmt(r.Mgmt) {
			c.errf(p+".mgmt", "%q is not an IP address or host name, optionally with :port", r.Mgmt)
		} else if sw.OS() == OSCumulus && strings.HasSuffix(r.Mgmt, ":22") {
			c.warnf(p+".mgmt", "%q: port 22 is SSH, but apply reaches a Cumulus switch through the NVUE REST API (HTTPS, port %d by default); leave the port out or give the API's", r.Mgmt, CumulusAPIPort)
		}
		c.inv.Switches = append(c.inv.Switches, sw)
	}
	// The roce values are the whole cluster's, so the first Cumulus switch
	// reports what Cumulus cannot take, once.
	for i, sw := range c.inv.Switches {
		if sw.OS() == OSCumulus {
			c.cumulusRoCE(fmt.Sprintf("switches[%d]", i), &sw)
			break
		}
	}
}

// noONYX are the switch models ONYX does not run on: the Spectrum-4
// SN5400 and SN5600. NVIDIA's Spectrum-4 SN5000 Switch Systems Hardware
// User Manual names SONiC as the switch software to read about, and its
// reference configurations for these models are all Cumulus Linux (NVUE);
// the ONYX 3.10 manuals' Ethernet pages know QSFP and QSFP-DD ports up to
// 400GbE, not the SN5600's 800G OSFP ports (docs/rules.md#models-and-ports).
var noONYX = map[string]bool{"SN5400": true, "SN5600": true}

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
			shown := key
			if sw := inv.Switch(h.Data.Switch); sw != nil {
				shown = h.Data.Switch + " " + sw.PortName(h.Data.Port)
			}
			c.errf(fmt.Sprintf("hosts[%d].data.port", i), "duplicate switch port %s (also hosts[%d]); only VMs on one ESXi host share a port", shown, j)
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

// switchOS resolves the switch's OS key: exactly one of onyx, cumulus and
// the key of an OS beyond them (SwitchSpec.Other), each with its version
// rules (docs/inventory.md#switches).
func (c *checker) switchOS(p string, r SwitchSpec, sw *Switch) {
	unknown := func() {
		if c.unknownOS == nil {
			c.unknownOS = map[string]bool{}
		}
		c.unknownOS[sw.Name] = true
	}
	// The other OSes' keys, in file order's stand-in (sorted); a key of a
	// Spec made in Go that is no such OS is an unknown key, as the file's
	// would be.
	var others []string
	for _, k := range slices.Sorted(maps.Keys(r.Other)) {
		switch {
		case !otherOS(k):
			_, names := fieldsOf(switchSpecType)
			c.errf(p+"."+k, "unknown key %q (known keys here: %s)", k, strings.Join(names, ", "))
		case r.Other[k] != nil:
			others = append(others, k)
		}
	}
	switch {
	case r.ONYX == nil && r.Cumulus == nil && len(others) == 0:
		unknown()
		for _, f := range c.rep.Findings {
			if k, ok := strings.CutPrefix(f.Path, p+"."); ok && (k == "onyx" || k == "cumulus" || otherOS(k)) {
				return // present but invalid: that finding is already reported
			}
		}
		c.errf(p, "names no OS: give the switch's OS and version, onyx: 3.6.8190 for ONYX or cumulus: 5.9.1 for Cumulus Linux")
	case r.ONYX != nil && r.Cumulus != nil:
		unknown()
		c.errf(p+".cumulus", "a switch runs one OS: give onyx (%s) or cumulus (%s), not both", r.ONYX, r.Cumulus)
	case len(others) > 0 && (r.ONYX != nil || r.Cumulus != nil || len(others) > 1):
		unknown()
		var given []string
		for _, k := range []string{"onyx", "cumulus"} {
			if v := map[string]*Version{"onyx": r.ONYX, "cumulus": r.Cumulus}[k]; v != nil {
				given = append(given, fmt.Sprintf("%s (%s)", k, v))
			}
		}
		for _, k := range others {
			given = append(given, fmt.Sprintf("%s (%s)", k, r.Other[k]))
		}
		c.errf(p+"."+others[len(others)-1], "a switch runs one OS: give one of %s, not %d", strings.Join(given, ", "), len(given))
	case len(others) == 1:
		k := others[0]
		sw.OtherOS, sw.Other = SwitchOS(k), *r.Other[k]
		if sw.Other.IsZero() {
			unknown()
			c.errf(p+"."+k, "%v", zeroVersionError())
		} else if check := sw.OtherOS.Traits().CheckVersion; check != nil {
			if err := check(sw.Other); err != nil {
				c.errf(p+"."+k, "%s %s: %v", sw.OtherOS.Name(), sw.Other, err)
			}
		}
	case r.ONYX != nil:
		sw.ONYX = *r.ONYX
		if sw.ONYX.IsZero() { // a Spec made in Go; a file's "" is the decoder's finding
			c.errf(p+".onyx", "%v", zeroVersionError())
		} else if !sw.ONYX.AtLeast(3, 6, 5000) {
			c.errf(p+".onyx", "ONYX %s has no `traffic pool` commands (from 3.6.5000; the guide needs 3.6.8190 or later)", sw.ONYX)
		}
	default:
		sw.Cumulus = *r.Cumulus
		switch v := sw.Cumulus; {
		case v.IsZero():
			unknown()
			c.errf(p+".cumulus", "%v", zeroVersionError())
		case !v.AtLeast(MinCumulus.parts...):
			c.errf(p+".cumulus", "Cumulus Linux %s has no NVUE `qos roce` (from %s; NVIDIA: RoCE can only be configured with NVUE)", v, MinCumulus)
		case newerLine(v, NewestCumulus):
			c.warnf(p+".cumulus", "Cumulus Linux %s is newer than the releases rdggen's NVUE paths follow (%s–%s); NVIDIA renames NVUE paths between releases (5.15 moved service lldp to system lldp), so review switch/%s.yaml against that release's notes", v, MinCumulus, NewestCumulus, sw.Name)
		}
	}
}

// newerLine reports whether v's release line (its first two components)
// is newer than line's: 5.16.0 and 6.0 are, 5.15.2 is not for line 5.15.
func newerLine(v, line Version) bool {
	two := func(x Version) []int {
		out := []int{0, 0}
		copy(out, x.parts)
		return out
	}
	a, b := two(v), two(line)
	return a[0] > b[0] || a[0] == b[0] && a[1] > b[1]
}

// MinCumulus is the oldest Cumulus Linux rdggen configures: 5.0.0, the
// first release whose NVUE has `nv set qos roce` (NVIDIA NVUE command
// reference, "nv set qos roce mode": introduced in Cumulus Linux 5.0.0).
var MinCumulus = MustVersion("5.0.0")

// NewestCumulus is the newest Cumulus Linux release line whose NVUE paths
// rdggen's generator follows (NVIDIA's "New and Changed NVUE Commands"
// pages up to 5.15); a newer release gets a warning, not an error.
var NewestCumulus = MustVersion("5.15")

// CumulusAPIPort is the TCP port of the NVUE REST API on a Cumulus switch
// (HTTPS behind nginx; NVIDIA Cumulus Linux user guide, "NVUE API").
const CumulusAPIPort = 8765

// The fixed values of Cumulus Linux's `qos roce` profile (NVIDIA Cumulus
// Linux user guide, "RDMA over Converged Ethernet - RoCE", "Default RoCE
// Configuration"): RoCE on switch priority and traffic class 3 with PFC,
// CNPs on 6 with strict ETS, ECN between 150 and 1500 KB on traffic class 3,
// and a lossless pool the profile sizes itself.
const (
	CumulusRoCEPriority    = 3
	CumulusRoCECNPPriority = 6
	CumulusRoCEECNMinKB    = 150
	CumulusRoCEECNMaxKB    = 1500
)

// cumulusRoCE reports the roce values Cumulus's `qos roce` cannot take.
// NVIDIA: "RoCE is a complex configuration; you can only configure RoCE
// with NVUE commands", and `nv set qos roce` has a mode and no priority,
// threshold or pool-size settings, so a value other than the profile's
// would reach the hosts and not this switch: an error, never dropped.
func (c *checker) cumulusRoCE(p string, sw *Switch) {
	r := c.inv.RoCE
	who := fmt.Sprintf("%s (%s) runs Cumulus Linux, whose `nv set qos roce`", sw.Name, p)
	if r.Priority != CumulusRoCEPriority && inRange(r.Priority, 0, 7) {
		c.errf("roce.priority", "%d: %s puts RoCE on switch priority %d (PFC, traffic class %d); use %d, with DSCP %d", r.Priority, who, CumulusRoCEPriority, CumulusRoCEPriority, CumulusRoCEPriority, DefaultDSCP)
	}
	if r.ECNMinKB != CumulusRoCEECNMinKB || r.ECNMaxKB != CumulusRoCEECNMaxKB {
		key := "roce.ecn_min_kb"
		if r.ECNMinKB == CumulusRoCEECNMinKB {
			key = "roce.ecn_max_kb"
		}
		c.errf(key, "ECN thresholds %d–%d KB: %s marks ECN between %d and %d KB and has no threshold setting; use those", r.ECNMinKB, r.ECNMaxKB, who, CumulusRoCEECNMinKB, CumulusRoCEECNMaxKB)
	}
	if r.BufferPercent != DefaultBufferPercent {
		c.errf("roce.buffer_percent", "%g: %s sizes its lossless pool itself and has no buffer share setting; leave buffer_percent out (or %d)", r.BufferPercent, who, DefaultBufferPercent)
	}
}
