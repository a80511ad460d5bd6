//go:build !unix

package pgtest

import "os/exec"

// runAs is a no-op where processes have no uid to switch to (Windows
// has no root, so Start never asks for it).
func runAs(cmd *exec.Cmd, uid, gid int) {}
