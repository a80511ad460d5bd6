//go:build !linux

package sandbox

// limitData is a no-op where RLIMIT_DATA does not count mmap'd memory:
// RLIMIT_AS (where there is one) is the worker's hard limit there.
func limitData(bytes uint64) error { return nil }

const dataLimited = false
