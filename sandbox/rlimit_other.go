//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package sandbox

// limitAddressSpace is a no-op where there is no RLIMIT_AS: the worker is
// still killed on timeout and the in-process budget still applies.
func limitAddressSpace(bytes uint64) error { return nil }

const addressSpaceLimited = false
