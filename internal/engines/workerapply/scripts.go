package workerapply

import (
	"embed"

	"github.com/rdggen/rdggen/internal/transport/remote"
)

// The workers engine's scripts (remote.ShellFiles), composed for the
// reference cluster's first host in testdata/golden/scripts/workers.
//
//go:embed scripts/*.sh
var workerScripts embed.FS

// script is scripts/name.
func script(name string) string { return remote.ShellFiles{FS: workerScripts}.Get(name) }

// Scripts are the embedded shell files by name, for the tests.
func Scripts() map[string]string { return remote.ShellFiles{FS: workerScripts}.All() }
