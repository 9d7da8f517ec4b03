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
	"syscall"
	"time"
)

// Write writes data to dir/<name>-<time><ext> (time in UTC,
// 20060102T150405Z; "-1", "-2" … before ext when that name is taken), mode
// 0600, making dir (mode 0700) when it is missing, and returns the path.
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
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return "", err
		}
		return path, f.Close()
	}
}

// CheckDir refuses an existing backup directory that another user could
// read a machine's whole configuration from or put files into: a symbolic
// link, not a directory, owned by another user than the one running
// rdggen, or writable by its group or others. A missing directory is fine
// (Write makes it, mode 0700).
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("backup directory %s is a symbolic link: give the directory itself (--backup-dir)", dir)
	case !fi.IsDir():
		return fmt.Errorf("backup directory %s exists and is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("backup directory %s belongs to uid %d, not to the user running rdggen (uid %d): the switch's configuration goes only into a directory of yours (--backup-dir)", dir, st.Uid, os.Geteuid())
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("backup directory %s is writable by its group or others (mode %04o): chmod go-w %s, or give another --backup-dir", dir, perm, dir)
	}
	return nil
}
