package apply_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// cliOnly are the packages of rdggen's command line that no public package
// of the module may link: a library user's program would carry them (and
// its go.sum their module) for nothing. github.com/spf13/pflag is the
// CLI's flag package; the switch OSes' flags reach pkg/apply through the
// pflag-free apply.FlagSet and switchos.FlagSet.
var cliOnly = []string{"github.com/spf13/pflag"}

// listed is one package of `go list -json` (cmd/go's Package, the fields
// the test asks for).
type listed struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
}

// TestLibraryLinksNoCLIPackage: no public package of the module (pkg/...,
// pkg/apply among them) imports, directly or not, a package only the CLI
// needs (cliOnly), as `go list -deps` says; a failure gives the chain of
// imports that pulls it in. It runs the go tool (offline: GOPROXY=off) and
// skips without it, unless CI=true.
func TestLibraryLinksNoCLIPackage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: the go tool is needed to list the library's imports: %v", err)
		}
		t.Skipf("no go tool to list the library's imports: %v", err)
	}
	// A relative pattern from the module's root: an import path pattern
	// (github.com/rdggen/rdggen/pkg/...) makes the go tool load every
	// module's go.mod of the build list, which a fresh module cache lacks
	// (gopkg.in/check.v1, required by gopkg.in/yaml.v3) and GOPROXY=off
	// cannot fetch.
	cmd := exec.Command(goTool, "list", "-deps", "-json=ImportPath,Imports,DepOnly", "./pkg/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]listed{}
	var roots []string
	for d := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listed
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list's output: %v", err)
		}
		pkgs[p.ImportPath] = p
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	if !slices.Contains(roots, "github.com/rdggen/rdggen/pkg/apply") || !slices.Contains(roots, "github.com/rdggen/rdggen/pkg/inventory") {
		t.Fatalf("go list does not list the public packages: %q", roots)
	}
	for _, root := range roots {
		for _, bad := range cliOnly {
			if chain := importChain(pkgs, root, bad); chain != nil {
				t.Errorf("%s links %s, which only the CLI needs: %s", root, bad, strings.Join(chain, " → "))
			}
		}
	}
}

// importChain is the shortest chain of imports from one package to
// another in pkgs (from first, to last); nil when from does not reach to.
func importChain(pkgs map[string]listed, from, to string) []string {
	prev := map[string]string{from: ""}
	for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
		p := queue[0]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range pkgs[p].Imports {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
