package nvueapply

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe as the CA file (--nvue-ca, $RDGGEN_NVUE_CA) is refused at
// once, saying what it is, not waited on.
func TestCAFileWaitsOnNoPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- TLS{CAFile: fifo}.Check() }()
	select {
	case err := <-done:
		if want := "CA file: " + fifo + " is not a regular file (a named pipe)"; err == nil || err.Error() != want {
			t.Errorf("%v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the CA file check waits on a named pipe")
	}
}
