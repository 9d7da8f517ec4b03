package backup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two backups in the same second get two files, both mode 0600; the
// directory is made mode 0700.
func TestWriteNeverOverwrites(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bk")
	now := time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)
	a, err := Write(dir, "sw1", ".cfg", now, []byte("one\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(dir, "sw1", ".cfg", now, []byte("two\n"))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(a) != "sw1-20261203T140000Z.cfg" || filepath.Base(b) != "sw1-20261203T140000Z-1.cfg" {
		t.Errorf("paths %s, %s", a, b)
	}
	for path, want := range map[string]string{a: "one\n", b: "two\n"} {
		fi, err := os.Stat(path)
		got, _ := os.ReadFile(path)
		if err != nil || fi.Mode().Perm() != 0o600 || string(got) != want {
			t.Errorf("%s: %v %v %q", path, err, fi.Mode(), got)
		}
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dir: %v %v", err, fi.Mode())
	}
}

// A symbolic link, a file, or a directory others can write is refused,
// and nothing is written.
func TestCheckDirRefuses(t *testing.T) {
	root := t.TempDir()
	open := filepath.Join(root, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]string{open: "writable by its group or others", link: "symbolic link", file: "not a directory"} {
		_, err := Write(dir, "sw1", ".cfg", time.Now(), []byte("x"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
	}
	if names, _ := filepath.Glob(filepath.Join(open, "*")); len(names) != 0 {
		t.Errorf("written into a refused directory: %v", names)
	}
}
