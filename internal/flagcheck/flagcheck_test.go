package flagcheck

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	if err := Positive("--ssh-timeout", time.Second); err != nil {
		t.Errorf("1s: %v", err)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		err := Positive("--ssh-timeout", d)
		if want := "--ssh-timeout " + d.String() + ": must be more than 0"; err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", d, err, want)
		}
	}
}

func TestPort(t *testing.T) {
	for _, p := range []int{1, 22, 65535} {
		if err := Port("--nvue-port", p); err != nil {
			t.Errorf("%d: %v", p, err)
		}
	}
	for p, want := range map[int]string{0: "--nvue-port 0: a TCP port is 1–65535", 65536: "--nvue-port 65536: a TCP port is 1–65535", -1: "--nvue-port -1: a TCP port is 1–65535"} {
		if err := Port("--nvue-port", p); err == nil || err.Error() != want {
			t.Errorf("%d: %v, want %q", p, err, want)
		}
	}
}
