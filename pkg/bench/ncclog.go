package bench

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// NCCLLog is what an NCCL_DEBUG=INFO log says about the transport NCCL
// chose and GPUDirect RDMA, as ParseNCCLLog read it. Lines have the form
// "host:pid:tid [dev] NCCL INFO message" (or "… file.cc:NN NCCL WARN
// message"), possibly behind a launcher prefix, or without the host part
// when a user cut it. Formats: NVIDIA/nccl src/transport/net_ib/init.cc,
// src/transport/net.cc, src/graph/paths.cc, src/init.cc, src/debug.cc,
// across 2.4 to 2.28.
type NCCLLog struct {
	// Lines counts the NCCL lines read.
	Lines int
	// Version is "NCCL version 2.9.6+cuda11.2"'s version; "" when absent.
	Version string
	// Hosts are the hosts of the line prefixes, in order of appearance.
	Hosts []string
	// Networks are the "Using network IB|Socket|IBext_v8|AWS Libfabric"
	// lines (NCCL ≥ 2.7): the transport chosen for inter-node traffic.
	// It, IBDevices and SocketDevices keep the first line of each host and
	// text (NCCL prints them again for every communicator).
	Networks []HostText
	// IBDevices are "NET/IB : Using [0]mlx5_0:1/RoCE …; OOB …" lines.
	IBDevices []HostText
	// NoIBDevice are "NET/IB : No device found." lines.
	NoIBDevice []HostText
	// SocketDevices are "NET/Socket : Using [0]eth0:…" lines; alone they
	// prove nothing (NCCL also prints them for the bootstrap).
	SocketDevices []HostText
	// NoVerbs are "Failed to open libibverbs.so[.1]" warnings: the
	// RDMA userspace is missing.
	NoVerbs []HostText
	// OpenFailed are "Call to ibv_open_device failed" and "NET/IB :
	// Unable to open device …" warnings: the device is listed but cannot
	// be opened (a container without /dev/infiniband).
	OpenFailed []HostText
	// GDRHCA are "NET/IB : GPU Direct RDMA Enabled|Disabled for HCA N
	// 'mlx5_0'" lines (≥ 2.15, subsystem NET): whether a peer-memory
	// module or DMA-BUF is there for the NIC; not proof of use.
	GDRHCA []GDRHCA
	// GDRGPU are "GPU Direct RDMA Enabled|Disabled for GPU X / HCA N
	// (distance D <= L)" lines (2.7–2.27, subsystem NET) and 2.4's
	// "… (no module or not supported by GPU)".
	GDRGPU []GDRGPU
	// Channels are the first MaxKeptChannels connection lines,
	// "Channel 02/0 : 13[b2000] -> 4[b1000] [receive] via NET/IB/0/GDRDMA"
	// and the older "Ring 00 : 7 -> 8 [send] via NET/IB/0"; ChannelLines
	// counts them all. The verdicts read the network channels' aggregates
	// (every line), not this list.
	Channels     []Channel
	ChannelLines int
	net          netAgg
	seen         map[seenKey]bool  // firstOf
	lastEnv      map[string]string // the last value of each "set by environment" name

	// Rings are "Connected all rings" lines; GDR is the "use ring PXN n
	// GDR n" value (≥ 2.24), -1 when the line has none.
	Rings []RingSummary
	// Env are "NCCL_X set by environment to V" lines (a line that repeats
	// the name's last value is not kept again), then the NCCL_X=V
	// settings of command lines in the file (mpirun -x NCCL_X=V, export
	// NCCL_X=V), which show what the launch asked for when the log does
	// not print it (NCCL_DEBUG=WARN, or no ENV subsystem).
	Env []EnvSetting
	// Warnings are every NCCL WARN line.
	Warnings []HostText
	// TopoFiles are "Loading topology file PATH" lines (subsystem GRAPH),
	// the first of each host and path, Text the path: the topology file
	// NCCL read (NCCL_TOPO_FILE, else its default path when that exists).
	TopoFiles []HostText
}

type seenKey struct{ list, host, text string }

// firstOf reports whether x is the first line of list with its host and
// text: the lists that say which hosts printed what keep one line per
// host and text, not one per communicator.
func (l *NCCLLog) firstOf(list string, x HostText) bool {
	k := seenKey{list, x.Host, x.Text}
	if l.seen[k] {
		return false
	}
	if l.seen == nil {
		l.seen = map[seenKey]bool{}
	}
	l.seen[k] = true
	return true
}

// MaxKeptChannels is how many channel lines [NCCLLog.Channels] keeps: a
// 7,000-node job prints some 30 per rank, which the verdicts read as
// per-host aggregates instead.
const MaxKeptChannels = 4096

// netAgg is what the verdicts need of every network channel: per host the
// networks its channels use, in order, and per holder (host, or rank for
// lines without a host) the counts of channels and receive channels with
// and without GPUDirect RDMA, with the first example of each.
type netAgg struct {
	last      *chanHolder // the holder of the previous channel line: lines of one rank come together
	lastNets  *hostNets   // and the networks of its host, lastHost
	lastHost  string
	hosts     map[string]*hostNets
	hostOrder []string
	holders   map[holderKey]*chanHolder
	order     []*chanHolder // non-socket network channels' holders, by first channel
	n, gdr    int           // non-socket network channels, and those via /GDRDMA
	// recvGDR and sendGDR split gdr by the lines' direction ([receive],
	// [send]); a line without one is in neither
	recvGDR, sendGDR int
	// lastGPU is the local GPU of the previous network channel line
	// (GPUNICs)
	lastGPU *gpuUse
}

type hostNets struct {
	nets []string
	// listed: the host has a channel line and is in hostOrder (an
	// ncclCommInitRank line alone makes its entry, for bus)
	listed bool
	gpus   []*gpuUse // the local GPUs of its network channels, by first line
	byGPU  map[gpuKey]*gpuUse
	bus    []gpuBus // the bus ID of each NVML index, from ncclCommInitRank
}

type holderKey struct {
	host string
	rank int // the local rank when host is ""
}

type chanHolder struct {
	key                        holderKey
	recv, recvGDR, all, allGDR int
	first, offAny, offRecv     Channel
	hasOffAny, hasOffRecv      bool
}

func (a *netAgg) add(c Channel) {
	if c.Net == "" {
		return
	}
	if a.hosts == nil {
		a.hosts, a.holders = map[string]*hostNets{}, map[holderKey]*chanHolder{}
	}
	hn := a.lastNets
	if hn == nil || a.lastHost != c.Host {
		hn = a.hosts[c.Host]
	}
	if hn == nil {
		hn = &hostNets{}
		a.hosts[c.Host] = hn
	}
	if !hn.listed {
		hn.listed = true
		a.hostOrder = append(a.hostOrder, c.Host)
	}
	a.lastNets, a.lastHost = hn, c.Host
	if !slices.Contains(hn.nets, c.Net) {
		hn.nets = append(hn.nets, c.Net)
	}
	if c.Net == "Socket" {
		return
	}
	a.useGPU(hn, c)
	k := holderKey{host: c.Host}
	if c.Host == "" {
		k.rank = c.LocalRank()
	}
	h := a.last
	if h == nil || h.key != k {
		h = a.holders[k]
	}
	if h == nil {
		h = &chanHolder{key: k, first: c}
		a.holders[k] = h
		a.order = append(a.order, h)
	}
	a.last = h
	a.n++
	h.all++
	if c.GDR {
		a.gdr++
		h.allGDR++
		switch c.Dir {
		case "receive":
			a.recvGDR++
		case "send":
			a.sendGDR++
		}
	} else if !h.hasOffAny {
		h.offAny, h.hasOffAny = c, true
	}
	if c.Dir == "receive" {
		h.recv++
		if c.GDR {
			h.recvGDR++
		} else if !h.hasOffRecv {
			h.offRecv, h.hasOffRecv = c, true
		}
	}
}

// HostText is one log line's message and the host that printed it ("" when
// the line had no host prefix).
type HostText struct {
	Host, Text string
	// Line is the 1-based line in the input.
	Line int
}

// GDRHCA is one "GPU Direct RDMA Enabled|Disabled for HCA" line.
type GDRHCA struct {
	Host    string
	Enabled bool
	HCA     int
	Name    string
}

// GDRGPU is one per-GPU GPU Direct RDMA decision.
type GDRGPU struct {
	Host    string
	Enabled bool
	// GPU is the GPU's bus id as printed ("18000"), HCA the NIC index.
	GPU, HCA string
	// Distance and Limit are the PCI path distance and the
	// NCCL_NET_GDR_LEVEL limit it was compared with; -1 when the line has
	// none (2.4's "no module or not supported by GPU").
	Distance, Limit int
	// NoModule is 2.4's "(no module or not supported by GPU)".
	NoModule bool
}

// Channel is one connection between two ranks.
type Channel struct {
	Host string
	// Channel is the channel (or ring) number; From and To the global
	// ranks; FromBus and ToBus their bus ids when printed.
	Channel        int
	From, To       int
	FromBus, ToBus string
	Dir            string // "send", "receive", or "" (intra-node lines)
	Via            string // "NET/IB/0/GDRDMA", "P2P/IPC/read", …
	Net            string // "IB", "Socket", "AWS Libfabric"; "" when not over the network
	NetDev         int    // the net device index after the name
	GDR            bool   // Via ends in /GDRDMA (possibly /GDRDMA/Shared)
	Line           int
}

// LocalRank is the rank whose process printed the line: the sender of a
// send (or intra-node) line, the receiver of a receive line.
func (c Channel) LocalRank() int {
	if c.Dir == "receive" {
		return c.To
	}
	return c.From
}

// RingSummary is one "Connected all rings" line.
type RingSummary struct {
	Host     string
	PXN, GDR int
}

// EnvSetting is one "NCCL_X set by environment to V" line, or one NCCL_X=V
// of a command line (Command true).
type EnvSetting struct {
	Host, Name, Value string
	Command           bool
}

var (
	reNCCLLine    = regexp.MustCompile(`(?:^|[\s>:])([^\s:\[\]]+):(\d+):(\d+) \[(\d+)\] (?:\S+ )?NCCL (INFO|WARN) (.*)$`)
	reNCCLBare    = regexp.MustCompile(`(?:^|\s)(?:\S+:\d+ )?NCCL (INFO|WARN) (.*)$`)
	reNCCLVersion = regexp.MustCompile(`\bNCCL version (\S+)`)
	reNCCLNetwork = regexp.MustCompile(`^Using network (.+?)\s*(?:#.*)?$`)
	reNCCLChannel = regexp.MustCompile(`(?:(?:Channel|Ring) (\d+)(?:/\d+)? : )?(\d+)(?:\[([0-9a-fA-F]+)\])? -> (\d+)(?:\[([0-9a-fA-F]+)\])? (?:\[(send|receive)\] )?via (\S.*?)\s*(?:#.*)?$`)
	reNCCLNet     = regexp.MustCompile(`^NET/(.+?)/(\d+)(.*)$`)
	reNCCLGDRHCA  = regexp.MustCompile(`GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)'`)
	reNCCLGDRGPU  = regexp.MustCompile(`GPU Direct RDMA (Enabled|Disabled) for GPU (\S+) / HCA (\S+) \(distance (\d+) (?:<=|>) (\d+)\)`)
	reNCCLGDR24   = regexp.MustCompile(`GPU Direct RDMA Disabled for GPU (\S+) / HCA (\d+) '[^']*' \(no module or not supported by GPU\)`)
	reNCCLRings   = regexp.MustCompile(`Connected all rings(?:, use ring PXN (\d+) GDR (\d+))?`)
	reNCCLEnv     = regexp.MustCompile(`^(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*?)\.?\s*$`)
	reCommandEnv  = regexp.MustCompile(`(?:^|[\s'"])(NCCL_[A-Z0-9_]+)=([^\s'"\\]+)`)
)

// ParseNCCLLog reads the NCCL log lines in data, ignoring everything else;
// it never fails (see [NCCLLog.Empty]).
func ParseNCCLLog(data []byte) *NCCLLog {
	p := newLogParser()
	_ = eachLine(bytes.NewReader(data), func(i int, l, _ string) { p.feed(i, l) })
	return p.result()
}

// logParser reads an NCCL log one line at a time, keeping aggregates of
// the channel lines rather than every line.
type logParser struct {
	l        *NCCLLog
	seenHost map[string]bool
	lastHost string // the host of the previous NCCL line, in seenHost
	cmdEnv   []EnvSetting
}

func newLogParser() *logParser {
	return &logParser{l: &NCCLLog{}, seenHost: map[string]bool{}}
}

// feed reads line i (0-based) of the input, without its line end and
// launcher prefix.
func (p *logParser) feed(i int, raw string) {
	l := p.l
	if !strings.Contains(raw, "NCCL") && !strings.Contains(raw, " via ") {
		return // every line read below names NCCL (or is a channel line whose prefix was cut)
	}
	line := strings.TrimSpace(raw)
	if line == "" {
		return
	}
	if l.Version == "" && strings.Contains(line, "NCCL version ") {
		if m := reNCCLVersion.FindStringSubmatch(line); m != nil {
			l.Version = m[1]
		}
	}
	host, level, msg, ok := splitNCCLLine(line)
	if !ok {
		if strings.Contains(line, " via NET/") && strings.Contains(line, " -> ") {
			msg = line // a channel line whose prefix was cut
			level = "INFO"
		} else {
			if strings.Contains(line, "NCCL_") {
				for _, m := range reCommandEnv.FindAllStringSubmatch(line, -1) {
					p.cmdEnv = append(p.cmdEnv, EnvSetting{Name: m[1], Value: m[2], Command: true})
				}
			}
			return
		}
	}
	p.nccl(i, host, level, msg)
}

// feedNCCL is feed of a line (trimmed) that fastNCCLLine read.
func (p *logParser) feedNCCL(i int, line, host, level, msg string) {
	if p.l.Version == "" && strings.Contains(line, "NCCL version ") {
		if m := reNCCLVersion.FindStringSubmatch(line); m != nil {
			p.l.Version = m[1]
		}
	}
	p.nccl(i, host, level, msg)
}

// nccl reads one NCCL line's host, level and message.
func (p *logParser) nccl(i int, host, level, msg string) {
	l := p.l
	msg = strings.TrimSpace(msg)
	l.Lines++
	if host != "" && host != p.lastHost {
		if !p.seenHost[host] {
			p.seenHost[host] = true
			l.Hosts = append(l.Hosts, host)
		}
		p.lastHost = host
	}
	ht := HostText{Host: host, Text: clip(msg, 300), Line: i + 1}
	if level == "WARN" {
		l.Warnings = append(l.Warnings, ht)
		switch {
		case strings.Contains(msg, "Failed to open libibverbs"):
			l.NoVerbs = append(l.NoVerbs, ht)
		case strings.Contains(msg, "ibv_open_device failed"), strings.Contains(msg, "Unable to open device"):
			l.OpenFailed = append(l.OpenFailed, ht)
		}
		return
	}
	l.info(ht, msg, i+1)
}

// result is the log read so far.
func (p *logParser) result() *NCCLLog {
	l := p.l
	if l.Lines > 0 {
		l.Env = append(l.Env, p.cmdEnv...)
	}
	p.cmdEnv = nil
	return l
}

// splitNCCLLine finds the NCCL line in line: the host of its
// "host:pid:tid [dev] " prefix ("" without one), its level (INFO or WARN)
// and its message; ok is false when line is none. It is reNCCLLine, then
// reNCCLBare, with a hand-written path for the usual prefix
// (TestSplitNCCLLineAgrees holds the two together).
func splitNCCLLine(line string) (host, level, msg string, ok bool) {
	if h, lv, m, ok := fastNCCLLine(line); ok {
		return h, lv, m, true
	}
	if !strings.Contains(line, "NCCL INFO ") && !strings.Contains(line, "NCCL WARN ") {
		return "", "", "", false
	}
	if m := reNCCLLine.FindStringSubmatch(line); m != nil {
		return m[1], m[5], m[6], true
	}
	if m := reNCCLBare.FindStringSubmatch(line); m != nil {
		return "", m[1], m[2], true
	}
	return "", "", "", false
}

// fastNCCLLine reads the usual form, "host:pid:tid [dev] NCCL INFO msg" or
// "host:pid:tid [dev] file.cc:NN NCCL WARN msg" at the start of line (or
// after a space), as reNCCLLine would; ok is false for anything else,
// which the regular expressions then read.
func fastNCCLLine(line string) (host, level, msg string, ok bool) {
	k := strings.Index(line, " NCCL ")
	if k < 0 || len(line) < k+11 {
		return
	}
	lv := line[k+6 : k+10]
	if lv != "INFO" && lv != "WARN" || line[k+10] != ' ' {
		return
	}
	msg = line[k+11:]
	// the fields before " NCCL ": [host:pid:tid] [dev] [file:NN]
	pre := line[:k]
	f3 := lastField(pre)
	if f3 < 0 {
		return
	}
	dev := pre[f3:]
	rest := pre[:f3]
	if !isDevField(dev) {
		// "file.cc:NN" between the device and NCCL
		if len(rest) == 0 || rest[len(rest)-1] != ' ' {
			return
		}
		rest = rest[:len(rest)-1]
		f := lastField(rest)
		if f < 0 || !isDevField(rest[f:]) {
			return
		}
		rest = rest[:f]
	}
	if len(rest) < 2 || rest[len(rest)-1] != ' ' {
		return
	}
	rest = rest[:len(rest)-1]
	f := lastField(rest)
	if f < 0 {
		return
	}
	if f > 0 && !isSpace(rest[f-1]) {
		return
	}
	h, pid, tid, ok2 := hostPidTid(rest[f:])
	if !ok2 || pid == "" || tid == "" {
		return
	}
	return h, lv, msg, true
}

// lastField is the index where s's last run of non-space bytes starts; -1
// when s ends in a space or is empty.
func lastField(s string) int {
	if s == "" || isSpace(s[len(s)-1]) {
		return -1
	}
	i := len(s) - 1
	for i > 0 && !isSpace(s[i-1]) {
		i--
	}
	return i
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' // RE2's \s
}

// isDevField reports whether s is "[digits]".
func isDevField(s string) bool {
	if len(s) < 3 || s[0] != '[' || s[len(s)-1] != ']' {
		return false
	}
	return allDigits(s[1 : len(s)-1])
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// hostPidTid splits "host:pid:tid" where host has no ':', '[' or ']'.
func hostPidTid(s string) (host, pid, tid string, ok bool) {
	a := strings.IndexByte(s, ':')
	if a <= 0 {
		return
	}
	b := strings.IndexByte(s[a+1:], ':')
	if b < 0 {
		return
	}
	b += a + 1
	host, pid, tid = s[:a], s[a+1:b], s[b+1:]
	if strings.ContainsAny(host, "[]") || !allDigits(pid) || !allDigits(tid) {
		return "", "", "", false
	}
	return host, pid, tid, true
}

func (l *NCCLLog) info(ht HostText, msg string, line int) {
	host := ht.Host
	if strings.HasPrefix(msg, "Channel ") || strings.HasPrefix(msg, "Ring ") {
		// most lines of a large job; the cases below could only match
		// within the Via of a channel read by fastChannel
		if c, ok := fastChannel(msg); ok && !strings.Contains(c.Via, "NET/IB : No device found") &&
			!strings.Contains(c.Via, "GPU Direct RDMA") && !strings.Contains(c.Via, "Connected all rings") {
			l.channel(c, host, line)
			return
		}
	}
	switch {
	case strings.HasPrefix(msg, "Loading topology file "):
		if f := strings.TrimSpace(strings.TrimPrefix(msg, "Loading topology file ")); f != "" && l.firstOf("topo", HostText{Host: host, Text: f}) {
			l.TopoFiles = append(l.TopoFiles, HostText{Host: host, Text: clip(f, 300), Line: line})
		}
	case (strings.HasPrefix(msg, "ncclComm") || strings.HasPrefix(msg, "[Rank ") || strings.HasPrefix(msg, "comm 0x")) && l.initRank(host, msg):
	case strings.HasPrefix(msg, "Using network "):
		if m := reNCCLNetwork.FindStringSubmatch(msg); m != nil {
			if l.firstOf("net", HostText{Host: host, Text: m[1]}) {
				l.Networks = append(l.Networks, HostText{Host: host, Text: m[1], Line: line})
			}
		}
	case strings.HasPrefix(msg, "NET/IB : Using"), strings.HasPrefix(msg, "NET/IB: Using"):
		if l.firstOf("ib", ht) {
			l.IBDevices = append(l.IBDevices, ht)
		}
	case strings.Contains(msg, "NET/IB : No device found"):
		l.NoIBDevice = append(l.NoIBDevice, ht)
	case strings.HasPrefix(msg, "NET/Socket : Using"):
		if l.firstOf("sock", ht) {
			l.SocketDevices = append(l.SocketDevices, ht)
		}
	case strings.Contains(msg, "GPU Direct RDMA"):
		if m := reNCCLGDRHCA.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[2])
			l.GDRHCA = append(l.GDRHCA, GDRHCA{Host: host, Enabled: m[1] == "Enabled", HCA: n, Name: m[3]})
		} else if m := reNCCLGDRGPU.FindStringSubmatch(msg); m != nil {
			d, _ := strconv.Atoi(m[4])
			lim, _ := strconv.Atoi(m[5])
			l.GDRGPU = append(l.GDRGPU, GDRGPU{Host: host, Enabled: m[1] == "Enabled", GPU: m[2], HCA: m[3], Distance: d, Limit: lim})
		} else if m := reNCCLGDR24.FindStringSubmatch(msg); m != nil {
			l.GDRGPU = append(l.GDRGPU, GDRGPU{Host: host, GPU: m[1], HCA: m[2], Distance: -1, Limit: -1, NoModule: true})
		}
	case strings.Contains(msg, "Connected all rings"):
		r := RingSummary{Host: host, PXN: -1, GDR: -1}
		if m := reNCCLRings.FindStringSubmatch(msg); m != nil && m[1] != "" {
			r.PXN, _ = strconv.Atoi(m[1])
			r.GDR, _ = strconv.Atoi(m[2])
		}
		l.Rings = append(l.Rings, r)
	case strings.HasPrefix(msg, "NCCL_"):
		if name, value, ok := envLine(msg); ok {
			// a setting equal to the name's last one changes nothing EnvValue
			// says; every communicator of a job prints them again
			if last, ok := l.lastEnv[name]; !ok || last != value {
				if l.lastEnv == nil {
					l.lastEnv = map[string]string{}
				}
				l.lastEnv[name] = value
				l.Env = append(l.Env, EnvSetting{Host: host, Name: name, Value: value})
			}
		}
	default:
		if strings.Contains(msg, " via ") && strings.Contains(msg, " -> ") {
			if c, ok := parseChannel(msg); ok {
				l.channel(c, host, line)
			}
		}
	}
}

// envLine reads "NCCL_X set by environment to V." (or "set to V") as
// reNCCLEnv does, the value trimmed.
func envLine(msg string) (name, value string, ok bool) {
	sp := strings.IndexByte(msg, ' ')
	if sp <= len("NCCL_") || !strings.HasPrefix(msg, "NCCL_") {
		return "", "", false
	}
	name = msg[:sp]
	for i := len("NCCL_"); i < len(name); i++ {
		if c := name[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", "", false
		}
	}
	rest := msg[sp:]
	switch {
	case strings.HasPrefix(rest, " set by environment to "):
		rest = rest[len(" set by environment to "):]
	case strings.HasPrefix(rest, " set to "):
		rest = rest[len(" set to "):]
	default:
		return "", "", false
	}
	// (.*?)\.?\s*$: the value less trailing space and one final '.'
	rest = strings.TrimRight(rest, " \t\n\r\f")
	rest = strings.TrimSuffix(rest, ".")
	return name, strings.TrimSpace(rest), true
}

func (l *NCCLLog) channel(c Channel, host string, line int) {
	c.Host, c.Line = host, line
	l.ChannelLines++
	if len(l.Channels) < MaxKeptChannels {
		l.Channels = append(l.Channels, c)
	}
	l.net.add(c)
}

func parseChannel(msg string) (Channel, bool) {
	if c, ok := fastChannel(msg); ok {
		return c, true
	}
	m := reNCCLChannel.FindStringSubmatch(msg)
	if m == nil {
		return Channel{}, false
	}
	var c Channel
	c.Channel, _ = strconv.Atoi(m[1])
	var err error
	if c.From, err = strconv.Atoi(m[2]); err != nil {
		return Channel{}, false
	}
	if c.To, err = strconv.Atoi(m[4]); err != nil {
		return Channel{}, false
	}
	c.FromBus, c.ToBus, c.Dir, c.Via = m[3], m[5], m[6], m[7]
	c.Net, c.NetDev, c.GDR = netOf(c.Via)
	return c, true
}

// netOf reads a channel's "NET/<name>/<dev>[/GDRDMA…]" (reNCCLNet): the
// network's name ("" when not over the network), its device index and
// whether it is GPUDirect RDMA.
func netOf(via string) (net string, dev int, gdr bool) {
	if !strings.HasPrefix(via, "NET/") {
		return "", 0, false
	}
	s := via[4:]
	// the shortest name followed by /digits
	for j := 1; j < len(s); j++ {
		if s[j] != '/' || j+1 >= len(s) || s[j+1] < '0' || s[j+1] > '9' {
			continue
		}
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(s[j+1 : k])
		if err != nil {
			n = 0
			if m := reNCCLNet.FindStringSubmatch(via); m != nil { // a device index beyond int: as before
				n, _ = strconv.Atoi(m[2])
			}
		}
		return s[:j], n, strings.Contains(s[k:], "/GDRDMA")
	}
	return "", 0, false
}

// fastChannel reads the usual channel line, "Channel 02/0 : 13[b2000] ->
// 4[b1000] [receive] via NET/IB/0/GDRDMA" or "Ring 00 : 7 -> 8 [send] via
// NET/IB/0", at the start of msg, as reNCCLChannel would; ok is false for
// anything else, which the regular expression then reads
// (TestParseChannelAgrees holds the two together).
func fastChannel(msg string) (c Channel, ok bool) {
	s := msg
	switch {
	case strings.HasPrefix(s, "Channel "):
		s = s[8:]
	case strings.HasPrefix(s, "Ring "):
		s = s[5:]
	default:
		return Channel{}, false
	}
	num := func() (int, bool) {
		k := 0
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == 0 || k > 9 {
			return 0, false
		}
		n, _ := strconv.Atoi(s[:k])
		s = s[k:]
		return n, true
	}
	bus := func() (string, bool) {
		if !strings.HasPrefix(s, "[") {
			return "", true
		}
		k := 1
		for k < len(s) && isHex(s[k]) {
			k++
		}
		if k == 1 || k >= len(s) || s[k] != ']' {
			return "", false
		}
		b := s[1:k]
		s = s[k+1:]
		return b, true
	}
	var ok1 bool
	if c.Channel, ok1 = num(); !ok1 {
		return Channel{}, false
	}
	if strings.HasPrefix(s, "/") {
		s = s[1:]
		if _, ok1 = num(); !ok1 {
			return Channel{}, false
		}
	}
	if !strings.HasPrefix(s, " : ") {
		return Channel{}, false
	}
	s = s[3:]
	if c.From, ok1 = num(); !ok1 {
		return Channel{}, false
	}
	if c.FromBus, ok1 = bus(); !ok1 {
		return Channel{}, false
	}
	if !strings.HasPrefix(s, " -> ") {
		return Channel{}, false
	}
	s = s[4:]
	if c.To, ok1 = num(); !ok1 {
		return Channel{}, false
	}
	if c.ToBus, ok1 = bus(); !ok1 {
		return Channel{}, false
	}
	switch {
	case strings.HasPrefix(s, " [send] via "):
		c.Dir, s = "send", s[12:]
	case strings.HasPrefix(s, " [receive] via "):
		c.Dir, s = "receive", s[15:]
	case strings.HasPrefix(s, " via "):
		s = s[5:]
	default:
		return Channel{}, false
	}
	// (\S.*?)\s*(?:#.*)?$: the first byte, then up to the first '#', less
	// trailing space
	if s == "" || isSpace(s[0]) || s[0] >= 0x80 {
		return Channel{}, false
	}
	via := s
	if h := strings.IndexByte(s[1:], '#'); h >= 0 {
		via = s[:h+1]
	}
	for len(via) > 1 && isSpace(via[len(via)-1]) {
		via = via[:len(via)-1]
	}
	c.Via = via
	c.Net, c.NetDev, c.GDR = netOf(via)
	return c, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Empty reports whether the log had no NCCL line at all.
func (l *NCCLLog) Empty() bool { return l == nil || l.Lines == 0 }

// EnvValue is the value the log reports for the environment variable name
// (the last "set by environment" line, else the last command-line
// setting), and whether it has one.
func (l *NCCLLog) EnvValue(name string) (string, bool) {
	for _, cmd := range []bool{false, true} {
		for i := len(l.Env) - 1; i >= 0; i-- {
			if l.Env[i].Name == name && l.Env[i].Command == cmd {
				return l.Env[i].Value, true
			}
		}
	}
	return "", false
}

// PluginNet is the network the log's inter-node traffic uses when it is
// neither NCCL's own InfiniBand verbs transport ("IB", and the "IBext"
// networks of NVIDIA's verbs plugins) nor TCP sockets: a network plugin's,
// e.g. "AWS Libfabric" (aws/aws-ofi-nccl over EFA) from "Using network AWS
// Libfabric" or a channel via NET/AWS Libfabric/0; "" when the log shows
// none. Whether such a plugin can let the NIC reach GPU memory is its own
// (aws-ofi-nccl asks its libfabric provider, src/nccl_ofi_net.c
// support_gdr): nvidia-peermem and the verbs' peer-memory lines are
// NET/IB's.
func (l *NCCLLog) PluginNet() string {
	plugin := func(n string) bool {
		return n != "" && n != "IB" && !strings.HasPrefix(n, "IBext") && !strings.EqualFold(n, "Socket")
	}
	for _, n := range l.Networks {
		if plugin(n.Text) {
			return n.Text
		}
	}
	for _, h := range l.net.hostOrder {
		for _, n := range l.net.hosts[h].nets {
			if plugin(n) {
				return n
			}
		}
	}
	return ""
}

// NetChannels are the kept channels over the network (Net != ""; see
// MaxKeptChannels).
func (l *NCCLLog) NetChannels() []Channel {
	var out []Channel
	for _, c := range l.Channels {
		if c.Net != "" {
			out = append(out, c)
		}
	}
	return out
}
