package gitbackend

import (
	"bytes"
	"io"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
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

// eolSettings are core.autocrlf and core.eol as git reads them for this
// root: the repository's own config over the global and system ones. Read
// once per Repo: an agent cannot write a root's .git/config (the jail
// refuses it), and a changed ~/.gitconfig is seen by the next kernel.
func (r *Repo) eolSettings() (autocrlf, coreEOL string) {
	r.eolOnce.Do(func() {
		var repoConf []byte
		if r.dot != nil {
			if f, err := r.dot.Open("config"); err == nil {
				repoConf, _ = io.ReadAll(f)
				f.Close()
			}
		}
		conf := gitconfig.Load(r.cfg.Environ, repoConf, "")
		r.autocrlf = strings.ToLower(conf.String("core.autocrlf", ""))
		r.coreEOL = strings.ToLower(conf.String("core.eol", ""))
	})
	return r.autocrlf, r.coreEOL
}

// treeAttrReader reads .gitattributes files from a tree (nil: none).
func treeAttrReader(s storer.EncodedObjectStorer, tree plumbing.Hash) func(string) ([]byte, bool) {
	return func(name string) ([]byte, bool) {
		e, ok, err := treeEntry(s, tree, name)
		if err != nil || !ok || !e.Mode.IsFile() {
			return nil, false
		}
		data, err := readBlob(s, e.Hash)
		return data, err == nil
	}
}

// infoAttributes is .git/info/attributes (nil when absent).
func (r *Repo) infoAttributes() []byte {
	if r.dot == nil {
		return nil
	}
	f, err := r.dot.Open("info/attributes")
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(f)
	return data
}

// checkinCleaner is convert_to_git for the files a persist (or a local
// edit check) reads from the worktree, as git add would store them.
// Attributes come from the worktree, then from tree, which stands for the
// index a persist commits on (git's GIT_ATTR_CHECKIN order). Nothing is
// read until a file holds a CR: no rule changes a file without one.
func (r *Repo) checkinCleaner(s storer.EncodedObjectStorer, tree plumbing.Hash) Cleaner {
	var conv *gitattr.EOL
	return func(p string, data []byte, mode filemode.FileMode) ([]byte, filemode.FileMode) {
		if bytes.IndexByte(data, '\r') < 0 {
			return data, mode
		}
		if conv == nil {
			fromTree := treeAttrReader(s, tree)
			read := func(name string) ([]byte, bool) {
				if f, err := r.wt.Open(name); err == nil {
					data, err := io.ReadAll(f)
					f.Close()
					return data, err == nil
				}
				return fromTree(name)
			}
			conv = &gitattr.EOL{Attrs: gitattr.New(read, r.infoAttributes())}
			conv.AutoCRLF, conv.CoreEOL = r.eolSettings()
			conv.CRLFInIndex = func(p string) bool {
				e, ok, err := treeEntry(s, tree, p)
				if err != nil || !ok {
					return false
				}
				data, err := readBlob(s, e.Hash)
				return err == nil && gitattr.IsTextWithCRLF(data)
			}
		}
		return conv.ToGit(p, data), mode
	}
}

// checkoutSmudgerFor is convert_to_working_tree for a move of the
// worktree to tree (a pull, a refresh, a replay): attributes come from
// the tree being checked out, as git reads them from the new index.
// Nothing is read until a file holds an LF.
func (r *Repo) checkoutSmudgerFor(s storer.EncodedObjectStorer, tree plumbing.Hash) Smudger {
	var conv *gitattr.EOL
	return func(p string, data []byte) []byte {
		if bytes.IndexByte(data, '\n') < 0 {
			return data
		}
		if conv == nil {
			conv = &gitattr.EOL{Attrs: gitattr.New(treeAttrReader(s, tree), r.infoAttributes())}
			conv.AutoCRLF, conv.CoreEOL = r.eolSettings()
		}
		return conv.ToWorktree(p, data)
	}
}

// smudgeAll sets each change's worktree conversion.
func smudgeAll(changes []fileChange, sm Smudger) {
	for i := range changes {
		changes[i].smudge = sm
	}
}
