package inventory_test

import (
	"testing"

	"github.com/rdggen/rdggen/pkg/inventory"
)

// A tab in the indentation is named, at the tab.
func TestYAMLTabFinding(t *testing.T) {
	_, err := inventory.Load("c.yaml", []byte("name: x\nswitches:\n  \t- {name: a}\n"))
	want := "c.yaml:3:3: not valid YAML: found character that cannot start any token (a tab: YAML indents with spaces only)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
