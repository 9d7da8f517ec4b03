package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be rdggen itself (RDGGEN_TEST_MAIN=1), so
// that a test can send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("RDGGEN_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// SIGINT and SIGTERM during the generation of a large tree stop it: the
// output directory is not created and no temporary directory is left.
func TestSignalStopsGeneration(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("name: big\nswitches:\n")
	for s := 0; s < 32; s++ {
		fmt.Fprintf(&b, "  - {name: leaf%d, model: SN4600C, onyx: 3.6.8190}\n", s+1)
	}
	b.WriteString("docker: {pool: 10.0.0.0/8, prefix: 24}\ndefaults:\n  os: ubuntu-20.04\n  data_interface: ens224\n" +
		"  gpus: [{model: V100-PCIE-16GB, memory_gb: 16}]\n  nic: {model: ConnectX-5, pf: vmnic4, vfs: 8}\nhosts:\n")
	for i := 0; i < 2046; i++ {
		off := i + 1
		fmt.Fprintf(&b, "  - {name: h%d, esxi: esx%d, data: {address: 100.64.%d.%d/21, switch: leaf%d, port: 1/%d}}\n",
			i+1, i+1, off>>8, off&255, i/64+1, i%64+1)
	}
	inv := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(inv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			cmd := exec.Command(os.Args[0], "-f", inv, "-o", out)
			cmd.Env = append(os.Environ(), "RDGGEN_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(150 * time.Millisecond) // loading and checking 2,046 hosts takes longer
			_ = cmd.Process.Signal(sig)
			err := cmd.Wait()
			code := cmd.ProcessState.ExitCode()
			if err == nil || code != exitFailed || !strings.Contains(stderr.String(), "interrupted") {
				t.Fatalf("after %s: exit %d, %v, stderr %q", sig, code, err, stderr.String())
			}
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left beside the output: %v", entries)
			}
		})
	}
}

// A signal also ends a wait for the inventory itself (a FIFO nobody writes).
func TestSignalWhileReading(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "inventory.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cmd := exec.Command(os.Args[0], "validate", "-f", fifo)
	cmd.Env = append(os.Environ(), "RDGGEN_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("rdggen validate kept waiting for the FIFO after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "interrupted while reading "+fifo) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
