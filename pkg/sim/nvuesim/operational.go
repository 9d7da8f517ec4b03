package nvuesim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The views a data plane's hooks back (SetBGPNeighbors, SetRIB,
// SetBFDPeers, SetInterfaces): where each hook's entries go in the
// operational tree.
var (
	bgpView       = []string{"vrf", "default", "router", "bgp", "neighbor"}
	ribView       = []string{"vrf", "default", "router", "rib", "ipv4", "route"}
	bfdView       = []string{"vrf", "default", "router", "bfd", "peers"}
	interfaceView = []string{"interface"}
)

// reaches reports whether a read of path takes in the view at root: the
// one path is a prefix of the other (a GET of the view, of a node in it,
// or of a node that holds it).
func reaches(path, root []string) bool {
	n := min(len(path), len(root))
	return slices.Equal(path[:n], root[:n])
}

// operational is the operational state for a read of path (s.mu held): the
// applied configuration with what the switch reports beside it. Shapes are
// docs/nvue.md's (inferred from `nv show … -o json` examples). A data
// plane's hook runs only when path reaches its view (reaches): what it
// adds lies outside any other path's subtree, and a hook may be costly (a
// namespace's FRR read per call), while a check reads a switch with
// several GETs of distinct views.
func (s *Server) operational(path []string) Tree {
	t := cloneTree(s.applied)
	sys, _ := t["system"].(map[string]any)
	if sys == nil {
		sys = map[string]any{}
		t["system"] = sys
	}
	if _, ok := sys["hostname"]; !ok {
		sys["hostname"] = s.opt.Hostname
	}
	sys["build"] = "Cumulus Linux " + s.opt.Version
	sys["version"] = map[string]any{"image": s.opt.Version}

	ifaces, _ := t["interface"].(map[string]any)
	if ifaces == nil {
		ifaces = map[string]any{}
		t["interface"] = ifaces
	}
	names := make([]string, 0, s.opt.Ports)
	for i := 1; i <= s.opt.Ports; i++ {
		names = append(names, fmt.Sprintf("swp%d", i))
	}
	// A broken-out port's lanes (swp1s0 … swp1s3) exist once configured
	// ("Switch Port Attributes", breakout ports).
	for name := range ifaces {
		if breakoutLane.MatchString(name) {
			names = append(names, name)
		}
	}
	var cfgDown []string // ports the configuration shuts (link state down)
	for _, name := range names {
		ifc, _ := ifaces[name].(map[string]any)
		if ifc == nil {
			ifc = map[string]any{}
			ifaces[name] = ifc
		}
		ifc["type"] = "swp"
		link, _ := ifc["link"].(map[string]any)
		if link == nil {
			link = map[string]any{}
			ifc["link"] = link
		}
		if _, ok := link["mtu"]; !ok {
			link["mtu"] = int64(9216) // ifupdown2's default on Cumulus Linux
		}
		admin := "up"
		if st, _ := link["state"].(map[string]any); st != nil {
			if _, down := st["down"]; down {
				admin = "down"
				cfgDown = append(cfgDown, name)
			}
		}
		oper := admin
		if s.down[name] {
			oper = "down"
		}
		link["admin-status"] = admin
		link["oper-status"] = oper
		link["speed"] = "100G"
		ifc["counters"] = map[string]any{"qos": map[string]any{"pfc-stats": s.pfcStats(name)}}
	}

	qos, _ := t["qos"].(map[string]any)
	if qos == nil {
		qos = map[string]any{}
		t["qos"] = qos
	}
	qos["roce"] = s.roceView()
	if s.bgpOp != nil && reaches(path, bgpView) {
		if live := s.bgpOp(); len(live) > 0 {
			mergePatch(t, []string{"vrf", "default", "router", "bgp", "neighbor"}, live)
		}
	}
	routes := map[string]any{}
	if s.ribOp != nil && reaches(path, ribView) {
		for prefix, v := range s.ribOp() {
			routes[prefix] = v
		}
	}
	// The routes go in as the hook gave them, not copied: the operational
	// tree is made for one answer and only read (a routing table of
	// thousands of prefixes is most of its size).
	rib := mergeNode(t, ribView[:len(ribView)-1])
	rib[ribView[len(ribView)-1]] = routes
	peers := map[string]any{}
	if s.bfdOp != nil && reaches(path, bfdView) {
		for id, v := range s.bfdOp() {
			peers[id] = v
		}
	}
	mergePatch(t, bfdView, peers)
	if s.ifOp != nil && reaches(path, interfaceView) {
		for name, v := range s.ifOp() {
			mergePatch(t, append(slices.Clip(interfaceView), name), v)
		}
		adminDown(ifaces, cfgDown)
	}
	return t
}

// adminDown makes the links of ifaces (the operational interfaces, after a
// data plane's view was merged over them) agree on the administrative
// state: a port is administratively down when the configuration shuts it
// (cfgDown: a data plane need not program `link state down`) or the data
// plane says so (admin-status "down": `ip link set down` on the switch's
// shell), and a port administratively down has no operational link
// (oper-status "down"), as the kernel's UP flag gates its carrier.
// "admin-status" and "oper-status" are the link's fields of `nv show
// interface <id> link` (NVUE command reference, "Interface"); their JSON
// names are inferred, as docs/nvue.md says of the operational views.
func adminDown(ifaces map[string]any, cfgDown []string) {
	for _, name := range cfgDown {
		if link, _ := at(ifaces, name, "link").(map[string]any); link != nil {
			link["admin-status"] = "down"
		}
	}
	for _, v := range ifaces {
		link, _ := at(v, "link").(map[string]any)
		if link != nil && link["admin-status"] == "down" {
			link["oper-status"] = "down"
		}
	}
}

// pfcStats is `nv show interface <port> counters qos pfc-stats`.
func (s *Server) pfcStats(port string) map[string]any {
	prios := map[string]any{}
	for p := 0; p < 8; p++ {
		c := s.pause[port][p]
		prios[strconv.Itoa(p)] = map[string]any{"rx-pause-frames": c[0], "tx-pause-frames": c[1],
			"rx-pause-duration": int64(0), "tx-pause-duration": int64(0)}
	}
	return map[string]any{"switch-priority": prios}
}

// roceView is the operational `nv show qos roce`: the template the mode
// sets, as the RoCE page of the Cumulus Linux user guide lists it (switch
// priority 3 → TC 3 with ECN at 150 KB/1500 KB, 6 → TC 6 strict, PFC on 3
// in the lossless modes only), or mode "disabled" without `qos roce`.
func (s *Server) roceView() map[string]any {
	mode := "disabled"
	cfg, _ := subtree(s.applied, []string{"qos", "roce"})
	if m, ok := cfg.(map[string]any); ok && m["enable"] != "off" && m["state"] != "disabled" {
		mode = "lossless" // `nv set qos roce` alone is lossless
		if v, ok := m["mode"].(string); ok {
			mode = v
		}
	}
	v := map[string]any{"mode": mode}
	if mode != "disabled" {
		v["trust"] = map[string]any{"trust-mode": "pcp,dscp"}
		cc := map[string]any{"congestion-mode": "ECN", "enabled-tc": "0,3", "min-threshold": "150.00 KB", "max-threshold": "1.46 MB", "probability": int64(100)}
		v["congestion-control"] = cc
		v["prio-map"] = map[string]any{"3": map[string]any{"traffic-class": int64(3)}, "6": map[string]any{"traffic-class": int64(6)}}
		v["tc-map"] = map[string]any{"0": map[string]any{"mode": "dwrr", "bandwidth": int64(50)},
			"3": map[string]any{"mode": "dwrr", "bandwidth": int64(50)}, "6": map[string]any{"mode": "strict"}}
		if strings.HasPrefix(mode, "lossless") {
			v["pfc"] = map[string]any{"pfc-priority": "3", "rx-enabled": "enabled", "tx-enabled": "enabled"}
		}
	}
	for k, o := range s.roceOp {
		switch k {
		case "mode":
			v["mode"] = o
		case "pfc-priority":
			if p, ok := v["pfc"].(map[string]any); ok {
				p["pfc-priority"] = o
			} else {
				v["pfc"] = map[string]any{"pfc-priority": o}
			}
		default:
			if cc, ok := v["congestion-control"].(map[string]any); ok {
				cc[k] = o
			}
		}
	}
	return v
}

// breakoutLane is a lane of a broken-out front-panel port: swp<N>s<M>.
var breakoutLane = regexp.MustCompile(`^swp[0-9]+s[0-9]+$`)
