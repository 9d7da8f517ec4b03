package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/rdggen/rdggen/internal/atomicfile"
	"github.com/rdggen/rdggen/internal/userfile"
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
	"github.com/rdggen/rdggen/pkg/quote"
)

// Marker is the file that marks a directory as rdggen's output and lists
// the files rdggen wrote there. Write replaces only an empty directory or one
// that carries it, and only when every file in it is on its list.
const Marker = ".rdggen"

// maxMarker bounds what Write reads of an existing Marker: 256 MiB, far
// above the list of the largest tree an inventory of 4 MiB can describe
// (some 30,000 hosts, about 500 bytes of paths each: 15 MB).
const maxMarker = 256 << 20

const markerHeader = "This directory is written by rdggen and replaced as a whole on every run.\nFiles rdggen wrote:\n"

// Write writes files as the complete tree dir, atomically: the tree is built
// in a sibling temporary directory and renamed into place, so on any error or
// cancellation of ctx dir is left as it was (absent, or the previous output)
// and the temporary directory is removed. Temporary directories that an
// earlier, killed run left beside dir are removed first.
//
// An existing dir is replaced only when it is empty, or holds Marker and
// nothing that Marker does not list: a file a user put there is never
// deleted; Write refuses and names it.
func Write(ctx context.Context, dir string, files []artifact.File) error {
	_, err := WriteSeq(ctx, dir, slices.Values(files))
	return err
}

// Generate writes the output tree of inv as dir, as Write does (atomically,
// replacing only rdggen's own output), but makes each file just before
// writing it (Stream) and drops it once written: memory follows the largest
// file, not the tree.
func Generate(ctx context.Context, dir string, inv *inventory.Inventory) (Stats, error) {
	return WriteSeq(ctx, dir, Stream(inv))
}

// WriteSeq is Write for files that come one at a time: each is written as
// the sequence yields it and kept no longer (the sequence may make it just
// then), so at most one file's bytes are held here. The Marker list, written
// last, holds the paths sorted. It returns what was written; on an error the
// Stats are zero and dir is left as it was.
func WriteSeq(ctx context.Context, dir string, files iter.Seq[artifact.File]) (Stats, error) {
	dir = filepath.Clean(dir)
	if err := checkReplaceable(dir); err != nil {
		return Stats{}, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Stats{}, fmt.Errorf("create %s: %w", parent, err)
	}
	prefix := "." + filepath.Base(dir) + ".tmp-"
	removeStale(parent, prefix)
	tmp, err := os.MkdirTemp(parent, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return Stats{}, fmt.Errorf("create a temporary directory beside %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	stats, err := writeAll(ctx, tmp, files)
	if err != nil {
		return Stats{}, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return Stats{}, err
	}
	if err := ctx.Err(); err != nil {
		return Stats{}, fmt.Errorf("interrupted: %s was not changed", dir)
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return Stats{}, fmt.Errorf("move the previous %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return Stats{}, fmt.Errorf("move the new tree into %s: %w", dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return Stats{}, fmt.Errorf("remove the previous output %s: %w", old, err)
		}
	}
	return stats, nil
}

// removeStale removes the temporary directories (prefix<pid>-…, and their
// .old) of runs whose process is gone: a run killed by SIGKILL or a crash
// cannot clean up after itself.
func removeStale(parent, prefix string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; give the directory itself (rdggen replaces the output directory as a whole)", dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	// Read without waiting on what is not a file (a named pipe there)
	// and at most maxMarker bytes (userfile.Read).
	marker, err := userfile.Read(filepath.Join(dir, Marker), maxMarker)
	var ue *userfile.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s exists and is not empty, and its %s is not rdggen's list of its files (%v); choose another output directory", dir, Marker, err)
	}
	if err != nil {
		return fmt.Errorf("%s exists, is not empty and was not written by rdggen (no %s file); choose another output directory", dir, Marker)
	}
	listed, hasList := readManifest(marker)
	var foreign []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == Marker || listed[rel] || (!hasList && rdggenLayout(rel)) {
			return nil
		}
		foreign = append(foreign, rel)
		return nil
	})
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		more := ""
		if len(foreign) > 3 {
			more = fmt.Sprintf(" and %d more", len(foreign)-3)
			foreign = foreign[:3]
		}
		return fmt.Errorf("%s holds files rdggen did not write (%s%s), and rdggen replaces the directory as a whole: move them elsewhere or choose another output directory",
			dir, strings.Join(foreign, ", "), more)
	}
	return nil
}

// readManifest returns the paths Marker lists; hasList is false for a
// marker written before rdggen kept the list.
func readManifest(marker []byte) (map[string]bool, bool) {
	body, ok := bytes.CutPrefix(marker, []byte(markerHeader))
	if !ok {
		return nil, false
	}
	m := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		m[sc.Text()] = true
	}
	return m, true
}

// rdggenLayout reports whether rel is a path of rdggen's output tree, for a
// marker without a list of files.
func rdggenLayout(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	switch top {
	case "switch", "esxi", "hosts", "horovod", "cluster.txt", SVGPath:
		return true
	}
	return false
}

// writeAll writes each file of files under root as it comes, then the
// Marker file listing their paths sorted.
func writeAll(ctx context.Context, root string, files iter.Seq[artifact.File]) (Stats, error) {
	var stats Stats
	made := map[string]bool{root: true}
	write := func(f artifact.File) error {
		if f.Path == "" || strings.HasPrefix(f.Path, "/") || strings.Contains(f.Path, "..") {
			return fmt.Errorf("render: refusing artifact path %q", f.Path)
		}
		p := filepath.Join(root, filepath.FromSlash(f.Path))
		if dir := filepath.Dir(p); !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made[dir] = true
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		return writeFile(p, f.Data, mode)
	}
	if ctx.Err() != nil {
		return Stats{}, fmt.Errorf("interrupted: nothing was written")
	}
	for f := range files {
		if ctx.Err() != nil {
			return Stats{}, fmt.Errorf("interrupted: nothing was written")
		}
		if f.Path == Marker {
			return Stats{}, fmt.Errorf("render: refusing artifact path %q, rdggen's list of its files", f.Path)
		}
		if err := write(f); err != nil {
			return Stats{}, err
		}
		stats.Paths = append(stats.Paths, f.Path)
		stats.Bytes += int64(len(f.Data))
	}
	slices.Sort(stats.Paths)
	var list strings.Builder
	list.WriteString(markerHeader)
	for _, p := range stats.Paths {
		list.WriteString(quote.Line(p))
		list.WriteByte('\n')
	}
	if err := write(artifact.File{Path: Marker, Mode: 0o644, Data: []byte(list.String())}); err != nil {
		return Stats{}, err
	}
	return stats, nil
}

// writeFile creates p with exactly mode and data, never opening an
// existing file (atomicfile.Create).
func writeFile(p string, data []byte, mode fs.FileMode) error {
	return atomicfile.Create(p, data, mode)
}
