package hostapply

import (
	"embed"

	"github.com/rdggen/rdggen/internal/transport/remote"
)

// shellFiles are the hosts engine's scripts (remote.ShellFiles); their
// composed forms for the reference cluster's first host are under
// testdata/golden/scripts/hosts.
//
//go:embed scripts/*.sh
var scriptFS embed.FS

var shellFiles = remote.ShellFiles{FS: scriptFS}

func script(name string) string { return shellFiles.Get(name) }

// Scripts are the embedded shell files by name (for the tests).
func Scripts() map[string]string { return shellFiles.All() }
