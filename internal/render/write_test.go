package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/artifact"
)

func TestWriteReplacesOnlyItsOwnOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	v1 := []artifact.File{{Path: "a/one.txt", Mode: 0o644, Data: []byte("1\n")}, {Path: "run.sh", Mode: 0o755, Data: []byte("#!/bin/sh\n")}}
	if err := Write(dir, v1); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("run.sh mode: %v %v", fi.Mode(), err)
	}
	// A second write replaces the tree as a whole: stale files disappear.
	v2 := []artifact.File{{Path: "b/two.txt", Mode: 0o644, Data: []byte("2\n")}}
	if err := Write(dir, v2); err != nil {
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
	err := Write(dir, []artifact.File{{Path: "x", Data: []byte("x")}})
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
	if err := Write(dir, bad); err == nil {
		t.Fatal("a path escaping the tree was accepted")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	// With a previous tree in place, a failed write keeps it intact.
	if err := Write(dir, []artifact.File{{Path: "keep.txt", Data: []byte("keep")}}); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, bad); err == nil {
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
	err := Write(link, []artifact.File{{Path: "x", Data: []byte("x")}})
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Fatalf("got %v", err)
	}
}
