package inventory

import _ "embed"

// ReferenceYAML is the reference cluster of docs/inventory.md#reference-cluster as commented YAML: eight
// ESXi 6.7 hosts with one Ubuntu 16.04 VM each (clx-mld-41 … 48, two V100 16 GB,
// a ConnectX-5 VF on 31.31.31.0/24), one SN2700 switch on ONYX 3.6.8190.
// `rdggen example` prints it; it loads to the same inventory as Reference.
//
//go:embed reference.yaml
var ReferenceYAML []byte

// ReferenceName is the file name findings and headers give the embedded inventory.
const ReferenceName = "<reference>"

// Reference returns a fresh copy of the embedded reference cluster.
func Reference() *Inventory { return must(Load(ReferenceName, ReferenceYAML)) }
