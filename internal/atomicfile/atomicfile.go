// Package atomicfile writes one file without writing through anything
// already at its name: Create (and New, for a file written as it goes)
// makes a new file and never opens an existing one; Replace puts a new file
// in place of whatever is there by rename(2). All set the mode exactly (not
// masked by the umask). It is rdggen's one way to write a file: the output
// tree (internal/render) and the worker keys Create theirs, the switch
// backups and the lab's files are Created (the lab's log with New), and
// apply's record of the VMs, the lab's lab.pid and lab.json, and the
// pictures and raw outputs of `rdggen bench` (--svg, --save) are Replaced.
// Whether a directory is one to write into is internal/ownfs's question.
package atomicfile

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// New creates p for writing with exactly mode and returns it. It never
// opens an existing file: O_CREAT|O_EXCL fails on any name already taken,
// a symbolic link included, even one that points nowhere (open(2)), with an
// error that wraps fs.ErrExist; O_NOFOLLOW says the same to a reader of
// this code.
func New(p string, mode fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil { // the umask took bits away
		f.Close()
		_ = os.Remove(p)
		return nil, err
	}
	return f, nil
}

// Create creates p with exactly mode and data (New). A file it created but
// could not fill is removed.
func Create(p string, data []byte, mode fs.FileMode) error {
	w, err := New(p, mode)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(p)
	}
	return err
}

// Replace writes data to path with exactly mode, never writing through
// what is at path: the bytes go to a new file in path's directory,
// ".NAME.tmp-PID-RANDOM" made by Create (so never an existing file, nor
// the target of a link planted under that name, and never the name another
// writer of path uses at the same time), which is then renamed over path.
// rename(2) replaces the name: a symbolic link at path is replaced, not
// followed, and a file hard-linked there keeps its bytes. A reader sees the
// old file or the new one, never part of one. path's directory must exist;
// a directory at path is an error. On an error path is as it was and the
// temporary file is gone.
func Replace(path string, data []byte, mode fs.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if len(base) > 64 { // the temporary name stays within NAME_MAX (255 bytes)
		base = base[:64]
	}
	for n := 0; ; n++ {
		tmp := filepath.Join(dir, "."+base+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(rand.Uint64(), 36))
		err := Create(tmp, data, mode)
		if errors.Is(err, fs.ErrExist) && n < 16 { // someone took the name: another one
			continue
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		return nil
	}
}
