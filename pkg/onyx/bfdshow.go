package onyx

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ShowBFDNeighborsCommand is `show ip bfd neighbors`, as text: the BFD
// sessions of each VRF, read by ParseBFDNeighbors. NVIDIA's Onyx User
// Manual ("Bidirectional Forwarding Detection (BFD) Infrastructure")
// documents that a session "is established by the application that uses
// it" (here BGP's `fall-over bfd`) and configures BFD under `ip bfd`; no
// public source shown here prints this command or its output. The command
// follows the `show ip <protocol>` form of ONYX's other routing views
// (`show ip bgp summary`, `show ip ospf neighbors`) and the layout that of
// `show ip bgp summary` (a "VRF name" line, then a table between dashes),
// with the columns named by the words of `ip bfd … interval min-rx <ms>
// multiplier <n> transmit-rate <ms>`: all of it is inferred, so
// ParseBFDNeighbors finds its columns by their heads and fails on an
// output it cannot read rather than guess.
const ShowBFDNeighborsCommand = "show ip bfd neighbors"

// BFDSession is one row of `show ip bfd neighbors`:
//
//	Neighbor          Interface    State      Multiplier  Min-rx  Transmit-rate
//	10.254.0.1        Eth1/31      UP         3           300     300
type BFDSession struct {
	// VRF is the "VRF name" the row is under ("" when the output names
	// none).
	VRF string
	// Neighbor is the peer's address ("Neighbor").
	Neighbor netip.Addr
	// Interface is the local port as printed ("Eth1/31"); "" when the
	// output has no such column or prints "-".
	Interface string
	// State is the session state as printed: "UP", "DOWN", "INIT" or
	// "ADMIN-DOWN" (RFC 5880 §4.1's states; the capitals, as in `show ip
	// bgp summary`, are inferred).
	State string
	// Multiplier, MinRx and TransmitRate are the session's detect
	// multiplier and intervals in ms; 0 when the output has no such
	// column or no number in it.
	Multiplier, MinRx, TransmitRate int
}

// Up reports whether the session is up.
func (s BFDSession) Up() bool { return strings.EqualFold(s.State, "up") }

// HasTimers reports whether the row shows all three timers.
func (s BFDSession) HasTimers() bool { return s.Multiplier > 0 && s.MinRx > 0 && s.TransmitRate > 0 }

// ParseBFDNeighbors reads the output of ShowBFDNeighborsCommand: an
// optional "VRF name : X" line starts a VRF; the line of column heads
// (the one with both "Neighbor" and "State") gives each column its
// position, case-insensitively ("Interface", "Multiplier", "Min-rx",
// "Transmit-rate"); every later line whose first field is an IP address is
// a session, read by those positions when it has as many fields as the
// heads, else only its address and the first field that is a BFD state
// word. Lines of dashes are skipped. It fails when there is no such head
// line (the answer is then not a table of BFD sessions: an error text,
// BFD not running, another layout), naming what it got.
func ParseBFDNeighbors(out string) ([]BFDSession, error) {
	var sessions []BFDSession
	var heads []string
	vrf := ""
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "vrf name") {
			vrf = strings.TrimSpace(v)
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if heads == nil || !isAddr(f[0]) {
			lower := strings.Fields(strings.ToLower(line))
			if containsWord(lower, "neighbor") && containsWord(lower, "state") {
				heads = lower
			}
			continue
		}
		a, _ := netip.ParseAddr(f[0])
		s := BFDSession{VRF: vrf, Neighbor: a}
		if len(f) == len(heads) {
			for i, h := range heads {
				switch h {
				case "interface":
					if f[i] != "-" {
						s.Interface = f[i]
					}
				case "state":
					s.State = f[i]
				case "multiplier":
					s.Multiplier, _ = strconv.Atoi(f[i])
				case "min-rx":
					s.MinRx, _ = strconv.Atoi(f[i])
				case "transmit-rate":
					s.TransmitRate, _ = strconv.Atoi(f[i])
				}
			}
		} else {
			for _, w := range f[1:] {
				if isBFDState(w) {
					s.State = w
					break
				}
			}
		}
		sessions = append(sessions, s)
	}
	if heads == nil {
		return nil, fmt.Errorf("show ip bfd neighbors: no table of sessions (a line with \"Neighbor\" and \"State\") in the output %q", abbreviate(out))
	}
	return sessions, nil
}

func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// isBFDState reports whether w is one of RFC 5880's session states as a
// CLI prints them.
func isBFDState(w string) bool {
	switch strings.ToLower(w) {
	case "up", "down", "init", "admin-down", "admindown":
		return true
	}
	return false
}
