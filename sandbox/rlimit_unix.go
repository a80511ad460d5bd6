//go:build linux || darwin || freebsd || netbsd || openbsd

package sandbox

import "syscall"

// limitAddressSpace caps the process's virtual address space: past it
// every mmap fails and the Go runtime dies with "out of memory", which the
// parent reports as memory_limit. Set as the worker's first act, before
// any tool runs.
func limitAddressSpace(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: bytes, Max: bytes})
}

// addressSpaceLimited says whether limitAddressSpace does anything here.
const addressSpaceLimited = true
