package render

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/pkg/artifact"
)

// Generate, which writes each file as Stream makes it, writes what Write
// writes for Tree: the same files, the same modes, the same .rdggen list.
func TestGenerateEqualsWriteTree(t *testing.T) {
	for _, name := range []string{"reference", "minimal", "routed-pool"} {
		t.Run(name, func(t *testing.T) {
			inv := loadCase(t, name)
			dir := t.TempDir()
			streamed, whole := filepath.Join(dir, "streamed"), filepath.Join(dir, "whole")
			stats, err := Generate(context.Background(), streamed, inv)
			if err != nil {
				t.Fatal(err)
			}
			files := Tree(inv)
			if err := Write(context.Background(), whole, files); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ReadTree(t, whole), ReadTree(t, streamed)); diff != "" {
				t.Errorf("Generate's tree differs from Write(Tree) (-Write +Generate):\n%s", diff)
			}
			var paths []string
			var size int64
			for _, f := range files {
				paths = append(paths, f.Path)
				size += int64(len(f.Data))
				fi, err := os.Stat(filepath.Join(streamed, f.Path))
				if err != nil || fi.Mode().Perm() != f.Mode.Perm() {
					t.Errorf("%s: %v, mode %v, want %v", f.Path, err, fi.Mode(), f.Mode)
				}
			}
			if !slices.Equal(stats.Paths, paths) || stats.Bytes != size || stats.Files() != len(files) {
				t.Errorf("stats: %d paths, %d bytes; Tree has %d files, %d bytes", len(stats.Paths), stats.Bytes, len(files), size)
			}
			if got, want := stats.Summary(), Summary(files); got != want {
				t.Errorf("summary %q, want %q", got, want)
			}
		})
	}
}

// A loop over Stream may stop after any file: every generator's stream
// then stops too (a stream that yields again panics).
func TestStreamStopsEarly(t *testing.T) {
	inv := loadCase(t, "reference")
	all := slices.Collect(Stream(inv))
	for k := range len(all) + 1 {
		n := 0
		for range Stream(inv) {
			if n == k {
				break
			}
			n++
		}
		if n != min(k, len(all)) {
			t.Fatalf("stopped after %d files, want %d", n, k)
		}
	}
}

// WriteSeq refuses a file named like its list of files, and a sequence that
// fails halfway leaves nothing behind.
func TestWriteSeqRefusesMarkerPath(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	_, err := WriteSeq(context.Background(), dir, slices.Values([]artifact.File{{Path: "a", Data: []byte("a")}, {Path: Marker, Data: []byte("x")}}))
	if err == nil || !strings.Contains(err.Error(), "refusing artifact path") {
		t.Fatalf("got %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
