package gitbackend

import "github.com/tgp-go/tgp/gitpath"

// verifyPath is git's verify_path with core.protectHFS and
// core.protectNTFS on, whatever the platform: a tree one agent pushes is
// cloned by people on macOS and Windows.
func verifyPath(p string, isSymlink bool) error { return gitpath.Verify(p, isSymlink) }
