package tools

import (
	"context"

	"github.com/tgp-go/tgp/registry"
)

// Finder ranks the registry's tools; *registry.Registry implements it,
// and so does *toolbox.Box, over whatever registry is current.
type Finder interface {
	Find(query string, limit int) []registry.Match
}

type findArgs struct {
	Query string `json:"query" minLength:"1" jsonschema:"what the tool should do, in a few words"`
	Limit int    `json:"limit,omitempty" default:"10" minimum:"1" maximum:"100" jsonschema:"maximum results"`
}

// Provenance says where a tool's committed version comes from
// (*toolbox.Box): commit, the last commit that changed path as seen from
// HEAD (`git log -1 --format=%H -- path`), and signedBy, the principal
// sandbox.trusted_signers verified that commit for; "" when none.
type Provenance interface {
	Provenance(ctx context.Context, path string) (commit, signedBy string)
}

// FoundTool is one find_tools hit.
type FoundTool struct {
	Path        string  `json:"path"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
	// Commit is the last commit that changed the tool as seen from HEAD,
	// as `git log -1 --format=%H -- PATH` finds it ("" when the tool is
	// not committed). It is computed when asked: meta.json cannot hold
	// it, being committed with the very change the commit is.
	Commit string `json:"commit"`
	// SignedBy is the principal whose trusted key signed the tool's last
	// change ("" when unsigned, untrusted, or no trusted signers are
	// configured).
	SignedBy string `json:"signed_by"`
}

// FindTool returns find_tools over f (nil: no tools to find).
func FindTool(f Finder) *Tool {
	return Define(Spec[findArgs]{
		Name:   "find_tools",
		Facts:  Facts{ReadsToolbox: true},
		Output: []FoundTool{},
		Description: "Find existing agent tools by name and description (BM25 ranking). Reuse before forging. " +
			"commit is the last commit that changed a tool (as git log -1 -- PATH finds it); " +
			"signed_by names who signed that change when sandbox.trusted_signers is set.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, Risk: RiskLow},
		Summary:     func(a findArgs) string { return "find tools for " + a.Query },
		Run: func(ctx context.Context, a findArgs) (Result, error) {
			out := []FoundTool{}
			if f == nil {
				return Result{Value: out}, nil
			}
			prov, _ := f.(Provenance)
			for _, h := range f.Find(a.Query, a.Limit) {
				ft := FoundTool{Path: h.Path, Name: h.Entry.Name, Description: h.Entry.Description, Score: h.Score}
				if prov != nil {
					ft.Commit, ft.SignedBy = prov.Provenance(ctx, h.Path)
				}
				out = append(out, ft)
			}
			return Result{Value: out}, nil
		},
	})
}
