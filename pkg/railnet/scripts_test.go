package railnet

import (
	"testing"

	"github.com/rdggen/rdggen/internal/transport/remote"
	"github.com/rdggen/rdggen/internal/transport/remote/scripttest"
)

// composedScripts are the rails' scripts for twoRails:
//   - rails.sh: Script, to run by hand (the output tree's file);
//   - apply.sh: Vars and Fragment in a round trip of the hosts engine
//     (internal/transport/remote, a fixed nonce), rails_apply as one step.
func composedScripts(t *testing.T) map[string]string {
	g, err := New(twoRails())
	if err != nil {
		t.Fatal(err)
	}
	w := remote.NewScriptNonce("", scripttest.Nonce)
	for _, v := range g.Vars() {
		w.Set(v.Name, v.Value)
	}
	w.Text(Fragment())
	w.Line("step rails rails_apply")
	return map[string]string{"rails.sh": string(g.Script()), "apply.sh": string(w.End())}
}

// TestScripts: the embedded file parses as POSIX sh and is shellcheck
// clean; so are the composed scripts, which equal their golden copies
// under testdata/golden/scripts/rails.
func TestScripts(t *testing.T) {
	scripttest.Check(t, scripttest.Fragment, Scripts())
	composed := composedScripts(t)
	scripttest.Golden(t, "../..", "rails", composed)
	scripttest.Check(t, scripttest.Composed, composed)
}
