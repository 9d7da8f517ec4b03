package railpair_test

// The -update flag of `go test ./... -update` is defined in every test package.
import _ "github.com/rdggen/rdggen/internal/golden"
