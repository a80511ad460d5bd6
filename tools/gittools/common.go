// Package gittools is git's porcelain as eleven agent tools (git_status,
// git_diff, git_show, git_log, git_blame, git_add, git_commit,
// git_branch, git_checkout, git_restore, git_stash), run in process on
// go-git so they work with no git binary: builtin/*.c's argument
// handling and output, over the engines git keeps apart (internal/xdiff
// for line diffs and merges, internal/diffcore for renames and copies,
// internal/reflog, internal/revparse, internal/gitconfig for settings,
// internal/gitattr for attributes, gitbackend for the index and the
// object store). Their text is git 2.39's, checked byte for byte against
// the git CLI by the randomized differential suite (test/integration);
// the differences kept are listed in docs/git-fidelity.md.
//
// Common to every tool: working_dir is resolved through the jail and must
// be inside the root's repository; timeout_ms becomes a context deadline;
// output is cut at max_bytes with "\n\n... [output truncated]"; terminal
// control sequences and the values of secret-looking environment
// variables are removed from output; refs and paths are never parsed as
// options.
package gittools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// Deps is what the git tools need from the kernel.
type Deps struct {
	FS *vfs.FS
	// Repo returns the root's repository (nil when the root is not one).
	Repo func() *gitbackend.Repo
	// Persister pushes commits made by git_commit (nil: local only).
	Persister tools.Persister
	// TimeoutMS and MaxBytes are the defaults from tools.git.
	TimeoutMS int
	MaxBytes  int
	// Environ is searched for secret values to redact from output, and
	// for GIT_AUTHOR_* when no author is configured.
	Environ []string
	// AuthorName and AuthorEmail are git.author from the configuration.
	AuthorName, AuthorEmail string
	// SigningKey is git.signing_key: the SSH private key that signs
	// git_commit's and git_stash's commits (gitbackend.ResolveSigner).
	SigningKey string
}

// Tools returns the git tools.
func Tools(d Deps) []*tools.Tool {
	if d.TimeoutMS <= 0 {
		d.TimeoutMS = 30000
	}
	if d.MaxBytes <= 0 {
		d.MaxBytes = 1048576
	}
	return []*tools.Tool{statusTool(d), logTool(d), diffTool(d), showTool(d), blameTool(d), addTool(d), commitTool(d), branchTool(d), restoreTool(d), checkoutTool(d), stashTool(d)}
}

// errNotRepo is the git tools' "Not a git repository: <path>".
func errNotRepo(p string) error {
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: "Not a git repository: " + p}
}

// run resolves working_dir, applies the timeout and runs fn under the
// repository lock.
func (d Deps) run(ctx context.Context, workingDir string, timeoutMS int, fn func(ctx context.Context, r *git.Repository) (string, error)) (string, error) {
	dir := "."
	if workingDir != "" {
		rel, err := d.FS.Resolve(workingDir)
		if err != nil {
			return "", err
		}
		info, err := d.FS.Stat(rel)
		if err != nil || !info.IsDir() {
			return "", errNotRepo(workingDir)
		}
		dir = rel
	}
	var repo *gitbackend.Repo
	if d.Repo != nil {
		repo = d.Repo()
	}
	if repo == nil {
		return "", errNotRepo(dir)
	}
	if timeoutMS <= 0 {
		timeoutMS = d.TimeoutMS
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutMS)*time.Millisecond)
	defer cancel()
	var out string
	cwd := &cwdPolicy{}
	ctx = context.WithValue(ctx, cwdPolicyKey{}, cwd)
	err := repo.Do(ctx, func(r *git.Repository) error {
		var err error
		out, err = fn(ctx, r)
		if dir != "." && !cwd.mayRemove {
			// git never removes the directory it runs in (setup.c's
			// startup cwd): a checkout, restore or stash that emptied
			// it leaves it in place.
			if _, serr := d.FS.Stat(dir); serr != nil {
				_ = d.FS.MkdirAll(dir, 0o755)
			}
		}
		return err
	})
	// A call that finished is a success even if the deadline passed while
	// it finished: mutating tools check the deadline before their first
	// change (beforeChange) and, once changing, complete, so a timeout
	// is never reported for a change that was made.
	if err != nil && (errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded) {
		te := &tools.Error{Kind: tools.KindTimeout, Message: fmt.Sprintf("git command timed out after %dms", timeoutMS)}
		if out != "" {
			// A timeout returns what was produced
			// before the deadline, marked.
			return "", &partialTimeout{out: d.clean(out), err: te,
				reason: fmt.Sprintf("timeout: the command ran past its %dms deadline (timeout_ms); the output stops where it was then", timeoutMS)}
		}
		return "", te
	}
	if err != nil {
		return "", err
	}
	return d.clean(out), nil
}

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[@-Z\\-_]`)

var secretNameRe = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIAL|DSN)`)

// StripTerminalControl removes what a terminal would take as a control
// sequence (CSI, OSC, and two-byte ESC sequences) from s: the git tools'
// output never carries one, whatever bytes a file or message holds, so
// a result shown on a terminal cannot drive it.
func StripTerminalControl(s string) string { return ansiRe.ReplaceAllString(s, "") }

// clean strips terminal control sequences and redacts secret values.
func (d Deps) clean(s string) string {
	s = StripTerminalControl(s)
	env := d.Environ
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		name, val, ok := strings.Cut(kv, "=")
		if ok && len(val) >= 6 && secretNameRe.MatchString(name) && strings.Contains(s, val) {
			s = strings.ReplaceAll(s, val, "[REDACTED]")
		}
	}
	return s
}

// partialTimeout is a timeout after some output was produced.
type partialTimeout struct {
	out    string
	err    *tools.Error
	reason string
}

func (p *partialTimeout) Error() string { return p.err.Error() }
func (p *partialTimeout) Unwrap() error { return p.err }

// TimeoutMarker ends the partial output of a git tool that timed out.
const TimeoutMarker = "\n\n... [timed out: partial output]"

// beforeChange is the point of no return of a mutating tool: past the
// deadline it refuses, before anything is written; after it, the change
// runs to the end.
func beforeChange(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// text runs fn like run and returns its output as the tool result, cut at
// maxBytes (0: tools.git.max_bytes, the one default). A timeout after some
// output returns that output, marked and flagged truncated.
func (d Deps) text(ctx context.Context, workingDir string, timeoutMS, maxBytes int, fn func(ctx context.Context, r *git.Repository) (string, error)) (tools.Result, error) {
	if maxBytes <= 0 {
		maxBytes = d.MaxBytes
	}
	out, err := d.run(ctx, workingDir, timeoutMS, fn)
	var pt *partialTimeout
	if errors.As(err, &pt) {
		res := tools.Result{Value: pt.out + TimeoutMarker, Truncated: true}
		if maxBytes > 0 && len(pt.out) > maxBytes {
			res = result(pt.out, maxBytes)
			res.Value = res.Value.(string) + TimeoutMarker
		}
		res.TruncatedReason = pt.reason
		if maxBytes > 0 {
			res.Limit = maxBytes + len(TimeoutMarker)
		}
		return res, nil
	}
	if err != nil {
		return tools.Result{}, err
	}
	if maxBytes <= 0 {
		return tools.Result{Value: out}, nil
	}
	return result(out, maxBytes), nil
}

// result truncates text at maxBytes with the tools' truncation marker;
// the Set caps it there too, not at its own default.
func result(s string, maxBytes int) tools.Result {
	cut, truncated := tools.Truncate(s, maxBytes)
	res := tools.Result{Value: cut, Truncated: truncated, Limit: maxBytes}
	if truncated {
		res.TruncatedReason = fmt.Sprintf("output over max_bytes (%d)", maxBytes)
	}
	return res
}

// checkArg refuses a ref or name that git would take as an option, and a
// NUL anywhere. Paths are pathspecs after `--` in git: a leading '-', '..'
// and control characters are all legal there (parsePathspec refuses a path
// that leaves the repository).
func checkArg(field, v string) error {
	isPath := field == "path" || field == "paths"
	if strings.HasPrefix(v, "-") && !isPath {
		return tools.BadArg(field, "%s must not start with '-'", field)
	}
	if strings.ContainsRune(v, 0) || (!isPath && strings.ContainsRune(v, '\n')) {
		return tools.BadArg(field, "%s contains a control character", field)
	}
	return nil
}

// unknownRevision is git's wording for a ref that does not resolve.
func unknownRevision(ref string) error {
	return &tools.Error{Kind: tools.KindExecutionFailed,
		Message: fmt.Sprintf("fatal: ambiguous argument '%s': unknown revision or path not in the working tree.", ref)}
}

// afterSeparator is git's wording for a revision that does not resolve
// when paths follow "--": nothing is ambiguous then, the revision is bad
// (handle_revision_arg's die after a seen "--").
func afterSeparator(err error) error {
	const pre, suf = "fatal: ambiguous argument '", "': unknown revision or path not in the working tree."
	var te *tools.Error
	if errors.As(err, &te) && strings.HasPrefix(te.Message, pre) && strings.HasSuffix(te.Message, suf) {
		return badRevision(strings.TrimSuffix(strings.TrimPrefix(te.Message, pre), suf))
	}
	return err
}

// findEntry looks a path up in a tree (nil when absent); see
// gitbackend.FindEntry for why not go-git's Tree.FindEntry.
func findEntry(s storer.EncodedObjectStorer, t *object.Tree, p string) *object.TreeEntry {
	return gitbackend.FindEntry(s, t, p)
}

// fileAtCommit reads a blob at path p in commit c (ok false when absent or
// not a file).
func fileAtCommit(s storer.EncodedObjectStorer, c *object.Commit, p string) ([]byte, filemode.FileMode, bool) {
	t, err := c.Tree()
	if err != nil {
		return nil, 0, false
	}
	e := findEntry(s, t, p)
	if e == nil || e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
		return nil, 0, false
	}
	blob, err := object.GetBlob(s, e.Hash)
	if err != nil {
		return nil, 0, false
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, 0, false
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, 0, false
	}
	return data, e.Mode, true
}

// worktreeOf is r.Worktree() over the root's own filesystem. go-git wraps
// the worktree filesystem in a validator that refuses to even Lstat a name
// holding a tab or a control character, names git itself checks out and
// lists; the jail (vfs) and git's path rules on writes (gitpath) are the
// policy here, so the wrapper is taken off. TestWorktreeOfUnwraps fails if
// a go-git upgrade changes the wrapper's shape.
func worktreeOf(r *git.Repository) (*git.Worktree, error) {
	w, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(w.Filesystem)
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		if f := v.Elem().FieldByName("Filesystem"); f.IsValid() && f.CanInterface() {
			if raw, ok := f.Interface().(billy.Filesystem); ok && raw != nil {
				w.Filesystem = raw
			}
		}
	}
	return w, nil
}

// relDir is working_dir as a repository-relative directory ("" for the
// root); run has already refused one that does not resolve.
func (d Deps) relDir(workingDir string) string {
	if workingDir == "" {
		return ""
	}
	rel, err := d.FS.Resolve(workingDir)
	if err != nil || rel == "." {
		return ""
	}
	return rel
}

// cwdPolicy says whether the call may leave its working directory
// removed: git spares the directory it runs in, except where it runs a
// child git that does the removing (stash push's reset).
type cwdPolicy struct{ mayRemove bool }

type cwdPolicyKey struct{}

// mayRemoveCwd lets the running call's removals take its working
// directory.
func mayRemoveCwd(ctx context.Context) {
	if p, ok := ctx.Value(cwdPolicyKey{}).(*cwdPolicy); ok {
		p.mayRemove = true
	}
}
