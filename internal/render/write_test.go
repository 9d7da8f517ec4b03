package render

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/pkg/artifact"
)

func TestWriteReplacesOnlyItsOwnOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	v1 := []artifact.File{{Path: "a/one.txt", Mode: 0o644, Data: []byte("1\n")}, {Path: "run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\n")}}
	if err := Write(context.Background(), dir, v1); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("run.sh mode: %v %v", fi.Mode(), err)
	}
	// A second write replaces the tree as a whole: stale files disappear.
	v2 := []artifact.File{{Path: "b/two.txt", Mode: 0o644, Data: []byte("2\n")}}
	if err := Write(context.Background(), dir, v2); err != nil {
		t.Fatal(err)
	}
	got := ReadTree(t, dir)
	if len(got) != 2 || got["b/two.txt"] != "2\n" || got[Marker] == "" {
		t.Errorf("tree after rewrite: %v", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("temporary directories left beside the output: %v", entries)
	}
}

func TestWriteRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Write(context.Background(), dir, []artifact.File{{Path: "x", Data: []byte("x")}})
	if err == nil || !strings.Contains(err.Error(), "was not written by rdggen") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "thesis.tex")); string(b) != "precious" {
		t.Error("foreign file touched")
	}
}

func TestWriteLeavesNoPartialTree(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	bad := []artifact.File{{Path: "ok.txt", Data: []byte("ok")}, {Path: "../escape", Data: []byte("x")}}
	if err := Write(context.Background(), dir, bad); err == nil {
		t.Fatal("a path escaping the tree was accepted")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	// With a previous tree in place, a failed write keeps it intact.
	if err := Write(context.Background(), dir, []artifact.File{{Path: "keep.txt", Data: []byte("keep")}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), dir, bad); err == nil {
		t.Fatal("accepted")
	}
	if got := ReadTree(t, dir); got["keep.txt"] != "keep" || len(got) != 2 {
		t.Errorf("previous tree damaged: %v", got)
	}
}

func TestWriteRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	if err := os.Symlink(dir, link); err != nil {
		t.Skip(err)
	}
	err := Write(context.Background(), link, []artifact.File{{Path: "x", Data: []byte("x")}})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("got %v", err)
	}
}

// A file a user put into rdggen's output directory is never deleted: the
// next write refuses and names it (the marker lists what rdggen wrote).
func TestWriteKeepsUserFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	v1 := []artifact.File{{Path: "hosts/a/routes.sh", Mode: 0o755, Data: []byte("#!/bin/sh\n")}}
	if err := Write(context.Background(), dir, v1); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"cluster.yaml", "hosts/a/notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := Write(context.Background(), dir, v1)
	if err == nil || !strings.Contains(err.Error(), "holds files rdggen did not write (cluster.yaml, hosts/a/notes.txt), and rdggen replaces the directory as a whole") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cluster.yaml")); string(b) != "mine" {
		t.Error("the user's file was touched")
	}
	// A marker of an earlier rdggen (no list): files of rdggen's layout are
	// its own, others are not.
	if err := os.Remove(filepath.Join(dir, "hosts/a/notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Marker), []byte("This directory is written by rdggen and replaced as a whole on every run.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), dir, v1); err == nil || !strings.Contains(err.Error(), "(cluster.yaml)") {
		t.Fatalf("old marker: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "cluster.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), dir, v1); err != nil {
		t.Fatalf("old marker, only rdggen's files: %v", err)
	}
}

// A cancelled write (Ctrl-C, SIGTERM) leaves the previous tree and no
// temporary directory; one that a killed run left behind is removed by the
// next run, one of a live process is not.
func TestWriteCancelAndStaleTemporaries(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	if err := Write(context.Background(), dir, []artifact.File{{Path: "keep.txt", Data: []byte("keep")}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Write(ctx, dir, []artifact.File{{Path: "new.txt", Data: []byte("new")}}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled write: %v", err)
	}
	if got := ReadTree(t, dir); got["keep.txt"] != "keep" {
		t.Errorf("previous tree: %v", got)
	}
	dead := filepath.Join(parent, ".out.tmp-999999999-123")
	live := filepath.Join(parent, fmt.Sprintf(".out.tmp-%d-456", os.Getppid()))
	for _, d := range []string{dead, dead + ".old", live} {
		if err := os.MkdirAll(filepath.Join(d, "hosts"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(context.Background(), dir, []artifact.File{{Path: "new.txt", Data: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != filepath.Base(live)+" out" {
		t.Errorf("beside the output: %v", names)
	}
}

// A named pipe at an output directory's .rdggen is not waited on: the
// write refuses the directory at once, saying what the marker is, and
// leaves it as it was.
func TestWriteMarkerNotAPipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := Write(context.Background(), dir, []artifact.File{{Path: "keep.txt", Data: []byte("keep")}}); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, Marker)
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(marker, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Write(context.Background(), dir, []artifact.File{{Path: "x", Data: []byte("x")}}) }()
	select {
	case err := <-done:
		if want := dir + " exists and is not empty, and its .rdggen is not rdggen's list of its files (" + marker + " is not a regular file (a named pipe)); choose another output directory"; err == nil || err.Error() != want {
			t.Errorf("%v, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Write waits on a named pipe at the marker")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("the directory changed: %q %v", b, err)
	}
}
