package gittools

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/pretty"
	"github.com/tgp-go/tgp/tools"
)

type branchArgs struct {
	ListAll     bool   `json:"list_all,omitempty" default:"false" jsonschema:"List local and remote branches (-a)"`
	ListRemote  bool   `json:"list_remote,omitempty" default:"false" jsonschema:"List remote branches only (-r)"`
	Create      string `json:"create,omitempty" jsonschema:"Create new branch with this name"`
	Delete      string `json:"delete,omitempty" jsonschema:"Delete branch (-d, must be merged)"`
	ForceDelete string `json:"force_delete,omitempty" jsonschema:"Force delete branch (-D)"`
	Rename      string `json:"rename,omitempty" jsonschema:"Rename this branch (requires new_name)"`
	NewName     string `json:"new_name,omitempty" jsonschema:"New name when renaming a branch"`
	TimeoutMS   int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir  string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func branchTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[branchArgs]{
		Name:        "git_branch",
		Facts:       tools.Facts{Persists: true},
		Description: "List branches (git branch -v; list_all, list_remote), or create, delete (-d), force_delete (-D) or rename (rename + new_name) one.",
		Annotations: tools.Annotations{Destructive: true, Risk: tools.RiskHigh},
		Risk: func(a branchArgs) tools.Risk {
			switch {
			case a.ForceDelete != "":
				return tools.RiskHigh
			case a.Create != "" || a.Delete != "" || a.Rename != "":
				return tools.RiskMedium
			}
			return tools.RiskLow
		},
		Summary: func(a branchArgs) string {
			switch {
			case a.Create != "":
				return "Create branch " + a.Create
			case a.ForceDelete != "":
				return "Force delete branch " + a.ForceDelete
			case a.Delete != "":
				return "Delete branch " + a.Delete
			case a.Rename != "":
				return "Rename branch " + a.Rename + " to " + a.NewName
			}
			return "List branches"
		},
		Validate: func(a branchArgs) error {
			if a.Rename != "" && a.NewName == "" {
				return tools.BadArg("new_name", "rename requires new_name")
			}
			for _, f := range []struct{ n, v string }{{"create", a.Create}, {"delete", a.Delete}, {"force_delete", a.ForceDelete}, {"rename", a.Rename}, {"new_name", a.NewName}} {
				if f.v == "" {
					continue
				}
				if err := CheckRefFormat(f.v); err != nil {
					return tools.BadArg(f.n, "%s: %v", f.n, err)
				}
			}
			return nil
		},
		Run: func(ctx context.Context, a branchArgs) (tools.Result, error) {
			return d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				return branch(r, a, d.reflogs(r))
			})
		},
	})
}

// CheckRefFormat validates a branch name like `git check-ref-format --branch`.
func CheckRefFormat(name string) error {
	switch {
	case name == "" || name == "HEAD":
		// "@" alone is a valid branch name (refs/heads/@); "HEAD" is not
		// (strbuf_check_branch_ref).
		return fmt.Errorf("'%s' is not a valid branch name", name)
	case strings.HasPrefix(name, "-"):
		return fmt.Errorf("'%s' is not a valid branch name (starts with '-')", name)
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return fmt.Errorf("'%s' is not a valid branch name (bad '/')", name)
	case strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock"):
		return fmt.Errorf("'%s' is not a valid branch name (bad ending)", name)
	case strings.Contains(name, "..") || strings.Contains(name, "@{"):
		return fmt.Errorf("'%s' is not a valid branch name", name)
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return fmt.Errorf("'%s' is not a valid branch name", name)
		}
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return fmt.Errorf("'%s' is not a valid branch name (character %q)", name, c)
		}
	}
	return nil
}

func branch(r *git.Repository, a branchArgs, rl *reflogger) (string, error) {
	switch {
	case a.Create != "":
		name := plumbing.NewBranchReferenceName(a.Create)
		if _, err := r.Storer.Reference(name); err == nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: a branch named '%s' already exists", a.Create)}
		}
		head, err := r.Head()
		if err != nil {
			return "", errUnbornStart(r)
		}
		if err := refAvailable(r, name, ""); err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: cannot lock ref '%s': %v", name, err)}
		}
		if err := r.Storer.SetReference(plumbing.NewHashReference(name, head.Hash())); err != nil {
			return "", err
		}
		// git branch names its start point by the current branch (HEAD
		// when detached).
		from := "HEAD"
		if b, detached := currentBranch(r); !detached {
			from = b
		}
		rl.log(name, plumbing.ZeroHash, head.Hash(), "branch: Created from "+from)
		return "", nil
	case a.Delete != "" || a.ForceDelete != "":
		n := a.Delete
		if a.ForceDelete != "" {
			n = a.ForceDelete
		}
		name := plumbing.NewBranchReferenceName(n)
		ref, err := r.Storer.Reference(name)
		if err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("error: branch '%s' not found.", n)}
		}
		if cur, det := currentBranch(r); !det && cur == n {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("error: Cannot delete branch '%s' checked out", n)}
		}
		if a.ForceDelete == "" {
			head, err := r.Head()
			if err == nil && !isAncestor(r, ref.Hash(), head.Hash()) {
				return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("error: The branch '%s' is not fully merged.\nIf you are sure you want to delete it, run 'git branch -D %s'.", n, n)}
			}
		}
		if err := r.Storer.RemoveReference(name); err != nil {
			return "", err
		}
		rl.drop(name)
		ab := newAbbrever(r)
		defer ab.Close()
		return fmt.Sprintf("Deleted branch %s (was %s).", n, ab.Short(ref.Hash())), nil
	case a.Rename != "":
		old := plumbing.NewBranchReferenceName(a.Rename)
		ref, err := r.Storer.Reference(old)
		if cur, det := currentBranch(r); err != nil && !det && cur == a.Rename {
			if _, herr := r.Head(); herr != nil {
				// The current branch has no commit yet: only HEAD names it.
				return "", r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(a.NewName)))
			}
		}
		if err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("error: refname refs/heads/%s not found\nfatal: Branch rename failed", a.Rename)}
		}
		nn := plumbing.NewBranchReferenceName(a.NewName)
		cur, det := currentBranch(r)
		renamedLog := fmt.Sprintf("Branch: renamed %s to %s", old, nn)
		if nn == old {
			// git branch -m x x moves nothing but logs the rename.
			rl.log(nn, ref.Hash(), ref.Hash(), renamedLog)
			if !det && cur == a.Rename {
				rl.log(plumbing.HEAD, ref.Hash(), ref.Hash(), renamedLog)
			}
			return "", nil
		}
		if _, err := r.Storer.Reference(nn); err == nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: a branch named '%s' already exists", a.NewName)}
		}
		if err := refAvailable(r, nn, old); err != nil {
			return "", &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("error: %v\nfatal: Branch rename failed", err)}
		}
		// The old ref goes first: it may be a directory's only ref
		// where the new one is to be ("feature/x" to "feature").
		if err := r.Storer.RemoveReference(old); err != nil {
			return "", err
		}
		if strings.HasPrefix(string(old), string(nn)+"/") {
			removeEmptyRefDirs(r, old, nn)
		}
		if err := r.Storer.SetReference(plumbing.NewHashReference(nn, ref.Hash())); err != nil {
			return "", err
		}
		if !det && cur == a.Rename {
			if err := r.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, nn)); err != nil {
				return "", err
			}
		}
		rl.move(old, nn)
		rl.log(nn, ref.Hash(), ref.Hash(), renamedLog)
		if !det && cur == a.Rename {
			rl.log(plumbing.HEAD, ref.Hash(), ref.Hash(), renamedLog)
		}
		// The branch's configuration (upstream, ...) moves with it.
		if cfg, err := r.Config(); err == nil {
			if bc, ok := cfg.Branches[a.Rename]; ok {
				delete(cfg.Branches, a.Rename)
				bc.Name = a.NewName
				cfg.Branches[a.NewName] = bc
				if err := r.Storer.SetConfig(cfg); err != nil {
					return "", err
				}
			}
		}
		return "", nil
	}
	return listBranches(r, a)
}

// refAvailable is refs_verify_refname_available: a ref cannot be made
// where another ref is a directory above it ("feature" for
// "feature/x"), nor where refs live below it, packed or loose (skip: a
// ref being renamed away). The error is git's "'<other>' exists; cannot
// create '<name>'".
func refAvailable(r *git.Repository, name, skip plumbing.ReferenceName) error {
	iter, err := r.Storer.IterReferences()
	if err != nil {
		return nil
	}
	var below []string
	above := ""
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		n := string(ref.Name())
		switch {
		case ref.Name() == skip || ref.Name() == name:
		case strings.HasPrefix(string(name), n+"/"):
			if above == "" || len(n) < len(above) {
				above = n
			}
		case strings.HasPrefix(n, string(name)+"/"):
			below = append(below, n)
		}
		return nil
	})
	other := above
	if other == "" && len(below) > 0 {
		sort.Strings(below)
		other = below[0]
	}
	if other == "" {
		return nil
	}
	return fmt.Errorf("'%s' exists; cannot create '%s'", other, name)
}

// errUnbornStart is git branch's (and checkout -b's) refusal to start a
// branch at an unborn HEAD: the start point named as HEAD resolves.
func errUnbornStart(r *git.Repository) error {
	start := "HEAD"
	if b, detached := currentBranch(r); !detached {
		start = b
	}
	return &tools.Error{Kind: tools.KindExecutionFailed, Message: fmt.Sprintf("fatal: not a valid object name: '%s'", start)}
}

func isAncestor(r *git.Repository, anc, of plumbing.Hash) bool {
	if anc == of {
		return true
	}
	c, err := object.GetCommit(r.Storer, of)
	if err != nil {
		return false
	}
	a, err := object.GetCommit(r.Storer, anc)
	if err != nil {
		return false
	}
	ok, err := a.IsAncestor(c)
	return err == nil && ok
}

func listBranches(r *git.Repository, a branchArgs) (string, error) {
	type row struct {
		name   string
		hash   plumbing.Hash
		cur    bool
		target string // a symbolic ref's target, shown as "-> target"
		branch string // a local branch's name, for its upstream
	}
	var rows []row
	ab := newAbbrever(r)
	defer ab.Close()
	cur, detached := currentBranch(r)
	iter, err := r.References()
	if err != nil {
		return "", err
	}
	var remotes []row
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name()
		switch {
		case n.IsBranch() && !a.ListRemote && ref.Type() == plumbing.HashReference:
			rows = append(rows, row{name: n.Short(), hash: ref.Hash(), cur: !detached && n.Short() == cur, branch: n.Short()})
		case n.IsRemote() && (a.ListAll || a.ListRemote):
			short := n.Short()
			if a.ListAll {
				short = "remotes/" + short
			}
			rw := row{name: short, hash: ref.Hash()}
			if ref.Type() == plumbing.SymbolicReference {
				rw.target = ref.Target().Short()
			}
			remotes = append(remotes, rw)
		}
		return nil
	})
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	sort.Slice(remotes, func(i, j int) bool { return remotes[i].name < remotes[j].name })
	if detached && !a.ListRemote {
		if head, err := r.Head(); err == nil {
			rows = append([]row{{name: detachedBranch(r, head.Hash(), ab), hash: head.Hash(), cur: true}}, rows...)
		}
	}
	rows = append(rows, remotes...)
	width := 0
	for _, rw := range rows {
		width = max(width, pretty.StrWidth(rw.name))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", max(width-pretty.StrWidth(s), 0)) }
	var b strings.Builder
	for _, rw := range rows {
		mark := "  "
		if rw.cur {
			mark = "* "
		}
		if rw.target != "" {
			fmt.Fprintf(&b, "%s%s -> %s\n", mark, pad(rw.name), rw.target)
			continue
		}
		subj := ""
		if c, err := object.GetCommit(r.Storer, rw.hash); err == nil {
			subj = onelineSubject(c.Message)
		}
		track := ""
		if rw.branch != "" {
			track = trackingInfo(r, rw.branch, rw.hash)
		}
		fmt.Fprintf(&b, "%s%s %s %s%s\n", mark, pad(rw.name), ab.Short(rw.hash), track, subj)
	}
	return b.String(), nil
}

// trackingInfo is git branch -v's "[ahead N, behind M] " (or "[gone] ")
// for a branch with an upstream; empty when it is up to date or has none.
func trackingInfo(r *git.Repository, branch string, tip plumbing.Hash) string {
	_, ahead, behind, gone, ok := upstream(r, branch, tip)
	switch {
	case !ok:
		return ""
	case gone:
		return "[gone] "
	case ahead > 0 && behind > 0:
		return fmt.Sprintf("[ahead %d, behind %d] ", ahead, behind)
	case ahead > 0:
		return fmt.Sprintf("[ahead %d] ", ahead)
	case behind > 0:
		return fmt.Sprintf("[behind %d] ", behind)
	}
	return ""
}

// onelineSubject is the subject as git branch -v shows it (ref-filter's
// %(contents:subject)): after any leading empty lines, the message up to
// its first empty line (CRLF ones too), its line breaks turned into
// spaces (the CR of a CRLF dropped), nothing trimmed within.
func onelineSubject(msg string) string {
	msg = strings.TrimLeft(msg, "\n")
	end := len(msg)
	for _, sep := range []string{"\n\n", "\r\n\r\n"} {
		if i := strings.Index(msg, sep); i >= 0 && i < end {
			end = i
		}
	}
	sub := strings.TrimRight(msg[:end], "\n")
	var b strings.Builder
	for i := 0; i < len(sub); i++ {
		switch {
		case sub[i] == '\r' && i+1 < len(sub) && sub[i+1] == '\n':
		case sub[i] == '\n':
			b.WriteByte(' ')
		default:
			b.WriteByte(sub[i])
		}
	}
	return b.String()
}

// removeEmptyRefDirs removes the directories of .git that held only the
// loose ref old, up to and including upTo's (git's rename_ref leaves no
// directory where the new ref goes).
func removeEmptyRefDirs(r *git.Repository, old, upTo plumbing.ReferenceName) {
	fsr, ok := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !ok {
		return
	}
	for d := path.Dir(string(old)); len(d) >= len(upTo); d = path.Dir(d) {
		if entries, err := fsr.Filesystem().ReadDir(d); err != nil || len(entries) > 0 {
			return
		}
		if fsr.Filesystem().Remove(d) != nil {
			return
		}
	}
}
