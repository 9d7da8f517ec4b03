package hostapply

import (
	"embed"
	"path"
)

// The shell this engine sends lives in scripts/, one file per part, each
// headed by what it does and the variables Go sets before it (quoted with
// remote.Assign; no inventory text is ever spliced into a script's body).
// testdata/golden/scripts/hosts holds the composed scripts for the
// reference cluster's first host.
//
//go:embed scripts/*.sh
var scriptFS embed.FS

// script is the embedded file scripts/name.
func script(name string) string {
	b, err := scriptFS.ReadFile(path.Join("scripts", name))
	if err != nil {
		panic(err) // a file the build embeds: a programming error
	}
	return string(b)
}

// Scripts are the embedded shell files by name, for the tests that parse
// them and run shellcheck on them.
func Scripts() map[string]string {
	m := map[string]string{}
	ents, _ := scriptFS.ReadDir("scripts")
	for _, e := range ents {
		m[e.Name()] = script(e.Name())
	}
	return m
}
