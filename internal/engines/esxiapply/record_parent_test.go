package esxiapply_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/internal/engines/esxiapply"
	"github.com/rdggen/rdggen/internal/ownfs"
)

// A record whose directory sits below a directory others can write (mode
// 0777, no sticky bit) is neither believed nor written: another user could
// move the directory away and put one holding their record in its place.
// Below a sticky one (as /tmp) it is.
func TestRecordBelowOpenParentRefused(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, mode fs.FileMode) string {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	open, sticky := mk("open", 0o777), mk("sticky", fs.ModeSticky|0o777)
	r := &esxiapply.Record{Schema: esxiapply.RecordSchema}
	for _, c := range []struct {
		parent string
		ok     bool
	}{{open, false}, {sticky, true}} {
		path := filepath.Join(c.parent, "rdggen", "esxi.json")
		err := r.Save(path)
		var e *ownfs.Error
		if c.ok != (err == nil) || (!c.ok && (!errors.As(err, &e) || e.Problem != ownfs.AncestorWritable ||
			!strings.Contains(err.Error(), "a record another user could write is not believed"))) {
			t.Errorf("Save below %s: %v", filepath.Base(c.parent), err)
		}
		if !c.ok {
			// Made by hand: the load refuses it too.
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(`{"schema":"`+esxiapply.RecordSchema+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		got, err := esxiapply.LoadRecord(path)
		if c.ok != (err == nil && got != nil) {
			t.Errorf("LoadRecord below %s: %v, %v", filepath.Base(c.parent), got, err)
		}
	}
}
