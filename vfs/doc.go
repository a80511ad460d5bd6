// Package vfs is TGP's jailed filesystem: every path an agent gives is
// resolved inside one root, and nothing outside it is ever read, written or
// deleted.
//
// Storage is afero: an OsFs under a root directory, or a MemMapFs for
// serverless hosts with no disk. Resolve cleans a path lexically and then
// walks it component by component with Lstat/Readlink, so a symbolic link
// at any component that points outside the root (directly, through a chain,
// or dangling) is refused with an error matching ErrViolation. Writes are
// atomic (temporary file in the same directory, then rename).
//
// Billy returns a go-billy view of the same storage so that go-git keeps its
// worktree and .git inside the jail; it goes through the same resolution.
package vfs
