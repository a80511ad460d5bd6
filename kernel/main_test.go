package kernel

import (
	"fmt"
	"os"
	"testing"

	_ "github.com/tgp-go/tgp/forge/all"  // the PR tests open pull requests on every host
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset, as New built before toolsets
	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/shell"
	"github.com/tgp-go/tgp/sqldb/pgtest"
)

var pgDSN string

func TestMain(m *testing.M) {
	// Tests that use sandbox.isolation: process start this binary as the
	// worker (sandbox.worker_command).
	sandbox.ServeWorkerIfRequested()
	// The shell tools' Landlock helper is this binary too.
	shell.ServeExecIfRequested()
	c, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if os.Getenv("CI") != "" {
			os.Exit(1)
		}
	} else {
		pgDSN = c.DSN
	}
	code := m.Run()
	_ = c.Stop()
	os.Exit(code)
}
