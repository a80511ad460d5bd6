package gittools

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/tools"
)

// checkSubmodulePaths is the check git makes before it looks into a
// submodule for dirtiness (submodule.c, is_submodule_modified →
// validate_submodule_path, git 2.39.5's fix for CVE-2024-32002): a
// gitlink whose place in the worktree holds a symbolic link stops git
// status and a patch against the worktree with exit 128. A gitlink below a
// symbolic link never gets there (check_removed takes it as deleted), nor
// does one git takes as matching the worktree unlooked, nor one the
// pathspec leaves out (match: nil for all).
func checkSubmodulePaths(r *git.Repository, idx *index.Index, match func(string) bool) error {
	if idx == nil {
		return nil
	}
	var links []*index.Entry
	for _, e := range idx.Entries {
		if e.Mode == filemode.Submodule && e.Stage == 0 && !e.SkipWorktree && (match == nil || match(e.Name)) {
			links = append(links, e)
		}
	}
	if len(links) == 0 {
		return nil
	}
	w, err := worktreeOf(r)
	if err != nil {
		return nil
	}
	valid := gitbackend.AssumeUnchangedIn(r.Storer)
	for _, e := range links {
		if valid[e.Name] {
			continue
		}
		info, err := w.Filesystem.Lstat(e.Name)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		leading := false
		for i := strings.IndexByte(e.Name, '/'); i > 0; i = nextSlash(e.Name, i) {
			if li, err := w.Filesystem.Lstat(e.Name[:i]); err == nil && li.Mode()&fs.ModeSymlink != 0 {
				leading = true
				break
			}
		}
		if !leading {
			return &tools.Error{Kind: tools.KindExecutionFailed,
				Message: fmt.Sprintf("error: expected submodule path '%s' not to be a symbolic link", e.Name)}
		}
	}
	return nil
}

// nextSlash is the index of the next '/' in p after i, or -1.
func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}
