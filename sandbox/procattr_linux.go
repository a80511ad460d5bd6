package sandbox

import (
	"os"
	osexec "os/exec"
	"syscall"
)

// workerProcAttr makes a worker die with its parent, whatever the parent
// died of.
func workerProcAttr(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// peakRSSKiB is an exited worker's peak resident set (KiB).
func peakRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
