package remote

import (
	"testing"

	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
)

// TestScripts parses the embedded prelude and temp helpers as POSIX sh and
// runs shellcheck on them.
func TestScripts(t *testing.T) {
	s := Scripts()
	if len(s) != 2 {
		t.Fatalf("%d embedded scripts, want prelude.sh and temp.sh", len(s))
	}
	scripttest.Check(t, scripttest.Fragment, s)
}
