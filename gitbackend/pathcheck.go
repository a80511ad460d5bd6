package gitbackend

import (
	"errors"
	"strings"
)

// verifyPath is a stand-in for package gitpath (git's verify_path) until
// it lands: the components git refuses on every platform it protects.
func verifyPath(p string, isSymlink bool) error {
	if p == "" || strings.HasPrefix(p, "/") {
		return errors.New("empty or absolute path")
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		switch {
		case c == "" || c == "." || c == "..":
			return errors.New("empty, . or .. component")
		case isDotGit(c):
			return errors.New("a .git component")
		case strings.Contains(c, "\\"):
			return errors.New("a backslash (NTFS separator)")
		case i == len(parts)-1 && isSymlink && strings.EqualFold(strings.TrimRight(c, ". "), ".gitmodules"):
			return errors.New(".gitmodules is a symbolic link")
		}
	}
	return nil
}

// isDotGit reports whether a name is .git on a case-insensitive, HFS+ or
// NTFS filesystem.
func isDotGit(c string) bool {
	var b strings.Builder
	for _, r := range c {
		switch r {
		case 0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
			0x206a, 0x206b, 0x206c, 0x206d, 0x206e, 0x206f, 0xfeff:
			continue // HFS+ ignores these
		}
		b.WriteRune(r)
	}
	n := strings.ToLower(strings.TrimRight(b.String(), ". "))
	return n == ".git" || n == "git~1"
}
