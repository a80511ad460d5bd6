package main

import (
	"github.com/spf13/cobra"

	"github.com/tgp-go/tgp/shell"
)

// newShellExecCmd is the hidden `tgp __shellexec` (package shell's init
// serves it before main runs; the command documents it): the shell tools'
// helper. The kernel starts it for every external command a command line
// runs; it applies the Landlock ruleset it is given to itself, reports on
// file descriptor 3 and executes the command, so the ruleset holds in the
// child and never in the kernel.
func newShellExecCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:                shell.ExecSubcommand + " SPEC PROGRAM ARGV0 [ARGS...]",
		Short:              "Shell tools' Landlock helper (started by the kernel)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// ServeExec returns only when it could not execute the program.
			return &exitError{code: shell.ServeExec(args)}
		},
	}
}
