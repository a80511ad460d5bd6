package scope

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tgp-go/tgp/gitpath"
)

// Config is the shell section of the configuration (seed 004's
// bash_tools): command categories, a deny list and path scopes.
type Config struct {
	Categories Categories
	// Deny lists commands refused before anything else is looked at.
	Deny  []string
	Paths Paths
}

// Categories sort the allowed commands by what they can do. A command in
// no list is not allowed. Names without a slash match the command's name
// (a program found in PATH); names with a slash match that exact path.
type Categories struct {
	ReadOnly  []string
	SafeWrite []string
	// Dangerous commands run only when the host's Approver says yes.
	Dangerous []string
}

// Paths are globs relative to the root ("**" matches any number of
// segments, "*" and "?" within one). A pattern covers the paths it
// matches and everything beneath them. Deny wins; write implies read;
// .git is always denied.
type Paths struct {
	Read  []string
	Write []string
	Deny  []string
}

// DefaultConfig is the built-in scope: read-only tools, safe writes, rm
// behind approval, network and privilege tools denied, interpreters not
// listed (so not allowed), the whole root readable and writable except
// .git and secret-looking files.
func DefaultConfig() Config {
	return Config{
		Categories: Categories{
			ReadOnly: []string{"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "find", "sort", "uniq",
				"diff", "cmp", "comm", "file", "stat", "du", "tree", "basename", "dirname", "realpath", "readlink",
				"cut", "tr", "nl", "tac", "rev", "fold", "paste", "join", "column", "expand", "unexpand", "od",
				"md5sum", "sha1sum", "sha256sum", "base64", "strings", "seq", "date", "true", "false", "pwd",
				"printenv", "env", "xargs", "nice", "timeout", "test", "expr", "which", "sleep", "uname"},
			SafeWrite: []string{"mkdir", "touch", "cp", "mv", "echo", "printf", "tee", "chmod"},
			Dangerous: []string{"rm", "rmdir", "shred"},
		},
		Deny: []string{"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp",
			"sudo", "su", "doas", "chown", "chgrp", "mount", "umount", "nohup", "setsid", "kill", "pkill",
			"killall", "crontab", "at", "systemctl", "docker", "podman", "dd", "mkfs"},
		Paths: Paths{
			Read:  []string{"**"},
			Write: []string{"**"},
			Deny:  []string{"**/.env", "**/*.pem", "**/*.key"},
		},
	}
}

// Category is a command's class.
type Category string

// Categories, in increasing order of the scope they need.
const (
	ReadOnly  Category = "read_only"
	SafeWrite Category = "safe_write"
	Dangerous Category = "dangerous"
)

// Scope names what a directory or path must be covered by.
type Scope string

// Scopes.
const (
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
)

// Reasons a command is refused (Violation.Reason).
const (
	ReasonDenied        = "command_denied"
	ReasonNotAllowed    = "command_not_allowed"
	ReasonDirNotInScope = "directory_not_in_scope"
	ReasonPathNotScope  = "path_not_in_scope"
)

// ErrViolation matches every *Violation with errors.Is.
var ErrViolation = errors.New("shell: scope violation")

// Violation is a refused command, directory or path. Its fields are the
// structured details seed 004 asks for.
type Violation struct {
	Reason  string
	Command string
	// Directory is the working directory at fault (directory_not_in_scope),
	// Path the file (path_not_in_scope); both relative to the root when
	// inside it.
	Directory       string
	Path            string
	RequiredScope   Scope
	AllowedPatterns []string
	Message         string
}

func (v *Violation) Error() string { return v.Message }

// Is makes errors.Is(err, ErrViolation) true.
func (v *Violation) Is(target error) bool { return target == ErrViolation }

// ErrApproval matches every *ApprovalError with errors.Is.
var ErrApproval = errors.New("shell: approval required")

// ApprovalError is a dangerous command the Approver did not allow (or
// there is no Approver).
type ApprovalError struct {
	Commands []string
	Message  string
	Err      error
}

func (e *ApprovalError) Error() string { return e.Message }

// Is makes errors.Is(err, ErrApproval) true.
func (e *ApprovalError) Is(target error) bool { return target == ErrApproval }

// Unwrap returns the Approver's own error, if any.
func (e *ApprovalError) Unwrap() error { return e.Err }

// Scopes is a validated, ready-to-use Config.
type Scopes struct {
	cat   map[string]Category
	deny  map[string]bool
	read  []string
	write []string
	pdeny []string
}

// ConfigError names the configuration key at fault.
type ConfigError struct {
	Key     string
	Problem string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("shell config %s: %s", e.Key, e.Problem) }

// NewScopes validates cfg. Keys in errors are the config keys under shell:.
func NewScopes(cfg Config) (*Scopes, error) {
	s := &Scopes{cat: map[string]Category{}, deny: map[string]bool{}}
	lists := []struct {
		key string
		cat Category
		l   []string
	}{
		{"categories.read_only", ReadOnly, cfg.Categories.ReadOnly},
		{"categories.safe_write", SafeWrite, cfg.Categories.SafeWrite},
		{"categories.dangerous", Dangerous, cfg.Categories.Dangerous},
	}
	where := map[string]string{}
	for _, l := range lists {
		for _, name := range l.l {
			if err := checkName(name); err != nil {
				return nil, &ConfigError{Key: l.key, Problem: err.Error()}
			}
			if prev, dup := where[name]; dup {
				return nil, &ConfigError{Key: l.key, Problem: fmt.Sprintf("%q is also in %s; a command has one category", name, prev)}
			}
			where[name] = l.key
			s.cat[name] = l.cat
		}
	}
	for _, name := range cfg.Deny {
		if err := checkName(name); err != nil {
			return nil, &ConfigError{Key: "deny", Problem: err.Error()}
		}
		s.deny[name] = true
	}
	var err error
	if s.read, err = checkGlobs("paths.read", cfg.Paths.Read); err != nil {
		return nil, err
	}
	if s.write, err = checkGlobs("paths.write", cfg.Paths.Write); err != nil {
		return nil, err
	}
	if s.pdeny, err = checkGlobs("paths.deny", cfg.Paths.Deny); err != nil {
		return nil, err
	}
	return s, nil
}

func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("empty command name")
	case strings.ContainsAny(name, " \t\n"):
		return fmt.Errorf("%q: a command name has no spaces (list the command, not a command line)", name)
	}
	return nil
}

func checkGlobs(key string, globs []string) ([]string, error) {
	out := make([]string, 0, len(globs))
	for _, g := range globs {
		c := strings.TrimPrefix(strings.TrimSpace(g), "./")
		switch {
		case c == "":
			return nil, &ConfigError{Key: key, Problem: "empty pattern (use \"**\" for the whole root)"}
		case strings.HasPrefix(c, "/"):
			return nil, &ConfigError{Key: key, Problem: fmt.Sprintf("%q: patterns are relative to the root", g)}
		}
		for _, seg := range strings.Split(c, "/") {
			if seg == ".." {
				return nil, &ConfigError{Key: key, Problem: fmt.Sprintf("%q climbs out of the root with ..", g)}
			}
			if _, err := path.Match(seg, ""); err != nil {
				return nil, &ConfigError{Key: key, Problem: fmt.Sprintf("%q: bad pattern: %v", g, err)}
			}
		}
		c = strings.TrimSuffix(c, "/")
		if c == "." {
			c = "**"
		}
		out = append(out, c)
	}
	return out, nil
}

// Categorize returns a command's category, checking the deny list first
// (seed 004: deny → read_only → safe_write → dangerous). name is argv[0]
// as the command line gave it.
func (s *Scopes) Categorize(name string) (Category, error) {
	// A path (./x, /usr/bin/x) is allowed only when listed as that exact
	// path, but denied when its base name is.
	key := name
	if s.deny[key] || s.deny[path.Base(name)] {
		return "", &Violation{Reason: ReasonDenied, Command: name,
			Message: fmt.Sprintf("command %q is denied by the shell scope (shell.deny) for security; it cannot run here. "+
				"If it is really needed, ask the user to change the scope (request a scope expansion)", name)}
	}
	if c, ok := s.cat[key]; ok {
		return c, nil
	}
	return "", &Violation{Reason: ReasonNotAllowed, Command: name,
		Message: fmt.Sprintf("command %q is not allowed: it is in none of shell.categories (read_only, safe_write, dangerous). "+
			"Use an allowed command, or ask the user to add it to the scope (request a scope expansion)", name)}
}

// Allowed reports the patterns that give scope sc.
func (s *Scopes) Allowed(sc Scope) []string {
	if sc == ScopeWrite {
		return slices.Clone(s.write)
	}
	out := slices.Clone(s.read)
	for _, w := range s.write {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// Denied reports whether rel (slash-separated, relative to the root, "" or
// "." for the root) is in paths.deny or inside .git.
func (s *Scopes) Denied(rel string) bool {
	rel = cleanRel(rel)
	if IsGitPath(rel) {
		return true
	}
	return matchAny(s.pdeny, rel)
}

// Covers reports whether rel has scope sc (and is not denied).
func (s *Scopes) Covers(rel string, sc Scope) bool {
	rel = cleanRel(rel)
	if s.Denied(rel) {
		return false
	}
	if matchAny(s.write, rel) {
		return true
	}
	return sc == ScopeRead && matchAny(s.read, rel)
}

// CheckDir validates a working directory (relative to the root) for a
// command of category c.
func (s *Scopes) CheckDir(cmd, rel string, c Category) error {
	sc := scopeFor(c)
	rel = cleanRel(rel)
	if s.Denied(rel) {
		return &Violation{Reason: ReasonDirNotInScope, Command: cmd, Directory: Display(rel), RequiredScope: sc,
			AllowedPatterns: s.Allowed(sc), Message: fmt.Sprintf("directory %s is denied (shell.paths.deny or .git); run %s elsewhere", Display(rel), cmd)}
	}
	if !s.Covers(rel, sc) {
		return &Violation{Reason: ReasonDirNotInScope, Command: cmd, Directory: Display(rel), RequiredScope: sc,
			AllowedPatterns: s.Allowed(sc), Message: fmt.Sprintf("%s (%s) needs the %s scope in directory %s, which is not in shell.paths.%s %v; "+
				"use a directory inside the scope or ask the user to expand it (request a scope expansion)", cmd, c, sc, Display(rel), sc, s.Allowed(sc))}
	}
	return nil
}

// CheckPath validates a file a command names or a redirection opens.
func (s *Scopes) CheckPath(cmd, rel string, sc Scope) error {
	rel = cleanRel(rel)
	if s.Covers(rel, sc) {
		return nil
	}
	why := fmt.Sprintf("is not in shell.paths.%s %v", sc, s.Allowed(sc))
	if s.Denied(rel) {
		why = "is denied (shell.paths.deny or .git)"
	}
	return &Violation{Reason: ReasonPathNotScope, Command: cmd, Path: Display(rel), RequiredScope: sc, AllowedPatterns: s.Allowed(sc),
		Message: fmt.Sprintf("%s: path %s needs the %s scope and %s; use a path inside the scope or ask the user to expand it (request a scope expansion)", cmd, Display(rel), sc, why)}
}

func scopeFor(c Category) Scope {
	if c == ReadOnly {
		return ScopeRead
	}
	return ScopeWrite
}

// Display is rel as messages show it ("." for the root).
func Display(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func cleanRel(rel string) string {
	rel = path.Clean("/" + strings.ReplaceAll(rel, "\\", "/"))
	return strings.TrimPrefix(rel, "/")
}

// isGitPath: any component that git (or a case-insensitive, HFS+ or NTFS
// file system) would take for .git.
// IsGitPath reports whether rel reaches into .git in any of its spellings.
func IsGitPath(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.EqualFold(part, ".git") || gitpath.IsHFSDotGit(part) || gitpath.IsNTFSDotGit(part) {
			return true
		}
	}
	return false
}

// matchAny: rel or one of its ancestors matches one of the globs.
func matchAny(globs []string, rel string) bool {
	var segs []string
	if rel != "" {
		segs = strings.Split(rel, "/")
	}
	for _, g := range globs {
		gs := strings.Split(g, "/")
		for n := 0; n <= len(segs); n++ {
			if matchSegs(gs, segs[:n]) {
				return true
			}
		}
	}
	return false
}

func matchSegs(glob, segs []string) bool {
	if len(glob) == 0 {
		return len(segs) == 0
	}
	if glob[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(glob[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(glob[0], segs[0]); !ok {
		return false
	}
	return matchSegs(glob[1:], segs[1:])
}

// Denies reports whether the deny list names the command (by its name or
// its path's base name).
func (s *Scopes) Denies(name string) bool { return s.deny[name] }
