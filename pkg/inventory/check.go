package inventory

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// checker resolves raw values into the Inventory and reports every broken
// rule at the position of the value that breaks it.
type checker struct {
	inv *Inventory
	rep *Report
	// raw is the inventory as written; merged the paths of mappings that
	// held a YAML merge key; opts the load's Options.
	raw    *Spec
	merged map[string]bool
	opts   options
	// Indexes built on first use (index.go).
	esxi     []esxiGroup
	switchAt map[string]int
	// unknownOS holds the switches whose OS key has a finding: their
	// ports are not held to either OS's spelling (one finding, not one per
	// port).
	unknownOS map[string]bool
	// mgmtSet holds the template paths whose mgmt_interface the inventory
	// writes (the rest take DefaultMgmtInterface).
	mgmtSet map[string]bool
	// nicPaths is where each host's nic setting is written
	// ("defaults.nic", "hosts[3].nic"), by host index.
	nicPaths map[int]string
}

func (c *checker) errf(path, format string, args ...any) {
	c.rep.add(Finding{File: c.inv.File, Pos: c.inv.pos.lookup(path), Path: path, Rule: fmt.Sprintf(format, args...)})
}

// warnf adds a warning to the inventory: the file:line:col: path: text
// shape of a finding, for what is valid but probably not meant. At most
// MaxFindings are kept.
func (c *checker) warnf(path, format string, args ...any) {
	if len(c.inv.Warnings) < MaxFindings {
		c.inv.Warnings = append(c.inv.Warnings, Finding{File: c.inv.File, Pos: c.inv.pos.lookup(path), Path: path, Rule: fmt.Sprintf(format, args...)})
	}
}

// missing reports a required key at the position of its parent mapping,
// unless that mapping (or one around it) held a YAML merge key: the key is
// then probably in the merged mapping, and the merge key's finding says
// what to write instead.
func (c *checker) missing(parent, key, hint string) {
	p := key
	if parent != "" {
		p = parent + "." + key
	}
	for q := parent; len(c.merged) > 0; {
		if c.merged[q] {
			return
		}
		i := strings.LastIndexAny(q, ".[")
		if q == "" {
			break
		}
		if i < 0 {
			q = ""
		} else {
			q = q[:i]
		}
	}
	for _, f := range c.rep.Findings {
		if f.Path == p {
			return // present but invalid: that finding is already reported
		}
	}
	c.errf(p, "is required%s", hint)
}

var (
	reLabel  = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	reFile   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) // length: fileNameRule
	reIface  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)
	rePort   = regexp.MustCompile(`^(\d+)/(\d+)$`)
	reSwp    = regexp.MustCompile(`^swp([1-9]\d{0,2})$`)
	rePCI    = regexp.MustCompile(`^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$`)
	reVmnic  = regexp.MustCompile(`^vmnic[0-9]+$`)
	reOS     = regexp.MustCompile(`^ubuntu-(\d{2}\.\d{2})$`)
	reSwName = reLabel
	reHCA    = regexp.MustCompile(`^[A-Za-z0-9_]{1,32}$`)
	// reText is free text that names things (a GPU model, a port group):
	// letters and digits of any script, spaces and ._+()/:,#@- — no quotes,
	// backslashes, '$', backquotes, control characters or shell operators,
	// so it is safe in every file rdggen writes. It starts and ends with a
	// letter, digit or ')'.
	reText = regexp.MustCompile(`^[\p{L}\p{N}](?:[\p{L}\p{N} ._+()/:,#@-]*[\p{L}\p{N})])?$`)
)

// textOK reports whether s is reText of at most max bytes.
func textOK(s string, max int) bool { return len(s) <= max && reText.MatchString(s) }

// validHostname reports whether s is an RFC 1123 host name (hostnameRule).
func validHostname(s string) bool { return hostnameRule(s) == "" }

// Length limits of names, with their sources.
const (
	// MaxHostnameLen is the longest host name: RFC 1035 §2.3.4 allows 255
	// octets on the wire, 253 characters written out; MaxLabelLen the
	// longest label (63, the same section).
	MaxHostnameLen = 253
	MaxLabelLen    = 63
	// MaxVMNameLen is vSphere's limit for a VM name (80 characters from
	// vCenter Server 5.0, VMware KB 2051649; the vSphere Client refuses a
	// longer one: "Up to 80 characters may be used").
	MaxVMNameLen = 80
	// MaxClusterNameLen is rdggen's own limit for the cluster name: it is
	// in the header of every generated file and in the workers' SSH key
	// names and HostKeyAlias, and it follows the VM names' grammar, so it
	// has their limit too.
	MaxClusterNameLen = 80
	// MaxESXiNameLen is the longest ESXi host name: a host name
	// (MaxHostnameLen) that also names esxi/<esxi>.sh, and a file name is
	// at most 255 bytes (Linux's NAME_MAX), 252 with ".sh".
	MaxESXiNameLen = 255 - len(".sh")
)

// hostnameRule is "" when s is an RFC 1123 host name (dot-separated labels
// of letters, digits and '-', neither starting nor ending with '-', at most
// MaxLabelLen characters each and MaxHostnameLen in all) whose last label
// is not all digits, and otherwise the rule s breaks, as a finding says it.
// A last label of digits is refused because resolvers and OpenSSH read a
// name such as 0, 2130706433 or 127.1 as an IPv4 address (inet_aton),
// which would slip past the address rules.
func hostnameRule(s string) string {
	if s == "" {
		return "a host name is not empty"
	}
	if len(s) > MaxHostnameLen {
		return fmt.Sprintf("%d characters; a host name is at most %d (RFC 1035 §2.3.4)", len(s), MaxHostnameLen)
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		switch {
		case l == "":
			return "an empty label (two dots, or a dot at an end); a host name is labels joined by single dots (RFC 1123 §2.1)"
		case len(l) > MaxLabelLen:
			return fmt.Sprintf("the label %.20q… is %d characters; a DNS label is at most %d (RFC 1035 §2.3.4)", l, len(l), MaxLabelLen)
		case strings.Trim(l, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != "":
			return fmt.Sprintf("the label %q holds characters other than letters, digits and '-' (RFC 1123 §2.1)", l)
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Sprintf("the label %q starts or ends with '-' (RFC 1123 §2.1)", l)
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Sprintf("the last label %q is all digits, and resolvers read such a name as an IPv4 address (127.1, 2130706433)", labels[len(labels)-1])
	}
	return ""
}

// fileNameRule is "" when s is 1–max letters, digits, '.', '_' and '-'
// starting with a letter or digit (a name that is also a file name), and
// otherwise the rule s breaks; limit says where max comes from.
func fileNameRule(s string, max int, limit string) string {
	switch {
	case len(s) > max:
		return fmt.Sprintf("is %d characters; %s", len(s), limit)
	case !reFile.MatchString(s):
		return "must be letters, digits, '.', '_' or '-', starting with a letter or digit"
	}
	return ""
}

func (c *checker) build(raw *Spec) {
	inv := c.inv
	inv.Name = raw.Name
	switch {
	case raw.Name == "":
		c.missing("", "name", " (the cluster name, e.g. clx-mld)")
	default:
		if rule := fileNameRule(raw.Name, MaxClusterNameLen, fmt.Sprintf("a cluster name is at most %d (rdggen's limit, that of VM names: it heads every generated file and names the workers' SSH keys)", MaxClusterNameLen)); rule != "" {
			c.errf("name", "%q %s (it names files)", raw.Name, rule)
		}
	}
	c.roce(raw.RoCE)
	c.switches(raw.Switches)
	c.vcenter(raw.VCenter)
	c.docker(raw.Docker)
	c.horovod(raw.Horovod)
	var defaults base
	if raw.Defaults != nil {
		defaults = c.base(raw.Defaults, "defaults")
	}
	c.hosts(raw.Hosts, &defaults)
	c.crossHost()
	c.railRules() // rails.go
	c.routing(raw.Docker)
	c.fabric(raw.Fabric)
	c.torchrunProcesses()
	c.fit()
}

func (c *checker) intIn(path string, p *int, def, lo, hi int, what string) int {
	if p == nil {
		return def
	}
	if *p < lo || *p > hi {
		c.errf(path, "%d is outside %d–%d (%s)", *p, lo, hi, what)
	}
	return *p
}

func inRange(v, lo, hi int) bool { return v >= lo && v <= hi }

func knownKeys(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// intList is "1, 10, 25" for a person.
func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
