// Package artifact is the one shape every generator returns: a file of the
// output tree (docs/architecture.md#output-tree), its permission bits and its bytes.
package artifact

import (
	"io/fs"
	"sort"
)

// File is one generated artifact.
type File struct {
	// Path is slash-separated and relative to the output directory,
	// e.g. "switch/swx-mld-1-2.cfg" or "hosts/clx-mld-41/daemon.json".
	Path string
	// Mode is the permission of the written file: 0o644 for data, 0o755 for
	// scripts meant to be run.
	Mode fs.FileMode
	// Data is the complete content, LF line endings, ending in a newline.
	Data []byte
}

// Sort orders files by path so that trees compare and print stably.
func Sort(files []File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}
