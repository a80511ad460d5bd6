//go:build !unix

package gitbackend

import "io/fs"

// ownerProblem: Windows has no uid or mode bits to read here; the queue
// lives under the user's profile, whose ACL keeps other users out, and a
// ticket is still checked against the root it names (ticketcheck.go).
func ownerProblem(info fs.FileInfo) string { return "" }
