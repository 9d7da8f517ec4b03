package netnstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BenchFiles are the worker image's stand-ins for ib_write_bw,
// all_reduce_perf and python (for tf_cnn_benchmarks; the replay command,
// built here, static) and the real
// recorded outputs they print, each with the .source file that names its
// public origin: fixtures (file names in pkg/bench/testdata) are put in
// /usr/share/rdgtest/fixtures, perftest and nccl become
// /usr/share/rdgtest/perftest.txt and nccl.txt, which the replay prints.
// Needs the go command (the tests run under it).
func BenchFiles(t TB, perftest, nccl string, fixtures ...string) []ImageFile {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "replay")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/rdggen/rdggen/internal/testing/netnstest/replay")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("netnstest: build the replay: %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	files := []ImageFile{{"/usr/local/bin/ib_write_bw", 0o755, prog}, {"/usr/local/bin/all_reduce_perf", 0o755, prog}, {"/usr/local/bin/python", 0o755, prog}}
	testdata := filepath.Join(moduleRoot(t), "pkg", "bench", "testdata")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			t.Fatalf("netnstest: %v", err)
		}
		return b
	}
	for _, f := range append([]string{perftest, nccl}, fixtures...) {
		files = append(files, ImageFile{"/usr/share/rdgtest/fixtures/" + f, 0o644, read(f)},
			ImageFile{"/usr/share/rdgtest/fixtures/" + f + ".source", 0o644, read(f + ".source")})
	}
	return append(files, ImageFile{"/usr/share/rdgtest/perftest.txt", 0o644, read(perftest)},
		ImageFile{"/usr/share/rdgtest/nccl.txt", 0o644, read(nccl)})
}

// moduleRoot is the repository's root: the directory above this file's
// internal/testing/netnstest.
func moduleRoot(t TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("netnstest: no caller information")
	}
	return strings.TrimSuffix(filepath.Dir(file), filepath.FromSlash("/internal/testing/netnstest"))
}
