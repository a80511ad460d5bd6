//go:build unix

package sandbox

import "syscall"

// maxRSS is this process's peak resident set (KiB on Linux).
func maxRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss)
}
