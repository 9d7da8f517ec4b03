package fabricnet

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
	"github.com/rdggen/rdggen/pkg/sim/onyxsim"
)

// Follow makes switch sw route as its simulator srv's configuration says
// (FollowNVUE for an *nvuesim.Server, FollowONYX for an *onyxsim.Server)
// and reports whether it knows srv's kind; behind another it runs nothing.
func (f *Fabric) Follow(sw string, srv any) bool {
	f.t.Helper()
	switch s := srv.(type) {
	case *nvuesim.Server:
		f.FollowNVUE(sw, s)
	case *onyxsim.Server:
		f.FollowONYX(sw, s)
	default:
		return false
	}
	return true
}

// FollowNVUE makes switch sw route as the simulated Cumulus switch s's
// applied configuration says (RenderNVUE), now and after every apply (s's
// OnApply hook; see Sync for a test that must not wait for it), and backs
// s's operational views by the namespace: the BGP neighbors, the BFD
// sessions and the IPv4 RIB by FRR (NVUEBGPNeighbors, NVUEBFDPeers,
// NVUERIB), the cabled ports' links and LLDP neighbors by the kernel and
// lldpd (NVUEInterfaces).
func (f *Fabric) FollowNVUE(sw string, s *nvuesim.Server) {
	f.t.Helper()
	n := f.node(sw)
	if n.sw.OS != Cumulus {
		f.t.Fatalf("fabricnet: %s is %s, not cumulus", sw, n.sw.OS)
	}
	f.follow(n, func() (Router, error) { return RenderNVUE(s.Applied(), sw) })
	s.OnApply(f.debounced(n))
	s.SetBGPNeighbors(func() map[string]any { return f.NVUEBGPNeighbors(sw) })
	s.SetInterfaces(func() map[string]any { return f.NVUEInterfaces(sw) })
	s.SetRIB(func() map[string]any { return f.NVUERIB(sw) })
	s.SetBFDPeers(func() map[string]any { return f.NVUEBFDPeers(sw) })
}

// NVUEBFDPeers is switch sw's BFD sessions from bfdd in the shape the
// simulator serves as `nv show vrf default router bfd peers` (GET
// /nvue_v1/vrf/default/router/bfd/peers; nvuesim.Server.SetBFDPeers):
// keyed by the session's number, each with "interface", "peer", "state"
// and the local timers "detect-multiplier", "min-rx-interval" and
// "min-tx-interval" (ms). Nil when bfdd does not answer.
func (f *Fabric) NVUEBFDPeers(sw string) map[string]any {
	ps, err := f.BFDPeers(sw)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	for i, p := range ps {
		out[strconv.Itoa(i+1)] = map[string]any{
			"interface": p.Interface, "peer": p.Peer, "state": p.Status,
			"detect-multiplier": int64(p.DetectMultiplier), "min-rx-interval": int64(p.ReceiveInterval), "min-tx-interval": int64(p.TransmitInterval),
		}
	}
	return out
}

// FollowONYX makes switch sw route as the simulated ONYX switch s's
// running-config says (RenderONYX), now and after every configuration
// change (s's OnChange hook, debounced: a change is programmed once the
// commands have paused for 300 ms; see Sync), and backs s's operational
// state by the namespace (ONYXOperational): `show ip bgp summary` and `show
// ip bfd neighbors` by FRR, `show lldp interfaces ethernet remote` by
// lldpd, the cabled ports' link and MTU in `show interfaces ethernet` by
// the kernel.
func (f *Fabric) FollowONYX(sw string, s *onyxsim.Server) {
	f.t.Helper()
	n := f.node(sw)
	if n.sw.OS != ONYX {
		f.t.Fatalf("fabricnet: %s is %s, not onyx", sw, n.sw.OS)
	}
	f.follow(n, func() (Router, error) { return RenderONYX(s.RunningConfig(), sw) })
	s.OnChange(f.debounced(n))
	s.SetOperational(f.ONYXOperational(sw))
}

// ONYXOperational are the hooks that give onyxsim switch sw's operational
// state from the namespace: BGP from FRR's `show bgp summary json` (no
// answer when bgpd does not run), the BFD sessions from bfdd's `show bfd
// peers json` (BFDPeers: bgpd registers them, so a stopped bgpd leaves
// none; no answer when bfdd does not run), the LLDP neighbors from lldpd (a fabric
// ONYX neighbor's port id as ONYX names its port, "Eth1/1"; a Cumulus
// one's "swp1"), and each cabled port's carrier and MTU from the kernel,
// with the speed its cable came up at (SetSpeed, PlanSpeeds).
// The namespace's veths carry no PFC: the pause and ECN counters stay the
// simulator's (onyxsim.Server.SetPauseCounters).
func (f *Fabric) ONYXOperational(sw string) onyxsim.Operational {
	return onyxsim.Operational{
		BGP: func() (onyxsim.BGP, bool) {
			s, err := f.BGPSummary(sw)
			if err != nil {
				return onyxsim.BGP{}, false
			}
			b := onyxsim.BGP{RouterID: s.RouterID, AS: s.AS}
			for _, p := range s.Peers {
				b.Peers = append(b.Peers, onyxsim.BGPPeer{Neighbor: p.Neighbor, RemoteAS: p.RemoteAS, State: p.State,
					MsgRcvd: p.MsgRcvd, MsgSent: p.MsgSent, Uptime: time.Duration(p.UptimeMsec) * time.Millisecond, PfxRcd: p.PfxRcd})
			}
			return b, true
		},
		BFD: func() ([]onyxsim.BFDPeer, bool) {
			ps, err := f.BFDPeers(sw)
			if err != nil {
				return nil, false
			}
			out := make([]onyxsim.BFDPeer, len(ps))
			for i, p := range ps {
				out[i] = onyxsim.BFDPeer{Neighbor: p.Peer, Port: p.Interface, State: p.Status,
					Multiplier: p.DetectMultiplier, MinRx: p.ReceiveInterval, TransmitRate: p.TransmitInterval}
			}
			return out, true
		},
		LLDP: func() map[string][]onyxsim.LLDPNeighbor {
			list, err := f.LLDPNeighbors(sw)
			if err != nil {
				return nil
			}
			out := map[string][]onyxsim.LLDPNeighbor{}
			for _, nb := range list {
				id := nb.PortID
				if peer := f.switches[nb.SysName]; peer != nil && peer.sw.OS == ONYX {
					id = "Eth" + id
				}
				out[nb.Port] = append(out[nb.Port], onyxsim.LLDPNeighbor{SystemName: nb.SysName, PortID: id})
			}
			return out
		},
		Links: func() map[string]onyxsim.Link {
			n := f.node(sw)
			n.mu.Lock()
			var ports []string
			for p := range n.ports {
				ports = append(ports, p)
			}
			n.mu.Unlock()
			links, _ := f.links(sw) // a port that cannot be read is left out
			out := map[string]onyxsim.Link{}
			for _, ifname := range ports {
				port := PortName(ONYX, ifname)
				if l, ok := links[ifname]; ok {
					ol := onyxsim.Link{Up: l.Up, MTU: l.MTU}
					if gbps := n.speedOf(ifname); gbps > 0 {
						ol.Speed = strconv.Itoa(gbps) + " Gbps" // ONYX's "Actual speed"
					}
					out[port] = ol
				}
			}
			return out
		},
	}
}

func (f *Fabric) follow(n *node, gen func() (Router, error)) {
	n.mu.Lock()
	n.gen = gen
	n.mu.Unlock()
	if err := f.sync(n); err != nil {
		f.t.Fatal(err)
	}
}

// Sync renders switch sw's simulator state now and programs it (what the
// hooks do after a change), so a test continues with the new state.
func (f *Fabric) Sync(sw string) {
	f.t.Helper()
	if err := f.sync(f.node(sw)); err != nil {
		f.t.Fatal(err)
	}
}

// Err returns the error of the last background re-render of switch sw, if
// it failed.
func (f *Fabric) Err(sw string) error {
	n := f.node(sw)
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

func (f *Fabric) sync(n *node) error {
	n.mu.Lock()
	gen, closed := n.gen, n.closed
	n.mu.Unlock()
	if gen == nil || closed {
		return nil
	}
	r, err := gen()
	if err != nil {
		return fmt.Errorf("fabricnet: %s: render: %v", n.sw.Name, err)
	}
	return f.program(n, r)
}

// debounced returns a hook that syncs n 300 ms after the last call.
func (f *Fabric) debounced(n *node) func() {
	var mu sync.Mutex
	var timer *time.Timer
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		timer = time.AfterFunc(300*time.Millisecond, func() {
			err := f.sync(n)
			n.mu.Lock()
			n.err = err
			n.mu.Unlock()
		})
	}
}

// NVUEBGPNeighbors is switch sw's BGP sessions in the shape of NVUE's
// operational view of the default VRF's neighbors (`nv show vrf default
// router bgp neighbor -o json`), read from FRR: per neighbor "remote-as",
// "state" in NVUE's lower case ("established", "active", …), "uptime"
// (FRR's text), "peer-hostname", and address-family.ipv4-unicast's
// "rx-prefix" and "tx-prefix". The address-family keys are those of
// NVIDIA's documented detail view (Cumulus Linux "Troubleshooting BGP");
// the names of the others are read off the columns of the documented table
// (AS, State, Uptime) and are a guess. Nil when bgpd does not answer (a
// stopped bgpd: the configured neighbors then show without a state).
func (f *Fabric) NVUEBGPNeighbors(sw string) map[string]any {
	s, err := f.BGPSummary(sw)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	for _, p := range s.Peers {
		out[p.Neighbor] = map[string]any{
			"remote-as":     int64(p.RemoteAS),
			"state":         strings.ToLower(p.State),
			"uptime":        p.Uptime,
			"peer-hostname": p.Hostname,
			"address-family": map[string]any{"ipv4-unicast": map[string]any{
				"rx-prefix": int64(p.PfxRcd), "tx-prefix": int64(p.PfxSnt),
			}},
		}
	}
	return out
}

// NVUEInterfaces is switch sw's cabled ports in the shape of NVUE's
// operational interface view, read from the kernel and lldpd: per port
// link "mtu", "admin-status" (the kernel's UP flag: "down" after `ip link
// set down`, as by hand on a switch's shell) and "oper-status" ("up" or
// "down": the carrier), "speed" when the cable's
// is known and the link is up (SetSpeed, PlanSpeeds), and lldp.neighbor keyed
// by the neighbor's system name with chassis.system-name and port.name
// (nvuesim.Server.SetInterfaces says which of these names are inferred).
// A port that cannot be read is left out.
func (f *Fabric) NVUEInterfaces(sw string) map[string]any {
	n := f.node(sw)
	n.mu.Lock()
	var ports []string
	for p := range n.ports {
		ports = append(ports, p)
	}
	n.mu.Unlock()
	lldp := map[string]map[string]any{}
	if list, err := f.LLDPNeighbors(sw); err == nil {
		for _, nb := range list {
			if lldp[nb.Port] == nil {
				lldp[nb.Port] = map[string]any{}
			}
			lldp[nb.Port][nb.SysName] = map[string]any{"chassis": map[string]any{"system-name": nb.SysName}, "port": map[string]any{"name": nb.PortID}}
		}
	}
	links, _ := f.links(sw) // a port that cannot be read is left out
	out := map[string]any{}
	for _, ifname := range ports {
		port := PortName(n.sw.OS, ifname)
		l, ok := links[ifname]
		if !ok {
			continue
		}
		oper, admin := "down", "down"
		if l.Up {
			oper = "up"
		}
		if l.AdminUp {
			admin = "up"
		}
		nb := lldp[port]
		if nb == nil {
			nb = map[string]any{} // LLDP runs; no neighbor on this port
		}
		link := map[string]any{"mtu": int64(l.MTU), "admin-status": admin, "oper-status": oper}
		if gbps := n.speedOf(ifname); gbps > 0 && l.Up {
			link["speed"] = strconv.Itoa(gbps) + "G" // NVUE's form ("Speed" 100G, `nv show interface`)
		}
		out[port] = map[string]any{"link": link, "lldp": map[string]any{"neighbor": nb}}
	}
	return out
}

// NVUERIB is switch sw's IPv4 RIB, read from FRR (RIB), in the shape
// nvuesim.Server.SetRIB serves as `nv show vrf default router rib ipv4
// route`: per prefix, protocol.<protocol>.entry-index.<n> (n from 1 in
// FRR's order) with "distance", "metric", "table-id", "nexthop-group-id",
// "uptime", "flags" ("selected", "fib-selected" for zebra's choice,
// "installed" when in the FIB) and "via", keyed by the next hop's address
// (the interface for a directly connected one), each with "interface",
// "weight" and "flags" ("active", "installed"). The tree under route/<prefix>
// follows NVIDIA's command reference ("RIB"); the leaf names are inferred
// (nvuesim.Server.SetRIB). Nil when zebra does not answer.
func (f *Fabric) NVUERIB(sw string) map[string]any {
	rs, err := f.RIB(sw)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	for _, r := range rs {
		key := r.Prefix.String()
		route, _ := out[key].(map[string]any)
		if route == nil {
			route = map[string]any{"protocol": map[string]any{}}
			out[key] = route
		}
		protos := route["protocol"].(map[string]any)
		proto, _ := protos[r.Protocol].(map[string]any)
		if proto == nil {
			proto = map[string]any{"entry-index": map[string]any{}}
			protos[r.Protocol] = proto
		}
		entries := proto["entry-index"].(map[string]any)
		flags := map[string]any{}
		if r.Selected {
			flags["selected"] = map[string]any{}
			flags["fib-selected"] = map[string]any{}
		}
		if r.Installed {
			flags["installed"] = map[string]any{}
		}
		via := map[string]any{}
		for _, h := range r.NextHops {
			id := h.Interface
			if h.IP.IsValid() {
				id = h.IP.String()
			}
			if _, dup := via[id]; dup {
				id += "%" + h.Interface
			}
			hf := map[string]any{}
			if h.Active {
				hf["active"] = map[string]any{}
			}
			if h.FIB {
				hf["installed"] = map[string]any{}
			}
			if h.Connected {
				hf["connected"] = map[string]any{}
			}
			via[id] = map[string]any{"interface": h.Interface, "weight": int64(h.Weight), "flags": hf}
		}
		entries[strconv.Itoa(len(entries)+1)] = map[string]any{
			"distance": int64(r.Distance), "metric": int64(r.Metric), "table-id": int64(r.Table),
			"nexthop-group-id": int64(r.NHGId), "uptime": r.Uptime, "flags": flags, "via": via,
		}
	}
	return out
}
