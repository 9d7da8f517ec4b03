package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestReplaceFollowsNoLink: Replace replaces a symbolic link planted
// at its path (to another file, or to nowhere), and a hard link, without
// writing through them; it replaces its own earlier file; the mode is
// exact; nothing temporary is left.
func TestReplaceFollowsNoLink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(elsewhere, "created-through-a-link")
	for name, plant := range map[string]func(p string) error{
		"link":     func(p string) error { return os.Symlink(victim, p) },
		"dangling": func(p string) error { return os.Symlink(nowhere, p) },
		"hardlink": func(p string) error { return os.Link(victim, p) },
		"own":      func(p string) error { return os.WriteFile(p, []byte("old"), 0o600) },
		"none":     func(string) error { return nil },
	} {
		p := filepath.Join(dir, name+".svg")
		if err := plant(p); err != nil {
			t.Fatal(err)
		}
		if err := Replace(p, []byte("<svg/>\n"), 0o644); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fi, err := os.Lstat(p)
		if b, _ := os.ReadFile(p); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 || string(b) != "<svg/>\n" {
			t.Errorf("%s: %v %v %q", name, fi.Mode(), err, b)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("written through a link: the victim holds %q", b)
	}
	if _, err := os.Lstat(nowhere); err == nil {
		t.Error("a dangling link's target was created")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 5 {
		t.Errorf("left in the directory: %v", entries)
	}
	// a directory at the name: an error, and no temporary file left
	if err := os.Mkdir(filepath.Join(dir, "d.svg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Replace(filepath.Join(dir, "d.svg"), []byte("x"), 0o644); err == nil {
		t.Error("a directory was replaced")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 6 {
		t.Errorf("left in the directory: %v", entries)
	}
}

// TestCreateOpensNothingExisting: Create refuses a name that is taken, by a
// file or a link to one (which keeps its bytes), and sets the mode
// exactly, whatever the umask.
func TestCreateOpensNothingExisting(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "nowhere")
	if err := os.Symlink(nowhere, filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"victim", "link", "dangling"} {
		if err := Create(filepath.Join(dir, name), []byte("x"), 0o644); !errors.Is(err, fs.ErrExist) {
			t.Errorf("Create %s: %v", name, err)
		}
		if f, err := New(filepath.Join(dir, name), 0o600); !errors.Is(err, fs.ErrExist) {
			t.Errorf("New %s: %v", name, err)
			f.Close()
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("victim %q", b)
	}
	if _, err := os.Lstat(nowhere); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dangling link's target was created: %v", err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	f, err := New(filepath.Join(dir, "serve.log"), 0o640)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("New under umask 077: mode %v %v", fi.Mode(), err)
	}
	p := filepath.Join(dir, "run.sh")
	if err := Create(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v %v", fi.Mode(), err)
	}
}

// TestReplaceConcurrent: writers that Replace one name at the same time
// (two lab processes writing lab.pid, two applies saving their record) do
// not collide: every Replace succeeds, the file is one writer's whole
// bytes, and no temporary file is left.
func TestReplaceConcurrent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "lab.json")
	var wg sync.WaitGroup
	errs := make(chan error, 16*20)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := []byte(strings.Repeat(string(rune('a'+w)), 64<<10))
			for range 20 {
				errs <- Replace(p, data, 0o600)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) != 64<<10 || strings.Count(string(b), string(b[:1])) != len(b) {
		t.Errorf("the file is not one writer's whole bytes (%d bytes, %v)", len(b), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left in the directory: %v", entries)
	}
}
