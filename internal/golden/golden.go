// Package golden compares test output with the files under testdata/golden,
// and rewrites them under `go test ./... -update` (review that diff like
// code). Every test package imports it, so that the -update flag, which
// `go test ./...` passes to all of them, is defined in each.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Update is the -update flag: rewrite the golden files instead of
// comparing with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/golden from the code")

// Check compares got with the file at path; with -update it writes got
// there instead (creating the directory).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
