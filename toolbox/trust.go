package toolbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/internal/revparse"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/trust"
)

// provenance is what the Box knows of who wrote its tools: the history
// of each path (memoized by trust.History) and, with trusted signers
// configured, each commit's verdict. Commits never change, so verdicts
// are kept for the Box's life (bounded).
type provenance struct {
	mu       sync.Mutex
	store    storer.EncodedObjectStorer
	hist     *trust.History
	verdicts map[plumbing.Hash]verdict
}

// verdict is one commit's check against the trusted signers: the
// principal its signature verified for, or why it did not.
type verdict struct {
	principal string
	err       error
}

const maxVerdicts = 1 << 14

// history is the trust.History over r's objects, made again when the
// repository was reopened. The provenance lock must be held.
func (pv *provenance) history(r *git.Repository) *trust.History {
	if pv.hist == nil || pv.store != r.Storer {
		pv.store, pv.hist = r.Storer, trust.NewHistory(r.Storer)
		pv.verdicts = map[plumbing.Hash]verdict{}
	}
	return pv.hist
}

// verify checks commit c against signers, once per commit. The
// provenance lock must be held.
func (pv *provenance) verify(r *git.Repository, c *object.Commit, signers *trust.AllowedSigners) verdict {
	if v, ok := pv.verdicts[c.Hash]; ok {
		return v
	}
	var v verdict
	obj, err := r.Storer.EncodedObject(plumbing.CommitObject, c.Hash)
	if err == nil {
		var raw []byte
		if raw, err = trust.RawObject(obj); err == nil {
			v.principal, v.err = signers.Verify(raw)
		}
	}
	if err != nil {
		v.err = err
	}
	if len(pv.verdicts) >= maxVerdicts {
		pv.verdicts = map[plumbing.Hash]verdict{}
	}
	pv.verdicts[c.Hash] = v
	return v
}

// Trusting reports whether sandbox.trusted_signers is configured.
func (b *Box) Trusting() bool { return b.cfg.TrustedSigners != nil }

// resolveRef is the commit ref names ("" : HEAD). A name that resolves
// to nothing is not_found, naming the ref.
func resolveRef(r *git.Repository, ref string) (*object.Commit, error) {
	rev := ref
	if rev == "" {
		rev = "HEAD"
	}
	h, err := revparse.Commit(r, rev)
	if err != nil {
		if ref == "" {
			return nil, nil // no commit yet
		}
		return nil, &tools.Error{Kind: tools.KindNotFound, Field: "ref", Err: err,
			Message: fmt.Sprintf("ref %q names no commit of the toolbox (a commit, branch or tag: see tgp tools history)", ref)}
	}
	c, err := r.CommitObject(*h)
	if err != nil {
		return nil, &tools.Error{Kind: tools.KindNotFound, Field: "ref", Err: err, Message: fmt.Sprintf("ref %q: %v", ref, err)}
	}
	return c, nil
}

// readRepo runs fn on the repository's objects (gitbackend.Repo.Read)
// with the provenance lock held; errNoRepo without a repository.
func (b *Box) readRepo(ctx context.Context, fn func(r *git.Repository) error) error {
	repo := b.Repo()
	if repo == nil {
		return errNoRepo
	}
	return repo.Read(ctx, func(r *git.Repository) error {
		b.prov.mu.Lock()
		defer b.prov.mu.Unlock()
		return fn(r)
	})
}

var errNoRepo = &tools.Error{Kind: tools.KindNotFound, Message: "the toolbox has no git repository: it has no versions"}

// CheckTrust says whether the code at path may run (exec_tool,
// check_tool) when sandbox.trusted_signers is set: its last change, as
// seen from ref (empty: HEAD), must be a commit signed by a key listed
// for its committer. With ref empty, content is what the root holds:
// content that differs from HEAD's (a tool written in this session and
// not committed yet) is the kernel's own and runs. Otherwise the error
// is an untrusted_tool *tools.Error naming the commit and its author.
func (b *Box) CheckTrust(ctx context.Context, ref, path string, content []byte) error {
	signers := b.cfg.TrustedSigners
	if signers == nil {
		return nil
	}
	if b.Repo() == nil {
		return &tools.Error{Kind: tools.KindUntrustedTool,
			Message: path + ": sandbox.trusted_signers is set but the toolbox has no git repository, so no commit can vouch for the tool"}
	}
	return b.readRepo(ctx, func(r *git.Repository) error {
		head, err := resolveRef(r, ref)
		if err != nil {
			return err
		}
		if head == nil {
			return nil // no commit yet: everything is the session's own
		}
		hist := b.prov.history(r)
		if ref == "" && content != nil {
			h, err := hist.EntryAt(head, path)
			if err != nil {
				return err
			}
			if h.IsZero() || h.String() != registry.BlobHash(content) {
				return nil // written in this session, not committed: the kernel's own
			}
		}
		last, err := hist.LastChange(head, path)
		if errors.Is(err, trust.ErrNoPath) {
			return &tools.Error{Kind: tools.KindNotFound, Field: "path", Err: err, Message: fmt.Sprintf("%s: not in commit %s", path, short(head.Hash))}
		}
		if err != nil {
			return tools.Wrap(tools.KindInternal, err, "%s: history", path)
		}
		v := b.prov.verify(r, last, signers)
		if v.err == nil {
			return nil
		}
		return untrusted(path, last, v.err)
	})
}

// untrusted is the refusal of code whose last change, commit c, the
// trusted signers do not vouch for.
func untrusted(path string, c *object.Commit, why error) *tools.Error {
	author := fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email)
	msg := fmt.Sprintf("%s: its last change, commit %s by %s", path, short(c.Hash), author)
	if c.Committer.Email != c.Author.Email {
		msg += fmt.Sprintf(" (committed by %s <%s>)", c.Committer.Name, c.Committer.Email)
	}
	msg += fmt.Sprintf(" %q, is not trusted: %v. "+
		"It runs again once a trusted signer rewrites it (a kernel whose git.signing_key is listed in sandbox.trusted_signers), "+
		"or revert it to a trusted version (revert_tool; tool_history shows which are signed)",
		firstLine(c.Message), why)
	return &tools.Error{Kind: tools.KindUntrustedTool, Message: msg, Err: why,
		Details: map[string]any{"path": path, "commit": c.Hash.String(), "author": author, "committer_email": c.Committer.Email, "reason": why.Error()}}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func short(h plumbing.Hash) string { return h.String()[:7] }

// SignedBy is the principal the trusted signers verified the last
// change of path (at HEAD) for: "" when none is configured, the path is
// not committed, or its last change is not trusted.
func (b *Box) SignedBy(ctx context.Context, path string) string {
	if b.cfg.TrustedSigners == nil {
		return ""
	}
	_, who := b.Provenance(ctx, path)
	return who
}

// Provenance is where path's committed version comes from: commit, the
// last commit that changed it as seen from HEAD (what `git log -1
// --format=%H -- path` prints), and signedBy, the principal the trusted
// signers verified that commit for (as SignedBy). Both are "" when the
// toolbox has no repository or path is not in HEAD. It is computed when
// asked, never stored: meta.json is committed with the change it
// describes, and a commit cannot contain its own hash. The walk is
// memoized per (commit, path), so asking again at the same HEAD, or
// after one more commit, costs a step.
func (b *Box) Provenance(ctx context.Context, path string) (commit, signedBy string) {
	signers := b.cfg.TrustedSigners
	_ = b.readRepo(ctx, func(r *git.Repository) error {
		head, err := resolveRef(r, "")
		if err != nil || head == nil {
			return err
		}
		last, err := b.prov.history(r).LastChange(head, path)
		if err != nil {
			return err
		}
		commit = last.Hash.String()
		if signers != nil {
			signedBy = b.prov.verify(r, last, signers).principal
		}
		return nil
	})
	return commit, signedBy
}

// ToolHistory lists the commits that changed path, newest first, as
// seen from HEAD: at most limit (<= 0: all).
func (b *Box) ToolHistory(ctx context.Context, path string, limit int) ([]trust.Version, error) {
	out := []trust.Version{}
	err := b.readRepo(ctx, func(r *git.Repository) error {
		head, err := resolveRef(r, "")
		if err != nil || head == nil {
			return err
		}
		hist := b.prov.history(r)
		changes, err := hist.Changes(head, path, limit)
		if err != nil {
			return tools.Wrap(tools.KindInternal, err, "%s: history", path)
		}
		for _, c := range changes {
			v := trust.Version{Commit: c.Hash.String(), Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email),
				Date: c.Author.When, Subject: firstLine(c.Message), Signed: c.PGPSignature != ""}
			if h, err := hist.EntryAt(c, path); err == nil && h.IsZero() {
				v.Deleted = true
			}
			if s := b.cfg.TrustedSigners; s != nil {
				vd := b.prov.verify(r, c, s)
				v.SignedBy = vd.principal
				if vd.err != nil {
					v.Untrusted = vd.err.Error()
				}
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// FileAt is path's content at ref and the commit ref names; not_found
// when the commit has no such file.
func (b *Box) FileAt(ctx context.Context, ref, path string) ([]byte, string, error) {
	var data []byte
	var commit string
	err := b.readRepo(ctx, func(r *git.Repository) error {
		c, err := resolveRef(r, ref)
		if err != nil {
			return err
		}
		if c == nil {
			return &tools.Error{Kind: tools.KindNotFound, Message: "the toolbox has no commit yet"}
		}
		commit = c.Hash.String()
		h, err := b.prov.history(r).EntryAt(c, path)
		if err != nil {
			return err
		}
		if h.IsZero() {
			return &tools.Error{Kind: tools.KindNotFound, Field: "path", Message: fmt.Sprintf("%s: not in commit %s (%s)", path, short(c.Hash), ref)}
		}
		data, err = blobBytes(r, h)
		return err
	})
	return data, commit, err
}

// RevertTool writes path's content at ref back into the root and
// persists it like any write: a new commit (pushed, or on the pull
// request's branch), never a rewrite of history. check (nil: none) sees
// the content first, as write_file's check of a tool file does: an error
// from it refuses the revert and nothing is written.
func (b *Box) RevertTool(ctx context.Context, path, ref string, check func(content []byte) error) (*tools.Persisted, string, error) {
	data, commit, err := b.FileAt(ctx, ref, path)
	if err != nil {
		return nil, "", err
	}
	if check != nil {
		if err := check(data); err != nil {
			return nil, commit, err
		}
	}
	if err := b.fs.WriteFile(path, data, 0o644); err != nil {
		return nil, commit, tools.Wrap(tools.KindExecutionFailed, err, "write %s", path)
	}
	msg := fmt.Sprintf("revert %s to %s", path, commit[:7])
	if ref != commit && !strings.HasPrefix(commit, ref) {
		msg += " (" + ref + ")"
	}
	per, err := b.Persist(ctx, tools.Change{Tool: "revert_tool", Paths: []string{path}, Message: msg})
	return per, commit, err
}
