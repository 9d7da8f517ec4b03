// Package ownfs decides whether a file or directory rdggen reads back or
// writes into is the user's own: not a symbolic link, of the expected type,
// owned by the user running rdggen (its effective uid) and writable by no one
// else (no group or other write bit). It is the one rule behind the switch
// backups' directory (internal/backup), apply's record of the VMs
// (internal/engines/esxiapply) and the lab's directory (internal/lab): what
// another user can write there, rdggen must not believe or write through.
//
// The rule is the one OpenSSH applies to the files that decide who may log
// in (sshd_config(5), StrictModes: sshd checks "file modes and ownership of
// the user's files and home directory before accepting login"), applied to
// the one directory rdggen uses and the files in it, not to the directories
// above it.
//
// ownfs decides and opens for reading; it writes nothing. The lab's files,
// the record and the backups are written by internal/atomicfile (never
// through a link), and opened without blocking by internal/userfile's
// Handle.
package ownfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/rdggen/rdggen/internal/userfile"
)

// Problem is what makes a path not the user's own.
type Problem int

// The problems Check reports, in the order it looks for them.
const (
	// Symlink: the path is a symbolic link (whoever made it chose where
	// it points).
	Symlink Problem = iota + 1
	// NotDir: a directory was wanted.
	NotDir
	// NotRegular: a regular file was wanted (a named pipe would block a
	// reader; a device or socket is no file rdggen wrote).
	NotRegular
	// NotOwner: owned by another uid than the user running rdggen.
	NotOwner
	// Writable: writable by its group or others (mode bits 0o022).
	Writable
)

// Error is a path refused by Check, with the facts the message gives.
type Error struct {
	// Path is the path as given to Check.
	Path    string
	Problem Problem
	// Mode is the path's mode as lstat or fstat found it (type and
	// permission bits).
	Mode fs.FileMode
	// UID is the path's owner; Me the effective uid of rdggen.
	UID, Me int
}

// Error says what is wrong in one clause, e.g. "/x is writable by its group
// or others (mode 0777)"; callers add why it matters to them.
func (e *Error) Error() string {
	switch e.Problem {
	case Symlink:
		return e.Path + " is a symbolic link"
	case NotDir:
		return e.Path + " is not a directory"
	case NotRegular:
		return fmt.Sprintf("%s is not a regular file (%s)", e.Path, userfile.Kind(e.Mode))
	case NotOwner:
		return fmt.Sprintf("%s belongs to uid %d, not to the user running rdggen (uid %d)", e.Path, e.UID, e.Me)
	case Writable:
		return fmt.Sprintf("%s is writable by its group or others (mode %04o)", e.Path, uint32(e.Mode.Perm()))
	}
	return e.Path + ": refused"
}

// Check applies the rule to fi, what lstat (or fstat of an open handle) found
// at path: a directory when dir, else a regular file. The error is an *Error.
func Check(path string, fi fs.FileInfo, dir bool) error {
	m := fi.Mode()
	e := &Error{Path: path, Mode: m, Me: os.Geteuid()}
	switch {
	case m&fs.ModeSymlink != 0:
		e.Problem = Symlink
	case dir && !m.IsDir():
		e.Problem = NotDir
	case !dir && !m.IsRegular():
		e.Problem = NotRegular
	}
	if e.Problem == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != e.Me {
			e.Problem, e.UID = NotOwner, int(st.Uid)
		} else if m.Perm()&0o022 != 0 {
			e.Problem = Writable
		}
	}
	if e.Problem != 0 {
		return e
	}
	return nil
}

// CheckDir applies Check to an existing directory, not following a symbolic
// link at dir itself. A missing dir is no error (nil): the caller makes it.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return Check(dir, fi, true)
}

// Open opens path for reading as a file of the user's own. It never blocks
// and never follows a symbolic link at path: the open is userfile.Handle's
// (O_NONBLOCK: a named pipe without a writer, or a device, does not hold
// it; open(2)) with O_NOFOLLOW (a link is refused: ELOOP), and the rule is
// checked on the opened handle itself (fstat), so what is read is what was
// checked. A missing file is an error wrapping fs.ErrNotExist; a refused
// one an *Error.
func Open(path string) (*os.File, error) {
	f, err := userfile.Handle(path, syscall.O_NOFOLLOW, func(fi fs.FileInfo) error { return Check(path, fi, false) })
	if errors.Is(err, syscall.ELOOP) {
		if fi, lerr := os.Lstat(path); lerr == nil {
			return nil, Check(path, fi, false)
		}
	}
	var ue *userfile.Error
	if errors.As(err, &ue) { // a socket
		return nil, &Error{Path: path, Problem: NotRegular, Mode: ue.Mode, Me: os.Geteuid()}
	}
	return f, err
}
