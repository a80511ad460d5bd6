package gittools

import (
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// leadingHit is a path a switch removes or writes and the symlink or file
// standing in its leading directories.
type leadingHit struct {
	path, lead string
}

// leadingPaths answers unpack-trees' verify_absent questions about the
// directories leading to a path: is one of them a symlink or a file in
// the worktree (check_leading_path), and is that one excluded
// (check_ok_to_remove's is_excluded)? Answers are kept per directory: a
// switch asks about every file below one.
type leadingPaths struct {
	fs      billy.Filesystem
	exclude []gitignore.Pattern // $GIT_DIR/info/exclude
	memo    map[string]string
}

func newLeadingPaths(fs billy.Filesystem, exclude []gitignore.Pattern) *leadingPaths {
	return &leadingPaths{fs: fs, exclude: exclude, memo: map[string]string{}}
}

// nonDir is the shortest leading path of p that lstat finds and that is
// not a directory ("" when each is a directory, or one is missing: git's
// lstat cache stops at a missing one, nothing can be in the way).
func (l *leadingPaths) nonDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	dir := p[:i]
	if q, ok := l.memo[dir]; ok {
		return q
	}
	q := ""
	for j := 0; j <= len(dir); j++ {
		if j < len(dir) && dir[j] != '/' {
			continue
		}
		info, err := l.fs.Lstat(dir[:j])
		if err != nil {
			break
		}
		if !info.IsDir() {
			q = dir[:j]
			break
		}
	}
	l.memo[dir] = q
	return q
}

// excluded is is_excluded for p, a file: info/exclude, then the
// .gitignore of each directory down to p's, the deeper over the
// shallower.
func (l *leadingPaths) excluded(p string) bool {
	ps := append([]gitignore.Pattern(nil), l.exclude...)
	parts := strings.Split(p, "/")
	for i := 0; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		name := ".gitignore"
		if dir != "" {
			name = dir + "/.gitignore"
		}
		ps = append(ps, readIgnore(l.fs, name, parts[:i])...)
	}
	return len(ps) > 0 && gitignore.NewMatcher(ps).Match(parts, false)
}
