module github.com/rdggen/rdggen

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/spf13/pflag v1.1.0
	github.com/vmware/govmomi v0.56.0
	golang.org/x/crypto v0.59.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	mvdan.cc/sh/v3 v3.14.1 // indirect
)
