package fakeos

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
)

// Sim is a fake switch: a TCP server on 127.0.0.1 that holds configuration
// lines. A connection first sends "TOKEN t" and gets "OK" (or "ERR …" and
// the end of the connection); then, one command per line:
//
//	SHOW          the lines, one each, then "."
//	SET LINE      LINE replaces the line that differs from it only in its
//	              last word ("port fp1 mtu 1500" by "port fp1 mtu 9216"),
//	              else is added; "OK"
//	COUNTERS      per port of a "port" line: "fpN pause P ecn E", then "."
//
// An unknown command is "ERR unknown command".
type Sim struct {
	ln    net.Listener
	token string
	mu    sync.Mutex
	lines []string
	// pause counts the pause frames COUNTERS reports per port (each read
	// adds one: traffic flowed).
	pause map[string]int64
	wg    sync.WaitGroup
}

// NewSim starts a fake switch with token and lines.
func NewSim(token string, lines ...string) (*Sim, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sim{ln: ln, token: token, lines: slices.Clone(lines), pause: map[string]int64{}}
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is where it listens: 127.0.0.1:PORT.
func (s *Sim) Addr() string { return s.ln.Addr().String() }

// Lines are its lines now.
func (s *Sim) Lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// Set sets a line as SET does: behind rdggen's back, in a test or a fault.
func (s *Sim) Set(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := line[:max(strings.LastIndex(line, " "), 0)]
	for i, l := range s.lines {
		if key != "" && strings.LastIndex(l, " ") == len(key) && strings.HasPrefix(l, key) {
			s.lines[i] = line
			return
		}
	}
	s.lines = append(s.lines, line)
}

// Close stops it and waits for its connections to end.
func (s *Sim) Close() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *Sim) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.session(c)
		}()
	}
}

// session answers one connection.
func (s *Sim) session(c net.Conn) {
	r := bufio.NewScanner(c)
	if !r.Scan() || r.Text() != "TOKEN "+s.token {
		fmt.Fprintln(c, "ERR token refused")
		return
	}
	fmt.Fprintln(c, "OK")
	for r.Scan() {
		cmd, arg, _ := strings.Cut(r.Text(), " ")
		switch cmd {
		case "SHOW":
			for _, l := range s.Lines() {
				fmt.Fprintln(c, l)
			}
			fmt.Fprintln(c, ".")
		case "SET":
			s.Set(arg)
			fmt.Fprintln(c, "OK")
		case "COUNTERS":
			for _, l := range s.Lines() {
				var port string
				if _, err := fmt.Sscanf(l, "port %s mtu", &port); err != nil {
					continue
				}
				s.mu.Lock()
				s.pause[port]++
				n := s.pause[port]
				s.mu.Unlock()
				fmt.Fprintf(c, "%s pause %d ecn 0\n", port, n)
			}
			fmt.Fprintln(c, ".")
		default:
			fmt.Fprintln(c, "ERR unknown command")
		}
	}
}
