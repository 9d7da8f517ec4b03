// Package depsholder pins the chosen dependencies in go.mod while the packages
// that use them are written in parallel. Delete it once they are all imported.
package depsholder

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/spf13/pflag"
	_ "github.com/vmware/govmomi"
	_ "github.com/vmware/govmomi/object"
	_ "github.com/vmware/govmomi/property"
	_ "github.com/vmware/govmomi/simulator"
	_ "github.com/vmware/govmomi/vim25/methods"
	_ "github.com/vmware/govmomi/vim25/types"
	_ "golang.org/x/crypto/ssh"
	_ "golang.org/x/crypto/ssh/agent"
	_ "golang.org/x/crypto/ssh/knownhosts"
	_ "gopkg.in/yaml.v3"
)
