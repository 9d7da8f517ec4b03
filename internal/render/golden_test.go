package render

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Use go test ./... -update to rewrite the golden trees; review the diff like code.
var update = golden.Update

// GoldenDir holds one folder per case: inventory.yaml and out/, the whole
// expected output tree.
const GoldenDir = "../../testdata/golden"

// loadCase loads a case's inventory. The reference case is the embedded
// inventory (its inventory.yaml is a copy kept equal to it), loaded under the
// same name the CLI uses so that its tree equals `rdggen -o out`.
func loadCase(t *testing.T, name string) *inventory.Inventory {
	t.Helper()
	path := filepath.Join(GoldenDir, name, "inventory.yaml")
	if name == "reference" {
		if *update {
			if err := os.WriteFile(path, inventory.ReferenceYAML, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(src, inventory.ReferenceYAML) {
			t.Fatalf("%s differs from the embedded reference; run go test -update", path)
		}
		return inventory.Reference()
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load("inventory.yaml", src)
	if err != nil {
		t.Fatalf("%s:\n%v", path, err)
	}
	return inv
}

// ReadTree reads every regular file under dir as slash paths → content.
func ReadTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func asMap(files []artifact.File) map[string]string {
	m := map[string]string{}
	for _, f := range files {
		m[f.Path] = string(f.Data)
	}
	return m
}

func TestGolden(t *testing.T) {
	entries, err := os.ReadDir(GoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		// cli/ holds the command line's JSON documents (cmd/rdggen's
		// tests), scripts/ the composed remote scripts (internal/engines/hostapply's
		// and internal/engines/workerapply's): not inventory cases.
		if e.IsDir() && e.Name() != "cli" && e.Name() != "scripts" {
			cases = append(cases, e.Name())
		}
	}
	sort.Strings(cases)
	if len(cases) < 3 {
		t.Fatalf("want at least the reference, minimal and a100-host cases, have %v", cases)
	}
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			inv := loadCase(t, name)
			files := Tree(inv)
			out := filepath.Join(GoldenDir, name, "out")
			if *update {
				if err := os.RemoveAll(out); err != nil {
					t.Fatal(err)
				}
				if err := Write(context.Background(), out, files); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(filepath.Join(out, Marker)); err != nil {
					t.Fatal(err)
				}
			}
			want := ReadTree(t, out)
			if diff := cmp.Diff(want, asMap(files)); diff != "" {
				t.Errorf("%s: generated tree differs from %s (-want +got); if intended, run go test ./... -update and review the diff:\n%s", name, out, diff)
			}
			// Generation is a pure function: a second run gives the same bytes.
			if diff := cmp.Diff(asMap(files), asMap(Tree(inv))); diff != "" {
				t.Errorf("second generation differs:\n%s", diff)
			}
		})
	}
}
