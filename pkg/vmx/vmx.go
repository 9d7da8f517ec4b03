package vmx

import (
	"github.com/rdggen/rdggen/pkg/artifact"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// Artifacts returns this package's part of the output tree (SPEC §3).
func Artifacts(inv *inventory.Inventory) []artifact.File {
	return nil
}
