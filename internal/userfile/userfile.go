// Package userfile reads the files a user names to rdggen (a flag's, an
// environment variable's, the inventory's -f) without ever waiting on one
// that is not a file: the open never blocks, what was opened is checked on
// the handle itself, only a regular file is read (a pipe only where a
// stream is a legitimate input, and then every wait ends with the caller's
// context), and no more than a bound is read.
//
// The open is O_RDONLY|O_NONBLOCK: opening a named pipe that no one writes,
// or a device, returns at once instead of waiting for a writer or a
// carrier (open(2), O_NONBLOCK; fifo(7)). The file type is then taken from
// fstat(2) of the open handle, so what is read is what was checked, not
// what a path pointed to a moment before.
package userfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Limit is the bound for the small files rdggen is given by name (CA
// certificates, known_hosts, private keys): 64 MiB, far above any real
// one (the bundle of every public root CA is about 220 KB, a known_hosts
// line 100 to 800 bytes, a private key a few KB), so that only a wrong file
// (a disk image, a log) meets it.
const Limit = 64 << 20

// Error is a file refused by Open, Read or OpenStream: not of a kind they
// read, or larger than their bound.
type Error struct {
	// Path is the path as given.
	Path string
	// Mode is the type and permission bits fstat (or stat) found.
	Mode fs.FileMode
	// Pipe says a pipe was accepted too (OpenStream), for the message.
	Pipe bool
	// Max, when not 0, is the bound the file is larger than (bytes).
	Max int64
}

// Error says what is wrong in one clause, e.g. "/x is not a regular file
// (a named pipe)"; callers add which flag or variable named the file.
func (e *Error) Error() string {
	if e.Max > 0 {
		return fmt.Sprintf("%s is larger than %s, the most rdggen reads of such a file", e.Path, sizeText(e.Max))
	}
	want := "a regular file"
	if e.Pipe {
		want = "a regular file or a pipe"
	}
	return fmt.Sprintf("%s is not %s (%s)", e.Path, want, Kind(e.Mode))
}

// sizeText is n bytes as "4 MiB" (whole MiB) or "N bytes".
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kind names a file type for a message: "a named pipe", "a socket", "a
// device", "a directory", "a symbolic link", else "mode " and the mode.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}

// Handle opens path read-only without blocking (O_NONBLOCK, plus flags
// such as syscall.O_NOFOLLOW) and returns it when check accepts what fstat
// found on the open handle; check's error is returned, the handle closed.
// It is the one open of Open, OpenStream and internal/ownfs's Open, each
// with its own check. A socket, which open(2) refuses with ENXIO, is an
// *Error naming it.
func Handle(path string, flags int, check func(fs.FileInfo) error) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if errors.Is(err, syscall.ENXIO) {
		if fi, serr := os.Stat(path); serr == nil && fi.Mode()&fs.ModeSocket != 0 {
			return nil, &Error{Path: path, Mode: fi.Mode()}
		}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Open opens the regular file at path for reading (Handle), following
// symbolic links as any reader of a user's file does. Anything but a
// regular file, or one larger than max bytes (as fstat gives its size), is
// refused with an *Error; a missing file is an error wrapping
// fs.ErrNotExist.
func Open(path string, max int64) (*os.File, error) {
	return Handle(path, 0, func(fi fs.FileInfo) error { return regular(path, fi, max) })
}

// regular refuses what fi says is not a regular file, or is larger than
// max.
func regular(path string, fi fs.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &Error{Path: path, Mode: fi.Mode()}
	}
	if fi.Size() > max {
		return &Error{Path: path, Mode: fi.Mode(), Max: max}
	}
	return nil
}

// Read reads the regular file at path whole (Open): at most max bytes; a
// larger file is an *Error, also one that grows past max while it is read.
func Read(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, path, max)
}

// ReadAll reads f (named path in errors) to its end, at most max bytes: an
// *Error when there is more.
func ReadAll(f io.Reader, path string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &Error{Path: path, Max: max}
	}
	return b, nil
}

// OpenStream opens path for reading as Open does, and accepts a pipe too:
// a named pipe (mkfifo), or /dev/stdin and /dev/fd/N on one (a shell's
// `cmd |` and `<(cmd)`), where a stream is a legitimate input. A device, a
// directory or a socket is an *Error. Nothing waits beyond ctx: a read of
// the pipe waits for a writer to open it (as a blocking open would) and
// for its data, and both waits end when ctx ends, with ctx's error. The
// caller bounds how much it reads.
func OpenStream(ctx context.Context, path string) (io.ReadCloser, error) {
	var mode fs.FileMode
	f, err := Handle(path, 0, func(fi fs.FileInfo) error {
		if mode = fi.Mode(); !mode.IsRegular() && mode&fs.ModeNamedPipe == 0 {
			return &Error{Path: path, Mode: mode, Pipe: true}
		}
		return nil
	})
	if err != nil || mode.IsRegular() {
		return f, err // a regular file's reads never wait
	}
	p := &pipe{f: f, ctx: ctx}
	p.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return p, nil
}

// pipe reads a pipe opened without blocking, until ctx ends.
type pipe struct {
	f    *os.File
	ctx  context.Context
	stop func() bool
	// writer is true once a writer has been seen (or the pipe had data).
	writer bool
}

// Read waits, the first time, for a writer (a named pipe opened with
// O_NONBLOCK reads as empty until one opens it: fifo(7)), then reads.
func (p *pipe) Read(b []byte) (int, error) {
	if !p.writer {
		if err := p.waitWriter(); err != nil {
			return 0, p.ended(err)
		}
		p.writer = true
	}
	n, err := p.f.Read(b)
	return n, p.ended(err)
}

// waitWriter returns when the pipe has data or a writer has come and gone
// (poll(2) reports POLLIN or POLLHUP; a named pipe no writer has opened yet
// reports neither), the wait parked in the runtime's poller, where a read
// deadline (ctx's end) ends it.
func (p *pipe) waitWriter() error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				perr = err
				return true
			}
			return n > 0
		}
	})
	if err != nil {
		return err
	}
	return perr
}

// ended turns the deadline that ctx's end set into ctx's error.
func (p *pipe) ended(err error) error {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && p.ctx.Err() != nil {
		return fmt.Errorf("reading %s: %w", p.f.Name(), p.ctx.Err())
	}
	return err
}

func (p *pipe) Close() error {
	p.stop()
	return p.f.Close()
}
