package gittools

import (
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/tgp-go/tgp/internal/gitattr"
)

// Worktree files are read as git would store them and written as git
// checks them out (internal/gitattr: text, eol, crlf and ident attributes
// and core.autocrlf / core.eol), so a file checked out with CRLF is not shown
// as changed (or blamed as all "Not Committed Yet").

// newEOLConverter is the end-of-line conversion of repository r with
// settings s (nil: the repository's own core.autocrlf).
func newEOLConverter(r *git.Repository, s *settings) *gitattr.EOL {
	c := &gitattr.EOL{Ident: true}
	if s != nil && s.conf != nil {
		c.AutoCRLF = strings.ToLower(s.conf.String("core.autocrlf", ""))
		c.CoreEOL = strings.ToLower(s.conf.String("core.eol", ""))
	} else if cfg, err := r.Config(); err == nil && cfg.Raw != nil {
		c.AutoCRLF = strings.ToLower(cfg.Raw.Section("core").Option("autocrlf"))
		c.CoreEOL = strings.ToLower(cfg.Raw.Section("core").Option("eol"))
	}
	c.Attrs = loadAttributes(r, true) // files are read when a path needs them
	var index map[string]plumbing.Hash
	c.CRLFInIndex = func(p string) bool {
		if index == nil {
			index = map[string]plumbing.Hash{}
			if idx, err := r.Storer.Index(); err == nil {
				for _, e := range idx.Entries {
					if e.Stage == 0 {
						index[e.Name] = e.Hash
					}
				}
			}
		}
		h, ok := index[p]
		if !ok {
			return false
		}
		data, err := blobLoader(r, h)()
		return err == nil && gitattr.IsTextWithCRLF(data)
	}
	return c
}
