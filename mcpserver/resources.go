package mcpserver

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tgp-go/tgp/registry"
)

// Toolbox is what the server publishes as resources; the kernel
// implements it.
type Toolbox interface {
	// ToolEntries lists the registry's agent tools.
	ToolEntries() []registry.Entry
	// ReadToolboxFile reads meta.json or a registry tool file.
	ReadToolboxFile(path string) ([]byte, error)
	// MaybeRefresh brings in other agents' pushes when due.
	MaybeRefresh(ctx context.Context) string
}

// Resource URIs: tgp://meta.json and tgp://tools/<path under tools/>.
const (
	MetaURI      = "tgp://" + registry.FileName
	ToolTemplate = "tgp://tools/{+path}"
	uriScheme    = "tgp://"
)

// URIOf is the resource URI of a toolbox file (tools/math/add.ts →
// tgp://tools/math/add.ts).
func URIOf(p string) string { return uriScheme + p }

// resources keeps the server's resource list in step with the registry.
type resources struct {
	s  *mcp.Server
	tb Toolbox
	mu sync.Mutex
	// known maps each published tool URI to its content hash.
	known map[string]string
}

func publishResources(s *mcp.Server, tb Toolbox) {
	r := &resources{s: s, tb: tb, known: map[string]string{}}
	s.AddResource(&mcp.Resource{URI: MetaURI, Name: registry.FileName, Title: "Tool registry",
		Description: "The toolbox's registry: every agent tool's name, description, path and hash.",
		MIMEType:    "application/json"}, r.read)
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ToolTemplate, Name: "tool",
		Title:       "Agent tool source",
		Description: "The TypeScript source of an agent tool in the toolbox (see find_tools, meta.json).",
		MIMEType:    "text/typescript"}, r.read)
	r.sync(context.Background())
	s.AddReceivingMiddleware(r.middleware)
}

// middleware refreshes before a resource request (so that a list or read
// sees what other agents pushed) and re-syncs after every request: a tool
// call may have refreshed the root, or forged a tool itself.
func (r *resources) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "resources/") {
			r.tb.MaybeRefresh(ctx)
			r.sync(ctx)
		}
		res, err := next(ctx, method, req)
		if method == "tools/call" {
			r.sync(ctx)
		}
		return res, err
	}
}

// sync adds and removes tool resources to match the registry; the SDK
// sends notifications/resources/list_changed for them (debounced), and
// resources/updated goes to subscribers of a tool whose content changed.
func (r *resources) sync(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := map[string]string{}
	var updated []string
	for _, e := range r.tb.ToolEntries() {
		uri := URIOf(e.Path)
		now[uri] = e.Hash
		old, had := r.known[uri]
		switch {
		case !had:
			r.s.AddResource(&mcp.Resource{URI: uri, Name: e.Path, Title: e.Name, Description: e.Description,
				MIMEType: "text/typescript"}, r.read)
		case old != e.Hash:
			updated = append(updated, uri)
		}
	}
	var gone []string
	for uri := range r.known {
		if _, ok := now[uri]; !ok {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		r.s.RemoveResources(gone...)
	}
	if len(updated) > 0 || len(gone) > 0 || len(now) != len(r.known) {
		updated = append(updated, MetaURI)
	}
	r.known = now
	for _, uri := range updated {
		_ = r.s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

func (r *resources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := strings.CutPrefix(uri, uriScheme)
	if !ok || p == "" || path.Clean(p) != p {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if p != registry.FileName && !strings.HasPrefix(p, "tools/") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := r.tb.ReadToolboxFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	mime := "text/typescript"
	if p == registry.FileName {
		mime = "application/json"
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(data)}}}, nil
}
