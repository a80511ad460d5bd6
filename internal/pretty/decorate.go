package pretty

// Decorations (%d, %D) as log-tree.c's load_ref_decorations and
// format_decorations build them: every ref's name on the commit it peels
// to, "grafted" on a shallow boundary, HEAD first (as "HEAD -> <branch>"
// when HEAD is on a branch pointing there).

import (
	"sort"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revision"
)

// loadDecorations maps each decorated commit to its decorations in the
// order git prints them: "grafted", HEAD, then the other refs in
// descending refname order (git prepends as it reads refs in ascending
// order, then HEAD, then the grafts).
func loadDecorations(r *git.Repository, full bool) map[plumbing.Hash][]string {
	out := map[plumbing.Hash][]string{}
	headRef, _ := r.Storer.Reference(plumbing.HEAD)
	headBranch := plumbing.ReferenceName("")
	if headRef != nil && headRef.Type() == plumbing.SymbolicReference {
		headBranch = headRef.Target()
	}
	type dec struct {
		full plumbing.ReferenceName
		show string
		h    plumbing.Hash
	}
	var decs []dec
	var headOn plumbing.Hash
	onBranch := false
	if iter, err := r.References(); err == nil {
		_ = iter.ForEach(func(ref *plumbing.Reference) error {
			name := ref.Name()
			if name == plumbing.HEAD {
				return nil
			}
			target := ref
			if ref.Type() == plumbing.SymbolicReference {
				resolved, err := r.Reference(name, true)
				if err != nil {
					return nil
				}
				target = resolved
			}
			th := target.Hash()
			for i := 0; i < 10; i++ {
				tag, err := object.GetTag(r.Storer, th)
				if err != nil {
					break
				}
				th = tag.Target
			}
			show := name.String()
			switch {
			case name == headBranch:
				headOn, onBranch = th, true
				return nil
			case full && name.IsTag():
				show = "tag: " + name.String()
			case full:
			case name.IsBranch(), name.IsRemote():
				show = name.Short()
			case name.IsTag():
				show = "tag: " + name.Short()
			}
			decs = append(decs, dec{full: name, show: show, h: th})
			return nil
		})
	}
	for h := range revision.Shallow(r) {
		out[h] = append(out[h], "grafted")
	}
	switch {
	case onBranch:
		if full {
			out[headOn] = append(out[headOn], "HEAD -> "+headBranch.String())
		} else {
			out[headOn] = append(out[headOn], "HEAD -> "+headBranch.Short())
		}
	case headRef != nil && headRef.Type() == plumbing.HashReference:
		out[headRef.Hash()] = append(out[headRef.Hash()], "HEAD")
	}
	sort.Slice(decs, func(i, j int) bool { return decs[i].full > decs[j].full })
	for _, d := range decs {
		out[d.h] = append(out[d.h], d.show)
	}
	return out
}
