package workerapply

import (
	"embed"

	"github.com/rdggen/rdggen/internal/remote"
)

// The shell this engine sends lives in scripts/, one file per part, each
// headed by what it does and the variables Go sets before it (quoted with
// remote.Assign; no inventory text is ever spliced into a script's body).
// testdata/golden/scripts/workers holds the composed scripts for the
// reference cluster's first host.
//
//go:embed scripts/*.sh
var scriptFS embed.FS

var shellFiles = remote.ShellFiles{FS: scriptFS}

// script is the embedded file scripts/name.
func script(name string) string { return shellFiles.Get(name) }

// Scripts are the embedded shell files by name, for the tests that parse
// them and run shellcheck on them.
func Scripts() map[string]string { return shellFiles.All() }
