package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rdggen/rdggen/internal/testing/vcsimtest"
	"github.com/rdggen/rdggen/pkg/inventory"
)

// TestMain lets the test binary be rdggen itself (RDGGEN_TEST_MAIN=1), so
// that a test can send it real signals. The tests then run with
// RDGGEN_TEST_MAIN=1 in their environment: every process they start from
// this binary, and every process those start (the lab's supervisor, which
// an in-process `lab up` starts from os.Executable), is rdggen; no test
// needs t.Setenv for it, which a test that runs in parallel cannot call.
func TestMain(m *testing.M) {
	if os.Getenv("RDGGEN_TEST_MAIN") == "1" {
		main()
	}
	if err := os.Setenv("RDGGEN_TEST_MAIN", "1"); err != nil {
		panic(err)
	}
	// Unless -parallel is given, testParallel tests at a time, not
	// GOMAXPROCS: the tests that run in parallel (t.Parallel) spend their
	// time waiting on sshd, dockerd, FRR, simulators and timeouts in
	// namespaces, not on this process's CPU. All of them at once: the
	// longest (TestTorchrunDDP, TestApplyWorkersDocker) then start with the
	// parallel phase, not when earlier ones end, and the package takes
	// about as long as all their work takes the machine.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(max(testParallel, runtime.GOMAXPROCS(0)))); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// testParallel is how many tests run at a time by default (TestMain):
// more than the package's parallel tests and subtests (34). With 12,
// TestTorchrunDDP waited 14 s for a turn and the package took 177 s on 2
// cores; with all at once, 162 s.
const testParallel = 64

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

// A signal also ends a wait for the inventory itself (a FIFO nobody
// writes: a pipe is a legitimate -f, read as it comes), in every command
// that reads one.
func TestSignalWhileReading(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "inventory.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, args := range [][]string{{"validate"}, {"generate", "-o", filepath.Join(t.TempDir(), "out")},
		{"apply", "--dry-run"}, {"check"}, {"run"}, {"bench"}} {
		t.Run(args[0], func(t *testing.T) {
			cmd := exec.Command(os.Args[0], append(args, "-f", fifo)...)
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
				<-done
				t.Fatalf("rdggen %s kept waiting for the FIFO after SIGTERM", args[0])
			}
			if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "interrupted while reading "+fifo) {
				t.Errorf("exit %d, stderr %q", code, stderr.String())
			}
		})
	}
}

// SIGTERM while apply waits for a vCenter that stopped answering (after
// the login, or after the container view of the read was made): apply ends
// within seconds. The calls that outlive the interrupt (destroying the
// view, the logout) give up after a short grace each; before, each waited
// for the whole --vcenter-timeout (here 2 minutes) on the silent vCenter.
func TestSignalWhileVCenterIsSilent(t *testing.T) {
	t.Parallel()
	inv := inventory.Reference()
	sim, err := vcsimtest.New(inv, vcsimtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	pem, err := os.ReadFile(sim.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: sim.URL.Scheme, Host: sim.URL.Host})
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.yaml")
	if err := os.WriteFile(file, inventory.ReferenceYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, after := range []string{"Login", "CreateContainerView"} {
		t.Run("after "+after, func(t *testing.T) {
			t.Parallel() // a proxy of its own; the simulator serves both
			// A proxy in front of the simulator that, once the request
			// after has passed, holds every request until its client gives
			// up.
			var silent atomic.Bool
			held := make(chan string, 100)
			proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if silent.Load() {
					held <- soapOp(body)
					<-r.Context().Done()
					return
				}
				rp.ServeHTTP(w, r)
				if soapOp(body) == after {
					silent.Store(true)
				}
			}))
			proxy.StartTLS()
			defer proxy.Close()
			ca := filepath.Join(t.TempDir(), "proxy-ca.pem")
			if err := os.WriteFile(ca, pemCert(proxy.Certificate().Raw), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "apply", "--dry-run", "--target", "esxi", "--vcenter-timeout", "2m", "-f", file)
			cmd.Env = []string{"RDGGEN_TEST_MAIN=1", "HOME=" + dir, "GOVC_URL=" + proxy.URL + "/sdk", "GOVC_USERNAME=" + vcsimtest.Username,
				"GOVC_PASSWORD=" + vcsimtest.Password, "GOVC_TLS_CA_CERTS=" + ca}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case op := <-held:
				t.Logf("held: %s", op)
			case <-done:
				t.Fatalf("apply ended before it waited on vCenter: exit %d\n%s%s", cmd.ProcessState.ExitCode(), stdout.String(), stderr.String())
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("apply did not reach vCenter after %s\n%s%s", after, stdout.String(), stderr.String())
			}
			sent := time.Now()
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("apply still waited 20 s after SIGTERM (for a silent vCenter)\n%s%s", stdout.String(), stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != exitFailed || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("exit %d after %s\n%s%s", code, time.Since(sent), stdout.String(), stderr.String())
			}
			t.Logf("ended %s after SIGTERM", time.Since(sent).Round(100*time.Millisecond))
		})
	}
}

// soapOp is the name of a SOAP request's operation (the first element of
// its Body), "" when there is none.
func soapOp(body []byte) string {
	_, rest, ok := bytes.Cut(body, []byte("Body>"))
	if !ok {
		return ""
	}
	_, rest, ok = bytes.Cut(rest, []byte("<"))
	if !ok {
		return ""
	}
	name, _, _ := bytes.Cut(rest, []byte(" "))
	name, _, _ = bytes.Cut(name, []byte(">"))
	if _, local, ok := bytes.Cut(name, []byte(":")); ok {
		name = local
	}
	return string(name)
}

// pemCert is a certificate's DER bytes as PEM.
func pemCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
