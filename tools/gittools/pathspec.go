package gittools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-billy/v5"

	"github.com/tgp-go/tgp/internal/pathspec"
	"github.com/tgp-go/tgp/tools"
)

// parsePathspec resolves the paths of a tool's arguments, given relative
// to wd, as git's parse_pathspec does (internal/pathspec); a pathspec git
// refuses is a bad argument.
func parsePathspec(wd string, items []string) (pathspec.Pathspec, error) {
	return parsePathspecChecked(wd, items, nil)
}

// parsePathspecChecked is parsePathspec with a check of each item as it
// is parsed; the check's error is returned as it is.
func parsePathspecChecked(wd string, items []string, check func(pathspec.Item) error) (pathspec.Pathspec, error) {
	ps, err := pathspec.Parse(wd, items, check)
	if pe := (*pathspec.Error)(nil); errors.As(err, &pe) {
		return ps, &tools.Error{Kind: tools.KindBadArgs, Message: pe.Message}
	}
	return ps, err
}

// pathspecBeyondSymlink is git add's PATHSPEC_SYMLINK_LEADING_PATH
// check: an item (an exclude too) whose path goes through a symbolic link
// in the worktree (has_symlink_leading_path over the item's path, its
// last component included when it ends with a slash) is fatal.
func pathspecBeyondSymlink(fsys billy.Filesystem) func(pathspec.Item) error {
	return func(it pathspec.Item) error {
		p := it.Match
		if it.DirOnly {
			p += "/"
		}
		if beyondSymlink(fsys, p) {
			return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: pathspec '%s' is beyond a symbolic link", it.Raw)}
		}
		return nil
	}
}

// reportPathError is git's report_path_error after checkout_paths
// matched the paths it knows (known: the index's entries, with what it
// read from a tree): an item is seen when it matches one of them; an
// exclusion when any of them is matched by a positive item (only then
// are exclusions tried). Every item not seen is named, in the order
// given, unless the same item given twice was seen.
func reportPathError(raws []string, ps pathspec.Pathspec, known map[string]bool) error {
	seenItem := make([]bool, len(ps.Items))
	anyPositive := false
	for p, ok := range known {
		if !ok {
			continue
		}
		for i, it := range ps.Items {
			if it.Matches(p) {
				seenItem[i], anyPositive = true, true
			}
		}
		anyPositive = anyPositive || len(ps.Items) == 0
	}
	seenRaw := map[string]bool{}
	var notSeen []string
	for _, raw := range raws {
		seen := anyPositive // an exclusion
		for i, it := range ps.Items {
			if it.Raw == raw {
				seen = seenItem[i]
			}
		}
		if seen {
			seenRaw[raw] = true
		} else {
			notSeen = append(notSeen, raw)
		}
	}
	var report []string
	for _, raw := range notSeen {
		if !seenRaw[raw] {
			report = append(report, fmt.Sprintf("error: pathspec '%s' did not match any file(s) known to git", raw))
		}
	}
	if len(report) == 0 {
		return nil
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: strings.Join(report, "\n")}
}
