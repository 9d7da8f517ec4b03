package inventory

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// ParseVCenterURL reads a vCenter (or ESXi) SDK endpoint by the one
// grammar rdggen uses wherever a vCenter URL is written: the inventory's
// vcenter, apply's and check's --vcenter and the GOVC_URL variable.
//
// The grammar is govc's (govc's README gives `-u user:pass@host`; govmomi's
// soap.ParseURL, which govc reads GOVC_URL with, defaults the scheme to
// https and the path to /sdk), held to rdggen's address rules:
//
//	[https:// | http://][user[:password]@]host[:port][/path]
//
// The scheme is https (the default when none is written) or http; any
// other (ftp://, file://) is refused. The host is a host name (RFC 1123) or
// an IP address a machine can have (not unspecified, multicast or
// reserved; IPv6 in brackets), the port 1–65535. The path defaults to
// /sdk; a query or fragment is refused.
//
// Credentials (user:password@) are accepted only when credentials is set:
// for GOVC_URL, where govc reads them. In the inventory (a file that is
// shared and versioned) and on the command line (which the process list
// and the shell's history show) they are refused; GOVC_USERNAME and
// GOVC_PASSWORD carry them instead.
//
// Whether an http:// URL may be used (the login then sends the password
// unencrypted) is not part of the grammar: Load refuses it in the
// inventory unless AllowHTTPVCenter is given, and apply refuses it for
// every source unless --vcenter-allow-http is.
//
// The returned URL has its scheme and path filled in and keeps the
// credentials; an error's text never shows a password, so it can be
// printed as it is ("%q is not …" or "must not carry credentials …").
func ParseVCenterURL(s string, credentials bool) (*url.URL, error) {
	raw := s
	if !reScheme.MatchString(s) {
		s = "https://" + s
	}
	s = strings.TrimSuffix(s, "/")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%q is not a vSphere SDK URL like https://vcenter.example/sdk ([https://]host[:port][/path])", redactURL(raw))
	}
	switch u.Scheme {
	case "https", "http":
	default:
		return nil, fmt.Errorf("%q: a vCenter URL is https:// (or http://), not %s://", redactURL(raw), u.Scheme)
	}
	if u.User != nil && !credentials {
		return nil, ErrVCenterCredentials
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("%q: a vSphere SDK URL has no query or fragment", redactURL(raw))
	}
	if !vcenterHostOK(u) {
		return nil, fmt.Errorf("%q: %s is not a host name or a reachable IP address, optionally with a port 1–65535", redactURL(raw), u.Host)
	}
	if u.Path == "" {
		u.Path = "/sdk"
	}
	return u, nil
}

// ErrVCenterCredentials is ParseVCenterURL's error for a URL with
// credentials where they are not accepted.
var ErrVCenterCredentials = errors.New("must not carry credentials; set GOVC_USERNAME and GOVC_PASSWORD instead")

// reScheme is a URL that names its scheme (soap.ParseURL's test).
var reScheme = regexp.MustCompile(`^\w+://`)

// vcenterHostOK reports whether u's host and port follow validMgmt's rules.
func vcenterHostOK(u *url.URL) bool {
	host, port := u.Hostname(), u.Port()
	if strings.HasSuffix(u.Host, ":") { // "host:" has an empty port
		return false
	}
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		// A bracketed host must be an IPv6 address, and an IPv6 address
		// must be bracketed.
		return reachable(a) && a.Is6() == strings.HasPrefix(u.Host, "[")
	}
	return !strings.HasPrefix(u.Host, "[") && validHostname(host)
}

// redactURL hides a password in a URL as written, parsed or not.
func redactURL(s string) string {
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			return s[:i+3] + "xxxxx@" + s[at+1:]
		}
		return "xxxxx@" + s[at+1:]
	}
	return s
}

// vcenterAddr is the IP address of the vCenter URL s when its host is an IP
// literal.
func vcenterAddr(s string) (netip.Addr, bool) {
	if s == "" {
		return netip.Addr{}, false
	}
	u, err := ParseVCenterURL(s, true)
	if err != nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(u.Hostname())
	return a.Unmap(), err == nil
}

// vcenter checks the inventory's vcenter: ParseVCenterURL without
// credentials, and https unless the load allows http.
func (c *checker) vcenter(s string) {
	c.inv.VCenter = s
	if s == "" {
		return
	}
	u, err := ParseVCenterURL(s, false)
	switch {
	case err != nil:
		c.errf("vcenter", "%v", err)
	case u.Scheme == "http" && !c.opts.allowHTTPVCenter:
		c.errf("vcenter", "%s is plain http: vCenter's login would send the password unencrypted; use https://, or pass --vcenter-allow-http (validate, generate, apply, check) if this network is trusted", u)
	}
}
