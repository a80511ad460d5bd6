package toolbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// prState is the pull-request strategy's session state.
type prState struct {
	branches map[string]string // per-tool: tool path → branch
	session  string            // per-session branch
	resumed  string            // the recorded session this box continues
	tools    map[string]bool   // tools changed on the session's branch(es)
	prs      map[string]*PR
	verified bool // the host took the token (TokenVerifier): asked once per box
}

// opener is the configured pull-request host, or why there is none.
func (b *Box) opener() (PROpener, error) {
	if b.cfg.PR.OpenerErr != nil {
		return nil, b.cfg.PR.OpenerErr
	}
	if b.cfg.PR.Opener == nil {
		return noHost{reason: "no pull-request host configured; the branch was pushed, open the PR on your host"}, nil
	}
	return b.cfg.PR.Opener, nil
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

func slug(p string) string {
	p = strings.TrimPrefix(p, registry.ToolsDir+"/")
	p = strings.TrimSuffix(p, filepath.Ext(p))
	s := strings.Trim(slugRe.ReplaceAllString(strings.ToLower(p), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	if s == "" {
		s = "change"
	}
	return s
}

func shortID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// prBranch picks the branch for a change: one per session (the default)
// or one per tool.
func (b *Box) prBranch(paths []string) string {
	b.prMu.Lock()
	defer b.prMu.Unlock()
	first := "change"
	for _, p := range paths {
		if p != registry.FileName {
			first = p
			break
		}
	}
	if b.cfg.PR.Per == "tool" {
		if br, ok := b.pr.branches[first]; ok {
			return br
		}
		br := "tgp/" + slug(first) + "-" + shortID()
		b.pr.branches[first] = br
		return br
	}
	if b.pr.session == "" {
		switch {
		case b.cfg.PR.Session != "":
			b.pr.session = "tgp/session-" + slug(b.cfg.PR.Session)
		case b.pr.resumed != "":
			b.pr.session = b.pr.resumed
		default:
			b.pr.session = "tgp/" + slug(first) + "-" + shortID()
		}
		b.rememberSessionBranch(b.pr.session, 0)
	}
	return b.pr.session
}

// sessionFile records the root's last PR session: its branch, and the PR
// number once one was opened.
func (b *Box) sessionFile() string {
	return filepath.Join(b.fs.Root(), ".git", "tgp-session-branch")
}

// rememberSessionBranch records the branch (and PR) in .git so that `tgp
// pr` and later processes can find the session.
func (b *Box) rememberSessionBranch(branch string, pr int) {
	if b.fs.InMemory() {
		return
	}
	body := branch + "\n"
	if pr > 0 {
		body += fmt.Sprintf("pr=%d\n", pr)
	}
	_ = os.WriteFile(b.sessionFile(), []byte(body), 0o644)
}

// recordedSession reads the session file: branch and PR number (0: none
// opened yet).
func (b *Box) recordedSession() (string, int) {
	if b.fs.InMemory() {
		return "", 0
	}
	data, err := os.ReadFile(b.sessionFile())
	if err != nil {
		return "", 0
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	pr := 0
	for _, l := range lines[1:] {
		_, _ = fmt.Sscanf(l, "pr=%d", &pr)
	}
	return strings.TrimSpace(lines[0]), pr
}

// resumeSession picks up the recorded session if its pull request is still
// open (or none was opened yet); a merged or closed one ends it.
func (b *Box) resumeSession(ctx context.Context) {
	branch, pr := b.recordedSession()
	if branch == "" {
		return
	}
	if pr > 0 {
		f, err := b.opener()
		if err != nil {
			return
		}
		open, err := f.FindPR(ctx, branch)
		if err != nil || open == nil {
			return // merged or closed (or unknown): a new session
		}
	}
	b.prMu.Lock()
	b.pr.resumed = branch
	b.prMu.Unlock()
}

// EndSession forgets the root's recorded PR session: the next change
// starts a new branch and pull request. It returns the branch ended.
func (b *Box) EndSession() string {
	branch, _ := b.recordedSession()
	if branch != "" {
		_ = os.Remove(b.sessionFile())
	}
	b.prMu.Lock()
	b.pr.session, b.pr.resumed = "", ""
	b.prMu.Unlock()
	return branch
}

// SessionBranch is the PR branch of this session, or the one the last
// session on this root used.
func (b *Box) SessionBranch() string {
	b.prMu.Lock()
	defer b.prMu.Unlock()
	if b.pr.session != "" {
		return b.pr.session
	}
	branch, _ := b.recordedSession()
	return branch
}

// SessionPR finds the open PR of the session's branch.
func (b *Box) SessionPR(ctx context.Context) (*PR, string, error) {
	branch := b.SessionBranch()
	if branch == "" {
		return nil, "", nil
	}
	f, err := b.opener()
	if err != nil {
		return nil, branch, err
	}
	pr, err := f.FindPR(ctx, branch)
	return pr, branch, err
}

// term is the host's word for a pull request.
func (b *Box) term() string {
	if b.cfg.PR.Term != "" {
		return b.cfg.PR.Term
	}
	return "pull request"
}

// PRTerm is the host's word for a pull request ("merge request" on
// GitLab).
func (b *Box) PRTerm() string { return b.term() }

// prCredentials fails before anything is pushed when the pull-request host
// cannot be used: no token set (naming the variable to set), a forge the
// configuration could not make, or a token the host refuses. A host that
// does not answer is no reason to hold the branch back: it is pushed, and
// opening the pull request is retried by the next change.
func (b *Box) prCredentials(ctx context.Context) error {
	if env := b.cfg.PR.MissingTokenEnv; env != "" {
		p, host := b.cfg.PR.Provider, b.cfg.PR.Host
		if p == "" {
			p, host = "(unnamed)", "host"
		}
		return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf(
			"write_strategy pr with provider %s needs a %s token: set the environment variable %s (named by git.token_env); nothing was pushed", p, host, env)}
	}
	f, err := b.opener()
	if err != nil {
		return tools.Wrap(tools.KindExecutionFailed, err, "the pull-request host is misconfigured; nothing was pushed")
	}
	v, ok := f.(TokenVerifier)
	b.prMu.Lock()
	done := b.pr.verified
	b.prMu.Unlock()
	if !ok || done {
		return nil
	}
	err = v.Verify(ctx)
	if errors.Is(err, ErrTokenRefused) {
		env := b.cfg.PR.TokenEnv
		if env == "" {
			env = "git.token_env"
		}
		return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf(
			"the token in %s was refused: %v; nothing was pushed", env, err)}
	}
	if err == nil {
		b.prMu.Lock()
		b.pr.verified = true
		b.prMu.Unlock()
	}
	return nil
}

// persistPR commits the change on the PR branch, pushes it and opens or
// updates the pull request.
func (b *Box) persistPR(ctx context.Context, repo *gitbackend.Repo, ch tools.Change, paths []string) (*tools.Persisted, error) {
	if err := b.prCredentials(ctx); err != nil {
		return nil, err
	}
	branch := b.prBranch(paths)
	res, err := repo.PersistBranch(ctx, gitbackend.Change{Paths: paths, Message: ch.Message}, branch)
	if err != nil {
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "push pull-request branch %s", branch)
	}
	out := &tools.Persisted{Persisted: !res.Local, Commit: res.Commit, Branch: branch, Attempts: res.Attempts}
	if res.Local {
		out.Note = "committed on " + branch + " locally: no remote configured"
		return out, nil
	}
	b.prMu.Lock()
	for _, p := range paths {
		if registry.IsTool(p) {
			b.pr.tools[p] = true
		}
	}
	b.prMu.Unlock()
	f, err := b.opener()
	if err != nil {
		return nil, err
	}
	pr, err := f.OpenOrUpdatePR(ctx, PRRequest{
		Title: "forge: " + strings.TrimPrefix(branch, "tgp/"), Head: branch, Base: b.branch,
		Body: PRBody(fmt.Sprintf("Changes forged by a TGP agent session on `%s`.", branch), b.prToolChanges(ctx, repo, res.Commit)),
	})
	switch {
	case errors.Is(err, ErrNoPRHost):
		out.Note = "branch " + branch + " pushed; " + err.Error()
	case err != nil:
		return nil, tools.Wrap(tools.KindExecutionFailed, err, "branch %s was pushed, but opening the %s failed (the next change retries it)", branch, b.term())
	default:
		out.PRURL = pr.URL
		out.Note = prNote(pr)
		b.prMu.Lock()
		b.pr.prs[branch] = pr
		if branch == b.pr.session {
			b.rememberSessionBranch(branch, pr.Number)
		}
		b.prMu.Unlock()
	}
	return out, nil
}

// prNote says what became of the pull request in the host's own words
// ("opened merge request !1"), and which of the host's rate limits and
// errors were waited out on the way.
func prNote(pr *PR) string {
	verb := "updated"
	if pr.Created {
		verb = "opened"
	}
	note := verb + " " + pr.Name
	if len(pr.Retries) > 0 {
		note += fmt.Sprintf("; %s answered %d request(s) with a rate limit or an error, each retried: %s",
			pr.Host, len(pr.Retries), strings.Join(pr.Retries, "; "))
	}
	return note
}

// prToolChanges lists the tools the pull request changes, with their
// descriptions and check_tool results, for its description: read from the
// branch's tip against where it left the base branch, so that the tools
// every process and root of the session wrote are listed, not only this
// box's. If the branch cannot be read, this box's own tools are.
func (b *Box) prToolChanges(ctx context.Context, repo *gitbackend.Repo, head string) []ToolChange {
	srcs, err := b.branchTools(ctx, repo, head)
	if err != nil {
		srcs = map[string][]byte{}
		b.prMu.Lock()
		for p := range b.pr.tools {
			srcs[p] = nil
			if src, err := b.fs.ReadFile(p); err == nil {
				srcs[p] = src
			}
		}
		b.prMu.Unlock()
	}
	paths := make([]string, 0, len(srcs))
	for p := range srcs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []ToolChange
	for _, p := range paths {
		src := srcs[p]
		if src == nil {
			out = append(out, ToolChange{Path: p, Description: "(deleted)", Valid: true})
			continue
		}
		tc := ToolChange{Path: p, Description: registry.ExtractDescription(src), Valid: true}
		if b.cfg.Checker != nil {
			errs, warnings := b.cfg.Checker.CheckTool(p, src)
			tc.Valid = len(errs) == 0
			for _, e := range errs {
				tc.Errors = append(tc.Errors, fmt.Sprintf("%s at %d:%d: %s", e.Rule, e.Line, e.Column, e.Message))
			}
			for _, w := range warnings {
				tc.Warnings = append(tc.Warnings, fmt.Sprintf("%s at %d:%d: %s", w.Rule, w.Line, w.Column, w.Message))
			}
		}
		out = append(out, tc)
	}
	return out
}

// branchTools maps each tool the commit head changes against its merge
// base with the base branch (as last fetched) to its source on head (nil:
// deleted).
func (b *Box) branchTools(ctx context.Context, repo *gitbackend.Repo, head string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := repo.Do(ctx, func(g *git.Repository) error {
		tip, err := g.CommitObject(plumbing.NewHash(head))
		if err != nil {
			return err
		}
		ref, err := g.Reference(plumbing.NewRemoteReferenceName("origin", b.branch), true)
		if err != nil {
			return err
		}
		baseTip, err := g.CommitObject(ref.Hash())
		if err != nil {
			return err
		}
		bases, err := tip.MergeBase(baseTip)
		if err != nil || len(bases) == 0 {
			return fmt.Errorf("no merge base of %s and %s: %v", head, b.branch, err)
		}
		from, err := bases[0].Tree()
		if err != nil {
			return err
		}
		to, err := tip.Tree()
		if err != nil {
			return err
		}
		changes, err := object.DiffTreeWithOptions(ctx, from, to, &object.DiffTreeOptions{})
		if err != nil {
			return err
		}
		for _, c := range changes {
			for _, p := range []string{c.From.Name, c.To.Name} {
				if p == "" || !registry.IsTool(p) {
					continue
				}
				f, err := to.File(p)
				if errors.Is(err, object.ErrFileNotFound) {
					out[p] = nil
					continue
				}
				if err != nil {
					return err
				}
				src, err := f.Contents()
				if err != nil {
					return err
				}
				out[p] = []byte(src)
			}
		}
		return nil
	})
	return out, err
}
