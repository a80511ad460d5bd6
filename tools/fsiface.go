package tools

import (
	"context"
	"io/fs"
	"path"
	"strings"
)

// FileSystem is what the file tools need from the jail. *vfs.FS implements
// it; every path an agent gives goes through it.
type FileSystem interface {
	Resolve(p string) (string, error)
	ResolveNoFollow(p string) (string, error)
	ReadFile(p string) ([]byte, error)
	WriteFile(p string, data []byte, perm fs.FileMode) error
	MkdirAll(p string, perm fs.FileMode) error
	Remove(p string) error
	Rename(oldp, newp string) error
	Stat(p string) (fs.FileInfo, error)
	Lstat(p string) (fs.FileInfo, error)
	Readlink(p string) (string, error)
	Symlink(target, newp string) error
	ReadDir(p string) ([]fs.FileInfo, error)
	Walk(p string, fn func(rel string, info fs.FileInfo, err error) error) error
}

// Change is one mutation to persist: the paths it touched (relative to the
// root, deletions included) and a commit message.
type Change struct {
	Tool    string
	Paths   []string
	Message string
}

// Persisted reports what became of a change. Persisted is true only once
// the remote accepted the push (or the PR branch was pushed).
type Persisted struct {
	Persisted bool   `json:"persisted"`
	Commit    string `json:"commit,omitempty"`
	Branch    string `json:"branch,omitempty"`
	PRURL     string `json:"pr_url,omitempty"`
	Attempts  int    `json:"attempts,omitempty"`
	Note      string `json:"note,omitempty"`
	// Landed is set (false) only when the write returned once its entry
	// JournalID was durable in the journal (git.journal_ack: journal),
	// before any push: Commit is then the root's own commit, and the
	// entry lands with the fleet's next push. Both are absent when the
	// write waited for the remote.
	Landed    *bool `json:"landed,omitempty"`
	JournalID int64 `json:"journal_id,omitempty"`
}

// Persister commits and pushes changes; *toolbox.Box implements it on the
// git backend. A nil Persister means changes stay local.
type Persister interface {
	Persist(ctx context.Context, ch Change) (*Persisted, error)
}

// FileToolsConfig configures the file tools.
type FileToolsConfig struct {
	// BlockUpwardTraversal refuses any ".." component, even one that would
	// stay inside the root (fs.block_upward_traversal).
	BlockUpwardTraversal bool
	// MaxReadBytes caps what read_file loads (default 10 MiB).
	MaxReadBytes int64
	// Checker, when set, checks the agent tools (registry.IsTool) that
	// write_file, patch_file and apply_patch are about to write.
	Checker ToolChecker
}

type fileTools struct {
	fs      FileSystem
	persist Persister
	cfg     FileToolsConfig
}

// agentPath checks an agent-supplied path and returns the jail's relative
// path. `.git` is never reachable through the file tools: the git tools own it.
func (ft *fileTools) agentPath(field, p string) (string, error) {
	return AgentPath(ft.fs, ft.cfg.BlockUpwardTraversal, field, p)
}

// linkPath is agentPath for operations on a path itself rather than what
// it points to (delete): a symlink resolves to the link, not its target.
func (ft *fileTools) linkPath(field, p string) (string, error) {
	return AgentPath(noFollow{ft.fs}, ft.cfg.BlockUpwardTraversal, field, p)
}

type noFollow struct{ fs FileSystem }

func (n noFollow) Resolve(p string) (string, error) { return n.fs.ResolveNoFollow(p) }

// PathResolver is the jail's path check (*vfs.FS).
type PathResolver interface {
	Resolve(p string) (string, error)
}

// AgentPath is the one jail policy for a path an agent names, used by the
// file tools and by the sandbox bridge (tgp.read_file, tgp.write_file,
// tgp.list_files): with blockUpward any ".." component is refused, even
// one that would stay inside the root; the path must resolve inside the
// root (vfs); and .git is never reachable. It returns the root-relative
// path; a refusal is a sandbox_violation *Error, which matches
// vfs.ErrViolation and fs.ErrPermission.
func AgentPath(fsys PathResolver, blockUpward bool, field, p string) (string, error) {
	if blockUpward {
		for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
			if part == ".." {
				return "", &Error{Kind: KindSandboxViolation, Field: field,
					Message: "path " + quote(p) + " climbs with '..'; use a path inside the root"}
			}
		}
	}
	rel, err := fsys.Resolve(p)
	if err != nil {
		return "", err
	}
	if isGitPath(rel) {
		return "", &Error{Kind: KindSandboxViolation, Field: field,
			Message: "path " + quote(p) + " is inside .git; use the git tools instead"}
	}
	return rel, nil
}

func isGitPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	return false
}

func quote(s string) string { return "\"" + s + "\"" }

func (ft *fileTools) commit(ctx context.Context, tool string, paths []string, msg string) (*Persisted, error) {
	return Commit(ctx, ft.persist, tool, paths, msg)
}

// Commit persists the paths a tool changed through p; with no Persister
// the change stays in the root and the result says so.
func Commit(ctx context.Context, p Persister, tool string, paths []string, msg string) (*Persisted, error) {
	if p == nil {
		return &Persisted{Persisted: false, Note: "no persistence configured; the change is local only"}, nil
	}
	return p.Persist(ctx, Change{Tool: tool, Paths: paths, Message: msg})
}

func defaultMessage(tool string, paths []string) string {
	if len(paths) == 1 {
		return "forge: " + paths[0]
	}
	return "forge: " + tool + " " + path.Base(paths[0]) + " and " + itoa(len(paths)-1) + " more"
}
