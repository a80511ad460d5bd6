package git

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

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/tools"
)

// logPathspec parses one path argument given relative to wd.
func (d Deps) logPathspec(wd, p string) (pathspec, error) {
	item := p
	if rest, ok := strings.CutPrefix(item, ":/"); ok && !strings.HasPrefix(item, ":(") {
		wd, item = "", rest
		if item == "" {
			item = "."
		}
	} else if strings.HasPrefix(item, ":(") {
		end := strings.IndexByte(item, ')')
		if end > 0 {
			literal, top, known := false, false, true
			for _, m := range strings.Split(item[2:end], ",") {
				switch strings.TrimSpace(m) {
				case "top":
					top = true
				case "literal":
					literal = true
				default:
					known = false
				}
			}
			if known {
				item = item[end+1:]
				if top {
					wd = ""
				}
				if literal {
					item = escapeWildcards(item)
				}
				if item == "" {
					item = "."
				}
			}
		}
	}
	if rel := path.Join(strings.Trim(path.Clean("/"+wd), "/"), item); rel == ".." || strings.HasPrefix(rel, "../") {
		root := d.FS.Root()
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		return pathspec{}, &tools.Error{Kind: tools.KindBadArgs,
			Message: fmt.Sprintf("fatal: %s: '%s' is outside repository at '%s'", p, p, root)}
	}
	return parsePathspec(wd, []string{item})
}

// escapeWildcards quotes the characters wildmatch would read as pattern.
func escapeWildcards(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte("*?[\\", s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// authorHeader is the author line --author matches (after "author "),
// with the name and email rewritten by the mailmap as git log does.
func authorHeader(pc *prettyContext, c *object.Commit) string {
	rc := loadRawCommit(pc, c)
	id := splitIdent(rc.author)
	if !id.ok {
		return rc.author
	}
	name, email := pc.mailmap.mapUser(id.name, id.email)
	return name + " <" + email + ">" + rc.author[strings.LastIndexByte(rc.author, '>')+1:]
}
