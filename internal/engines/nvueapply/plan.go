package nvueapply

import (
	"maps"
	"slices"

	"github.com/rdggen/rdggen/pkg/cumulus"
)

// The plan of a Cumulus switch is pkg/cumulus's (cumulus.Reconcile,
// cumulus.Diff), beside ONYX's in pkg/onyx; the engine names its types
// here.
type (
	// Tree is cumulus.Tree.
	Tree = cumulus.Tree
	// Change is cumulus.Change.
	Change = cumulus.Change
	// Plan is cumulus.Plan.
	Plan = cumulus.Plan
	// Kept is cumulus.Kept.
	Kept = cumulus.Kept
)

// sortedKeys are m's keys in string order.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
