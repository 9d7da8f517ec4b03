package sshcli

// cleaner removes terminal control sequences from a byte stream fed in
// chunks: ANSI/VT100 escapes (ESC [ … final, and two-byte ESC x), NUL and
// BEL, and a backspace together with the character before it (oxidized
// strips `.\x08` the same way, docs/rules.md#cli-session). Carriage returns are
// kept; Session handles them per line.
type cleaner struct {
	state int // 0 text, 1 after ESC, 2 inside CSI
}

func (c *cleaner) feed(dst, p []byte) []byte {
	for _, b := range p {
		switch c.state {
		case 1:
			if b == '[' {
				c.state = 2
			} else {
				c.state = 0
			}
			continue
		case 2:
			if b >= 0x40 && b <= 0x7e {
				c.state = 0
			}
			continue
		}
		switch b {
		case 0x1b:
			c.state = 1
		case 0, 0x07:
		case '\b':
			if n := len(dst); n > 0 && dst[n-1] != '\n' {
				dst = dst[:n-1]
			}
		default:
			dst = append(dst, b)
		}
	}
	return dst
}
