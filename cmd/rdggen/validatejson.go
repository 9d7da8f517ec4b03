package main

import (
	"github.com/rdggen/rdggen/pkg/applyplan"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// validateDocument is what `rdggen validate -o json` writes (schema
// rdggen.validate/v1, docs/json.md).
type validateDocument struct {
	Schema string `json:"schema"`
	// Inventory is the file as given ("" for the embedded reference).
	Inventory string `json:"inventory"`
	Valid     bool   `json:"valid"`
	// Findings are in file order, at most inventory.MaxFindings; Omitted
	// counts the rest.
	Findings []validateFinding `json:"findings"`
	Omitted  int               `json:"omitted,omitempty"`
	// Warnings are a valid inventory's warnings (inventory.Inventory's
	// Warnings), in the shape of findings; [] when there are none.
	Warnings []validateFinding `json:"warnings"`
	// Cluster, Hosts, ESXiHosts and Switches describe a valid inventory.
	Cluster   string `json:"cluster,omitempty"`
	Hosts     int    `json:"hosts,omitempty"`
	ESXiHosts int    `json:"esxi_hosts,omitempty"`
	Switches  int    `json:"switches,omitempty"`
}

// validateFinding is one inventory.Finding: line and column are 1-based, 0
// when the finding is about the whole file.
type validateFinding struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Path   string `json:"path"`
	Rule   string `json:"rule"`
}

func newValidateDocument(file string, inv *inventory.Inventory, rep *inventory.Report) *validateDocument {
	doc := &validateDocument{Schema: applyplan.SchemaValidate, Inventory: file, Findings: []validateFinding{}, Warnings: []validateFinding{}}
	conv := func(f inventory.Finding) validateFinding {
		return validateFinding{File: f.File, Line: f.Pos.Line, Column: f.Pos.Col, Path: f.Path, Rule: f.Rule}
	}
	if rep != nil {
		for _, f := range rep.Findings {
			doc.Findings = append(doc.Findings, conv(f))
		}
		doc.Omitted = rep.Omitted
		return doc
	}
	for _, w := range inv.Warnings {
		doc.Warnings = append(doc.Warnings, conv(w))
	}
	doc.Valid = true
	doc.Cluster, doc.Hosts, doc.ESXiHosts, doc.Switches = inv.Name, len(inv.Hosts), len(inv.ESXiHosts()), len(inv.Switches)
	return doc
}
