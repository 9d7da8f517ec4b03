// Package render assembles every generator's artifacts into the output tree of
// docs/architecture.md#output-tree and writes that tree atomically.
package render

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/rdggen/rdggen/internal/switchos"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/cloudinit"
	"github.com/rdggen/rdggen/pkg/dockernet"
	"github.com/rdggen/rdggen/pkg/horovod"
	"github.com/rdggen/rdggen/pkg/hostqos"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/railguest"
	"github.com/rdggen/rdggen/pkg/vmx"
)

// Stream yields every artifact of the cluster one at a time, each made when
// the loop asks for it, in the generators' order rather than by path:
// switch/ per switch (each OS's files, internal/switchos), esxi/ per VM
// then per ESXi host, hosts/<host>/ per host (Docker networking, then RoCE
// QoS, then the rails of a VM with several), horovod/, vms/<vm>/
// (cloud-init, for hosts with a template), cluster.txt and cluster.svg.
// A loop that writes each file and drops it (Generate) holds one file at a
// time, the largest being a host's routes.sh (about 70 bytes per other host
// with docker.routing: hosts), plus what the generators share (a few
// hundred bytes per host).
func Stream(inv *inventory.Inventory) iter.Seq[artifact.File] {
	return func(yield func(artifact.File) bool) {
		for _, part := range []iter.Seq[artifact.File]{
			switchos.Files(inv), vmx.Stream(inv), dockernet.Stream(inv), hostqos.Stream(inv), railguest.Stream(inv),
			horovod.Stream(inv), cloudinit.Stream(inv),
		} {
			for f := range part {
				if !yield(f) {
					return
				}
			}
		}
		_ = yield(Picture(inv)) && yield(SVG(inv))
	}
}

// Tree returns every artifact of the cluster, sorted by path: switch/,
// esxi/, hosts/<host>/, horovod/ and the review pictures cluster.txt and
// cluster.svg. It holds the whole tree in memory (about 2 GB for 4,096
// hosts with docker.routing: hosts); Generate writes it holding one file at
// a time.
func Tree(inv *inventory.Inventory) []artifact.File {
	files := slices.Collect(Stream(inv))
	artifact.Sort(files)
	return files
}

// Summary counts the files per top-level folder, one line each, in the
// order of the sorted paths, for the CLI.
func Summary(files []artifact.File) string {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	slices.Sort(paths)
	return Stats{Paths: paths}.Summary()
}

// Stats describes a tree that Generate or WriteSeq wrote, without its bytes.
type Stats struct {
	// Paths are the files' paths, sorted, as the Marker file lists them
	// (the marker itself left out).
	Paths []string
	// Bytes is the files' total size in bytes (the marker left out).
	Bytes int64
}

// Files is the number of files written, the marker left out.
func (s Stats) Files() int { return len(s.Paths) }

// Summary counts the files per top-level folder ("." for files at the
// top), one line each, in the order of the sorted paths.
func (s Stats) Summary() string {
	var order []string
	count := map[string]int{}
	for _, p := range s.Paths {
		top, _, found := strings.Cut(p, "/")
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
