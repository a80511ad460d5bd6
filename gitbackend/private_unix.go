//go:build unix

package gitbackend

import (
	"io/fs"
	"os"
	"syscall"
)

// ownerProblem says why info (from Lstat) is not a file only this user
// can have written: another owner, or a mode that lets group or others
// write or read it. "" when it is private.
func ownerProblem(info fs.FileInfo) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return "no owner to check"
	}
	if int(st.Uid) != os.Getuid() {
		return "owned by another user"
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "open to other users (mode " + info.Mode().Perm().String() + ")"
	}
	return ""
}
