package netnstest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// inNS runs f on an OS thread that is inside the named network namespace
// (ip netns's /run/netns/<name>). Sockets f creates belong to that
// namespace for their whole life, whichever thread later uses them.
func inNS(name string, f func() error) error {
	target, err := os.Open("/run/netns/" + name)
	if err != nil {
		return err
	}
	defer target.Close()
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("setns %s: %w", name, err)
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and dies with this goroutine: no other
		// goroutine ever runs in the wrong namespace.
		return fmt.Errorf("setns back from %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// ListenIn listens on TCP addr inside the network namespace ns.
func ListenIn(ns, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNS(ns, func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// DialFrom connects to TCP addr from inside the network namespace ns.
func DialFrom(ctx context.Context, ns, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNS(ns, func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

// EchoPort is where each container answers the source-address check.
const EchoPort = 7007

// ServeSourceEcho accepts on l until it is closed and answers every
// connection with one line: the source address it arrived from, as the
// receiver sees it.
func ServeSourceEcho(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "%s\n", ap.Addr().Unmap())
		}()
	}
}

// SeenSource connects from namespace ns to an echo server at addr
// (ServeSourceEcho) and returns the source address the server saw.
func SeenSource(ctx context.Context, ns string, addr netip.AddrPort) (netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := DialFrom(ctx, ns, addr.String())
	if err != nil {
		return netip.Addr{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetReadDeadline(dl)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no answer from %s: %w", addr, err)
	}
	return netip.ParseAddr(strings.TrimSpace(line))
}

// Pair is an ordered pair of host indices; Detail says why it failed.
type Pair struct {
	From, To int
	Detail   string
}

// Reachability opens a TCP connection from every container to every other
// container (in parallel) and returns the pairs that worked and those that
// did not. A pair works only when the receiver saw the sender's own container
// address: a connection that arrives masqueraded (from the sender host's data
// address) is a failure, because Open MPI drops such connections. ICMP would
// not notice the difference.
func (c *Cluster) Reachability(ctx context.Context) (ok, failed []Pair) {
	return c.reachability(ctx, func(h *Host) (string, netip.Addr) { return h.ContainerNS, h.Container })
}

// HostReachability is Reachability between the hosts' data addresses (the
// workers of horovod.network: host).
func (c *Cluster) HostReachability(ctx context.Context) (ok, failed []Pair) {
	return c.reachability(ctx, func(h *Host) (string, netip.Addr) { return h.NS, h.Data.Addr() })
}

func (c *Cluster) reachability(ctx context.Context, end func(*Host) (string, netip.Addr)) (ok, failed []Pair) {
	c.t.Helper()
	for _, h := range c.Hosts {
		ns, addr := end(h)
		l, err := ListenIn(ns, netip.AddrPortFrom(addr, EchoPort).String())
		if err != nil {
			c.t.Fatalf("netnstest: %s: listen for the source check: %v", h.Name, err)
		}
		defer l.Close()
		go ServeSourceEcho(l)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// A pair that does not connect waits out SeenSource's 3 s: every pair
	// of a cluster of up to 12 hosts is tried at once, so a check that
	// expects failures takes 3 s, not 3 s per 16 pairs (each try holds an
	// OS thread in the sender's namespace while it dials).
	sem := make(chan struct{}, 132)
	for _, a := range c.Hosts {
		for _, b := range c.Hosts {
			if a == b {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				fromNS, fromAddr := end(a)
				_, toAddr := end(b)
				p := Pair{From: a.Index, To: b.Index}
				seen, err := SeenSource(ctx, fromNS, netip.AddrPortFrom(toAddr, EchoPort))
				switch {
				case err != nil:
					p.Detail = err.Error()
				case seen != fromAddr:
					p.Detail = "the receiver saw " + seen.String() + ", not " + fromAddr.String()
				}
				mu.Lock()
				if p.Detail == "" {
					ok = append(ok, p)
				} else {
					failed = append(failed, p)
				}
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	return ok, failed
}

// String gives "ns-01 -> ns-02: detail".
func (p Pair) String() string {
	s := "ns-" + twoDigits(p.From+1) + " -> ns-" + twoDigits(p.To+1)
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return s
}

func twoDigits(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// Source connects from from's container to to's container and returns the
// source address to's container saw.
func (c *Cluster) Source(ctx context.Context, from, to *Host) (netip.Addr, error) {
	return c.SourceFrom(ctx, from.ContainerNS, to)
}

// SourceFrom is Source from any namespace (e.g. Outsider's).
func (c *Cluster) SourceFrom(ctx context.Context, ns string, to *Host) (netip.Addr, error) {
	l, err := ListenIn(to.ContainerNS, netip.AddrPortFrom(to.Container, EchoPort).String())
	if err != nil {
		return netip.Addr{}, err
	}
	defer l.Close()
	go ServeSourceEcho(l)
	return SeenSource(ctx, ns, netip.AddrPortFrom(to.Container, EchoPort))
}
