// Package flagcheck refuses command-line values that cannot work, with an
// error that names the flag and the value: the CLI's own flags and those a
// switch OS registers (internal/switchos) share these rules.
package flagcheck

import (
	"fmt"
	"time"
)

// Positive refuses a duration flag that is not above zero:
// "--ssh-timeout 0s: must be more than 0".
func Positive(flag string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s %s: must be more than 0", flag, d)
	}
	return nil
}

// Port refuses a TCP port flag outside 1–65535 (RFC 793's 16-bit port; 0
// is no port to connect to): "--nvue-port 70000: a TCP port is 1–65535".
func Port(flag string, p int) error {
	if p < 1 || p > 65535 {
		return fmt.Errorf("%s %d: a TCP port is 1–65535", flag, p)
	}
	return nil
}
