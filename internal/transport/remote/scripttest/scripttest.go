// Package scripttest checks the shell scripts the engines send to machines
// (internal/transport/remote): each parses as POSIX sh with mvdan.cc/sh and is
// shellcheck clean as `sh` (Debian's shellcheck package; under CI=true a
// missing shellcheck is a failure, otherwise the check is skipped with the
// reason), and each composed script equals its golden copy under
// testdata/golden/scripts (go test -update rewrites them).
package scripttest

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/rdggen/rdggen/internal/golden"
)

// Nonce is the framing nonce of the golden copies (remote.NewScriptNonce).
const Nonce = "0123456789abcdef"

// Kind says how a script is checked.
type Kind int

const (
	// Composed is a whole script as sent: every shellcheck finding counts.
	Composed Kind = iota
	// Fragment is an embedded file on its own: the variables Go sets before
	// it (SC2154, "referenced but not assigned") are in the composed script,
	// which is checked whole.
	Fragment
)

// Check parses every script (name → text) and runs shellcheck -s sh on all
// of them at once.
func Check(t *testing.T, kind Kind, scripts map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, name := range slices.Sorted(maps.Keys(scripts)) {
		src := scripts[name]
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(src), name); err != nil {
			t.Errorf("%s does not parse as POSIX sh: %v", name, err)
		}
		p := filepath.Join(dir, strings.ReplaceAll(name, "/", "_"))
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shellcheck is not installed (Debian: apt-get install shellcheck): %v", err)
		}
		t.Skipf("shellcheck is not installed (Debian: apt-get install shellcheck); the scripts were parsed only: %v", err)
	}
	args := []string{"-s", "sh", "-f", "gcc"}
	if kind == Fragment {
		args = append(args, "-e", "SC2154")
	}
	out, err := exec.Command(sc, append(args, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("shellcheck -s sh: %v\n%s", err, strings.ReplaceAll(string(out), dir+"/", ""))
	}
}

// Golden compares each composed script with
// testdata/golden/scripts/<target>/<name> (root is the path from the test's
// package to the repository).
func Golden(t *testing.T, root, target string, scripts map[string]string) {
	t.Helper()
	for name, src := range scripts {
		golden.Check(t, filepath.Join(root, "testdata/golden/scripts", target, name), []byte(src))
	}
}
