package onyxapply

import (
	"context"
	"errors"
	"fmt"

	"github.com/rdggen/rdggen/internal/transport/sshcli"
	"github.com/rdggen/rdggen/pkg/onyx"
)

// DefaultBatch is the most static-route commands sent in one write: 4,096
// routes (the routed pool at 4,096 hosts) go in 16 writes, about 13 KB
// each.
const DefaultBatch = 256

func (o Options) batch() int {
	if o.Batch > 0 {
		return o.Batch
	}
	return DefaultBatch
}

// blockEnd returns the end (exclusive) of the write that starts at plan
// change i: up to max consecutive static routes (`ip route vrf default …`
// and their `no` forms) go together, every other command alone.
//
// Why routes only: the switch runs every line of a block, also those after
// a refused one (sshcli.SendBlock), so a block may hold only commands that
// mean the same whatever happened to the others. A static route is one
// independent entry of the routing table; the QoS template, PFC, the
// buffer pool, the routed pool's interface and `ip routing` are not (a
// refused `dcb priority-flow-control enable force` changes what the port
// commands after it do), and they are sent one at a time, so the push stops
// at the first of them the switch refuses, as before.
func blockEnd(changes []onyx.Change, i, max int) int {
	if max <= 1 || changes[i].Kind != onyx.KindRoute {
		return i + 1
	}
	j := i + 1
	for j < len(changes) && j-i < max && changes[j].Kind == onyx.KindRoute {
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
		t.res.Err = fmt.Errorf("switch %s: command %d of %d %q: %w; not saved", t.sw.Name, i+1, len(cmds), cmd, err)
		return false
	}
	// Flat commands stay in (config); should one have entered a
	// sub-mode, go back before the next.
	if t.sess.Level() != sshcli.Config {
		if err := t.sess.Acquire(ctx, sshcli.Config); err != nil {
			t.res.Err = fmt.Errorf("switch %s: after %q: %w; not saved", t.sw.Name, cmd, err)
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
			// A route never enters a sub-mode; if one did, the lines after
			// it ran there. Stop and let the re-read show what took.
			t.res.Err = fmt.Errorf("switch %s: command %d of %d %q left config mode (prompt %q) in a block of routes; the %d line(s) after it ran there; not saved",
				t.sw.Name, n, len(cmds), r.Command, t.sess.Prompt(), j-n)
			return false
		}
	}
	if err != nil {
		t.res.Err = fmt.Errorf("switch %s: block of commands %d-%d of %d, after %d reply(ies): %w; not saved", t.sw.Name, i+1, j, len(cmds), len(replies), err)
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
