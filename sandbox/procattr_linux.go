package sandbox

import (
	osexec "os/exec"
	"syscall"
)

// workerProcAttr makes a worker die with its parent, whatever the parent
// died of.
func workerProcAttr(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
