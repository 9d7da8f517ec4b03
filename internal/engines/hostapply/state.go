package hostapply

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/remote"

	"github.com/rdggen/rdggen/pkg/hostqos"
)

// fileState is what the probe found at a path.
type fileState struct {
	Kind string // "absent", "file", "link" or "other"
	Mode fs.FileMode
	Data []byte // a file's bytes or a link's target
}

// cmdOut is a command's exit status and output.
type cmdOut struct {
	RC  int
	Out string
}

// hostState is a host as the probe saw it.
type hostState struct {
	Files       map[string]fileState
	Forwarding  cmdOut
	Addr        cmdOut // ip -4 -o addr show dev <data interface>
	Link        cmdOut // ip -o link show dev <data interface>
	Routes      cmdOut // ip -4 route show table main
	Chain       cmdOut // iptables -S RDGGEN-CONTAINERS
	DockerUser  cmdOut // iptables -S DOCKER-USER
	NAT         cmdOut // iptables -t nat -S RDGGEN-POSTROUTING
	Postrouting cmdOut // iptables -t nat -S POSTROUTING
	Dockerd     cmdOut // dockerd --version (127: not installed)
	Docker0     cmdOut // ip -4 -o addr show dev docker0
	RoCE        cmdOut // the RoCE script's check
	Peermem     cmdOut // peermemProbe
	// Netplan are the host's netplan files (netplan hosts only).
	Netplan []netplanFile
	// Rails is the rails' live state and NCCL's topology file (rails.go);
	// nil when the probe did not read them (a host with one rail).
	Rails *railState
}

// parseState turns probe results into a hostState. root is the host's root
// prefix (stat prints paths with it) and paths the files the probe looked at;
// a path without a result is absent. It fails when a result is missing or
// the files changed while they were read.
func parseState(rs []remote.Result, root string, paths []string) (*hostState, error) {
	st := &hostState{Files: map[string]fileState{}}
	for _, p := range paths {
		st.Files[p] = fileState{Kind: "absent"}
	}
	cmds := map[string]*cmdOut{
		"forwarding": &st.Forwarding, "addr": &st.Addr, "link": &st.Link, "routes": &st.Routes, "chain": &st.Chain,
		"dockeruser": &st.DockerUser, "nat": &st.NAT, "postrouting": &st.Postrouting, "dockerd": &st.Dockerd, "docker0": &st.Docker0, "roce": &st.RoCE, "peermem": &st.Peermem,
	}
	seen := map[string]bool{}
	var stat, cat *remote.Result
	for i := range rs {
		r := &rs[i]
		switch {
		case strings.HasPrefix(r.Name, "l:"):
			st.Files[r.Name[2:]] = fileState{Kind: "link", Data: bytes.TrimSuffix(r.Data, []byte("\n"))}
		case strings.HasPrefix(r.Name, "o:"):
			st.Files[r.Name[2:]] = fileState{Kind: "other"}
		case strings.HasPrefix(r.Name, "np:"):
			if r.RC() == 0 {
				st.Netplan = append(st.Netplan, netplanFile{Path: r.Name[3:], Data: r.Data})
			}
		case r.Name == "stat":
			stat = r
		case r.Name == "cat":
			cat = r
		default:
			if c, ok := cmds[r.Name]; ok {
				*c = cmdOut{RC: r.RC(), Out: string(r.Data)}
				seen[r.Name] = true
			}
		}
	}
	for name := range cmds {
		if !seen[name] {
			return nil, fmt.Errorf("probe: no %q result", name)
		}
	}
	st.Rails = parseRails(rs)
	if stat == nil {
		return st, nil
	}
	changed := errors.New("probe: files changed while they were read; run apply again")
	if stat.RC() != 0 || cat == nil || cat.RC() != 0 {
		return nil, changed
	}
	data := cat.Data
	for _, line := range strings.Split(strings.TrimSuffix(string(stat.Data), "\n"), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("probe: bad stat line %q", line)
		}
		size, err1 := strconv.Atoi(f[0])
		mode, err2 := strconv.ParseUint(f[1], 8, 32)
		path, ok := strings.CutPrefix(f[2], root)
		if err1 != nil || err2 != nil || !ok || size > len(data) {
			return nil, changed
		}
		st.Files[path] = fileState{Kind: "file", Mode: fs.FileMode(mode), Data: data[:size:size]}
		data = data[size:]
	}
	if len(data) != 0 {
		return nil, changed
	}
	return st, nil
}

// routeEntry is one unicast route of `ip -4 route show`.
type routeEntry struct {
	Dst netip.Prefix
	Via netip.Addr
	Dev string
}

func (r routeEntry) String() string {
	s := r.Dst.String()
	if r.Via.IsValid() {
		s += " via " + r.Via.String()
	}
	return s + " dev " + r.Dev
}

var routeTypes = map[string]bool{"unicast": true, "local": true, "broadcast": true, "multicast": true,
	"blackhole": true, "unreachable": true, "prohibit": true, "throw": true, "nat": true, "anycast": true}

// parseRoutes reads `ip -4 route show` output (parseRailRoutes: non-unicast
// routes and multipath next hops are skipped), each route's destination,
// next hop and device.
func parseRoutes(out string) []routeEntry {
	var rs []routeEntry
	for _, r := range parseRailRoutes(out) {
		rs = append(rs, routeEntry{Dst: r.Dst, Via: r.Via, Dev: r.Dev})
	}
	return rs
}

var reInet = regexp.MustCompile(`\binet ([0-9.]+/[0-9]+)`)

// parseAddrs returns the IPv4 prefixes of `ip -4 -o addr show dev X`.
func parseAddrs(out string) []netip.Prefix {
	var ps []netip.Prefix
	for _, m := range reInet.FindAllStringSubmatch(out, -1) {
		if p, err := netip.ParsePrefix(m[1]); err == nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// chainRules returns the -A lines of `iptables -S CHAIN`.
func chainRules(out string) []string {
	var rs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "-A ") {
			rs = append(rs, strings.TrimSpace(l))
		}
	}
	return rs
}

var reDockerVersion = regexp.MustCompile(`Docker version (\d+)\.(\d+)(?:\.(\d+))?`)

// dockerVersion parses `dockerd --version`; ok is false when it does not match.
func dockerVersion(out string) (v [3]int, ok bool) {
	m := reDockerVersion.FindStringSubmatch(out)
	if m == nil {
		return v, false
	}
	for i := 0; i < 3; i++ {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

// roceResults parses the RoCE script's report.
func roceResults(out string) []hostqos.Result { return hostqos.ParseReport([]byte(out)) }

var (
	reLinkMTU = regexp.MustCompile(`\bmtu (\d+)\b`)
	reLinkMAC = regexp.MustCompile(`\blink/ether ([0-9a-fA-F:]{17})\b`)
)

// parseLink returns the MTU and MAC address in `ip -o link show dev X`
// (0 and "" when absent).
func parseLink(out string) (mtu int, mac string) {
	if m := reLinkMTU.FindStringSubmatch(out); m != nil {
		mtu, _ = strconv.Atoi(m[1])
	}
	if m := reLinkMAC.FindStringSubmatch(out); m != nil {
		mac = strings.ToLower(m[1])
	}
	return mtu, mac
}
