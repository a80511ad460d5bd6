//go:build !linux

package registry

// The descriptor-based reading of a root on disk is Linux's
// (read_linux.go); elsewhere the VFS does the work.

func osRoot(Source) string { return "" }

type diskTools struct{ paths []string }

func (d *diskTools) close() {}

func listDiskTools(string) (*diskTools, bool) { return nil, false }

func (d *diskTools) readAll() ([][]byte, bool) { return nil, false }
