//go:build !linux

package sandbox

import (
	"os"
	osexec "os/exec"
)

// workerProcAttr: elsewhere a worker exits when its stdin closes.
func workerProcAttr(cmd *osexec.Cmd) {}

// peakRSSKiB is unknown here.
func peakRSSKiB(ps *os.ProcessState) int64 { return 0 }
