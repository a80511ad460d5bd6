// Package trust decides whether a commit may be trusted to carry code an
// agent runs: it reads git's allowed_signers file
// (gpg.ssh.allowedSignersFile, ssh-keygen(1) "ALLOWED SIGNERS"), verifies
// a commit's SSH signature (namespace "git") against the keys listed for
// its committer, and finds the commit that last changed a path, the one
// whose signature vouches for the path's content.
//
// Design choices, and why:
//   - The signature itself is checked by github.com/hiddeco/sshsig (the
//     library that signs the kernel's commits, gitbackend/signing.go), the
//     keys are parsed by golang.org/x/crypto/ssh: no cryptography here.
//   - The allowed_signers line is parsed by hand (ParseAllowedSigners): no
//     Go library reads this format (x/crypto/ssh reads authorized_keys,
//     whose options differ: namespaces, valid-after and valid-before are
//     allowed_signers' own, and its first field, the principals, is not an
//     option). The part after the principals has authorized_keys' shape
//     and is read by ssh.ParseAuthorizedKey; what is ours is the
//     principals field, the option values (quoting, OpenSSH's time format)
//     and the pattern matching of principals and namespaces. It is fuzzed
//     (FuzzParseAllowedSigners) and checked against ssh-keygen.
//   - It is stricter than `git verify-commit`, never looser: git accepts
//     any listed key whatever the commit claims; here the key must be
//     listed for the committer's email, so a trusted key cannot vouch for
//     a commit made in another's name. A line OpenSSH would refuse makes
//     the whole file an error (ssh-keygen stops at it too).
//   - "Last change" follows git's default history simplification (git log
//     -- PATH): at a merge it follows a parent the path is unchanged from,
//     so the commit found is the one `git log -1 -- PATH` names.
package trust
