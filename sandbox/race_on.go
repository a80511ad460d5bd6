//go:build race

package sandbox

// raceBuild: the race detector's shadow memory is address space too, so
// RLIMIT_AS would fail the race runtime's own mappings; race builds (tests)
// rely on the in-process budget alone.
const raceBuild = true
