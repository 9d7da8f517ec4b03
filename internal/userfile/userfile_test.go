package userfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails the test when it has not returned after 10 s (a
// hang fails rather than blocks the test binary).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
		panic("unreachable")
	}
}

// readWithin reads r to its end within 10 s: what it read, and "; " and
// the error if there was one.
func readWithin(t *testing.T, what string, r io.Reader) string {
	t.Helper()
	return within(t, what, func() string {
		b, err := io.ReadAll(r)
		if err != nil {
			return string(b) + "; " + err.Error()
		}
		return string(b)
	})
}

// fifo makes a named pipe in a temporary directory.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Read reads a regular file (through a symbolic link too) and refuses,
// at once, a named pipe nobody writes, a directory, a device, a socket and
// a file larger than its bound, each with a message naming the path and
// what it is; a missing file is fs.ErrNotExist.
func TestReadRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(good, []byte("cert\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.pem")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{good, link} {
		if b, err := Read(p, Limit); err != nil || string(b) != "cert\n" {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
	if _, err := Read(filepath.Join(dir, "absent"), Limit); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 1<<20+1); err != nil {
		t.Fatal(err)
	}
	pipe := fifo(t)
	for path, want := range map[string]string{
		pipe:        pipe + " is not a regular file (a named pipe)",
		dir:         dir + " is not a regular file (a directory)",
		"/dev/null": "/dev/null is not a regular file (a device)",
		sock:        sock + " is not a regular file (a socket)",
		big:         big + " is larger than 1 MiB, the most rdggen reads of such a file",
	} {
		err := within(t, path, func() error { _, err := Read(path, 1<<20); return err })
		var e *Error
		if !errors.As(err, &e) || err.Error() != want {
			t.Errorf("%s: %v, want %q", filepath.Base(path), err, want)
		}
	}
}

// ReadAll stops at the bound: a stream longer than max is an *Error, read
// no further than max+1 bytes.
func TestReadAllBound(t *testing.T) {
	r := &countingZero{}
	_, err := ReadAll(r, "/dev/zero", 4096)
	var e *Error
	if !errors.As(err, &e) || e.Max != 4096 || r.n > 4097+512 {
		t.Errorf("%v after %d bytes", err, r.n)
	}
	if b, err := ReadAll(strings.NewReader("abc"), "x", 3); err != nil || string(b) != "abc" {
		t.Errorf("at the bound: %q %v", b, err)
	}
}

type countingZero struct{ n int }

func (z *countingZero) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

// OpenStream reads a named pipe whose writer comes later, as a blocking
// open would; one whose writer opens and closes it at once is empty;
// /dev/fd/N on an anonymous pipe (a shell's `<(cmd)`, /dev/stdin on a
// pipe) is read; a device is refused.
func TestOpenStreamReadsPipes(t *testing.T) {
	ctx := context.Background()
	p := fifo(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		fmt.Fprint(w, "name: late\n")
		time.Sleep(100 * time.Millisecond)
		fmt.Fprint(w, "hosts: []\n")
		w.Close()
	}()
	// streamed is what OpenStream reads of path, within 10 s.
	streamed := func(what, path string) string {
		r, err := OpenStream(ctx, path)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer r.Close()
		return readWithin(t, what, r)
	}
	if got := streamed("late writer", p); got != "name: late\nhosts: []\n" {
		t.Errorf("late writer: %q", got)
	}

	p2 := fifo(t)
	go func() {
		time.Sleep(200 * time.Millisecond)
		if w, err := os.OpenFile(p2, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	}()
	if got := streamed("writer that writes nothing", p2); got != "" {
		t.Errorf("writer that writes nothing: %s", got)
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	fmt.Fprint(pw, "from a pipe\n")
	pw.Close()
	if got := streamed("anonymous pipe", fmt.Sprintf("/dev/fd/%d", pr.Fd())); got != "from a pipe\n" {
		t.Errorf("anonymous pipe: %s", got)
	}

	var e *Error
	if _, err := OpenStream(ctx, "/dev/null"); !errors.As(err, &e) || err.Error() != "/dev/null is not a regular file or a pipe (a device)" {
		t.Errorf("device: %v", err)
	}
}

// A named pipe that no one writes holds OpenStream's reader only until
// ctx ends: the read then returns ctx's error.
func TestOpenStreamEndsWithContext(t *testing.T) {
	p := fifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	err := within(t, "unwritten pipe", func() error {
		r, err := OpenStream(ctx, p)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.ReadAll(r)
		return err
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "reading "+p) {
		t.Errorf("%v, want context.Canceled", err)
	}
	// The same once a writer is there and sends nothing.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	r, err := OpenStream(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fmt.Fprint(w, "partial")
	time.AfterFunc(200*time.Millisecond, cancel)
	if got := readWithin(t, "silent writer", r); got != "partial; reading "+p+": context canceled" {
		t.Errorf("silent writer: %s", got)
	}
}
