package gitbackend

import (
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/internal/gitattr"
	"github.com/tgp-go/tgp/internal/gitconfig"
)

// checkoutSmudger is the end-of-line conversion a clone's checkout applies
// (internal/gitattr), as git clone does: the tree's own .gitattributes and
// core.autocrlf / core.eol from the global and system configuration (a
// new clone's repository config sets neither). nil when nothing would
// convert, so a plain toolbox pays one scan of the entry list.
func checkoutSmudger(s storer.EncodedObjectStorer, entries []checkoutEntry, environ []string) Smudger {
	attrFiles := map[string]plumbing.Hash{}
	for _, e := range entries {
		if path.Base(e.path) == ".gitattributes" {
			attrFiles[e.path] = e.hash
		}
	}
	conf := gitconfig.Load(environ, nil, "")
	autocrlf := strings.ToLower(conf.String("core.autocrlf", ""))
	coreEOL := strings.ToLower(conf.String("core.eol", ""))
	if len(attrFiles) == 0 && (autocrlf == "" || autocrlf == "false") {
		return nil
	}
	c := &gitattr.EOL{
		Attrs: gitattr.New(func(name string) ([]byte, bool) {
			h, ok := attrFiles[name]
			if !ok {
				return nil, false
			}
			data, err := readBlob(s, h)
			return data, err == nil
		}, nil),
		AutoCRLF: autocrlf,
		CoreEOL:  coreEOL,
	}
	return c.ToWorktree
}
