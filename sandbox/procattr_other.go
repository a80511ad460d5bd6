//go:build !linux

package sandbox

import osexec "os/exec"

// workerProcAttr: elsewhere a worker exits when its stdin closes.
func workerProcAttr(cmd *osexec.Cmd) {}
