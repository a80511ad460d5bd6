// Package gitpath decides whether a path may enter a git tree, with git's
// own rules.
//
// Git refuses to put into its index (and so to check out, or to commit) a
// path that some filesystem would read as the repository's own .git
// directory: ".GIT" on a case-insensitive disk, ".git" followed by an
// HFS+-ignorable code point such as U+200C on macOS, "git~1" (the 8.3
// short name) or ".git. " / ".git::$INDEX_ALLOCATION" on NTFS. A tree that
// holds one becomes code execution for whoever clones it on such a
// filesystem (CVE-2014-9390, CVE-2019-1352 and their kin), and forges
// reject it on push (`git fsck --strict`: hasDotgit). Git also refuses
// ".", "..", empty components and a .gitmodules that is a symbolic link.
//
// This package reimplements verify_path from git's read-cache.c together
// with is_hfs_dotgit / is_ntfs_dotgit and their .gitmodules variants from
// utf8.c and path.c, as git 2.39 runs them with core.protectHFS and
// core.protectNTFS both on. No Go library does this: go-git validates only
// some names on its own write side (and not HFS+ or all NTFS variants), and
// the kernel must apply one rule on every path an agent can write, whatever
// storage is behind it. The tests use git itself as the oracle
// (`git update-index --cacheinfo` runs verify_path; `git fsck --strict`
// runs the tree-entry checks).
//
// Verify refuses exactly what verify_path refuses plus what `git fsck
// --strict` flags in a tree holding the path, and a NUL byte (a C string
// cannot hold one; a Go string can). The fsck-only rules: ".git" right after
// a backslash that starts a component (verify_path on Unix looks only at
// backslashes inside one; fsck, and git on Windows, refuse it), and a
// directory named as .gitmodules or .gitattributes (fsck wants a blob there:
// gitmodulesBlob, gitattributesBlob). The oracle test checks the equality
// on thousands of generated paths.
package gitpath

import (
	"errors"
	"strings"
)

// ErrInvalidPath matches (errors.Is) every refusal of Verify.
var ErrInvalidPath = errors.New("invalid path")

// InvalidPathError is a refused path. Error() is git's own message, so a
// person who knows git recognises it; Reason says which rule refused it.
type InvalidPathError struct {
	Path   string
	Reason string
}

func (e *InvalidPathError) Error() string { return "invalid path '" + e.Path + "'" }

// Is makes errors.Is(err, ErrInvalidPath) true.
func (e *InvalidPathError) Is(target error) bool { return target == ErrInvalidPath }

// Reasons, one per rule; Reason in InvalidPathError is one of these.
const (
	ReasonEmpty            = "empty path"
	ReasonNUL              = "NUL byte in path"
	ReasonLeadingSlash     = "leading '/'"
	ReasonTrailingSlash    = "trailing '/'"
	ReasonEmptyComponent   = "empty component ('//')"
	ReasonDot              = "'.' component"
	ReasonDotDot           = "'..' component"
	ReasonDotGit           = "'.git' component (compared case-insensitively)"
	ReasonHFSDotGit        = "a name HFS+ reads as '.git' (it drops code points such as U+200C and folds case)"
	ReasonNTFSDotGit       = "a name NTFS reads as '.git' (short name git~1, trailing dots or spaces, alternate data stream, or after a backslash)"
	ReasonGitmodulesSymlnk = "'.gitmodules' (or a name HFS+ or NTFS reads as it) as a symbolic link"
	ReasonSpecialDir       = "'.gitmodules' or '.gitattributes' (or a name HFS+ or NTFS reads as one) as a directory"
)

// Verify reports whether p may be a path in a git tree: nil, or an
// *InvalidPathError. p is slash-separated and relative to the top of the
// worktree, exactly as git stores it; isSymlink says whether the entry is a
// symbolic link (which is what makes ".gitmodules" invalid).
func Verify(p string, isSymlink bool) error {
	if r := reason(p, isSymlink); r != "" {
		return &InvalidPathError{Path: p, Reason: r}
	}
	return nil
}

// VerifyCheckout is what git's checkout (and clone) asks of a path already
// in a tree: verify_path alone, without the fsck-only rules Verify adds for
// what may be written. A tree git clones (a directory named .gitattributes,
// a backslash before ".git" in a component on Linux) boots; a name some
// filesystem reads as .git is still refused.
func VerifyCheckout(p string, isSymlink bool) error {
	r := ""
	switch {
	case p == "":
		r = ReasonEmpty
	case strings.IndexByte(p, 0) >= 0:
		r = ReasonNUL
	default:
		r = gitReason(p, isSymlink)
	}
	if r != "" {
		return &InvalidPathError{Path: p, Reason: r}
	}
	return nil
}

// VerifyDir is Verify for a directory (a tree entry): the rules for a file,
// and the last component may not be a name git fsck takes for .gitmodules
// or .gitattributes, which must be blobs.
func VerifyDir(p string) error {
	r := reason(p, false)
	if r == "" {
		last := p[strings.LastIndexByte(p, '/')+1:]
		if isDotGitmodules(last) || isDotGitattributes(last) {
			r = ReasonSpecialDir
		}
	}
	if r != "" {
		return &InvalidPathError{Path: p, Reason: r}
	}
	return nil
}

// reason is Verify's rule, returning which rule refused p ("" if none).
func reason(p string, isSymlink bool) string {
	if p == "" {
		return ReasonEmpty
	}
	if strings.IndexByte(p, 0) >= 0 {
		return ReasonNUL
	}
	if r := gitReason(p, isSymlink); r != "" {
		return r
	}
	// Beyond verify_path, as git fsck: ".git" right after a backslash that
	// starts a component (verify_path checks only backslashes inside one),
	// and a directory named as .gitmodules or .gitattributes (fsck requires
	// a blob there: gitmodulesBlob, gitattributesBlob).
	if dirs := strings.LastIndexByte(p, '/'); dirs > 0 {
		for _, comp := range strings.Split(p[:dirs], "/") {
			if isDotGitmodules(comp) || isDotGitattributes(comp) {
				return ReasonSpecialDir
			}
		}
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && IsNTFSDotGit(p[i+1:]) {
			return ReasonNTFSDotGit
		}
		if p[i] == '\\' && isSymlink && IsNTFSDotGitmodules(p[i+1:]) {
			return ReasonGitmodulesSymlnk
		}
	}
	return ""
}

// gitReason is verify_path_internal from git's read-cache.c on a non-Windows
// build with protect_hfs and protect_ntfs set, for a non-directory entry.
// It walks p the way git does: the checks at the start of every component
// see the whole rest of the path, not just the component.
func gitReason(p string, isSymlink bool) string {
	i := 0
	for {
		// Start of a component: p[i:] is the rest of the path.
		rest := p[i:]
		if IsHFSDotGit(rest) {
			return dotGitReason(rest, ReasonHFSDotGit)
		}
		if isSymlink && IsHFSDotGitmodules(rest) {
			return ReasonGitmodulesSymlnk
		}
		if IsNTFSDotGit(rest) {
			return dotGitReason(rest, ReasonNTFSDotGit)
		}
		if isSymlink && IsNTFSDotGitmodules(rest) {
			return ReasonGitmodulesSymlnk
		}
		c := at(p, i)
		i++
		switch {
		case c == '.':
			if r := dotfileReason(p[i:], isSymlink); r != "" {
				return r
			}
		case c == '/':
			if i == 1 {
				return ReasonLeadingSlash
			}
			return ReasonEmptyComponent
		case c == 0:
			if i == 1 {
				return ReasonEmpty
			}
			return ReasonTrailingSlash
		}
		// The rest of the component.
		for {
			c = at(p, i)
			i++
			if c == 0 {
				return ""
			}
			if c == '/' {
				break
			}
			if c == '\\' {
				if IsNTFSDotGit(p[i:]) {
					return ReasonNTFSDotGit
				}
				if isSymlink && IsNTFSDotGitmodules(p[i:]) {
					return ReasonGitmodulesSymlnk
				}
			}
		}
	}
}

// dotGitReason names the plainer rule when the component is just ".git"
// in some case, so the message does not send the reader to HFS+ or NTFS.
func dotGitReason(rest, otherwise string) string {
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		rest = rest[:j]
	}
	if strings.EqualFold(rest, ".git") {
		return ReasonDotGit
	}
	return otherwise
}

// dotfileReason is git's verify_dotfile: rest follows a '.' that starts a
// component.
func dotfileReason(rest string, isSymlink bool) string {
	c0 := at(rest, 0)
	if c0 == 0 || c0 == '/' {
		return ReasonDot
	}
	switch c0 {
	case 'g', 'G':
		if lower(at(rest, 1)) != 'i' || lower(at(rest, 2)) != 't' {
			break
		}
		if c := at(rest, 3); c == 0 || c == '/' {
			return ReasonDotGit
		}
		if isSymlink && len(rest) >= 10 && strings.EqualFold(rest[3:10], "modules") {
			if c := at(rest, 10); c == 0 || c == '/' {
				return ReasonGitmodulesSymlnk
			}
		}
	case '.':
		if c := at(rest, 1); c == 0 || c == '/' {
			return ReasonDotDot
		}
	}
	return ""
}

// at is s[i], or 0 past the end: git reads these strings up to their NUL.
func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// lower is tolower in the C locale.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// IsNTFSDotGit is git's is_ntfs_dotgit: name (the rest of a path from the
// start of a component) is ".git" or "git~1", case-insensitively, followed
// by any dots and spaces and then the end, a '/' or '\\', or a ':'.
func IsNTFSDotGit(name string) bool {
	i := 0
	switch at(name, 0) {
	case '.':
		if lower(at(name, 1)) != 'g' || lower(at(name, 2)) != 'i' || lower(at(name, 3)) != 't' {
			return false
		}
		i = 4
	case 'g', 'G':
		if lower(at(name, 1)) != 'i' || lower(at(name, 2)) != 't' || at(name, 3) != '~' || at(name, 4) != '1' {
			return false
		}
		i = 5
	default:
		return false
	}
	for ; ; i++ {
		c := at(name, i)
		if c == 0 || c == '/' || c == '\\' || c == ':' {
			return true
		}
		if c != '.' && c != ' ' {
			return false
		}
	}
}

// IsNTFSDotGitmodules is git's is_ntfs_dotgitmodules: ".gitmodules",
// "gitmod~1".."gitmod~4", or an 8.3 fall-back short name of it ("gi7eba~N").
func IsNTFSDotGitmodules(name string) bool { return isNTFSDotGeneric(name, "gitmodules", "gi7eba") }

// IsNTFSDotGitattributes is git's is_ntfs_dotgitattributes.
func IsNTFSDotGitattributes(name string) bool {
	return isNTFSDotGeneric(name, "gitattributes", "gi7d29")
}

// isDotGitmodules is what git fsck takes for a .gitmodules entry: name is
// one tree entry's name.
func isDotGitmodules(name string) bool {
	if IsHFSDotGitmodules(name) || IsNTFSDotGitmodules(name) {
		return true
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '\\' && IsNTFSDotGitmodules(name[i+1:]) {
			return true
		}
	}
	return false
}

// isDotGitattributes is what git fsck takes for a .gitattributes entry
// (fsck does not look behind backslashes for this one).
func isDotGitattributes(name string) bool {
	return IsHFSDotGitattributes(name) || IsNTFSDotGitattributes(name)
}

// isNTFSDotGeneric is git's is_ntfs_dot_generic. Unlike IsNTFSDotGit it
// stops only at the end or a ':' (git calls it on a name, or on the rest of
// a path where only the last component can be a symlink).
func isNTFSDotGeneric(name, dotgitName, shortPrefix string) bool {
	onlySpacesAndPeriods := func(i int) bool {
		for ; ; i++ {
			c := at(name, i)
			if c == 0 || c == ':' {
				return true
			}
			if c != ' ' && c != '.' {
				return false
			}
		}
	}
	n := len(dotgitName)
	if at(name, 0) == '.' && hasFoldPrefix(name[1:], dotgitName) {
		return onlySpacesAndPeriods(n + 1)
	}
	// A regular NTFS short name: the first six characters, then ~1..~4.
	if hasFoldPrefix(name, dotgitName[:6]) && at(name, 6) == '~' && at(name, 7) >= '1' && at(name, 7) <= '4' {
		return onlySpacesAndPeriods(8)
	}
	// A fall-back short name: a hashed prefix, '~', a digit 1-9, more
	// digits, eight characters in all before the dots and spaces.
	sawTilde := false
	i := 0
	for ; i < 8; i++ {
		c := at(name, i)
		switch {
		case c == 0:
			return false
		case sawTilde:
			if c < '0' || c > '9' {
				return false
			}
		case c == '~':
			i++
			if d := at(name, i); d < '1' || d > '9' {
				return false
			}
			sawTilde = true
		case i >= 6:
			return false
		case c&0x80 != 0:
			return false
		case lower(c) != shortPrefix[i]:
			return false
		}
	}
	return onlySpacesAndPeriods(i)
}

// hasFoldPrefix is !strncasecmp(s, prefix, len(prefix)) for an ASCII prefix.
func hasFoldPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if lower(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

// IsHFSDotGit is git's is_hfs_dotgit: name (the rest of a path from the
// start of a component) reads as ".git" on HFS+, which ignores some code
// points and folds case.
func IsHFSDotGit(name string) bool { return isHFSDotGeneric(name, "git") }

// IsHFSDotGitmodules is git's is_hfs_dotgitmodules.
func IsHFSDotGitmodules(name string) bool { return isHFSDotGeneric(name, "gitmodules") }

// IsHFSDotGitattributes is git's is_hfs_dotgitattributes.
func IsHFSDotGitattributes(name string) bool { return isHFSDotGeneric(name, "gitattributes") }

func isHFSDotGeneric(name, needle string) bool {
	i := 0
	if c, ok := nextHFSChar(name, &i); !ok || c != '.' {
		return false
	}
	for j := 0; j < len(needle); j++ {
		c, ok := nextHFSChar(name, &i)
		if !ok || c > 127 || lower(byte(c)) != needle[j] {
			return false
		}
	}
	// Malformed UTF-8 after the needle counts as the end, as in git
	// (next_hfs_char returns 0 for it).
	c, ok := nextHFSChar(name, &i)
	if ok && c != 0 && c != '/' {
		return false
	}
	return true
}

// nextHFSChar is git's next_hfs_char: the next code point at *i, skipping
// those HFS+ ignores. ok is false on malformed UTF-8; the end of s is the
// code point 0.
func nextHFSChar(s string, i *int) (rune, bool) {
	for {
		c, n, ok := pickOneUTF8(s, *i)
		if !ok {
			return 0, false
		}
		*i += n
		switch c {
		case 0x200c, 0x200d, 0x200e, 0x200f, // zero-width (non-)joiner, LRM, RLM
			0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // bidirectional embeddings and overrides
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, // deprecated format characters
			0xfeff: // zero-width no-break space
			continue
		}
		return c, true
	}
}

// pickOneUTF8 is git's pick_one_utf8_char on a NUL-terminated string: it
// decodes one code point at s[i:] and refuses overlong forms, surrogates,
// U+FFFE, U+FFFF and anything above U+10FFFF.
func pickOneUTF8(s string, i int) (c rune, n int, ok bool) {
	b0, b1, b2, b3 := at(s, i), at(s, i+1), at(s, i+2), at(s, i+3)
	switch {
	case b0 < 0x80:
		return rune(b0), 1, true
	case b0&0xe0 == 0xc0:
		if b1&0xc0 != 0x80 || b0&0xfe == 0xc0 {
			return 0, 0, false
		}
		return rune(b0&0x1f)<<6 | rune(b1&0x3f), 2, true
	case b0&0xf0 == 0xe0:
		if b1&0xc0 != 0x80 || b2&0xc0 != 0x80 ||
			(b0 == 0xe0 && b1&0xe0 == 0x80) ||
			(b0 == 0xed && b1&0xe0 == 0xa0) ||
			(b0 == 0xef && b1 == 0xbf && b2&0xfe == 0xbe) {
			return 0, 0, false
		}
		return rune(b0&0x0f)<<12 | rune(b1&0x3f)<<6 | rune(b2&0x3f), 3, true
	case b0&0xf8 == 0xf0:
		if b1&0xc0 != 0x80 || b2&0xc0 != 0x80 || b3&0xc0 != 0x80 ||
			(b0 == 0xf0 && b1&0xf0 == 0x80) ||
			(b0 == 0xf4 && b1 > 0x8f) || b0 > 0xf4 {
			return 0, 0, false
		}
		return rune(b0&0x07)<<18 | rune(b1&0x3f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f), 4, true
	}
	return 0, 0, false
}
