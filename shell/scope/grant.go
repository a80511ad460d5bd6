package scope

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
)

// Grant widens the scope for one command line (or one session): what a
// host allowed once through request_scope_expansion. The deny list and
// paths.deny still win, and .git stays out of reach.
type Grant struct {
	// Commands are allowed in the given category for this line only.
	Commands map[string]Category
	// Once names dangerous commands the host approved: each runs once
	// without asking the Approver (a name listed twice, twice). A second
	// use in the same line is asked about as usual.
	Once []string
	// Read and Write are extra path globs (shell.paths.read / write syntax).
	Read, Write []string
}

// Empty reports whether g grants nothing.
func (g Grant) Empty() bool {
	return len(g.Commands) == 0 && len(g.Once) == 0 && len(g.Read) == 0 && len(g.Write) == 0
}

type grantKey struct{}

// WithGrant attaches g to ctx: the command line run with ctx gets the
// scope widened by g.
func WithGrant(ctx context.Context, g Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

// GrantOf is the Grant WithGrant attached to ctx.
func GrantOf(ctx context.Context) (Grant, bool) {
	g, ok := ctx.Value(grantKey{}).(Grant)
	return g, ok
}

// With returns a copy of s widened by g. A granted command keeps a deny
// listing (deny wins), and a command already in a category keeps it: a
// dangerous command granted "once" is still dangerous, run once.
func (s *Scopes) With(g Grant) (*Scopes, error) {
	out := &Scopes{cat: maps.Clone(s.cat), deny: s.deny, read: slices.Clone(s.read), write: slices.Clone(s.write), pdeny: s.pdeny}
	for name, c := range g.Commands {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("shell: grant: %w", err)
		}
		switch c {
		case ReadOnly, SafeWrite, Dangerous:
		default:
			return nil, fmt.Errorf("shell: grant: %q: unknown category %q", name, c)
		}
		if _, listed := out.cat[name]; !listed {
			out.cat[name] = c
		}
	}
	read, err := checkGlobs("grant.read", g.Read)
	if err != nil {
		return nil, err
	}
	write, err := checkGlobs("grant.write", g.Write)
	if err != nil {
		return nil, err
	}
	out.read = append(out.read, read...)
	out.write = append(out.write, write...)
	return out, nil
}

// CategoryOf reports a command's category in s, and whether the deny list
// names it (then the category is empty).
func (s *Scopes) CategoryOf(name string) (c Category, denied bool) {
	if s.deny[name] || s.deny[path.Base(name)] {
		return "", true
	}
	return s.cat[name], false
}

// CheckGlob validates one path pattern as shell.paths.* takes it; the
// error names key.
func CheckGlob(key, pattern string) (string, error) {
	out, err := checkGlobs(key, []string{pattern})
	if err != nil {
		return "", err
	}
	return out[0], nil
}
