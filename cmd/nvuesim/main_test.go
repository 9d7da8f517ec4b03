package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdggen/rdggen/pkg/sim/nvuesim"
)

// TestPortsFromInventory: a 64-port SN4600C inventory is simulated with
// 64 ports (swp64 applies), and -ports overrides the model.
func TestPortsFromInventory(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "cumulus", "inventory.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "model: SN2700", "model: SN4600C", 1)
	if text == string(src) {
		t.Fatal("the golden inventory has no `model: SN2700` to change")
	}
	inv := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(inv, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	o, _, err := options([]string{"-inventory", inv}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Ports != 64 || o.Version != "5.9.1" || o.Hostname != "swx-mld-1-2" {
		t.Errorf("from the inventory: ports %d, version %q, hostname %q; want 64, 5.9.1, swx-mld-1-2", o.Ports, o.Version, o.Hostname)
	}
	s := nvuesim.Start(t, o)
	if s.Ports() != 64 {
		t.Errorf("simulator ports %d", s.Ports())
	}
	o, _, err = options([]string{"-inventory", inv, "-ports", "48", "-version", "5.15.0"}, io.Discard)
	if err != nil || o.Ports != 48 || o.Version != "5.15.0" {
		t.Errorf("overrides: %v ports %d version %q", err, o.Ports, o.Version)
	}
	o, _, err = options(nil, io.Discard)
	if err != nil || o.Ports != 0 || o.Version != "" { // nvuesim's defaults: 32, 5.9.1
		t.Errorf("no inventory: %v %+v", err, o)
	}
	if _, _, err := options([]string{"-inventory", inv, "-switch", "nope"}, io.Discard); err == nil || !strings.Contains(err.Error(), `no Cumulus switch named "nope"`) {
		t.Errorf("unknown switch: %v", err)
	}
}
