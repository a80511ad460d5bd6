//go:build !linux

package pgtest

import "os/exec"

// dieWithParent has no parent death signal to set outside Linux: a
// server this process leaves behind is reaped by the next Start.
func dieWithParent(cmd *exec.Cmd) {}

// isPostgres cannot ask the process table portably: postmaster.pid,
// whose owner is dead, is trusted.
func isPostgres(pid int) bool { return true }

// zombie cannot tell an exited process from a running one portably.
func zombie(pid int) bool { return false }
