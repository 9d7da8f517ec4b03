package nccltopo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// handlers are the elements NCCL's reader keeps under each parent ("" is
// the file's top level); any other element is skipped with everything in
// it ("Ignoring element"). Source: NVIDIA/nccl src/graph/xml.cc
// ncclTopoGetXmlFromFile and ncclTopoXmlLoad{System,Cpu,Pci,Gpu,Nic}.
var handlers = map[string][]string{
	"":       {"system"},
	"system": {"cpu"},
	"cpu":    {"pci", "nic"},
	"pci":    {"pci", "gpu", "nic", "pcilink"},
	"gpu":    {"nvlink", "c2c"},
	"nic":    {"net"},
}

// knownAttrs are the attributes NCCL reads on each element it keeps (its
// xmlGetAttr* calls in src/graph/topo.cc and xml.cc at NCCLCommit); "keep"
// is read on every element (ncclTopoTrimXmlRec).
var knownAttrs = map[string][]string{
	"system":  {"version", "name"},
	"cpu":     {"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash"},
	"pci":     {"busid", "class", "link_speed", "link_width", "vendor", "device", "subsystem_vendor", "subsystem_device"},
	"gpu":     {"dev", "sm", "rank", "gdr", "mlopart"},
	"nvlink":  {"target", "count", "tclass"},
	"c2c":     {"count", "bw"},
	"nic":     {},
	"net":     {"name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr", "coll", "rail", "plane", "net", "gin", "rma"},
	"pcilink": {"target"},
}

const (
	// maxAttrs is MAX_ATTR_COUNT: NCCL keeps an element's first 16
	// attributes and drops the rest (xml.h, xml.cc xmlGetNode).
	maxAttrs = 16
	// maxSubs is MAX_SUBS at NCCLCommit (since 2.29.7): the child elements
	// NCCL keeps under one element; one more stops its reader. Releases
	// 2.21–2.29.3 held 128, earlier ones 32.
	maxSubs    = 640
	maxSubsOld = 32
	// maxLoaded is the most elements NCCL keeps from a file: its buffer
	// holds NCCL_TOPO_XML_MAX_NODES = 256 (topo.h, since 2.21) and its
	// reader checks for a full buffer before every read, even of a closing
	// tag, so the 256th element already stops it (xml.cc xmlLoadSub).
	maxLoaded = 255
	// xmlMaxNodes is NCCL_TOPO_XML_MAX_NODES, which NCCL's own additions at
	// run time must also fit in (xml.h xmlAddNode: "too many XML nodes").
	xmlMaxNodes = 256
)

// Validate reads a topology file the way NCCL's reader does (at
// NCCLCommit) and returns, sorted by position, everything NCCL would
// refuse (its communicator init then fails) or misread (it loads something
// else than the file says), as Errors, and what it ignores or fills in by
// itself, as Warnings. Each Finding names its rule and source; the rules
// are in docs/nccl-topology.md. A file Generate wrote gives none. Validate
// never fails: unreadable bytes are a RuleParse finding.
func Validate(file []byte) []Finding {
	top, warnings, fatal := parse(file)
	v := &validator{fs: warnings, busIDs: map[string]*elem{}, numa: map[int64]*elem{}, cpuOf: map[int]*elem{}}
	if fatal != nil {
		v.fs = append(v.fs, *fatal)
	} else {
		v.file(top)
	}
	sortFindings(v.fs)
	return v.fs
}

type validator struct {
	fs     []Finding
	loaded []*elem           // in file order
	busIDs map[string]*elem  // busid → first <pci> with it
	numa   map[int64]*elem   // numaid → first <cpu> with it
	cpuOf  map[int]*elem     // CPU number → first <cpu> whose affinity has it
	bw     map[*elem]float64 // <pci> → its link's GB/s as NCCL computes it, when known
	// shared: <pci> → how many NICs sharedLink reported behind it
	shared map[*elem]int
}

// at adds a finding about e, at attribute key when e has it.
func (v *validator) at(e *elem, key string, sev Severity, rule Rule, src, format string, args ...any) {
	l, c := 0, 0
	if e != nil {
		l, c = e.line, e.col
		if a, ok := e.get(key); ok && key != "" {
			l, c = a.line, a.col
		}
	}
	v.fs = append(v.fs, Finding{Severity: sev, Rule: rule, Line: l, Col: c, Path: path(e), Message: fmt.Sprintf(format, args...), Source: src})
}

// path names e: system/cpu[numaid=0]/pci[busid=ffff:ff:01.0]; an element
// without its identifying attribute is name#k, the k-th (from 0) of its
// name under its parent.
func path(e *elem) string {
	if e == nil {
		return ""
	}
	var parts []string
	for ; e != nil; e = e.parent {
		part := e.name
		id := map[string]string{"cpu": "numaid", "pci": "busid", "net": "name"}[e.name]
		if a, ok := e.get(id); ok && id != "" {
			part += "[" + id + "=" + clip(a.val) + "]"
		} else if e.name != "system" {
			part += "#" + strconv.Itoa(e.nth)
		}
		parts = append(parts, part)
	}
	slices.Reverse(parts)
	return strings.Join(parts, "/")
}

// mark flags the elements NCCL keeps (loaded) and returns them in file
// order, with the <system> elements among top.
func mark(top []*elem) (systems, loaded []*elem) {
	var walk func(e *elem)
	walk = func(e *elem) {
		e.loaded = true
		loaded = append(loaded, e)
		for _, k := range e.kids {
			if slices.Contains(handlers[e.name], k.name) {
				walk(k)
			}
		}
	}
	for _, e := range top {
		if e.name == "system" {
			systems = append(systems, e)
			walk(e)
		}
	}
	return systems, loaded
}

func (v *validator) file(top []*elem) {
	systems, loaded := mark(top)
	v.loaded = loaded
	for _, e := range top {
		if e.name != "system" {
			v.at(e, "", Warning, RuleUnknown, srcHandlers, "NCCL reads only <system> at the top of the file; it ignores <%s> and everything in it", clip(e.name))
		}
	}
	if len(systems) == 0 {
		v.fs = append(v.fs, Finding{Severity: Error, Rule: RuleSystem, Source: srcHandlers,
			Message: "no <system> element: NCCL loads nothing from this file and detects the topology as if it were absent"})
		return
	}
	for _, s := range systems[1:] {
		v.at(s, "", Error, RuleSystem, srcHandlers, "a second <system> (the first is on line %d): NCCL loads both into one topology and adds what it detects to the first only", systems[0].line)
	}
	if len(loaded) > maxLoaded {
		v.at(loaded[maxLoaded], "", Error, RuleLimit, srcXMLLimits,
			"the %dth element NCCL keeps: its reader holds %d (NCCL_TOPO_XML_MAX_NODES) and stops at its next read (\"XML parser is limited to %d nodes\")", maxLoaded+1, xmlMaxNodes, xmlMaxNodes)
	}
	for _, e := range loaded {
		v.structure(e)
		v.attributes(e)
	}
	for _, s := range systems {
		v.system(s)
	}
	v.bw, v.shared = map[*elem]float64{}, map[*elem]int{}
	for _, e := range loaded {
		if e.name == "pci" {
			v.pci(e)
		}
	}
	for _, e := range loaded {
		switch e.name {
		case "pci":
			v.bottleneck(e)
		case "cpu":
			v.cpuNICs(e)
			for _, k := range e.kids {
				if k.loaded && k.name == "pci" {
					v.sharedLink(k)
				}
			}
		}
	}
	v.budget()
}

// structure reports the children NCCL ignores and too many children.
func (v *validator) structure(e *elem) {
	n := 0
	for _, k := range e.kids {
		if !k.loaded {
			v.at(k, "", Warning, RuleUnknown, srcHandlers, "NCCL reads no <%s> under <%s>; it ignores it and everything in it", clip(k.name), e.name)
			continue
		}
		n++
		if n == maxSubs+1 {
			v.at(k, "", Error, RuleLimit, srcXMLLimits, "the %dth child of <%s>: NCCL keeps %d (MAX_SUBS) and stops reading (\"limited to %d subnodes\")", n, e.name, maxSubs, maxSubs)
		}
	}
	if n > maxSubsOld && n <= maxSubs {
		v.at(e, "", Warning, RuleLimit, srcXMLLimits+"; NVIDIA/nccl v2.20.5-1 and v2.29.3-1 xml.h MAX_SUBS",
			"<%s> has %d child elements: NCCL 2.29.7 and later keep %d, but 2.21–2.29.3 stop at 128 and earlier releases at 32", e.name, n, maxSubs)
	}
}

// attributes reports too many, unknown and repeated attributes, then keeps
// only the ones NCCL keeps, so that the checks after see what NCCL sees.
func (v *validator) attributes(e *elem) {
	if len(e.attrs) > maxAttrs {
		dropped := e.attrs[maxAttrs]
		v.fs = append(v.fs, Finding{Severity: Error, Rule: RuleLimit, Line: dropped.line, Col: dropped.col, Path: path(e), Source: srcXMLLimits,
			Message: fmt.Sprintf("%d attributes (an extra space counts as an empty one): NCCL keeps the first %d (MAX_ATTR_COUNT) and drops %q and the rest", len(e.attrs), maxAttrs, clip(dropped.key))})
		e.attrs = e.attrs[:maxAttrs]
	}
	seen := map[string]bool{}
	for _, a := range e.attrs {
		if a.key == "" {
			continue
		}
		if seen[a.key] {
			v.fs = append(v.fs, Finding{Severity: Error, Rule: RuleDuplicate, Line: a.line, Col: a.col, Path: path(e), Source: srcHandlers + " (xmlGetAttr returns the first)",
				Message: fmt.Sprintf("%s is given twice: NCCL reads the first, %q", clip(a.key), clip(firstVal(e, a.key)))})
			continue
		}
		seen[a.key] = true
		if a.key != "keep" && !slices.Contains(knownAttrs[e.name], a.key) {
			v.fs = append(v.fs, Finding{Severity: Warning, Rule: RuleUnknown, Line: a.line, Col: a.col, Path: path(e), Source: srcHandlers,
				Message: fmt.Sprintf("NCCL reads no attribute %q on <%s>; it ignores it", clip(a.key), e.name)})
		}
	}
}

func firstVal(e *elem, key string) string {
	a, _ := e.get(key)
	return a.val
}

func (v *validator) system(s *elem) {
	a, ok := s.get("version")
	switch n, full := cInt(a.val); {
	case !ok:
		v.at(s, "", Error, RuleVersion, srcVersion, "no version attribute: NCCL's init fails (\"Attribute version of node system not found\"); it must be version=\"1\"")
	case n != 1:
		v.at(s, "version", Error, RuleVersion, srcVersion, "version %q: NCCL reads %d and refuses the file (\"XML Topology has wrong version %d, 1 needed\"), which fails its init; it must be \"1\"", clip(a.val), n, n)
	case !full || a.val != "1":
		v.at(s, "version", Warning, RuleVersion, srcVersion, "version %q: NCCL's strtol reads it as 1; write \"1\"", clip(a.val))
	}
	for _, c := range s.kids {
		if c.loaded && c.name == "cpu" {
			v.cpu(c)
		}
	}
}

func (v *validator) cpu(c *elem) {
	if a, ok := c.get("numaid"); !ok {
		v.at(c, "", Error, RuleCPU, srcCPU, "no numaid: NCCL's init fails (\"Attribute numaid of node cpu not found\")")
	} else if n, full := cInt(a.val); !full {
		v.at(c, "numaid", Error, RuleCPU, srcCPU, "numaid %q is not an integer: NCCL reads %d", clip(a.val), n)
	} else if first, dup := v.numa[n]; dup {
		v.at(c, "numaid", Error, RuleDuplicate, srcCPU, "numaid %d is also the <cpu> on line %d's: NCCL makes two CPU nodes with one id", n, first.line)
	} else {
		v.numa[n] = c
	}
	if a, ok := c.get("affinity"); !ok {
		v.at(c, "", Warning, RuleAffinity, srcFill+"; "+srcAffinity, "no affinity: NCCL reads this NUMA node's CPUs from the guest's sysfs (cpumap of its numaid)")
	} else if set, err := parseMask(a.val); err != nil {
		v.at(c, "affinity", Error, RuleAffinity, srcAffinity, "affinity %q: %v", clip(a.val), err)
	} else if len(set) == 0 {
		v.at(c, "affinity", Warning, RuleAffinity, srcAffinity, "affinity %q holds no CPU: NCCL cannot pin this node's threads near its devices", clip(a.val))
	} else {
		for _, cpu := range set {
			if other, dup := v.cpuOf[cpu]; dup {
				v.at(c, "affinity", Warning, RuleAffinity, srcAffinity, "CPU %d is also in the affinity of the <cpu> on line %d: NCCL pins both nodes' threads to it", cpu, other.line)
				break
			}
		}
		for _, cpu := range set {
			if _, dup := v.cpuOf[cpu]; !dup {
				v.cpuOf[cpu] = c
			}
		}
	}
	for _, k := range c.kids {
		if k.loaded && k.name == "nic" {
			v.at(k, "", Warning, RuleRuntime, srcFill, "a <nic> element: NCCL takes its <net> entries (names, dev numbers, GUIDs) instead of asking the network plugin; a file for a VM leaves it out")
		}
	}
	if _, ok := c.get("host_hash"); ok {
		v.at(c, "host_hash", Warning, RuleRuntime, srcFill+"; topo.cc ncclTopoGetSystem", "host_hash: NCCL overwrites it with this host's own")
	}
	arch, archOK := c.get("arch")
	x86 := false
	if !archOK {
		v.at(c, "", Warning, RuleCPU, srcCPU, "no arch: NCCL fills in the architecture it was built for")
		x86 = true // NCCL then asks CPUID for vendor and ids, as below
	} else {
		name, ok := v.prefixMatch(c, "arch", arch.val, []string{"x86_64", "arm64", "ppc64"})
		if !ok {
			return
		}
		x86 = name == "x86_64"
	}
	if !x86 {
		return
	}
	vendor := ""
	if a, ok := c.get("vendor"); !ok {
		v.at(c, "", Warning, RuleCPU, srcCPU, "no vendor: NCCL reads it from CPUID")
	} else if name, ok := v.prefixMatch(c, "vendor", a.val, []string{"GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  "}); ok {
		vendor = name
	} else {
		return
	}
	if vendor == "AuthenticAMD" {
		return // NCCL reads no family or model for AMD
	}
	_, famOK := c.get("familyid")
	_, modOK := c.get("modelid")
	if !famOK {
		if vendor != "" {
			v.at(c, "", Warning, RuleCPU, srcCPU, "no familyid: NCCL reads family and model from CPUID")
		}
		return
	}
	if !modOK {
		v.at(c, "", Error, RuleCPU, srcCPU, "familyid without modelid: NCCL fills both from CPUID only when familyid is missing, so its init fails (\"Attribute modelid of node cpu not found\")")
	}
	for _, k := range []string{"familyid", "modelid"} {
		if a, ok := c.get(k); ok {
			if n, full := cInt(a.val); !full {
				v.at(c, k, Error, RuleCPU, srcCPU, "%s %q is not an integer: NCCL reads %d, and from it the CPU model its bandwidths depend on", k, clip(a.val), n)
			}
		}
	}
}

// prefixMatch applies NCCL's kvConvertToInt to a CPU attribute: the first
// table entry that prefixes the value wins; none is an Error, a prefix but
// not the whole value a Warning.
func (v *validator) prefixMatch(c *elem, key, val string, table []string) (string, bool) {
	for _, t := range table {
		if strings.HasPrefix(val, t) {
			if val != t {
				v.at(c, key, Warning, RuleCPU, srcCPU, "%s %q: NCCL reads it by its prefix as %q", key, clip(val), t)
			}
			return t, true
		}
	}
	v.at(c, key, Error, RuleCPU, srcCPU, "%s %q is none NCCL knows (%s): it takes an unknown one, and with it the wrong CPU bandwidth model", key, clip(val), strings.Join(table, ", "))
	return "", false
}

// pci checks one <pci>: bus ID, class, link, and what it holds.
func (v *validator) pci(p *elem) {
	var id BusID
	idOK := false
	if a, ok := p.get("busid"); !ok {
		v.at(p, "", Error, RuleBusID, srcBusID, "no busid: NCCL cannot match or place this device")
	} else if b, err := ParseBusID(a.val); err != nil {
		v.at(p, "busid", Error, RuleBusID, srcBusID, "%v", err)
	} else if first, dup := v.busIDs[a.val]; dup {
		v.at(p, "busid", Error, RuleDuplicate, srcBusID, "bus ID %s is also the <pci> on line %d's: NCCL matches the first only", a.val, first.line)
	} else {
		v.busIDs[a.val], id, idOK = p, b, true
	}
	t, classOK := v.pciType(p)
	if t == typeNIC && idOK && id != id.ncclNICAddress() {
		v.at(p, "busid", Error, RuleNICAddress, srcMergeVF,
			"NCCL's IB transport files an RDMA device under its address with device and function 00.0 (%s: it merges a card's ports and, by default, its VFs), so it never matches this node", id.ncclNICAddress())
	}

	speed, speedOK := p.get("link_speed")
	perLane := ncclSpeedFallback
	if !speedOK {
		v.at(p, "", Error, RuleLinkSpeed, srcFill+"; "+srcSpeed, "no link_speed: NCCL reads it from the guest's sysfs (where a VM's virtual ports report speeds of their own, e.g. 2.5 GT/s in NVIDIA/nccl#749), or for a bus ID the guest lacks takes \"\" → 60 per lane (Gen3)")
	} else {
		var matched, exact bool
		perLane, matched, exact = ncclSpeed(speed.val)
		switch {
		case !matched:
			v.at(p, "link_speed", Error, RuleLinkSpeed, srcSpeed, "link_speed %q is not in NCCL's table (%s): NCCL silently takes 60 × 100 Mb/s per lane, PCIe Gen3 (8 GT/s)", clip(speed.val), speedTable())
		case !exact:
			v.at(p, "link_speed", Warning, RuleLinkSpeed, srcSpeed, "link_speed %q is not one of NCCL's strings; NCCL reads it by its prefix as %s", clip(speed.val), speedName(perLane))
		}
	}
	width, widthOK := p.get("link_width")
	w := int64(-1)
	if !widthOK {
		v.at(p, "", Error, RuleLinkWidth, srcFill+"; "+srcSpeed, "no link_width: NCCL reads it from the guest's sysfs (a VM's virtual ports may report ×1, NVIDIA/nccl#749), or for a bus ID the guest lacks takes \"\" → 0 → ×16")
	} else {
		n, full := cInt(width.val)
		switch {
		case !full || n < 0:
			v.at(p, "link_width", Error, RuleLinkWidth, srcSpeed, "link_width %q is not a lane count: NCCL's strtol reads %d", clip(width.val), n)
		case n == 0:
			v.at(p, "link_width", Warning, RuleLinkWidth, srcSpeed, "link_width 0: NCCL takes ×16; write the width")
		case n != 1 && n != 2 && n != 4 && n != 8 && n != 12 && n != 16 && n != 32:
			v.at(p, "link_width", Warning, RuleLinkWidth, srcSpeed, "link_width %d is not a PCIe width (1, 2, 4, 8, 12, 16, 32)", n)
		}
		if n >= 0 && n <= math.MaxInt32 {
			w = n
		}
	}
	if speedOK && w >= 0 {
		v.bw[p] = ncclGBps(int(w), perLane)
	}

	var pcis, gpus, nics []*elem
	for _, k := range p.kids {
		if !k.loaded {
			continue
		}
		switch k.name {
		case "pci":
			pcis = append(pcis, k)
		case "gpu":
			gpus = append(gpus, k)
		case "nic":
			nics = append(nics, k)
		}
	}
	for _, g := range gpus {
		v.at(g, "", Warning, RuleRuntime, srcFill, "a <gpu> element: NCCL takes dev, rank, sm and gdr from it instead of detecting them (a dumped topology's values, wrong in another process); a file for a VM leaves it out")
	}
	for _, n := range nics {
		v.at(n, "", Warning, RuleRuntime, srcFill, "a <nic> element: NCCL takes its <net> entries (names, dev numbers, GUIDs) instead of asking the network plugin; a file for a VM leaves it out")
	}
	if t != typePCI || len(nics) > 0 {
		if len(pcis) > 0 {
			v.at(pcis[0], "", Error, RuleClass, srcClass, "NCCL takes the parent for a %s and ignores the <pci> elements under it; only a bridge (class 0x060400) holds devices", t)
		}
		return
	}
	a, _ := p.get("class")
	_, known := ncclClassType(a.val)
	empty := len(pcis)+len(gpus) == 0
	switch {
	case !classOK:
		// reported by pciType
	case !known:
		drop := ""
		if empty {
			drop = ", and drops it as nothing is under it"
		}
		v.at(p, "class", Warning, RuleClass, srcClass, "class %s is none NCCL knows (0x060400 bridge, 0x03… GPU, 0x02… NIC, 0x068000 NVSwitch): it takes the device for a PCI switch%s", clip(a.val), drop)
	case empty:
		v.at(p, "", Warning, RuleClass, srcClass+"; xml.cc ncclTopoTrimXmlRec", "a bridge with no device under it: NCCL drops it")
	}
}

// pciType is what NCCL makes of a <pci>, reporting a missing or malformed
// class (ok false).
func (v *validator) pciType(p *elem) (t nodeType, ok bool) {
	a, ok := p.get("class")
	if !ok {
		v.at(p, "", Error, RuleClass, srcClass+"; "+srcFill, "no class: NCCL reads it from sysfs for a device the guest has; for any other bus ID its init fails (\"Attribute class of node pci not found\")")
		return typePCI, false
	}
	if _, err := parseClass(a.val); err != nil {
		v.at(p, "class", Error, RuleClass, srcClass, "%v; NCCL matches prefixes (0x060400 bridge, 0x03 GPU, 0x02 NIC), so a class in another form is misread", err)
		ok = false
	}
	t, _ = ncclClassType(a.val)
	return t, ok
}

// classType is pciType without reporting.
func classType(p *elem) nodeType {
	a, _ := p.get("class")
	t, _ := ncclClassType(a.val)
	return t
}

// bottleneck: a bridge slower than a device under it (NVIDIA/nccl#749).
func (v *validator) bottleneck(p *elem) {
	up, ok := v.bw[p]
	if !ok || classType(p) != typePCI {
		return
	}
	var slower []*elem
	var fastest *elem
	n := 0
	for _, k := range p.kids {
		bw, ok := v.bw[k]
		if !k.loaded || k.name != "pci" || !ok {
			continue
		}
		n++
		if bw > up {
			slower = append(slower, k)
			if fastest == nil || bw > v.bw[fastest] {
				fastest = k
			}
		}
	}
	if len(slower) == 0 {
		return
	}
	v.at(p, "link_speed", Error, RuleBottleneck, srcSpeed+"; "+srcNCCL749,
		"this bridge's link (%s) is slower than %d of the %d devices under it (fastest %s, %s): NCCL routes every path through the bridge at its speed; in NVIDIA/nccl#749 a 2.5 GT/s ×1 bridge gave 0.12 GB/s rings. Give the bridge the speed and width of its fastest device",
		linkDesc(p, up), len(slower), n, firstVal(fastest, "busid"), linkDesc(fastest, v.bw[fastest]))
}

// sharedLink: NICs that share one link to their GPUs (NVIDIA/nccl#439).
// The rule: a <pci> link with two or more NICs and no GPU below it, whose
// bandwidth is less than the sum of those NICs' links, is an Error. Every
// GPU then reaches those NICs through that one link, and NCCL's search,
// which books each ring's bandwidth on every link of its path, finds
// room for fewer rings than there are NICs. NICs in the same bridge as
// their GPUs (Azure's NDv4: 2 GPUs + 2 NICs per bridge) never cross the
// bridge's own link to reach them and pass. Only the deepest such link is
// reported. It returns the NICs and GPUs below p and whether it reported.
func (v *validator) sharedLink(p *elem) (nics []*elem, gpus int, reported bool) {
	switch classType(p) {
	case typeNIC:
		return []*elem{p}, 0, false
	case typeGPU:
		return nil, 1, false
	case typePCI:
	default:
		return nil, 0, false
	}
	for _, k := range p.kids {
		if k.loaded && k.name == "pci" {
			n, g, _ := v.sharedLink(k)
			nics, gpus = append(nics, n...), gpus+g
		}
	}
	up, ok := v.bw[p]
	if len(nics) < 2 || gpus > 0 || !ok {
		return nics, gpus, false
	}
	sum := 0.0
	var names []string
	for _, n := range nics {
		sum += v.bw[n]
		names = append(names, firstVal(n, "busid"))
	}
	if sum <= up {
		return nics, gpus, false
	}
	for _, k := range p.kids {
		if k.loaded && k.name == "pci" && v.shared[k] == len(nics) {
			return nics, gpus, true
		}
	}
	v.shared[p] = len(nics)
	v.at(p, "link_speed", Error, RuleSharedLink, srcNCCL439+"; "+srcSearch,
		"%d NICs (%s, %.1f GB/s together) sit behind this one link (%s) with no GPU under it: every GPU reaches them through it, so NCCL's search finds room for the rings of fewer NICs than there are (NVIDIA/nccl#439: 1 ring instead of 2, 24 GB/s instead of 48). Put each NIC in the bridge of the GPUs it serves, or give each its own link",
		len(nics), strings.Join(names, ", "), sum, linkDesc(p, up))
	return nics, gpus, true
}

// cpuNICs: a CPU with GPUs and no NIC under it.
func (v *validator) cpuNICs(c *elem) {
	gpus, nics := 0, 0
	var walk func(e *elem)
	walk = func(e *elem) {
		for _, k := range e.kids {
			if !k.loaded {
				continue
			}
			switch {
			case k.name == "nic":
				nics++
			case k.name == "pci":
				switch classType(k) {
				case typeGPU:
					gpus++
				case typeNIC:
					nics++
				default:
					walk(k)
				}
			}
		}
	}
	walk(c)
	if gpus > 0 && nics == 0 {
		v.at(c, "", Warning, RuleGPUNoNIC, srcLocalNet+"; src/graph/paths.cc ncclTopoCheckGdr",
			"%d GPU(s) under this CPU and no NIC: their network traffic crosses to another CPU's NIC (a SYS path), where NCCL uses no GPUDirect RDMA by default (NCCL_NET_GDR_LEVEL ≤ PXB)", gpus)
	}
}

// budget warns when NCCL's own additions would overflow its 256 elements.
func (v *validator) budget() {
	if len(v.loaded) > maxLoaded {
		return // already an Error
	}
	add, haveGPU := 0, false
	for _, e := range v.loaded {
		switch {
		case e.name == "gpu":
			haveGPU = true
		case e.name == "pci" && classType(e) == typeNIC && !slices.ContainsFunc(e.kids, func(k *elem) bool { return k.name == "nic" }):
			add += 2
		}
	}
	if !haveGPU {
		add++
	}
	if len(v.loaded)+add > xmlMaxNodes {
		v.fs = append(v.fs, Finding{Severity: Warning, Rule: RuleLimit, Source: srcXMLLimits + "; xml.h xmlAddNode",
			Message: fmt.Sprintf("%d elements, and NCCL adds at least %d at run time (a <gpu> for its own GPU, a <nic> and a <net> per NIC): more than the %d it holds, so its init would fail (\"too many XML nodes\")", len(v.loaded), add, xmlMaxNodes)})
	}
}

// linkDesc is "2.5 GT/s ×1 = 0.19 GB/s" for a <pci>'s link.
func linkDesc(p *elem, gbps float64) string {
	return fmt.Sprintf("%s ×%s = %s GB/s", clip(firstVal(p, "link_speed")), clip(firstVal(p, "link_width")), strconv.FormatFloat(gbps, 'f', -1, 64))
}

// speedTable lists NCCL's link_speed strings for a message.
func speedTable() string {
	var s []string
	for _, e := range ncclSpeeds {
		s = append(s, e.s)
	}
	return strings.Join(s, ", ")
}

// speedName is "16 GT/s (Gen4)" for a per-lane value of NCCL's table.
func speedName(perLane int) string {
	for g := 1; g < len(pciGens); g++ {
		if pciGens[g].perLane == perLane {
			return fmt.Sprintf("%s (Gen%d)", pciGens[g].speed, g)
		}
	}
	return strconv.Itoa(perLane)
}

// cInt reads s as C's strtol(s, NULL, 0), as NCCL's xmlGetAttrInt does:
// leading white space, a sign, then 0x and hex digits, 0 and octal
// digits, or decimal digits, stopping at the first other character. full
// says s is exactly one such number in int32 range (no leading space,
// nothing after it); n is what NCCL reads (0 when no digit).
func cInt(s string) (n int64, full bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	lead := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := int64(10)
	if i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && hexDigit(s[i+2]) >= 0 {
		base, i = 16, i+2
	} else if i < len(s) && s[i] == '0' {
		base = 8
	}
	start := i
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if d < 0 || d >= base {
			break
		}
		if n < math.MaxInt64/16 {
			n = n*base + d
		}
	}
	if i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, lead == 0 && i == len(s) && n >= math.MinInt32 && n <= math.MaxInt32
}

func hexDigit(c byte) int64 {
	switch {
	case '0' <= c && c <= '9':
		return int64(c - '0')
	case 'a' <= c && c <= 'f':
		return int64(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int64(c-'A') + 10
	}
	return -1
}
