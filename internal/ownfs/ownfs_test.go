package ownfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// problem is err's Problem (0: nil or not an *Error).
func problem(err error) Problem {
	var e *Error
	if errors.As(err, &e) {
		return e.Problem
	}
	return 0
}

// foreignOwner chowns path to nobody (65534), or skips where the test cannot
// (not root), failing instead under CI=true.
func foreignOwner(t *testing.T, path string) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Error("CI: a file of another user needs root (chown)")
		}
		return false
	}
	if err := os.Lchown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	return true
}

// CheckDir: a missing directory is fine; a symbolic link, a file, a
// directory of another user or one its group or others can write is
// refused, each with its message.
func TestCheckDir(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode fs.FileMode) string {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o700)
	readable := mk("readable", 0o755)
	open := mk("open", 0o777)
	group := mk("group", 0o770)
	sticky := mk("sticky", fs.ModeSticky|0o777) // os.Chmod sets S_ISVTX from fs.ModeSticky, not from 0o1000
	link := filepath.Join(root, "link")
	if err := os.Symlink(own, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		p    Problem
		text string
	}{
		own:                           {0, ""},
		readable:                      {0, ""},
		filepath.Join(root, "absent"): {0, ""},
		open:                          {Writable, open + " is writable by its group or others (mode 0777)"},
		group:                         {Writable, group + " is writable by its group or others (mode 0770)"},
		sticky:                        {Writable, sticky + " is writable by its group or others (mode 0777)"},
		link:                          {Symlink, link + " is a symbolic link"},
		file:                          {NotDir, file + " is not a directory"},
	}
	theirs := mk("theirs", 0o700)
	if foreignOwner(t, theirs) {
		cases[theirs] = struct {
			p    Problem
			text string
		}{NotOwner, theirs + " belongs to uid 65534, not to the user running rdggen (uid 0)"}
	}
	for path, want := range cases {
		err := CheckDir(path)
		if problem(err) != want.p || (err != nil) != (want.p != 0) || (err != nil && err.Error() != want.text) {
			t.Errorf("%s: %v, want %q", filepath.Base(path), err, want.text)
		}
	}
}

// Open reads a regular file of the user's own and refuses, without
// blocking and without reading through it, a named pipe, a symbolic link
// (to a good file too), a directory, a socket, a file others can write and
// a file of another user; a missing file is fs.ErrNotExist.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "mine\n" {
		t.Errorf("read %q", b)
	}
	if _, err := Open(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o666); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := map[string]Problem{fifo: NotRegular, link: Symlink, dir: NotRegular, open: Writable, sock: NotRegular}
	theirs := filepath.Join(dir, "theirs")
	if err := os.WriteFile(theirs, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if foreignOwner(t, theirs) {
		cases[theirs] = NotOwner
	}
	for path, want := range cases {
		done := make(chan error, 1)
		go func() {
			f, err := Open(path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if problem(err) != want {
				t.Errorf("%s: %v, want problem %d", filepath.Base(path), err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Open blocks", filepath.Base(path))
		}
	}
	var e *Error
	if _, err := Open(fifo); !errors.As(err, &e) || e.Error() != fifo+" is not a regular file (a named pipe)" {
		t.Errorf("fifo: %v", err)
	}
}

// CheckAncestors refuses a path below a directory another user could
// rename it out of: one its group or others can write without the sticky
// bit, or one of another user (even sticky: its owner renames what it
// holds); a sticky directory of the user's own, directories of mode 0755
// and missing directories are fine. A symbolic link is judged by the
// directory holding it and by where it points. The path itself is not
// judged.
func TestCheckAncestors(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode fs.FileMode) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := mk("own", 0o755)
	open := mk("open", 0o777)
	group := mk("group", 0o770)
	sticky := mk("sticky", 0o777|fs.ModeSticky)
	openLink := filepath.Join(own, "to-open") // a link of the user's own to an open directory
	if err := os.Symlink(open, openLink); err != nil {
		t.Fatal(err)
	}
	inOpen := filepath.Join(open, "to-own") // a link to an own directory, in an open one
	if err := os.Symlink(own, inOpen); err != nil {
		t.Fatal(err)
	}
	me := os.Geteuid()
	type want struct {
		p    Problem
		at   string
		text string
	}
	cases := map[string]want{
		filepath.Join(own, "lab"):                {},
		filepath.Join(own, "a", "b", "lab"):      {},
		filepath.Join(sticky, "lab"):             {},
		open:                                     {}, // the path itself is CheckDir's
		filepath.Join(open, "lab"):               {AncestorWritable, open, fmt.Sprintf("%s, above %s, is writable by its group or others and not sticky (mode 0777, owner uid %d)", open, filepath.Join(open, "lab"), me)},
		filepath.Join(group, "missing", "lab"):   {AncestorWritable, group, ""},
		filepath.Join(open, "own", "x", "lab"):   {AncestorWritable, open, ""},
		filepath.Join(openLink, "lab"):           {AncestorWritable, open, ""},
		filepath.Join(inOpen, "lab"):             {AncestorWritable, open, ""},
		filepath.Join(own, "..", "open", "lab"):  {AncestorWritable, open, ""},
		filepath.Join(sticky, "deeper", "lab"):   {},
		filepath.Join(own, "file-as-dir", "lab"): {},
	}
	if err := os.Mkdir(filepath.Join(open, "own"), 0o700); err != nil {
		t.Fatal(err)
	}
	theirs := mk("theirs", 0o755)
	theirsSticky := mk("theirs-sticky", 0o777|fs.ModeSticky)
	if foreignOwner(t, theirs) && foreignOwner(t, theirsSticky) {
		cases[filepath.Join(theirs, "lab")] = want{AncestorOwner, theirs, fmt.Sprintf("%s, above %s, belongs to uid 65534 (mode 0755), neither root nor the user running rdggen (uid 0)", theirs, filepath.Join(theirs, "lab"))}
		cases[filepath.Join(theirsSticky, "lab")] = want{AncestorOwner, theirsSticky, fmt.Sprintf("%s, above %s, belongs to uid 65534 (mode 1777), neither root nor the user running rdggen (uid 0)", theirsSticky, filepath.Join(theirsSticky, "lab"))}
	}
	for path, w := range cases {
		err := CheckAncestors(path)
		var e *Error
		errors.As(err, &e)
		switch {
		case w.p == 0 && err != nil:
			t.Errorf("%s: %v, want nil", path, err)
		case w.p != 0 && (e == nil || e.Problem != w.p || e.Path != w.at):
			t.Errorf("%s: %v, want problem %d at %s", path, err, w.p, w.at)
		case w.text != "" && err.Error() != w.text:
			t.Errorf("%s:\n got %s\nwant %s", path, err, w.text)
		}
	}
}
