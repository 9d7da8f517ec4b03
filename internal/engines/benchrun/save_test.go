package benchrun

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSaveFollowsNoLink: --save DIR with a symbolic link planted under the
// name of a raw output replaces the link by the output and leaves the
// linked file as it was.
func TestSaveFollowsNoLink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	name := "all_reduce_perf.txt"
	if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r := &runner{o: Options{Save: dir}, out: &out}
	r.save(name, "# nThread 1 nGpus 1\n")
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("written through the link: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(dir, name))
	if b, _ := os.ReadFile(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() || string(b) != "# nThread 1 nGpus 1\n" || out.Len() != 0 {
		t.Errorf("%v %v %q; printed %q", fi.Mode(), err, b, out.String())
	}
}
