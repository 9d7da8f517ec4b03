// Package transport is what every way rdggen reaches a machine has in
// common: the one error of a machine that could not be reached, whichever
// transport tried (SSH to the switches and VMs in sshconn, the NVUE REST
// API of Cumulus Linux over HTTPS). Its subpackages are the transports.
package transport

import (
	"context"
	"errors"
	"net"
)

// UnreachableError is returned when a machine could not be reached and
// nothing of rdggen's request was sent to it: the TCP connection was
// refused, had no route, or was not answered within the timeout, or the
// connection was made and the machine did not answer within the timeout
// (no SSH banner, no TLS handshake: a listener that never accepts, a host
// that drops the packets). Addr is the address as rdggen dialed it; Err
// what the network said (a *net.OpError, a timeout).
type UnreachableError struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string { return e.Addr + ": " + e.Err.Error() }

func (e *UnreachableError) Unwrap() error { return e.Err }

// NoAnswer reports whether err, the error of a request of which nothing
// was sent, says the machine could not be reached: a failed dial (refused,
// no route) or a timeout. A cancelled ctx is not (the caller stopped), nor
// is a TLS or SSH refusal (the machine answered).
func NoAnswer(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
