package toolbox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/internal/telemetry"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// Persist is the tools.Persister the mutating tools call: it keeps
// meta.json in step with tools/ and publishes the change by the write
// strategy (commit and push, or the pull-request branch).
func (b *Box) Persist(ctx context.Context, ch tools.Change) (*tools.Persisted, error) {
	paths := append([]string{}, ch.Paths...)
	if meta, err := b.cat.record(paths); err != nil {
		return nil, err
	} else if meta {
		paths = append(paths, registry.FileName)
	}
	repo := b.Repo()
	if repo == nil {
		return &tools.Persisted{Persisted: false, Note: "no git repository or remote configured: the change is saved in the root only"}, nil
	}
	if b.cfg.Strategy == PullRequest {
		if len(paths) == 0 {
			// A commit made with git_commit is on the base branch, which
			// pr mode never pushes.
			return &tools.Persisted{Persisted: false, Note: "write_strategy pr: commits made with git_commit stay local (the base branch is never pushed); changes made with the file tools go to the pull-request branch"}, nil
		}
		ctx, span := telemetry.Start(ctx, "tgp.persist", attribute.String("tgp.tool", ch.Tool),
			attribute.Int("tgp.persist.paths", len(paths)), attribute.String("tgp.write_strategy", PullRequest))
		per, err := b.persistPR(ctx, repo, ch, paths)
		if err != nil {
			span.SetAttributes(telemetry.ErrorType(string(tools.KindOf(err))))
		}
		telemetry.End(span, err)
		return per, err
	}
	return b.persistDirect(ctx, repo, ch, paths)
}

// persistDirect commits the change (and anything left uncommitted) on the
// branch and pushes it. A replay regenerated meta.json through the
// catalog (the hook) already: the registry is not rebuilt afterwards.
func (b *Box) persistDirect(ctx context.Context, repo *gitbackend.Repo, ch tools.Change, paths []string) (*tools.Persisted, error) {
	paths = b.withUncommitted(paths)
	ctx, span := telemetry.Start(ctx, "tgp.persist", attribute.String("tgp.tool", ch.Tool), attribute.Int("tgp.persist.paths", len(paths)))
	start := time.Now()
	res, err := repo.Persist(ctx, gitbackend.Change{Paths: paths, Message: ch.Message})
	recordPersist(ctx, span, start, res, err)
	if err != nil {
		var ce *gitbackend.ConflictError
		if errors.As(err, &ce) {
			b.clearUncommitted(paths) // the root was reset to the remote's version
			_ = b.cat.rebuild()
			return nil, &tools.Error{Kind: tools.KindConflict, Message: ce.Error(), Err: err,
				Details: map[string]any{"paths": ce.Paths, "branch": ce.Branch, "commit": ce.Commit, "pushed": ce.Pushed}}
		}
		if !res.Committed() {
			// Nothing was committed: the change is in the root only. Say
			// so, and commit it with the next change.
			b.addUncommitted(paths)
			op := "persist"
			if errors.Is(err, gitbackend.ErrNoIdentity) {
				op = "commit"
			}
			return nil, &tools.Error{Kind: tools.KindExecutionFailed, Err: err,
				Message: fmt.Sprintf("%s: %v (the change is saved in the root but not committed; it is committed with the next change)", op, err),
				Details: map[string]any{"uncommitted": b.uncommittedPaths()}}
		}
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "persist")
	}
	b.clearUncommitted(paths)
	out := &tools.Persisted{Persisted: !res.Local, Commit: res.Commit, Branch: res.Branch, Attempts: res.Attempts}
	switch {
	case res.Local:
		out.Note = "committed locally: no remote configured"
	case res.NoChange:
		out.Note = "no change: the content equals the last commit"
	case res.Replayed:
		out.Note = "another agent pushed first: your change was recreated on the new remote head and pushed"
	case res.Unlanded:
		landed := false
		out.Landed, out.JournalID = &landed, res.JournalID
		out.Note = fmt.Sprintf("recorded in the journal as entry %d, not on the remote yet: it lands with the fleet's next push (git.journal_ack: journal)", res.JournalID)
	}
	if len(res.Notes) > 0 {
		out.Note = strings.TrimPrefix(out.Note+"; "+strings.Join(res.Notes, "; "), "; ")
	}
	return out, nil
}

// recordPersist puts a persist's outcome on its span and in the metrics:
// attempts, whether it replayed, how many changes its commit carried,
// and, on failure, whether it was a conflict.
func recordPersist(ctx context.Context, span trace.Span, start time.Time, res *gitbackend.PersistResult, err error) {
	outcome := "pushed"
	attrs := []attribute.KeyValue{}
	if res != nil {
		attrs = append(attrs, attribute.Int("tgp.persist.attempts", res.Attempts), attribute.Bool("tgp.persist.replayed", res.Replayed),
			attribute.Int("tgp.persist.batch_size", max(res.Batched, 1)))
		switch {
		case res.Local:
			outcome = "local"
		case res.NoChange:
			outcome = "no_change"
		}
	}
	conflict := errors.Is(err, gitbackend.ErrConflict)
	switch {
	case conflict:
		outcome = "conflict"
	case err != nil:
		outcome = "failed"
	}
	attrs = append(attrs, attribute.Bool("tgp.persist.conflict", conflict), attribute.String("tgp.outcome", outcome))
	span.SetAttributes(attrs...)
	if err != nil {
		span.SetAttributes(telemetry.ErrorType(string(tools.KindOf(err))))
		if conflict {
			span.SetAttributes(telemetry.ErrorType(string(tools.KindConflict)))
		}
	}
	telemetry.End(span, err)
	t := telemetry.From(ctx)
	if t == nil {
		return
	}
	outcomeAttr := metric.WithAttributes(attribute.String("tgp.outcome", outcome))
	t.PersistDuration.Record(ctx, telemetry.Since(start), outcomeAttr)
	if res != nil && res.Attempts > 1 {
		t.PersistRetries.Add(ctx, int64(res.Attempts-1))
	}
	if err == nil && outcome == "pushed" {
		t.WritesLanded.Add(ctx, 1)
	}
}

// indexHashes maps tool paths to their blob hash from the git index when
// the worktree file's size and mtime still match the index entry.
func (b *Box) indexHashes() map[string]string {
	repo := b.Repo()
	if repo == nil {
		return nil
	}
	out := map[string]string{}
	_ = repo.Do(context.Background(), func(r *git.Repository) error {
		idx, err := r.Storer.Index()
		if err != nil {
			return err
		}
		for _, e := range idx.Entries {
			if !registry.IsTool(e.Name) || e.Stage != 0 { // go-git decodes a merged entry as stage 0, not index.Merged (1)
				continue
			}
			info, err := b.fs.Lstat(e.Name)
			if err != nil || uint32(info.Size()) != e.Size || !info.ModTime().Equal(e.ModifiedAt) {
				continue
			}
			out[e.Name] = e.Hash.String()
		}
		return nil
	})
	return out
}

// recoverUncommitted finds, on Open, a change an earlier process wrote to
// the root but could not commit (its commit failed before it existed):
// meta.json differs from HEAD's. The tool files that differ from HEAD then
// belong to it, and are committed with the next change, so meta.json
// never reaches the remote without them.
func (b *Box) recoverUncommitted(ctx context.Context) {
	repo := b.Repo()
	if repo == nil {
		return
	}
	_ = repo.Do(ctx, func(r *git.Repository) error {
		head, err := r.Head()
		if err != nil {
			return nil // no commit yet
		}
		c, err := r.CommitObject(head.Hash())
		if err != nil {
			return nil
		}
		tree, err := c.Tree()
		if err != nil {
			return nil
		}
		differs := func(p string) bool {
			data, rerr := b.fs.ReadFile(p)
			f, ferr := tree.File(p)
			switch {
			case rerr != nil:
				return ferr == nil // gone from the root, still in HEAD
			case ferr != nil:
				return true // new
			}
			return plumbing.ComputeHash(plumbing.BlobObject, data) != f.Hash
		}
		if !differs(registry.FileName) {
			return nil
		}
		paths := []string{registry.FileName}
		listed := map[string]bool{}
		if reg := b.Registry(); reg != nil {
			for _, e := range reg.Entries() {
				listed[e.Path] = true
				if differs(e.Path) {
					paths = append(paths, e.Path)
				}
			}
		}
		// Tools HEAD has that the registry no longer lists were deleted.
		// Every name HEAD holds is walked (tree.Files stops at the first
		// name go-git's path check refuses, anywhere in the repository).
		w := object.NewTreeWalker(tree, true, nil)
		w.SkipPathValidation()
		for {
			name, e, err := w.Next()
			if err != nil {
				break // io.EOF, or an unreadable tree: what was found counts
			}
			if e.Mode.IsFile() && registry.IsTool(name) && !listed[name] && differs(name) {
				paths = append(paths, name)
			}
		}
		w.Close()
		b.addUncommitted(paths)
		return nil
	})
}

func (b *Box) withUncommitted(paths []string) []string {
	b.uncommittedMu.Lock()
	defer b.uncommittedMu.Unlock()
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
	}
	for p := range b.uncommitted {
		if !seen[p] {
			paths = append(paths, p)
		}
	}
	return paths
}

func (b *Box) addUncommitted(paths []string) {
	b.uncommittedMu.Lock()
	defer b.uncommittedMu.Unlock()
	if b.uncommitted == nil {
		b.uncommitted = map[string]bool{}
	}
	for _, p := range paths {
		b.uncommitted[p] = true
	}
}

func (b *Box) clearUncommitted(paths []string) {
	b.uncommittedMu.Lock()
	defer b.uncommittedMu.Unlock()
	for _, p := range paths {
		delete(b.uncommitted, p)
	}
}

func (b *Box) uncommittedPaths() []string {
	b.uncommittedMu.Lock()
	defer b.uncommittedMu.Unlock()
	out := make([]string, 0, len(b.uncommitted))
	for p := range b.uncommitted {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
