// Package shell runs agents' command lines inside the kernel's root with
// scopes that hold: the engine behind the `shell`, `exec_command` and
// `write_stdin` tools.
//
// A command line is parsed and interpreted by a real shell implementation
// (mvdan.cc/sh/v3: syntax + interp), never by /bin/sh. The interpreter
// calls back into this package for every command it is about to execute
// (each stage of a pipeline, every element of a list, subshells, $(…),
// backticks, function bodies, eval and source) with the argv after
// expansion, and for every redirection before the file is opened; both
// are checked against the scopes (command categories, deny list, path
// globs). Wrappers that run other programs (env, xargs, nice, timeout,
// sh -c, bash -c, find -exec) are checked on the inner command, and
// sh/bash scripts are interpreted here rather than handed to a real shell.
//
// External programs run with the working directory inside the root, a
// scrubbed environment, their own process group (killed on timeout,
// cancellation and at the end of the call), and, where the kernel supports
// it, a Landlock ruleset applied in the child by a small helper (this
// binary re-executed with [ExecSubcommand]; see [ServeExecIfRequested]).
//
// Why this is hand-written: the scope rules (categories, the per-directory
// scopes of seed 004, redirection checks, wrapper unwrapping, the Landlock
// rules derived from the same globs, the changed-file accounting that
// feeds persistence) are this project's policy; the shell language, the
// PTY and the Landlock syscalls come from the three libraries above.
// The package imports neither kernel nor tools: the tools layer maps its
// errors ([*Violation], [*ApprovalError], [*TimeoutError]) to tool errors.
package shell
