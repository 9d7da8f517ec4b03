package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rdggen/rdggen/internal/golden"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestFixtureVerdictsGolden pins every recorded fixture's verdicts, text
// and JSON, byte for byte (testdata/golden/verdicts/NAME.golden): a parser
// or judge change that alters one shows as a diff to review.
func TestFixtureVerdictsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	e := ExpectFor(inventory.Reference(), 100)
	e.GIDIndex = 3
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := JudgeParts(data, e)
		var b bytes.Buffer
		if err != nil {
			b.WriteString("error: " + err.Error() + "\n")
		}
		for _, p := range parts {
			b.WriteString(string(p.Kind) + " " + p.Name + "\n")
			for _, l := range Lines(p.Verdicts) {
				b.WriteString(l + "\n")
			}
			j, _ := json.MarshalIndent(p.Verdicts, "", " ")
			b.Write(j)
			b.WriteString("\n")
		}
		golden.Check(t, filepath.Join("testdata", "golden", "verdicts", name+".golden"), b.Bytes())
	}
}
