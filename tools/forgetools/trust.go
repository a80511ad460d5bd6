package forgetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/tgp-go/tgp/sandbox"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/trust"
)

// Versions is the toolbox's history of its tools (*toolbox.Box): who
// last changed a tool and whether sandbox.trusted_signers vouch for it,
// the code of a past commit, and the tools' histories and reverts.
type Versions interface {
	// CheckTrust returns nil when the code at path may run: as the root
	// holds it (ref empty; content is what will run) or at ref. Else an
	// untrusted_tool *tools.Error. Nil too when no trusted signers are
	// configured.
	CheckTrust(ctx context.Context, ref, path string, content []byte) error
	// Trusting reports whether trusted signers are configured.
	Trusting() bool
	// CodeAt is the root with the code (tools/, node_modules/) of the
	// commit ref names, and that commit.
	CodeAt(ctx context.Context, ref string) (sandbox.FS, string, error)
	ToolHistory(ctx context.Context, path string, limit int) ([]trust.Version, error)
	// RevertTool commits path's content at ref as a new change, once
	// check (nil: none) accepts the content; it returns how it was
	// persisted and the commit ref named.
	RevertTool(ctx context.Context, path, ref string, check func(content []byte) error) (*tools.Persisted, string, error)
}

// importRE finds the module names a tool's source requires or imports
// statically: require("x"), import ... from "x", import "x",
// export ... from "x".
var importRE = regexp.MustCompile(`(?:\brequire\s*\(\s*|\bfrom\s*|\bimport\s*)["']([^"'\n]+)["']`)

// relativeImports are the relative module names src names.
func relativeImports(src []byte) []string {
	var out []string
	for _, m := range importRE.FindAllSubmatch(src, -1) {
		if name := string(m[1]); strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../") {
			out = append(out, name)
		}
	}
	return out
}

// moduleCandidates are the files a relative require from dir may load,
// in the sandbox's order (sandbox/modules.go, requireRelative).
func moduleCandidates(dir, name string) []string {
	base := path.Clean(path.Join(dir, name))
	c := []string{base + ".ts", base + ".js", base + "/index.ts", base + "/index.js"}
	if strings.HasSuffix(base, ".ts") || strings.HasSuffix(base, ".js") || strings.HasSuffix(base, ".json") {
		c = append([]string{base}, c...)
	}
	return c
}

// checkTrust refuses the tool at p (content src, read from fsys) when
// its last change, or that of a module it requires (followed through
// relative imports, as the sandbox will load them from fsys), is not
// trusted. ref is the commit the code is read at ("" for the root).
func checkTrust(ctx context.Context, v Versions, read func(string) ([]byte, error), ref, p string, src []byte) error {
	if v == nil || !v.Trusting() {
		return nil
	}
	seen := map[string]bool{p: true}
	queue := []struct {
		path string
		src  []byte
	}{{p, src}}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if err := v.CheckTrust(ctx, ref, cur.path, cur.src); err != nil {
			if cur.path != p {
				var te *tools.Error
				if errors.As(err, &te) && te.Kind == tools.KindUntrustedTool {
					te = &tools.Error{Kind: te.Kind, Message: fmt.Sprintf("%s requires %s", p, te.Message), Details: te.Details, Err: te.Err}
					return te
				}
			}
			return err
		}
		for _, name := range relativeImports(cur.src) {
			for _, c := range moduleCandidates(path.Dir(cur.path), name) {
				if seen[c] {
					break
				}
				b, err := read(c)
				if err != nil {
					continue
				}
				seen[c] = true
				queue = append(queue, struct {
					path string
					src  []byte
				}{c, b})
				break
			}
		}
	}
	return nil
}

// trustGuard is a run's FS when trusted signers are configured: code
// the run reads (a require the static scan did not see, such as a
// computed name, or a package from node_modules/) is checked as the tool
// was, and refused when untrusted. Data files pass.
type trustGuard struct {
	sandbox.FS
	ctx context.Context // the call's: the FS interface has none
	v   Versions
	ref string

	mu      sync.Mutex
	refused error // the first refusal, which exec_tool returns
}

func (g *trustGuard) ReadFile(p string) ([]byte, error) {
	b, err := g.FS.ReadFile(p)
	if err != nil || !isCode(p) {
		return b, err
	}
	if err := g.v.CheckTrust(g.ctx, g.ref, strings.TrimPrefix(path.Clean("/"+p), "/"), b); err != nil {
		g.mu.Lock()
		if g.refused == nil {
			g.refused = err
		}
		g.mu.Unlock()
		return nil, refusedCode{err}
	}
	return b, nil
}

// err is the first refusal of the run, nil when none.
func (g *trustGuard) err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// refusedCode is a guard's refusal as the sandbox reads it: a denied
// path (fs.ErrPermission), so a require throws a security error with
// the reason instead of looking further.
type refusedCode struct{ error }

func (r refusedCode) Is(target error) bool { return target == fs.ErrPermission }
func (r refusedCode) Unwrap() error        { return r.error }

// isCode: a file the sandbox may load as a module.
func isCode(p string) bool {
	switch path.Ext(p) {
	case ".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx":
		return true
	}
	return false
}
