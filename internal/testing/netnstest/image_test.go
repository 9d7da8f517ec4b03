package netnstest

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

// Worker images of one program share their start (workerBase, built once):
// each is a whole tar with every name once, the common files, its own
// extra files and none of another variant's.
func TestWorkerImageVariants(t *testing.T) {
	prog := BuildMPIProgram(t)
	plain := WorkerImage(t, prog)
	withFile := WorkerImage(t, prog, ImageFile{Path: "/usr/local/bin/x.txt", Mode: 0o644, Data: []byte("x\n")})
	if again := WorkerImage(t, prog); &again[0] != &plain[0] {
		t.Errorf("WorkerImage built the same image twice")
	}
	names := func(img []byte) map[string]string {
		t.Helper()
		m := map[string]string{}
		tr := tar.NewReader(bytes.NewReader(img))
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return m
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, dup := m[h.Name]; dup {
				t.Errorf("%s twice", h.Name)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			m[h.Name] = string(b)
		}
	}
	p, f := names(plain), names(withFile)
	for _, n := range []string{"usr/sbin/sshd", "usr/bin/orted", "usr/local/bin/allreduce", "etc/passwd", "bin", "usr/bin/bash"} {
		if _, ok := p[n]; !ok {
			t.Errorf("WorkerImage: no %s", n)
		}
		if _, ok := f[n]; !ok {
			t.Errorf("WorkerImage with a file: no %s", n)
		}
	}
	// The ranks yield the CPU while they wait (yieldingMCAParams), over
	// this machine's own Open MPI settings.
	if conf := p["etc/openmpi/openmpi-mca-params.conf"]; !strings.HasSuffix(conf, "mpi_yield_when_idle = 1\n") || !strings.Contains(conf, "btl") {
		t.Errorf("WorkerImage's Open MPI parameters:\n%s", conf)
	}
	if f["usr/local/bin/x.txt"] != "x\n" {
		t.Errorf("WorkerImage with a file: x.txt is %q", f["usr/local/bin/x.txt"])
	}
	if _, ok := p["usr/local/bin/x.txt"]; ok {
		t.Errorf("WorkerImage has the other variant's file")
	}
	if len(f) != len(p)+1 {
		t.Errorf("%d names with one file more, %d without", len(f), len(p))
	}
}

// BenchmarkWorkerImageVariant is the build of one more variant of a
// program's worker image (another set of extra files), as each test that
// imports its own files asks for.
func BenchmarkWorkerImageVariant(b *testing.B) {
	prog := BuildMPIProgram(b)
	WorkerImage(b, prog)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		WorkerImage(b, prog, ImageFile{Path: "/usr/local/bin/x.txt", Mode: 0o644, Data: []byte(strconv.Itoa(i))})
	}
}
