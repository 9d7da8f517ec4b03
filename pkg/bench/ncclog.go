package bench

import (
	"regexp"
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
	// Channels are the connection lines, "Channel 02/0 : 13[b2000] ->
	// 4[b1000] [receive] via NET/IB/0/GDRDMA" and the older "Ring 00 : 7
	// -> 8 [send] via NET/IB/0".
	Channels []Channel
	// Rings are "Connected all rings" lines; GDR is the "use ring PXN n
	// GDR n" value (≥ 2.24), -1 when the line has none.
	Rings []RingSummary
	// Env are "NCCL_X set by environment to V" lines, then the NCCL_X=V
	// settings of command lines in the file (mpirun -x NCCL_X=V, export
	// NCCL_X=V), which show what the launch asked for when the log does
	// not print it (NCCL_DEBUG=WARN, or no ENV subsystem).
	Env []EnvSetting
	// Warnings are every NCCL WARN line.
	Warnings []HostText
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
func ParseNCCLLog(data []byte) *NCCLLog { return parseNCCLLogLines(splitLines(data), 0) }

// parseNCCLLogLines is ParseNCCLLog of lines (from splitLines), the first
// of which is line off+1 of the input.
func parseNCCLLogLines(lines []string, off int) *NCCLLog {
	l := &NCCLLog{}
	seenHost := map[string]bool{}
	var cmdEnv []EnvSetting
	for i, raw := range lines {
		i += off
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		if m := reNCCLVersion.FindStringSubmatch(line); m != nil && l.Version == "" {
			l.Version = m[1]
		}
		var host, level, msg string
		if m := reNCCLLine.FindStringSubmatch(line); m != nil {
			host, level, msg = m[1], m[5], m[6]
		} else if m := reNCCLBare.FindStringSubmatch(line); m != nil {
			level, msg = m[1], m[2]
		} else if strings.Contains(line, " via NET/") && strings.Contains(line, " -> ") {
			msg = line // a channel line whose prefix was cut
			level = "INFO"
		} else {
			for _, m := range reCommandEnv.FindAllStringSubmatch(line, -1) {
				cmdEnv = append(cmdEnv, EnvSetting{Name: m[1], Value: m[2], Command: true})
			}
			continue
		}
		msg = strings.TrimSpace(msg)
		l.Lines++
		if host != "" && !seenHost[host] {
			seenHost[host] = true
			l.Hosts = append(l.Hosts, host)
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
			continue
		}
		l.info(ht, msg, i+1)
	}
	if l.Lines > 0 {
		l.Env = append(l.Env, cmdEnv...)
	}
	return l
}

func (l *NCCLLog) info(ht HostText, msg string, line int) {
	host := ht.Host
	switch {
	case strings.HasPrefix(msg, "Using network "):
		if m := reNCCLNetwork.FindStringSubmatch(msg); m != nil {
			l.Networks = append(l.Networks, HostText{Host: host, Text: m[1], Line: line})
		}
	case strings.HasPrefix(msg, "NET/IB : Using"), strings.HasPrefix(msg, "NET/IB: Using"):
		l.IBDevices = append(l.IBDevices, ht)
	case strings.Contains(msg, "NET/IB : No device found"):
		l.NoIBDevice = append(l.NoIBDevice, ht)
	case strings.HasPrefix(msg, "NET/Socket : Using"):
		l.SocketDevices = append(l.SocketDevices, ht)
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
		if m := reNCCLEnv.FindStringSubmatch(msg); m != nil {
			l.Env = append(l.Env, EnvSetting{Host: host, Name: m[1], Value: strings.TrimSpace(m[2])})
		}
	default:
		if strings.Contains(msg, " via ") && strings.Contains(msg, " -> ") {
			if c, ok := parseChannel(msg); ok {
				c.Host, c.Line = host, line
				l.Channels = append(l.Channels, c)
			}
		}
	}
}

func parseChannel(msg string) (Channel, bool) {
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
	if n := reNCCLNet.FindStringSubmatch(c.Via); n != nil {
		c.Net = n[1]
		c.NetDev, _ = strconv.Atoi(n[2])
		c.GDR = strings.Contains(n[3], "/GDRDMA")
	}
	return c, true
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

// NetChannels are the channels over the network (Net != "").
func (l *NCCLLog) NetChannels() []Channel {
	var out []Channel
	for _, c := range l.Channels {
		if c.Net != "" {
			out = append(out, c)
		}
	}
	return out
}
