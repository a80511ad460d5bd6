// Package gitbackend keeps an agent's root in sync with the shared git
// remote: Hydrate clones or fast-forwards, Persist commits a change and
// pushes it, and when another agent pushed first it recreates the change on
// the new remote head (three-way merging files both sides touched exactly
// as git merge-file does, internal/xdiff) and pushes again, with bounded jittered backoff. A real
// conflict keeps the agent's version on a pushed tgp/conflict/<id> branch.
//
// Design choices, and why:
//   - Commits are built at the object level (blobs, then only the trees on
//     the changed paths, then the commit) and the index and worktree are
//     updated for exactly the paths that changed. go-git's Worktree.Add,
//     Status and Reset walk the whole tree; a persist must not.
//   - Local remotes (a path or file://) are served in process by copying
//     objects between the two object stores and updating the remote ref with
//     a compare-and-swap under refs/heads/<b>.lock (git's receive-pack lock
//     protocol, so it holds across OS processes and against the git CLI).
//     This needs no git binary, no process-global transport registration,
//     and avoids go-git's upload-pack "haves" problem entirely.
//   - HTTP(S) and git:// remotes use go-git's transports; the server's
//     receive-pack checks the old value of the ref, which is our CAS.
//   - A push that loses a race on a network remote leaves its commits as a
//     carry (refs/tgp/carry/<branch>/...) for the next winner to land
//     (carry.go). Anyone who can push a ref can push one there, so a
//     carry's ref name ends in an HMAC-SHA256 with the fleet's key over
//     the branch, base, head commit and creation time (carryproof.go);
//     nothing else is landed, and without a key there are no carries.
//   - One Repo serialises its operations (a context-aware mutex) and, on
//     disk, takes a flock so several processes can share one root.
package gitbackend
