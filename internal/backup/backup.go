// Package backup keeps the copies of a machine's configuration an engine
// writes before it changes anything: one file per machine and run, mode
// 0600 (a switch's configuration holds password hashes), in a directory
// of the user's own, never overwriting an older copy.
package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/ownfs"
)

// Write writes data to dir/<name>-<time><ext> (time in UTC,
// 20060102T150405Z; "-1", "-2" … before ext when that name is taken), mode
// 0600, as a new file (atomicfile.Create: never over an existing file or
// through a link), making dir (mode 0700) when it is missing, and returns
// the path.
// An existing dir is refused as CheckDir says.
func Write(dir, name, ext string, now time.Time, data []byte) (string, error) {
	if err := CheckDir(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	base := filepath.Join(dir, name+"-"+now.UTC().Format("20060102T150405Z"))
	for n := 0; ; n++ {
		path := base + ext
		if n > 0 {
			path = fmt.Sprintf("%s-%d%s", base, n, ext)
		}
		err := atomicfile.Create(path, data, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		return path, nil
	}
}

// CheckDir refuses an existing backup directory that another user could
// read a machine's whole configuration from or put files into: a symbolic
// link, not a directory, owned by another user than the one running
// rdggen, or writable by its group or others (the rule of internal/ownfs). A
// missing directory is fine (Write makes it, mode 0700).
func CheckDir(dir string) error {
	err := ownfs.CheckDir(dir)
	var e *ownfs.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Problem {
	case ownfs.Symlink:
		return fmt.Errorf("backup directory %s is a symbolic link: give the directory itself (--backup-dir)", dir)
	case ownfs.NotDir:
		return fmt.Errorf("backup directory %s exists and is not a directory", dir)
	case ownfs.NotOwner:
		return fmt.Errorf("backup directory %s belongs to uid %d, not to the user running rdggen (uid %d): the switch's configuration goes only into a directory of yours (--backup-dir)", dir, e.UID, e.Me)
	case ownfs.Writable:
		return fmt.Errorf("backup directory %s is writable by its group or others (mode %04o): chmod go-w %s, or give another --backup-dir", dir, uint32(e.Mode.Perm()), dir)
	}
	return fmt.Errorf("backup directory %w", e)
}
