package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// aliasInventory is the hostile file of the report: one host mapping &H whose
// GPU list &G holds gpus aliases of one GPU, and hosts copies of `- *H`.
func aliasInventory(hosts, gpus int) []byte {
	var b strings.Builder
	b.WriteString("name: bomb\nswitches: [{name: sw1, model: SN2700, onyx: 3.6.8190}]\n")
	b.WriteString("defaults:\n  os: ubuntu-18.04\n  data_interface: ens224\n  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\n")
	b.WriteString("  gpus: &G\n    - &g {model: V100, memory_gb: 16}\n")
	for i := 1; i < gpus; i++ {
		b.WriteString("    - *g\n")
	}
	b.WriteString("hosts:\n  - &H {name: a, esxi: e, data: {address: 10.0.0.1/24, port: 1/1}, gpus: *G}\n")
	for i := 1; i < hosts; i++ {
		b.WriteString("  - *H\n")
	}
	return []byte(b.String())
}

// Aliases are counted as they expand: the 1,000-alias file is refused with
// one finding instead of walking a million GPU entries.
func TestAliasExpansionBounded(t *testing.T) {
	src := aliasInventory(1000, 1000)
	_, err := Load("bomb.yaml", src)
	rep, ok := err.(*Report)
	if !ok || rep.Count() == 0 {
		t.Fatalf("the alias bomb loaded: %v", err)
	}
	if !strings.Contains(rep.Error(), "the document expands to more than 20000 values (aliases used many times, or nested)") {
		t.Errorf("findings:\n%s", rep.Error())
	}
	// A file that uses aliases moderately loads as before.
	if _, err := Load("ok.yaml", []byte(strings.Replace(baseYAML, "  gpus:\n    - {model: V100-PCIE-16GB, memory_gb: 16}",
		"  gpus: &G\n    - {model: V100-PCIE-16GB, memory_gb: 16}", 1)+"  - {name: c, esxi: esx-c, gpus: *G, data: {address: 10.0.0.3/24, port: 1/3}}\n")); err != nil {
		t.Errorf("aliases within the bound: %v", err)
	}
}

// BenchmarkAliasBomb: the 11 KB file of 1,000 aliased hosts with 1,000
// aliased GPUs each (and its 110 KB variant).
func BenchmarkAliasBomb(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		src := aliasInventory(n, 1000)
		b.Run(fmt.Sprintf("%dKB", len(src)/1000), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Load("bomb.yaml", src); err == nil {
					b.Fatal("loaded")
				}
			}
		})
	}
}

// A file larger than MaxFileSize, or an endless stream, is read no further
// than the limit and refused with one finding.
func TestFileSizeBounded(t *testing.T) {
	for _, path := range []string{"/dev/zero", bigFile(t)} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		_, err := LoadFile(path)
		rep, ok := err.(*Report)
		if !ok || len(rep.Findings) != 1 || !strings.Contains(rep.Findings[0].Rule, "is larger than 4 MiB, the limit for an inventory") {
			t.Errorf("%s: %v", path, err)
		}
	}
	if _, err := LoadFile(""); err == nil || !strings.Contains(err.Error(), "no inventory file given") {
		t.Errorf("empty path: %v", err)
	}
}

func bigFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "big.yaml")
	line := "# " + strings.Repeat("x", 1022) + "\n"
	if err := os.WriteFile(p, []byte(baseYAML+strings.Repeat(line, 4*1024+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// However many things are wrong, the report keeps MaxFindings and counts
// the rest.
func TestFindingsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(baseYAML)
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "unknown%d: x\n", i)
	}
	_, err := Load("many.yaml", []byte(b.String()))
	rep, ok := err.(*Report)
	if !ok || len(rep.Findings) != MaxFindings || rep.Count() != 5000 {
		t.Fatalf("%T: %d kept, %d in all", err, len(rep.Findings), rep.Count())
	}
	text := rep.Error()
	if !strings.HasSuffix(text, "… and 4900 more finding(s) not shown; fix these first") || strings.Count(text, "\n") != MaxFindings {
		t.Errorf("report ends %q", text[len(text)-80:])
	}
	if rep.Findings[0].Pos.Line != 19 || rep.Findings[99].Pos.Line != 118 {
		t.Errorf("kept findings are not the first ones: %v … %v", rep.Findings[0], rep.Findings[99])
	}
}

// A path with a newline or a terminal escape is shown escaped, in findings
// and in the inventory's File, which generated headers print.
func TestDisplayName(t *testing.T) {
	inv, err := Load("in\ntouch PWNED #\x1b[2J.yaml", []byte(baseYAML))
	if err != nil {
		t.Fatal(err)
	}
	if inv.File != `in\ntouch PWNED #\x1b[2J.yaml` {
		t.Errorf("File = %q", inv.File)
	}
	_, err = Load("bad\n.yaml", []byte("name: [x"))
	if err == nil || strings.Contains(err.Error(), "\n.yaml") || !strings.HasPrefix(err.Error(), `bad\n.yaml:1:1:`) {
		t.Errorf("finding: %v", err)
	}
}

// LoadReader bounds an endless stream as LoadFile bounds a file, loads
// what a stream holds, and returns a read error (a context's end) as it is.
func TestLoadReader(t *testing.T) {
	var zeros endless
	if _, err := LoadReader("-", &zeros); err == nil || !strings.Contains(err.Error(), "-: is larger than 4 MiB, the limit for an inventory") || zeros.n > MaxFileSize+1<<16 {
		t.Errorf("endless stream: %v after %d bytes", err, zeros.n)
	}
	if inv, err := LoadReader("/dev/stdin", bytes.NewReader(ReferenceYAML)); err != nil || len(inv.Hosts) != 8 || inv.File != "/dev/stdin" {
		t.Errorf("the reference from a stream: %v", err)
	}
	stop := errors.New("reading /dev/stdin: context canceled")
	if _, err := LoadReader("/dev/stdin", io.MultiReader(strings.NewReader("name: x\n"), errReader{stop})); err != stop {
		t.Errorf("a read error: %v", err)
	}
}

type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += len(p)
	return len(p), nil
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
