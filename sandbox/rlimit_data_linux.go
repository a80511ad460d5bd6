//go:build linux

package sandbox

import "syscall"

// limitData caps the process's data segment (RLIMIT_DATA), which Linux
// (4.7 and later) counts as every private writable mapping: the Go heap as
// it is mapped in, not the address space it only reserves. It is the
// worker's hard memory limit close to the run's budget (RLIMIT_AS must
// leave room for the ~1.5 GB the runtime reserves and never touches):
// past it the runtime dies with "out of memory", reported as memory_limit,
// however late a watchdog would have been scheduled.
func limitData(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}

// dataLimited says whether limitData does anything here.
const dataLimited = true
