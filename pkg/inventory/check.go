package inventory

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// checker resolves raw values into the Inventory and reports every broken
// rule at the position of the value that breaks it.
type checker struct {
	inv *Inventory
	rep *Report
	// Indexes built on first use (index.go).
	esxi     []esxiGroup
	switchAt map[string]int
}

func (c *checker) errf(path, format string, args ...any) {
	c.rep.add(Finding{File: c.inv.File, Pos: c.inv.pos.lookup(path), Path: path, Rule: fmt.Sprintf(format, args...)})
}

// missing reports a required key at the position of its parent mapping.
func (c *checker) missing(parent, key, hint string) {
	p := key
	if parent != "" {
		p = parent + "." + key
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
	reFile   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)
	reIface  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)
	rePort   = regexp.MustCompile(`^(\d+)/(\d+)$`)
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

// validHostname reports whether s is an RFC 1123 host name (dot-separated
// labels) whose last label is not all digits: resolvers and OpenSSH read a
// name such as 0, 2130706433 or 127.1 as an IPv4 address (inet_aton), which
// would slip past the address rules.
func validHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if !reLabel.MatchString(l) {
			return false
		}
	}
	return strings.Trim(labels[len(labels)-1], "0123456789") != ""
}

func (c *checker) build(raw *Spec) {
	inv := c.inv
	inv.Name = raw.Name
	switch {
	case raw.Name == "":
		c.missing("", "name", " (the cluster name, e.g. clx-mld)")
	case !reFile.MatchString(raw.Name):
		c.errf("name", "%q must be letters, digits, '.', '_' or '-' (it names files)", raw.Name)
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
	c.routing(raw.Docker)
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
