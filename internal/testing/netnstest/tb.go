package netnstest

// TB is what the harness needs of its caller: a test's testing.TB, or
// internal/lab's adapter, which runs the cluster outside a test (for
// `rdggen lab`). Fatal and Fatalf must not return (testing.TB's stop the
// test's goroutine; the lab's panic and are recovered where the cluster
// is built); Cleanup's functions run when the cluster is torn down.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(f func())
	TempDir() string
}
