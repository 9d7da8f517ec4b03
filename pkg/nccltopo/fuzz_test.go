package nccltopo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// seedFiles adds every XML file of testdata (the fixtures, the golden
// file) to f's corpus.
func seedFiles(f *testing.F) {
	for _, glob := range []string{"testdata/*.xml", "testdata/golden/*.xml"} {
		names, err := filepath.Glob(glob)
		if err != nil || len(names) == 0 {
			f.Fatalf("no seeds in %s: %v", glob, err)
		}
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(base))
}

// FuzzValidate: Validate never panics and gives the same findings for the
// same bytes, each complete (severity, rule, message, source) and at a
// position inside the file; a file NCCL cannot read has exactly one
// parse or limit Error from its reader.
func FuzzValidate(f *testing.F) {
	seedFiles(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := Validate(data)
		if again := Validate(data); !slices.Equal(summary(fs), summary(again)) {
			t.Fatalf("not deterministic: %v then %v", summary(fs), summary(again))
		}
		n := 1
		for _, c := range data {
			if c == '\n' {
				n++
			}
		}
		for _, x := range fs {
			if x.Severity != Error && x.Severity != Warning || x.Rule == "" || x.Message == "" || x.Source == "" ||
				x.Line < 0 || x.Line > n || (x.Line > 0) != (x.Col > 0) {
				t.Fatalf("incomplete finding %+v in a file of %d lines", x, n)
			}
		}
		if _, _, fatal := parse(data); fatal != nil {
			k := 0
			for _, x := range fs {
				if x.Severity == Error {
					k++
				}
			}
			if k != 1 {
				t.Fatalf("an unreadable file gives %d errors: %v", k, summary(fs))
			}
		}
		_, _ = CheckGuest(data, map[string]string{"0000:03:00.0": "0x030200"})
	})
}

// FuzzGenerate: whatever valid Topology the bytes describe, Generate's
// file passes Validate without an Error, and with NICs in every CPU
// without any finding.
func FuzzGenerate(f *testing.F) {
	f.Add([]byte{8, 4, 2, 5, 16})
	f.Add([]byte{1, 1, 1, 4, 8})
	f.Add([]byte{16, 8, 4, 6, 32})
	f.Fuzz(func(t *testing.T, b []byte) {
		arg := func(i, lo, hi int) int {
			if i >= len(b) {
				return lo
			}
			return lo + int(b[i])%(hi-lo+1)
		}
		gpus, rails, sockets := arg(0, 1, 16), arg(1, 1, 8), arg(2, 1, 4)
		if rails > gpus || rails < sockets || gpus%rails != 0 {
			return
		}
		top := railVM("vm", gpus, rails, sockets)
		gen, width := Gen(arg(3, 1, 6)), []int{1, 2, 4, 8, 12, 16, 32}[arg(4, 0, 6)]
		for i := range top.CPUs {
			for j := range top.CPUs[i].Groups {
				top.CPUs[i].Groups[j].NICs[0].Link = Link{gen, width}
			}
		}
		out, err := Generate(top)
		if err != nil {
			t.Fatalf("%d GPUs, %d rails, %d sockets: %v", gpus, rails, sockets, err)
		}
		if fs := Validate(out); len(fs) != 0 {
			t.Fatalf("%d GPUs, %d rails, %d sockets, NICs Gen%d x%d:\n%s", gpus, rails, sockets, gen, width, out)
		}
	})
}
