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
// the one directory rdggen uses and the files in it. CheckAncestors applies
// OpenSSH's rule for the directories above such a path (safe_path() in
// OpenSSH's misc.c, formerly secure_filename() in auth.c: every directory
// of the path's canonical form, walking up, must belong to root or to the
// user and be writable by no one else), with one allowance OpenSSH has not:
// a sticky directory such as /tmp (mode 1777), where no one else can
// rename or remove what the user made (the sticky bit, inode(7)).
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
	"path/filepath"
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
	// AncestorOwner: a directory above the path (CheckAncestors) belongs
	// to a user other than root and the user running rdggen, who could
	// rename the path away and put another in its place.
	AncestorOwner
	// AncestorWritable: a directory above the path (CheckAncestors) is
	// writable by its group or others (mode bits 0o022) without the sticky
	// bit, so that they could rename the path away and put another in its
	// place.
	AncestorWritable
)

// Error is a path refused by Check, with the facts the message gives.
type Error struct {
	// Path is the path as given to Check; for AncestorOwner and
	// AncestorWritable, the directory above Below that is refused.
	Path    string
	Problem Problem
	// Below is the path given to CheckAncestors (absolute), for
	// AncestorOwner and AncestorWritable; "" otherwise.
	Below string
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
	case AncestorOwner:
		return fmt.Sprintf("%s, above %s, belongs to uid %d (mode %04o), neither root nor the user running rdggen (uid %d)", e.Path, e.Below, e.UID, Octal(e.Mode), e.Me)
	case AncestorWritable:
		return fmt.Sprintf("%s, above %s, is writable by its group or others and not sticky (mode %04o, owner uid %d)", e.Path, e.Below, Octal(e.Mode), e.UID)
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

// Octal is m's permission, setuid, setgid and sticky bits as chmod(1)
// writes them (e.g. 01777 for /tmp): Go's fs.FileMode keeps the special
// bits elsewhere than the Unix mode does.
func Octal(m fs.FileMode) uint32 {
	o := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		o |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		o |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		o |= 0o1000
	}
	return o
}

// AncestorRule is CheckAncestors' rule in words, for the messages of its
// callers.
const AncestorRule = "every directory above it must belong to root or to you and be writable by no one else, unless sticky like /tmp (OpenSSH's rule for ~/.ssh and the directories above it)"

// CheckAncestors refuses path when a directory above it lets another user
// rename path away and put their own in its place: an existing directory
// above path that belongs to neither root nor the user running rdggen (its
// effective uid), or one writable by its group or others (mode bits 0o022)
// without the sticky bit (with it, only the owner of an entry, of the
// directory, or root can rename or remove the entry: inode(7)). path itself
// is not checked (Check and CheckDir do that), nor need it exist: missing
// directories above it are skipped (whoever makes them, the caller with
// os.MkdirAll, owns them).
//
// The walk is OpenSSH's safe_path() (misc.c; sshd's StrictModes for
// authorized_keys), up to /: once over path's directories as written
// (lstat: the directory holding a symbolic link decides where it points)
// and once over the canonical path of the deepest existing one
// (filepath.EvalSymlinks, as OpenSSH's realpath(3)). The error is an
// *Error (AncestorOwner or AncestorWritable) naming the directory, its
// owner and its mode.
func CheckAncestors(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	me := os.Geteuid()
	check := func(dir string, fi fs.FileInfo) error {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		e := &Error{Path: dir, Below: abs, Mode: fi.Mode(), UID: int(st.Uid), Me: me}
		switch {
		case e.UID != 0 && e.UID != me:
			e.Problem = AncestorOwner
		case fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0:
			e.Problem = AncestorWritable
		default:
			return nil
		}
		return e
	}
	deepest := ""
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		case err != nil:
			return err
		default:
			if deepest == "" {
				deepest = dir
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				if err := check(dir, fi); err != nil {
					return err
				}
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if deepest == "" {
		return nil
	}
	real, err := filepath.EvalSymlinks(deepest)
	if err != nil {
		return err
	}
	for dir := real; ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if err := check(dir, fi); err != nil {
			return err
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
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
