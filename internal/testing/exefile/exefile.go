// Package exefile writes program files that this process, or a child it
// starts, runs soon after: the tests' stand-in commands, scripts and copies
// of programs.
package exefile

import (
	"io/fs"
	"os"
	"syscall"
)

// Write writes data to the file at path, created with perm if it does not
// exist and truncated if it does, as os.WriteFile does, and holds
// syscall.ForkLock for reading from open to close. Without it a child that
// another goroutine forks meanwhile inherits the descriptor open for
// writing until it calls exec (close-on-exec closes it only then), and
// running the file in that moment fails with ETXTBSY, "text file busy"
// (golang.org/issue/22315; the syscall package promises to hold ForkLock for
// writing across every fork). Seen: a test copying its own binary and
// starting it with sh while parallel tests started processes.
func Write(path string, data []byte, perm fs.FileMode) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, perm)
}
