package bench

import (
	"slices"
	"strconv"
	"strings"
)

// GPUNIC is the network devices one GPU's channels used, as an NCCL log's
// channel lines show them: "Channel 00/0 : 9[1] -> 0[0] [receive] via
// NET/IB/0/GDRDMA", printed by the rank of GPU 0, says that GPU 0
// receives through net device 0 (NVIDIA/nccl src/transport/net.cc prints
// the local rank's net device: the NIC its channel uses).
type GPUNIC struct {
	// Host is the host of the lines ("" when the log has no host prefix).
	Host string
	// GPU is the local rank's GPU as the lines name it, in the brackets
	// after its rank: its NVML index ("3"; NCCL's nvmlDev, nvidia-smi's
	// index) or, in older NCCL, its bus ID ("1b000"); "" when the lines
	// have no brackets (then Rank names it).
	GPU string
	// Rank is the local rank, when GPU is "".
	Rank int
	// BusID is the bus ID of the GPU with NVML index GPU on Host, from
	// NCCL's "ncclCommInitRank … nvmlDev N busId X" line; "" when the log
	// has none.
	BusID string
	// NICs are the net devices of its channels, in order of first use.
	NICs []NICUse
}

// NICUse is one net device of a GPU's channels.
type NICUse struct {
	// Net is the network ("IB"), Dev the device index after it
	// (NET/IB/<Dev>).
	Net string
	Dev int
	// Name is the device's name on the same host from "NET/IB : Using
	// [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE …" ("mlx5_1"); "" when the log
	// lacks that line.
	Name string
	// Lines counts the channel lines of this GPU over this device.
	Lines int
}

// index reports whether g names its GPU by NVML index (a decimal of at
// most three digits: bus IDs printed as %lx have at least four), and the
// index.
func (g GPUNIC) index() (int, bool) {
	if g.GPU == "" || len(g.GPU) > 3 || !allDigits(g.GPU) {
		return 0, false
	}
	n, err := strconv.Atoi(g.GPU)
	return n, err == nil
}

// label is the GPU for a person: "GPU 3 (bus 3b000)", "GPU 1b000",
// "rank 7".
func (g GPUNIC) label() string {
	switch {
	case g.GPU == "":
		return "rank " + strconv.Itoa(g.Rank)
	case g.BusID != "":
		return "GPU " + g.GPU + " (bus " + g.BusID + ")"
	}
	return "GPU " + g.GPU
}

type gpuKey struct {
	gpu  string
	rank int // when gpu is ""
}

type gpuUse struct {
	key   gpuKey
	owner *hostNets // its host's
	nics  []nicCount
	buf   [1]nicCount // nics' first backing: most GPUs use one NIC
	more  int         // channel lines over devices beyond maxNICsPerGPU
}

type nicCount struct {
	net        string
	dev, lines int
}

// gpuBus is the bus ID of the GPU with an NVML index.
type gpuBus struct{ dev, bus string }

// maxGPUsScanned is how many GPUs of a host useGPU searches one by one;
// beyond it (a log of ranks without hosts) it indexes them by a map.
const maxGPUsScanned = 16

// maxNICsPerGPU bounds the devices kept per GPU: NCCL has at most 32 IB
// devices per node (MAX_IB_DEVS); what a corrupt input adds beyond it is
// counted, not kept.
const maxNICsPerGPU = 64

// useGPU counts channel c (a network channel of host hn) for its local GPU.
func (a *netAgg) useGPU(hn *hostNets, c Channel) {
	k := gpuKey{gpu: c.FromBus}
	if c.Dir == "receive" {
		k.gpu = c.ToBus
	}
	if k.gpu == "" {
		k.rank = c.LocalRank()
	}
	g := a.lastGPU
	if g == nil || g.key != k || g.owner != hn {
		g = hn.gpu(k)
		a.lastGPU = g
	}
	for i := range g.nics {
		if g.nics[i].dev == c.NetDev && g.nics[i].net == c.Net {
			g.nics[i].lines++
			return
		}
	}
	if len(g.nics) >= maxNICsPerGPU {
		g.more++
		return
	}
	g.nics = append(g.nics, nicCount{net: c.Net, dev: c.NetDev, lines: 1})
}

// gpu is hn's GPU k, added when new.
func (hn *hostNets) gpu(k gpuKey) *gpuUse {
	if hn.byGPU != nil {
		if g := hn.byGPU[k]; g != nil {
			return g
		}
	} else {
		for _, g := range hn.gpus {
			if g.key == k {
				return g
			}
		}
	}
	g := &gpuUse{key: k, owner: hn}
	g.nics = g.buf[:0]
	hn.gpus = append(hn.gpus, g)
	switch {
	case hn.byGPU != nil:
		hn.byGPU[k] = g
	case len(hn.gpus) > maxGPUsScanned:
		hn.byGPU = make(map[gpuKey]*gpuUse, len(hn.gpus))
		for _, x := range hn.gpus {
			hn.byGPU[x.key] = x
		}
	}
	return g
}

// initRank reads "[Rank 4] ncclCommInitRank comm 0x… rank 4 nranks 16
// cudaDev 4 nvmlDev 4 busId 69020 commId 0x… - Init START" (also after
// ncclCommInitAll, ncclCommSplit, or with no function name: NVIDIA/nccl
// src/init.cc) for the bus ID of the GPU with that NVML index; false when
// msg is no such line.
func (l *NCCLLog) initRank(host, msg string) bool {
	// "… nvmlDev N busId X …", in this order in every form
	i := strings.Index(msg, " nvmlDev ")
	if i < 0 {
		return false
	}
	dev, rest, _ := strings.Cut(msg[i+len(" nvmlDev "):], " ")
	bus, ok := strings.CutPrefix(rest, "busId ")
	if !ok {
		return false
	}
	bus, _, _ = strings.Cut(bus, " ")
	if !allDigits(dev) || len(dev) > 3 || bus == "" || len(bus) > 16 {
		return true
	}
	for i := 0; i < len(bus); i++ {
		if !isHex(bus[i]) {
			return true
		}
	}
	a := &l.net
	if a.hosts == nil {
		a.hosts, a.holders = map[string]*hostNets{}, map[holderKey]*chanHolder{}
	}
	hn := a.hosts[host]
	if hn == nil {
		hn = &hostNets{}
		a.hosts[host] = hn
	}
	for _, b := range hn.bus {
		if b.dev == dev {
			return true
		}
	}
	if len(hn.bus) < maxGPUsScanned*8 {
		hn.bus = append(hn.bus, gpuBus{dev: dev, bus: bus})
	}
	return true
}

// ibDeviceNames reads "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE
// [RO]; OOB eth0:10.0.0.1<0>" into net device index → name ("mlx5_0").
func ibDeviceNames(text string) map[int]string {
	_, list, ok := strings.Cut(text, "Using")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, ";")
	out := map[int]string{}
	for _, f := range strings.Fields(list) {
		if !strings.HasPrefix(f, "[") {
			continue
		}
		end := strings.IndexByte(f, ']')
		if end < 2 || !allDigits(f[1:end]) || end > 4 {
			continue // [RO] and other flags
		}
		n, _ := strconv.Atoi(f[1:end])
		name := f[end+1:]
		if i := strings.IndexAny(name, ":/"); i >= 0 {
			name = name[:i]
		}
		if name != "" {
			if _, dup := out[n]; !dup {
				out[n] = name
			}
		}
	}
	return out
}

// GPUNICs is, per host in order of appearance and per local GPU in order
// of its first network channel line, the net devices its channels used
// (channels over TCP sockets left out), each named from the host's
// "NET/IB : Using" line where the log has one. It reads the aggregates of
// every channel line, not only the kept ones.
func (l *NCCLLog) GPUNICs() []GPUNIC {
	if l == nil {
		return nil
	}
	names := map[string]map[int]string{} // host → IB device index → name
	for _, d := range l.IBDevices {
		if _, ok := names[d.Host]; !ok {
			names[d.Host] = ibDeviceNames(d.Text)
		}
	}
	var out []GPUNIC
	for _, h := range l.net.hostOrder {
		first := len(out)
		hn := l.net.hosts[h]
		for _, g := range hn.gpus {
			gn := GPUNIC{Host: h, GPU: g.key.gpu, Rank: g.key.rank}
			for _, b := range hn.bus {
				if gn.GPU != "" && b.dev == gn.GPU {
					gn.BusID = b.bus
				}
			}
			for _, u := range g.nics {
				nu := NICUse{Net: u.net, Dev: u.dev, Lines: u.lines}
				if strings.HasPrefix(u.net, "IB") {
					nu.Name = names[h][u.dev]
				}
				gn.NICs = append(gn.NICs, nu)
			}
			out = append(out, gn)
		}
		// by NVML index where the lines give one, else as they came
		slices.SortStableFunc(out[first:], func(a, b GPUNIC) int {
			ia, oka := a.index()
			ib, okb := b.index()
			switch {
			case oka && okb:
				return ia - ib
			case oka:
				return -1
			case okb:
				return 1
			}
			return 0
		})
	}
	return out
}
