package gittools

// git_log's path argument as git's pathspec parser reads it before the
// walk: the ":/" and ":(top)" magic (from the top of the repository
// whatever the working directory), ":(literal)" (no wildcards), and a
// path that leaves the repository, which git refuses naming the work
// tree's real path.

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/tools"
)

// logPathspec parses one path argument given relative to wd.
func (d Deps) logPathspec(wd, p string) (pathspec.Pathspec, error) {
	m, item, err := pathspec.ParseMagic(p)
	if err != nil {
		return pathspec.Pathspec{}, &tools.Error{Kind: tools.KindBadArgs, Message: err.Error()}
	}
	base := wd
	if m.Top {
		base = ""
	}
	written := item // git quotes the item as written, its magic off
	if item == "" {
		item = "."
	}
	if rel := path.Join(strings.Trim(path.Clean("/"+base), "/"), item); rel == ".." || strings.HasPrefix(rel, "../") {
		root := d.FS.Root()
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		return pathspec.Pathspec{}, &tools.Error{Kind: tools.KindBadArgs,
			Message: fmt.Sprintf("fatal: %s: '%s' is outside repository at '%s'", p, written, root)}
	}
	ps, err := parsePathspec(wd, []string{p})
	if err != nil {
		return ps, err
	}
	// git's normalize_path_copy keeps the '/' a last "." or ".." leaves
	// ("d/." is "d/", and "." in directory d is "d/"): the item then
	// names a directory only.
	if last := path.Base("/" + item); !m.Top && (last == "." || last == "..") {
		for i := range ps.Items {
			if ps.Items[i].Pat != "" {
				ps.Items[i].DirOnly = true
			}
		}
		for i := range ps.Exclude {
			if ps.Exclude[i].Pat != "" {
				ps.Exclude[i].DirOnly = true
			}
		}
	}
	return ps, nil
}
