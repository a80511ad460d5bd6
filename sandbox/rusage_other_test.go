//go:build !unix

package sandbox

// maxRSS is unknown where getrusage is missing: 0.
func maxRSS() int64 { return 0 }
