package sandbox

import (
	"os"
	"testing"
)

// TestMain makes the test binary a sandbox worker when it is started as
// one (the way an embedding program would, through
// ServeWorkerIfRequested).
func TestMain(m *testing.M) {
	ServeWorkerIfRequested()
	os.Exit(m.Run())
}

// processRunner is a Runner whose workers are this test binary.
func processRunner(t testing.TB, opts ...Option) *Runner {
	t.Helper()
	opts = append(opts, WithIsolation(IsolationProcess), WithWorkerCommand([]string{os.Args[0], WorkerSubcommand}))
	r := New(opts...)
	t.Cleanup(func() { _ = r.Close() })
	return r
}
