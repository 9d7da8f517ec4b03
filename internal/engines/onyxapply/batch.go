package onyxapply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// DefaultBatch is the most commands sent in one write: 4,096 static routes
// (the routed pool at 4,096 hosts) go in 16 writes, about 13 KB each.
const DefaultBatch = 256

func (o Options) batch() int {
	if o.Batch > 0 {
		return o.Batch
	}
	return DefaultBatch
}

// Classes of commands that are independent entries, and may share a write
// with their neighbours of the same class (batchClass).
const (
	classRoute   = "route"       // ip route vrf default <prefix> <next hop>, and its no form
	classAddress = "address"     // interface ethernet 1/N | loopback N ip address <a/l> primary
	classBGP     = "bgp"         // router bgp <asn> vrf default neighbor … | network …
	classDescr   = "description" // interface ethernet 1/N description <text>
	classBGPBFD  = "bgp-bfd"     // router bgp <asn> vrf default neighbor <address> fall-over bfd
)

// batchClass is the class of plan change c when it is one independent
// entry, else "" (c goes on its own). A block may hold only commands that
// mean the same whatever happened to the others, because the switch runs
// every line of a block, also those after a refused one
// (sshcli.SendBlock):
//
//   - a static route is one entry of the routing table;
//   - the address of one routed port or loopback that the plan does not
//     swap for another (nothing Replaced or Removed): the port became a
//     routed port, and the loopback was made, by earlier lines sent on
//     their own, and one port's address changes nothing another's does;
//   - one BGP neighbor or network of the instance an earlier line made
//     (`router bgp <asn> vrf default`, sent on its own): each is an entry of
//     that instance's tables;
//   - a port's description: one port's free text (one per cabled port, up
//     to the switch's port count: sent one by one they were 64 more round
//     trips in TestRouted4096RoundTrips);
//   - one BGP neighbor's `fall-over bfd`: it follows the block that made
//     the neighbors (a refused neighbor stops the push after that block,
//     before any of these), and one neighbor's BFD changes nothing
//     another's does.
//
// Everything else is sent alone: the QoS template, PFC, the buffer pool,
// a port's mode, `ip routing`, a VLAN interface and its address (its
// primary may be swapped, which takes a removal first), a split, the BGP instance
// and its instance-wide settings (`router-id … force`, `bestpath …
// force`) — a refused `dcb priority-flow-control enable force` changes
// what the port commands after it do, so the push stops at the first of
// them the switch refuses, as before.
func batchClass(c onyx.Change) string {
	switch c.Kind {
	case onyx.KindRoute:
		return classRoute
	case onyx.KindDescription:
		return classDescr
	case onyx.KindBGPBFD:
		if len(c.Removed) > 0 || len(c.Replaces) > 0 {
			return ""
		}
		for _, st := range c.Statements {
			if st.Negated() {
				return ""
			}
		}
		return classBGPBFD
	case onyx.KindVLANAddress:
		if len(c.Replaces) > 0 || len(c.Removed) > 0 {
			return ""
		}
		for _, st := range c.Statements {
			if st.Negated() || st.Iface.Type != "ethernet" && st.Iface.Type != "loopback" {
				return ""
			}
		}
		return classAddress
	case onyx.KindBGP:
		w := strings.Fields(c.Command)
		if len(c.Removed) == 0 && len(w) > 5 && w[0] == "router" && w[1] == "bgp" && w[3] == "vrf" && (w[5] == "neighbor" || w[5] == "network") {
			return classBGP
		}
	}
	return ""
}

// blockEnd returns the end (exclusive) of the write that starts at plan
// change i: up to max consecutive changes of one batchClass go together,
// every other command alone.
func blockEnd(changes []onyx.Change, i, max int) int {
	class := batchClass(changes[i])
	if max <= 1 || class == "" {
		return i + 1
	}
	j := i + 1
	for j < len(changes) && j-i < max && batchClass(changes[j]) == class {
		j++
	}
	return j
}

// sendOne sends plan command i on its own; false means the push stopped
// (t.res.Err says why).
func (t *target) sendOne(ctx context.Context, cmds []string, i int) bool {
	cmd := cmds[i]
	t.res.Sent++
	_, err := t.sess.Send(ctx, cmd)
	var de *sshcli.DeviceError
	if errors.As(err, &de) {
		t.res.Err = &PushError{Switch: t.sw.Name, Index: i + 1, Total: len(cmds), Command: cmd, Device: de,
			From: i + 1, Sent: i + 1, Refused: []int{i + 1}}
		return false
	}
	if err != nil {
		t.res.Err = fmt.Errorf("command %d of %d %q: %w; not saved", i+1, len(cmds), cmd, err)
		return false
	}
	// Flat commands stay in (config); should one have entered a
	// sub-mode, go back before the next.
	if t.sess.Level() != sshcli.Config {
		if err := t.sess.Acquire(ctx, sshcli.Config); err != nil {
			t.res.Err = fmt.Errorf("after %q: %w; not saved", cmd, err)
			return false
		}
	}
	return true
}

// sendBlock sends plan commands i … j-1 in one write and reads each one's
// reply; false means the push stopped after the block (a refused line, a
// line that left config mode, or a transport error).
func (t *target) sendBlock(ctx context.Context, cmds []string, i, j int) bool {
	t.res.Sent += j - i
	replies, err := t.sess.SendBlock(ctx, cmds[i:j])
	var pe *PushError
	for k, r := range replies {
		n := i + k + 1 // 1-based plan position
		var de *sshcli.DeviceError
		if errors.As(r.Err, &de) {
			if pe == nil {
				pe = &PushError{Switch: t.sw.Name, Index: n, Total: len(cmds), Command: r.Command, Device: de, From: i + 1, Sent: j}
			}
			pe.Refused = append(pe.Refused, n)
		}
		if r.Level != sshcli.Config && r.Level != "" && err == nil && pe == nil {
			// No entry of a block enters a sub-mode; if one did, the lines
			// after it ran there. Stop and let the re-read show what took.
			t.res.Err = fmt.Errorf("command %d of %d %q left config mode (prompt %q) in a block of independent entries; the %d line(s) after it ran there; not saved",
				n, len(cmds), r.Command, t.sess.Prompt(), j-n)
			return false
		}
	}
	if err != nil {
		t.res.Err = fmt.Errorf("block of commands %d-%d of %d, after %d reply(ies): %w; not saved", i+1, j, len(cmds), len(replies), err)
		return false
	}
	if pe != nil {
		t.res.Err = pe
		if t.sess.Level() != sshcli.Config {
			_ = t.sess.Acquire(ctx, sshcli.Config)
		}
		return false
	}
	return true
}
