package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// versionText is rdggen's version from the build information: the module
// version (or "(devel)" for a build from a checkout), the VCS revision and
// time when the build recorded them, and the Go version.
func versionText() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "rdggen (no build information)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rdggen %s", bi.Main.Version)
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, ", revision %s", rev)
		if settings["vcs.modified"] == "true" {
			b.WriteString(" with local changes")
		}
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
	}
	fmt.Fprintf(&b, ", %s %s/%s", bi.GoVersion, settings["GOOS"], settings["GOARCH"])
	return b.String()
}

const usageVersion = `Usage: rdggen version   (or rdggen --version)

Prints rdggen's version: the module version, the VCS revision and the Go version
it was built with.
`

func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", usageVersion, stdout, stderr)
	if code, ok := parse(fs, args, stdout); !ok {
		return code
	}
	fmt.Fprintln(stdout, versionText())
	return exitOK
}
