// Command tgp is the TGP kernel from the shell: run any agent tool
// (`tgp call`), list tools, bootstrap a project, serve MCP.
//
// Exit codes: 0 success, 1 a tool or command failed, 2 usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks an error as the user's invocation (exit 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	root := newRootCmd(&app{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ})
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "tgp: %v\n", ee.err)
		}
		return ee.code
	}
	// cobra's own errors (unknown flag, wrong arg count) are usage errors.
	fmt.Fprintf(stderr, "tgp: %v\nRun 'tgp --help' for usage.\n", err)
	return 2
}
