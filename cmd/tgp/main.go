// Command tgp is the TGP kernel from the shell: run any agent tool
// (`tgp call`), list tools, bootstrap a project, serve MCP.
//
// Exit codes: 0 success, 1 a tool or command failed, 2 usage error, 130
// interrupted (Ctrl-C, SIGINT) and 143 terminated (SIGTERM), as a shell
// reports a program a signal stopped.
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
	ctx, stop := signalContext(context.Background())
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// interrupted is the cause of a context a signal cancelled: what a
// command cut short reports instead of "context canceled".
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string {
	if e.sig == syscall.SIGTERM {
		return "terminated"
	}
	return "interrupted"
}

// exitCode is the shell's code for a program the signal stopped: 128 +
// its number.
func (e *interrupted) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// signalContext is cancelled, with an *interrupted cause, by the first
// SIGINT or SIGTERM; a second one kills the process as if tgp did not
// catch it (a shutdown that hangs can still be stopped).
func signalContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs)
			cancel(&interrupted{sig: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// interruption is the signal that cancelled ctx, nil if none did.
func interruption(ctx context.Context) *interrupted {
	var in *interrupted
	if errors.As(context.Cause(ctx), &in) {
		return in
	}
	return nil
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
		// A command that finished, even after a signal (serve's clean
		// shutdown), succeeded.
		return 0
	}
	// A command a signal cut short says so, whatever error the cut left
	// (context canceled, with a hint about the remote that does not
	// apply), and exits as a shell reports it.
	if in := interruption(ctx); in != nil {
		fmt.Fprintf(stderr, "tgp: %v\n", in)
		return in.exitCode()
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
