package exefile

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Scripts written while other goroutines start processes all run: with
// os.WriteFile in place of Write, some of 200 fail with "text file busy"
// on a 2-core machine.
func TestWriteWhileForking(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("true").Run()
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	failed := 0
	for i := range 200 {
		p := filepath.Join(dir, fmt.Sprintf("s%d", i))
		if err := Write(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(p).CombinedOutput(); err != nil {
			failed++
			t.Logf("%s: %v %s", p, err, out)
		}
	}
	if failed > 0 {
		t.Errorf("%d of 200 scripts did not run", failed)
	}
}
