package lab

import (
	"os"
	"os/signal"
	"syscall"
)

// notify delivers SIGTERM and SIGINT to c and ignores SIGHUP (the
// supervisor outlives the terminal that started it).
func notify(c chan os.Signal) {
	signal.Ignore(syscall.SIGHUP)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
}
