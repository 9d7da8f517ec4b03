package hostapply

import (
	"bytes"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/nccltopo"
	"github.com/rdggen/rdggen/pkg/quote"
	"github.com/rdggen/rdggen/pkg/railguest"
	"github.com/rdggen/rdggen/pkg/railnet"
)

// A VM with several rails (inventory.Host.MultiRail; docs/rails.md): the
// hosts target installs the rails' files of pkg/railguest (the netplan file
// under the host's own netplan IDs, the sysctl.d file, NCCL's topology
// skeleton, the boot script and its unit, enabled), sets the rails up live
// with pkg/railnet's rails_apply where the live state differs, and writes
// NCCL's topology file where it differs from railguest.TopologyFile of the
// guest's own devices, by running the boot script it installed.
//
// Each rail's interface is found by its name: rail 0's is data_interface,
// rail r's hosts[].data[r].interface or rdggen's rail<r>. The hosts target
// does not talk to vSphere, so it has no MAC addresses; a clone rdggen
// made carries those names from its first boot (cloud-init's network
// config renames each rail's VF by its MAC address, set-name), and on a VM
// rdggen did not clone the inventory's interface names the guest's own
// interfaces. A rail whose interface is missing stops the host before
// anything changes, naming the interface that carries the rail's address
// when one does.

// railsDesired is what a VM with several rails should have beyond one rail.
type railsDesired struct {
	// VM is the rails as railnet takes them (railguest.VM without MAC
	// addresses: each rail by its interface's name); rail IDs are set per
	// host when the plan reads its netplan files.
	VM railnet.VM
	// Guest is VM validated (nil with Err).
	Guest *railnet.Guest
	// Err is railnet's finding for an inventory that was not validated.
	Err error
	// TopoErr says why the VM gets no topology file (railguest.Skeleton's
	// reason: a GPU or NIC model whose PCIe link rdggen does not know); nil
	// when it gets one.
	TopoErr error
	// TopoVars are railguest.Vars, which the facts' read sets first.
	TopoVars []railguest.Var
}

// railsFor is host h's railsDesired and the files it installs (each
// railguest.File with a path; the netplan file's bytes are made per host
// by the plan).
func railsFor(inv *inventory.Inventory, h *inventory.Host) (*railsDesired, []fileSpec, []linkSpec) {
	r := &railsDesired{VM: railguest.VM(inv, h, nil)}
	files, err := railguest.Files(inv, h, nil)
	if len(files) == 0 {
		if err == nil {
			err = fmt.Errorf("%s: no rails' files", h.Name)
		}
		r.Err = err
		return r, nil, nil
	}
	r.TopoErr = err
	if r.Guest, err = railnet.New(r.VM); err != nil {
		r.Err = err
		return r, nil, nil
	}
	if r.TopoErr == nil {
		r.TopoVars = railguest.Vars(inv, h, nil)
	}
	var specs []fileSpec
	var links []linkSpec
	for _, f := range files {
		if f.Path == "" {
			continue // rails.sh: run by hand, not installed
		}
		specs = append(specs, fileSpec{Path: f.Path, Mode: f.Mode, Data: f.Data, Unit: f.Path == railguest.UnitPath})
		if f.Path == railguest.UnitPath {
			links = append(links, linkSpec{Path: railguest.UnitWantsPath, Target: railguest.UnitPath})
		}
	}
	return r, specs, links
}

// sysctlPath is a sysctl's file under /proc/sys: net.ipv4.conf.all.rp_filter
// is net/ipv4/conf/all/rp_filter.
func sysctlPath(key string) string { return strings.ReplaceAll(key, ".", "/") }

// railsProbe appends the rails' read (scripts/rails.sh) and, when the VM
// gets a topology file, the guest's facts (railguest.Fragment's topo_facts,
// result "topology-facts") and NCCL's file as it is (result
// "topology-file", status 1 when absent).
func railsProbe(w *remote.Script, d *desired) {
	rd := d.Rails
	var tables, procs []string
	for r := range rd.VM.Rails {
		tables = append(tables, strconv.Itoa(railnet.Table(r)))
	}
	for _, s := range railnet.Sysctls() {
		procs = append(procs, sysctlPath(s.Key))
	}
	var gw strings.Builder
	for r, rail := range rd.VM.Rails {
		gw.WriteString(strconv.Itoa(r) + " " + rail.Interface + " " + rail.Gateway.String() + "\n")
	}
	w.Set("rp_tables", strings.Join(tables, " "))
	w.Set("rp_gw", gw.String())
	w.Set("rp_proc", strings.Join(procs, " "))
	w.Text(script("rails.sh"))
	w.Line("probe_rails")
	if rd.TopoErr == nil && rd.TopoVars != nil {
		for _, v := range rd.TopoVars {
			w.Set(v.Name, v.Value)
		}
		w.Text(railguest.Fragment())
		w.Line("fr topology-facts topo_facts")
		w.Line("fr topology-file cat ", remote.RootPath(nccltopo.DefaultPath))
	}
}

// pingProbe appends the check's ping of every rail's gateway from its
// interface (ping_rails; needs railsProbe first, which sets rp_gw).
func pingProbe(w *remote.Script) {
	w.Line("ping_rails")
}

// railLink is one interface of `ip -o link show`.
type railLink struct {
	Flags []string // "UP", "LOWER_UP", …
	MTU   int
	State string // operstate: "UP", "DOWN", "UNKNOWN"
	MAC   string // lower case, "" when none
}

func (l railLink) up() bool      { return slices.Contains(l.Flags, "UP") }
func (l railLink) carrier() bool { return slices.Contains(l.Flags, "LOWER_UP") }

// railRule is one line of `ip -4 rule show`: "1001:	from 10.0.1.11 lookup 101".
type railRule struct {
	Priority   int
	From       string // "10.0.1.11", "all", "10.0.1.0/24"
	Table      string // as printed: a number or a name
	Line       string
	onlySimple bool // the rule has no selector but from
}

// railRoute is one route of `ip -4 route show`, with what the rails' routes
// are told apart by.
type railRoute struct {
	Dst    netip.Prefix
	Via    netip.Addr
	Dev    string
	Metric int
	Scope  string
}

func (r railRoute) String() string {
	s := r.Dst.String()
	if r.Via.IsValid() {
		s += " via " + r.Via.String()
	}
	s += " dev " + r.Dev
	if r.Scope != "" {
		s += " scope " + r.Scope
	}
	if r.Metric != 0 {
		s += " metric " + strconv.Itoa(r.Metric)
	}
	return s
}

// railState is the rails' live state as the probe read it.
type railState struct {
	Links  map[string]railLink
	Addrs  map[string][]netip.Prefix
	Rules  []railRule
	Names  map[string]int           // table name → number (rt_tables)
	Tables map[int][]railRoute      // per rail table
	Sysctl map[string]string        // /proc/sys path → value ("-": unread)
	Ping   map[int]remote.Result    // check: per rail
	Facts  *remote.Result           // topo_facts' output, nil when not read
	File   *remote.Result           // NCCL's topology file, nil when not read
	Seen   map[string]remote.Result // rlinks, raddrs, rrules, rsysctl
}

var (
	reRuleHead = regexp.MustCompile(`^(\d+):\s+(.*)$`)
	reState    = regexp.MustCompile(`\bstate (\S+)`)
)

// parseRails reads the rails' results; nil when rs has none.
func parseRails(rs []remote.Result) *railState {
	var s *railState
	st := func() *railState {
		if s == nil {
			s = &railState{Links: map[string]railLink{}, Addrs: map[string][]netip.Prefix{}, Names: map[string]int{},
				Tables: map[int][]railRoute{}, Sysctl: map[string]string{}, Ping: map[int]remote.Result{}, Seen: map[string]remote.Result{}}
		}
		return s
	}
	for i := range rs {
		r := rs[i]
		switch {
		case r.Name == "rlinks":
			st().Seen[r.Name] = r
			for _, line := range strings.Split(string(r.Data), "\n") {
				f := strings.Fields(line)
				if len(f) < 3 || !strings.HasSuffix(f[0], ":") {
					continue
				}
				name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
				l := railLink{Flags: strings.Split(strings.Trim(f[2], "<>"), ",")}
				l.MTU, l.MAC = parseLink(line)
				if m := reState.FindStringSubmatch(line); m != nil {
					l.State = m[1]
				}
				s.Links[name] = l
			}
		case r.Name == "raddrs":
			st().Seen[r.Name] = r
			for _, line := range strings.Split(string(r.Data), "\n") {
				f := strings.Fields(line)
				if len(f) < 4 || f[2] != "inet" {
					continue
				}
				if p, err := netip.ParsePrefix(f[3]); err == nil {
					s.Addrs[f[1]] = append(s.Addrs[f[1]], p)
				}
			}
		case r.Name == "rrules":
			st().Seen[r.Name] = r
			for _, line := range strings.Split(string(r.Data), "\n") {
				m := reRuleHead.FindStringSubmatch(strings.TrimSpace(line))
				if m == nil {
					continue
				}
				prio, _ := strconv.Atoi(m[1])
				rule := railRule{Priority: prio, Line: strings.Join(strings.Fields(line), " ")}
				f := strings.Fields(m[2])
				simple := true
				for k := 0; k < len(f); k++ {
					switch f[k] {
					case "from":
						if k+1 < len(f) {
							rule.From = f[k+1]
							k++
						}
					case "lookup", "table":
						if k+1 < len(f) {
							rule.Table = f[k+1]
							k++
						}
					case "proto":
						k++ // who added it (networkd: static), not a selector
					default:
						simple = false
					}
				}
				rule.onlySimple = simple
				s.Rules = append(s.Rules, rule)
			}
		case r.Name == "rtnames":
			st()
			for _, line := range strings.Split(string(r.Data), "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
					if n, err := strconv.Atoi(f[0]); err == nil {
						if _, dup := s.Names[f[1]]; !dup {
							s.Names[f[1]] = n
						}
					}
				}
			}
		case strings.HasPrefix(r.Name, "rt:"):
			t, err := strconv.Atoi(r.Name[3:])
			if err != nil {
				continue
			}
			st()
			if r.RC() == 0 {
				s.Tables[t] = parseRailRoutes(string(r.Data))
			} else {
				s.Tables[t] = nil // the table does not exist yet
			}
		case r.Name == "rsysctl":
			st().Seen[r.Name] = r
			for _, line := range strings.Split(string(r.Data), "\n") {
				if p, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
					s.Sysctl[p] = v
				}
			}
		case strings.HasPrefix(r.Name, "rp:"):
			if k, err := strconv.Atoi(r.Name[3:]); err == nil {
				st().Ping[k] = r
			}
		case r.Name == "topology-facts":
			st().Facts = &rs[i]
		case r.Name == "topology-file":
			st().File = &rs[i]
		}
	}
	return s
}

// parseRailRoutes reads `ip -4 route show [table N]`: unicast routes with
// their next hop, device, metric and scope (others and multipath next hops
// are skipped).
func parseRailRoutes(out string) []railRoute {
	var rs []railRoute
	for _, line := range strings.Split(out, "\n") {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		f := strings.Fields(line)
		if routeTypes[f[0]] {
			if f[0] != "unicast" || len(f) < 2 {
				continue
			}
			f = f[1:]
		}
		if f[0] == "default" {
			f[0] = "0.0.0.0/0"
		}
		if !strings.Contains(f[0], "/") {
			f[0] += "/32"
		}
		dst, err := netip.ParsePrefix(f[0])
		if err != nil {
			continue
		}
		e := railRoute{Dst: dst}
		for i := 1; i+1 < len(f); i++ {
			switch f[i] {
			case "via":
				e.Via, _ = netip.ParseAddr(f[i+1])
			case "dev":
				e.Dev = f[i+1]
			case "metric":
				e.Metric, _ = strconv.Atoi(f[i+1])
			case "scope":
				e.Scope = f[i+1]
			}
		}
		rs = append(rs, e)
	}
	return rs
}

// The checks of a VM with several rails (docs/rails.md, "The hosts
// target"; docs/check.md). Each is reported per rail, rail 0 included,
// but CheckRailSysctl and CheckTopology, once per VM.
const (
	// CheckRailLink: the rail's interface exists, is up with a carrier,
	// carries the rail's address and has the fabric's MTU (data_mtu).
	CheckRailLink = "rail-link"
	// CheckRailRouting: the rail's rule `from <address> lookup 100+r`
	// (priority 1000+r), its table 100+r (its subnet on the link, every
	// peer subnet via its gateway) and its main-table routes to the peer
	// subnets (metric 100+r), as pkg/railnet sets them up.
	CheckRailRouting = "rail-routing"
	// CheckRailSysctl: arp_ignore, arp_announce and rp_filter at 2 on
	// conf.all (railnet.Sysctls, with their sources).
	CheckRailSysctl = "rail-sysctl"
	// CheckRailGateway: the rail's gateway answers a ping sent from the
	// rail's interface and address (ping -I <interface>).
	CheckRailGateway = "rail-gateway"
	// CheckTopology: NCCL's topology file (nccltopo.DefaultPath) is there,
	// NCCL reads it as written (nccltopo.Validate), it names only bus IDs
	// this guest has, each of the device class the file says
	// (nccltopo.CheckGuest), and it is the file rdggen writes from this
	// guest's devices (railguest.TopologyFile).
	CheckTopology = "nccl-topology"
	// CheckGPUOrder: GPU g of the guest's bus order is on the virtual
	// NUMA node vSphere gave the VM's pciPassthru g (the topology file's
	// assumption, docs/rails.md); reported only where Options.VNUMA gives
	// vSphere's nodes.
	CheckGPUOrder = "gpu-order"
)

// railGap is one thing of the rails' live state that differs from what
// railnet sets up: a change of the plan (Fixable) and a failure of check.
type railGap struct {
	Rail  int    // -1: the VM's (a sysctl)
	Check string // CheckRailLink, CheckRailRouting or CheckRailSysctl
	Kind  string // "interface", "up", "carrier", "mtu", "address", "rule", "route", "sysctl"
	Item  string // the plan's item: "rail 1 rule", …
	Op    applyplan.Op
	From  string
	To    string
	Text  string // the plan's line
	// Fixable: rails_apply repairs it (a missing carrier or interface it
	// cannot).
	Fixable bool
	// Found is what check reports of it.
	Found string
}

// ruleText is rail r's rule as `ip rule` prints it.
func ruleText(r int, rail railnet.Rail) string {
	return fmt.Sprintf("%d: from %s lookup %d", railnet.Priority(r), rail.Address.Addr(), railnet.Table(r))
}

// hasRule reports whether rules hold rail r's rule (its table by number or
// by the name rt_tables gives that number).
func (s *railState) hasRule(r int, rail railnet.Rail) bool {
	want := railnet.Table(r)
	for _, x := range s.Rules {
		if x.Priority != railnet.Priority(r) || !x.onlySimple {
			continue
		}
		if x.From != rail.Address.Addr().String() && x.From != netip.PrefixFrom(rail.Address.Addr(), 32).String() {
			continue
		}
		if n, err := strconv.Atoi(x.Table); (err == nil && n == want) || (err != nil && s.Names[x.Table] == want) {
			return true
		}
	}
	return false
}

// railGaps compares the rails' live state with vm's rails (mainOut is `ip
// -4 route show table main`), in rail order, link before routing, then the
// sysctls.
func railGaps(vm railnet.VM, s *railState, mainOut string, dataMTU int) []railGap {
	var gaps []railGap
	main := parseRailRoutes(mainOut)
	for r, rail := range vm.Rails {
		name := fmt.Sprintf("rail %d %s", r, rail.Interface)
		l, ok := s.Links[rail.Interface]
		if !ok {
			gaps = append(gaps, railGap{Rail: r, Check: CheckRailLink, Kind: "interface", Item: name + " link", Op: applyplan.Add, From: "absent", To: rail.Interface,
				Text: "rail " + strconv.Itoa(r) + ": no interface " + rail.Interface, Found: "no interface " + rail.Interface})
		} else {
			if !l.up() {
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailLink, Kind: "up", Item: name + " link", Op: applyplan.Update, From: "down", To: "up", Fixable: true,
					Text: "~ " + name + ": up (was down)", Found: rail.Interface + " down"})
			} else if !l.carrier() {
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailLink, Kind: "carrier", Item: name + " carrier", From: "no carrier", To: "carrier",
					Found: rail.Interface + " up, no carrier (state " + quote.Line(orText(l.State, "unknown")) + ")"})
			}
			if l.MTU != dataMTU {
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailLink, Kind: "mtu", Item: name + " mtu", Op: applyplan.Update, From: strconv.Itoa(l.MTU), To: strconv.Itoa(dataMTU), Fixable: true,
					Text: fmt.Sprintf("~ %s: mtu %d -> %d", name, l.MTU, dataMTU), Found: fmt.Sprintf("mtu %d", l.MTU)})
			}
			if !slices.Contains(s.Addrs[rail.Interface], rail.Address) {
				has := "none"
				if a := s.Addrs[rail.Interface]; len(a) > 0 {
					has = fmt.Sprint(a)
				}
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailLink, Kind: "address", Item: name + " address", Op: applyplan.Add, From: has, To: rail.Address.String(), Fixable: true,
					Text: fmt.Sprintf("+ %s: address %s", name, rail.Address), Found: fmt.Sprintf("no address %s (has %s)", rail.Address, has)})
			}
		}
		if !s.hasRule(r, rail) {
			gaps = append(gaps, railGap{Rail: r, Check: CheckRailRouting, Kind: "rule", Item: fmt.Sprintf("rail %d rule", r), Op: applyplan.Add, To: ruleText(r, rail), Fixable: true,
				Text: fmt.Sprintf("+ rail %d: rule %s", r, ruleText(r, rail)), Found: "no rule " + ruleText(r, rail)})
		}
		table := s.Tables[railnet.Table(r)]
		want := []railRoute{{Dst: rail.Subnet(), Dev: rail.Interface, Scope: "link"}}
		for _, p := range rail.Peers {
			want = append(want, railRoute{Dst: p, Via: rail.Gateway, Dev: rail.Interface})
		}
		for _, w := range want {
			if !slices.ContainsFunc(table, func(e railRoute) bool { return e.Dst == w.Dst && e.Via == w.Via && e.Dev == w.Dev }) {
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailRouting, Kind: "route", Item: fmt.Sprintf("rail %d route %s table %d", r, w.Dst, railnet.Table(r)), Op: applyplan.Add, To: w.String(), Fixable: true,
					Text: fmt.Sprintf("+ rail %d: route %s table %d", r, w, railnet.Table(r)), Found: fmt.Sprintf("no route %s in table %d", w, railnet.Table(r))})
			}
		}
		for _, p := range rail.Peers {
			w := railRoute{Dst: p, Via: rail.Gateway, Dev: rail.Interface, Metric: railnet.Metric(r)}
			if !slices.ContainsFunc(main, func(e railRoute) bool {
				return e.Dst == w.Dst && e.Via == w.Via && e.Dev == w.Dev && e.Metric == w.Metric
			}) {
				gaps = append(gaps, railGap{Rail: r, Check: CheckRailRouting, Kind: "route", Item: fmt.Sprintf("rail %d route %s metric %d", r, w.Dst, w.Metric), Op: applyplan.Add, To: w.String(), Fixable: true,
					Text: fmt.Sprintf("+ rail %d: route %s", r, w), Found: fmt.Sprintf("no route %s in the main table", w)})
			}
		}
	}
	for _, x := range railnet.Sysctls() {
		v, ok := s.Sysctl[sysctlPath(x.Key)]
		if !ok || v == "" {
			v = "-"
		}
		if v != x.Value {
			gaps = append(gaps, railGap{Rail: -1, Check: CheckRailSysctl, Kind: "sysctl", Item: "rails sysctl " + x.Key, Op: applyplan.Update, From: v, To: x.Value, Fixable: true,
				Text: fmt.Sprintf("~ rails: %s: %s -> %s", x.Key, quote.Line(v), x.Value), Found: x.Key + " = " + quote.Line(v)})
		}
	}
	return gaps
}

// isRailItem reports whether a plan's item is the rails' live state or NCCL's
// topology file, which the rails' checks report (not CheckFiles).
func isRailItem(item string) bool {
	return strings.HasPrefix(item, "rail ") || strings.HasPrefix(item, "rails ") || item == topologyItem
}

// topologyItem is the plan's item of NCCL's topology file.
const topologyItem = nccltopo.DefaultPath

// netplanRule is a routing-policy rule of a host's netplan definition.
type netplanRule struct {
	From     string `yaml:"from"`
	Table    int    `yaml:"table"`
	Priority int    `yaml:"priority"`
}

// hostRuleFile returns the host's own netplan file (rdggen's two files
// left out, in netplan's order) whose definition id has rule, "" when none
// does.
func hostRuleFile(files []netplanFile, id string, rule netplanRule) string {
	for _, f := range netplanOrder(files) {
		var doc struct {
			Network struct {
				Ethernets map[string]struct {
					RoutingPolicy []netplanRule `yaml:"routing-policy"`
				} `yaml:"ethernets"`
			} `yaml:"network"`
		}
		if yaml.Unmarshal(f.Data, &doc) != nil {
			continue
		}
		for _, x := range doc.Network.Ethernets[id].RoutingPolicy {
			from := x.From
			if !strings.Contains(from, "/") {
				from += "/32"
			}
			if from == rule.From && x.Table == rule.Table && x.Priority == rule.Priority {
				return f.Path
			}
		}
	}
	return ""
}

// planRails plans the rails: their netplan file under the host's IDs (into
// files, which planFiles installs), their live state, and NCCL's topology
// file. It returns a *hostError when a rail's interface is missing.
func (p *plan) planRails(inv *inventory.Inventory, st *hostState, files []fileSpec) ([]fileSpec, error) {
	h := p.d.Host
	rd := p.d.Rails
	if rd.Err != nil {
		return nil, hostErrorf("rails: %v", rd.Err)
	}
	s := st.Rails
	if s == nil || len(s.Seen) < 4 {
		return nil, fmt.Errorf("probe: the rails' state was not read")
	}
	// A rail's interface must exist: it is found by its name.
	for r, rail := range rd.VM.Rails {
		if _, ok := s.Links[rail.Interface]; ok || r == 0 {
			continue // rail 0's is planAddress's
		}
		msg := fmt.Sprintf("rail %d: no interface %s on %s (%s; rdggen finds each rail's VF by its name)", r, rail.Interface, h.Name, railIfaceKey(h, r))
		if other := carrier(s, rail.Address); other != "" {
			msg += fmt.Sprintf(": %s carries the rail's address %s, set hosts[%d].data[%d].interface: %s", quote.Line(other), rail.Address, h.Index, r, quote.Line(other))
		} else {
			msg += ": give the VF that name, or set hosts[" + strconv.Itoa(h.Index) + "].data[" + strconv.Itoa(r) + "].interface to its name in the guest, and check that the VF is passed through (rdggen check --target esxi)"
		}
		return nil, hostErrorf("%s", msg)
	}
	// The netplan file, under the IDs that already configure each rail.
	vm := railnet.VM{Name: rd.VM.Name, Rails: slices.Clone(rd.VM.Rails)}
	ids := map[string]int{}
	for r := range vm.Rails {
		rail := &vm.Rails[r]
		// Rail 0's as planFiles finds it for pkg/dockernet's file (the
		// interface's name when no host file configures it), the others'
		// alike.
		if id, _, ok := netplanID(st.Netplan, rail.Interface, s.Links[rail.Interface].MAC); ok {
			rail.ID = id
		}
		if j, dup := ids[rail.NetplanID()]; dup {
			p.notes = append(p.notes, fmt.Sprintf("rails %d and %d are configured by one netplan definition (%s): rdggen defines rail %d under its own name %s, which netplan may not use at boot; give each rail's VF a definition of its own", j, r, quote.Line(rail.NetplanID()), r, rail.Interface))
			rail.ID = rail.Interface
		}
		ids[rail.NetplanID()] = r
	}
	g, err := railnet.New(vm)
	if err != nil {
		return nil, hostErrorf("rails: %v", err)
	}
	es := g.Ethernets()
	for r := range es {
		rule := netplanRule{From: netip.PrefixFrom(vm.Rails[r].Address.Addr(), 32).String(), Table: railnet.Table(r), Priority: railnet.Priority(r)}
		if f := hostRuleFile(st.Netplan, es[r].ID, rule); f != "" {
			es[r].RoutingPolicy = nil
			p.notes = append(p.notes, fmt.Sprintf("rail %d's rule from %s table %d is in %s already (the VM's first boot): %s leaves it out, as netplan would give it twice",
				r, vm.Rails[r].Address.Addr(), railnet.Table(r), f, railnet.NetplanPath))
		}
	}
	files = slices.Clone(files)
	for i := range files {
		if files[i].Path == railnet.NetplanPath {
			files[i].Data = g.NetplanWith(es)
		}
	}
	// The live state.
	for _, gap := range railGaps(rd.VM, s, st.Routes.Out, h.DataMTU) {
		switch {
		case !gap.Fixable:
		case gap.Rail == 0 && (gap.Kind == "mtu" || gap.Kind == "address"):
			// rail 0's MTU and address: planMTU and planAddress
		default:
			p.rails = append(p.rails, gap)
		}
	}
	// NCCL's topology file.
	switch {
	case rd.TopoErr != nil:
		p.notes = append(p.notes, "no NCCL topology file: "+rd.TopoErr.Error())
	default:
		want, why := topologyWant(inv, h, s)
		if why != "" {
			p.notes = append(p.notes, "NCCL's topology file cannot be written: "+why)
			break
		}
		switch {
		case s.File == nil || s.File.RC() != 0:
			p.topology = "absent"
		case !bytes.Equal(s.File.Data, want):
			p.topology = "differs from this guest's devices"
		}
	}
	return files, nil
}

// topologyWant is railguest.TopologyFile of the guest's facts as the probe
// read them, or why there is none.
func topologyWant(inv *inventory.Inventory, h *inventory.Host, s *railState) ([]byte, string) {
	if s.Facts == nil {
		return nil, "the guest's facts were not read"
	}
	facts, err := railguest.ParseFacts(s.Facts.Data)
	if err != nil {
		return nil, err.Error()
	}
	want, err := railguest.TopologyFile(inv, h, nil, facts)
	if err != nil {
		return nil, err.Error()
	}
	return want, ""
}

// railIfaceKey names where rail r's interface name comes from.
func railIfaceKey(h *inventory.Host, r int) string {
	if r == 0 {
		return "data_interface"
	}
	return fmt.Sprintf("hosts[%d].data[%d].interface, by default %s", h.Index, r, inventory.DefaultRailInterface(r))
}

// carrier is the interface that has address a, "" when none has.
func carrier(s *railState, a netip.Prefix) string {
	var names []string
	for n, as := range s.Addrs {
		if slices.ContainsFunc(as, func(x netip.Prefix) bool { return x.Addr() == a.Addr() }) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// railChanges are the rails' changes of the plan.
func (p *plan) railChanges() []applyplan.Change {
	var out []applyplan.Change
	for _, g := range p.rails {
		out = append(out, applyplan.Change{Op: g.Op, Item: g.Item, From: g.From, To: g.To, Text: g.Text})
	}
	if p.topology != "" {
		out = append(out, applyplan.Change{Op: applyplan.Update, Item: topologyItem, From: p.topology, To: "this guest's",
			Text: fmt.Sprintf("~ %s: NCCL's topology file from this guest's devices (%s; was %s)", nccltopo.DefaultPath, railguest.ScriptPath, p.topology)})
	}
	return out
}

// applyRails appends the rails' steps: rails_apply (pkg/railnet's live
// script) when their live state differs, then the boot script that writes
// NCCL's topology file (installed by applyFiles before it) when that file
// differs.
func (p *plan) applyRails(w *remote.Script) {
	if len(p.rails) > 0 {
		for _, v := range p.d.Rails.Guest.Vars() {
			w.Set(v.Name, v.Value)
		}
		w.Text(railnet.Fragment())
		w.Line("step rails rails_apply")
	}
	if p.topology != "" {
		// The boot script reads its root prefix from RDGGEN_ROOT, as at boot
		// (unset there: the machine's own root).
		w.Line(`step topology env RDGGEN_ROOT="$R" sh `, remote.RootPath(railguest.ScriptPath))
	}
}
