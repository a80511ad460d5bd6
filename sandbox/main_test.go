package sandbox

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// workerEnv makes the test binary a sandbox worker (TestMain), the way
// `tgp __worker` is one.
const workerEnv = "TGP_SANDBOX_TEST_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		out := os.Stdout
		os.Stdout = os.Stderr
		if err := ServeWorker(context.Background(), os.Stdin, out); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// processRunner is a Runner whose workers are this test binary.
func processRunner(t testing.TB, opts ...Option) *Runner {
	t.Helper()
	opts = append(opts, WithIsolation(IsolationProcess), WithWorkerCommand([]string{os.Args[0]}, workerEnv+"=1"))
	r := New(opts...)
	t.Cleanup(func() { _ = r.Close() })
	return r
}
