// Package render assembles every generator's artifacts into the output tree of
// docs/architecture.md#output-tree and writes that tree atomically.
package render

import (
	"fmt"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/onyx"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Tree returns every artifact of the cluster, sorted by path: switch/,
// esxi/, hosts/<host>/, horovod/ and the review pictures cluster.txt and
// cluster.svg.
func Tree(inv *inventory.Inventory) []artifact.File {
	var files []artifact.File
	files = append(files, onyx.Artifacts(inv)...)
	files = append(files, vmx.Artifacts(inv)...)
	files = append(files, dockernet.Artifacts(inv)...)
	files = append(files, hostqos.Artifacts(inv)...)
	files = append(files, horovod.Artifacts(inv)...)
	files = append(files, Picture(inv), SVG(inv))
	artifact.Sort(files)
	return files
}

// Summary counts the files per top-level folder, one line each, for the CLI.
func Summary(files []artifact.File) string {
	var order []string
	count := map[string]int{}
	for _, f := range files {
		top, _, found := strings.Cut(f.Path, "/")
		if !found {
			top = "."
		}
		if count[top] == 0 {
			order = append(order, top)
		}
		count[top]++
	}
	var b strings.Builder
	for _, top := range order {
		fmt.Fprintf(&b, "  %-8s %d file(s)\n", top, count[top])
	}
	return b.String()
}
