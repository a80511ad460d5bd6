package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/sandbox"
)

// newWorkerCmd is the hidden `tgp __worker`: a sandbox worker process for
// sandbox.isolation: process (package sandbox's init serves it before
// main runs; the command documents it). The kernel starts it; it speaks the framed
// protocol on stdin/stdout and runs agent tools under an address-space
// limit, so a hostile tool's memory never lands in the kernel's process.
func newWorkerCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    sandbox.WorkerSubcommand,
		Short:  "Sandbox worker process (started by the kernel)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The protocol owns stdout: anything else printed goes to
			// stderr, where the kernel keeps the last lines.
			if a.stdout == os.Stdout {
				os.Stdout = os.Stderr
			}
			if err := sandbox.ServeWorker(cmd.Context(), a.stdin, a.stdout); err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
}
