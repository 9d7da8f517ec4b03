package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdggen/rdggen/pkg/artifact"
)

// Marker is the file that marks a directory as rdggen's output. Write replaces
// only an empty directory or one that carries it, never a user's directory.
const Marker = ".rdggen"

// Write writes files as the complete tree dir, atomically: the tree is built
// in a sibling temporary directory and renamed into place, so on any error
// dir is left as it was (absent, or the previous output).
//
// An existing dir is replaced only when it is empty or holds Marker; anything
// else is refused with an error that names it.
func Write(dir string, files []artifact.File) error {
	dir = filepath.Clean(dir)
	if err := checkReplaceable(dir); err != nil {
		return err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("create a temporary directory beside %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	if err := writeAll(tmp, files); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("move the previous %s aside: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("move the new tree into %s: %w", dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove the previous output %s: %w", old, err)
		}
	}
	return nil
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
	if _, err := os.Stat(filepath.Join(dir, Marker)); err == nil {
		return nil
	}
	return fmt.Errorf("%s exists, is not empty and was not written by rdggen (no %s file); choose another output directory", dir, Marker)
}

func writeAll(root string, files []artifact.File) error {
	marker := artifact.File{Path: Marker, Mode: 0o644, Data: []byte("This directory is written by rdggen and replaced as a whole on every run.\n")}
	made := map[string]bool{root: true}
	for _, f := range append([]artifact.File{marker}, files...) {
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
		if err := writeFile(p, f.Data, mode); err != nil {
			return err
		}
	}
	return nil
}

// writeFile creates p with exactly mode (not masked by the umask) and data.
func writeFile(p string, data []byte, mode fs.FileMode) error {
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Chmod(mode)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
