package gittools

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/tgp-go/tgp/internal/gitattr"
	"github.com/tgp-go/tgp/internal/xdiff"
)

// git stash apply is merge_ort_nonrecursive(index tree, stash's worktree
// tree, stash's base tree) with the labels "Updated upstream" and
// "Stashed changes": merge-ort's per-path rules (process_entry) for the
// cases a stash meets, rebuilt here. A path both sides changed is merged
// by content (xdl_merge with histogram diff, conflict markers; binary
// files keep ours), mode and content apart; a path one side deleted and
// the other changed is a modify/delete conflict; a file one side renamed
// takes the other side's change at its new name. What merge-ort would do
// in rarer shapes (a directory against a file, two types at one path,
// rename/delete, rename/rename, a rename onto an added path, submodules)
// is not rebuilt: the merge reports it as unsupported.

// ortEntry is one path of the merge: its three versions (0 base, 1 ours,
// 2 theirs), the paths they came from (renames), and the result.
type ortEntry struct {
	path      string
	st        [3]side
	has       [3]bool
	names     [3]string
	result    side
	resultOK  bool
	clean     bool
	filemask  int
	conflicts bool // recorded as conflicted (stages in the index)
	// removed: a rename's source, resolved by removal
	removed bool
	// pathConflict: a rename/delete left this path conflicted
	pathConflict bool
	// renamed: versions moved here by a rename (merge-ort's match of
	// the sides was made before, at the original paths)
	renamed bool
	// markerExtra lengthens the conflict markers (a merge of merges)
	markerExtra int
}

// ortMerge is a merge's outcome: every path's entry, the messages git
// prints (by primary path, each path's in order) and, if set, why the
// merge is one this rebuild does not do.
type ortMerge struct {
	entries     map[string]*ortEntry
	msgs        map[string][]string
	unsupported string
	clean       bool
}

// ortOptions are the labels, conflict style and attribute lookups.
type ortOptions struct {
	ancestor, branch1, branch2 string
	style                      xdiff.ConflictStyle
	attrs                      *gitattr.Attributes
	// userDriver says whether merge.<name>.driver is configured
	userDriver func(name string) bool
}

func (m *ortMerge) msg(p, format string, args ...any) {
	m.msgs[p] = append(m.msgs[p], fmt.Sprintf(format, args...))
}

// output is merge_display_update_messages: paths sorted, each path's
// messages in the order they were recorded.
func (m *ortMerge) output() string {
	paths := make([]string, 0, len(m.msgs))
	for p := range m.msgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		for _, l := range m.msgs[p] {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func sameVersion(a side, aok bool, b side, bok bool) bool {
	return aok == bok && (!aok || (a.hash == b.hash && a.mode == b.mode))
}

// objType is a mode's S_IFMT: regular file (either permission), symbolic
// link or gitlink.
func objType(m filemode.FileMode) int {
	switch m {
	case filemode.Symlink:
		return 2
	case filemode.Submodule:
		return 3
	case filemode.Dir:
		return 4
	case filemode.Empty:
		return 0
	}
	return 1
}

// ortMergeTrees merges ours and theirs from base (path → version maps)
// in merge-ort's phases: the versions of every path collected
// (collect_merge_info), the renames of each side processed
// (process_renames), then each path resolved (process_entries). A merge
// it does not rebuild returns with m.unsupported set.
func ortMergeTrees(ctx context.Context, base, ours, theirs map[string]side, o ortOptions) (*ortMerge, error) {
	m := collectOrtEntries(base, ours, theirs)
	if m.unsupported != "" {
		return m, nil
	}
	if err := m.processRenames(ctx, base, ours, theirs, o); err != nil {
		return nil, err
	}
	if m.unsupported != "" {
		return m, nil
	}
	if err := m.processEntries(ctx, o); err != nil {
		return nil, err
	}
	return m, nil
}

// collectOrtEntries is every path's versions in base (0), ours (1) and
// theirs (2); a directory on one side where another has a file is not
// rebuilt (m.unsupported).
func collectOrtEntries(base, ours, theirs map[string]side) *ortMerge {
	m := &ortMerge{entries: map[string]*ortEntry{}, msgs: map[string][]string{}, clean: true}
	get := func(p string) *ortEntry {
		e := m.entries[p]
		if e == nil {
			e = &ortEntry{path: p, names: [3]string{p, p, p}}
			m.entries[p] = e
		}
		return e
	}
	for i, tree := range []map[string]side{base, ours, theirs} {
		for p, s := range tree {
			e := get(p)
			e.st[i], e.has[i] = s, true
		}
	}
	// A directory on one side where another has a file.
	dirs := map[string]bool{}
	for p := range m.entries {
		for d := p; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			if dirs[d] {
				break
			}
			dirs[d] = true
		}
	}
	for p, e := range m.entries {
		if dirs[p] && !(sameVersion(e.st[1], e.has[1], e.st[2], e.has[2]) || sameVersion(e.st[0], e.has[0], e.st[2], e.has[2])) {
			m.unsupported = "a directory and a file at " + p
			return m
		}
	}
	// A file on one side where the other changed something below it:
	// merge-ort keeps both and moves the file aside ("p~<side>").
	for q, e := range m.entries {
		for d := q; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			f := m.entries[d]
			if f == nil {
				continue
			}
			for x := 1; x <= 2; x++ {
				y := 3 - x
				if f.has[x] && !sameVersion(e.st[0], e.has[0], e.st[y], e.has[y]) {
					m.unsupported = "a directory and a file at " + d
					return m
				}
			}
		}
	}
	return m
}

// processRenames handles the renames on each side (process_renames): the
// source's other versions move to the new name, where they merge. A
// rename matters only where the other side did not leave the source as
// it was (merge-ort does not even look for it then).
func (m *ortMerge) processRenames(ctx context.Context, base, ours, theirs map[string]side, o ortOptions) error {
	ren := [3]map[string]string{nil, renamedBetween(base, ours), renamedBetween(base, theirs)}
	trees := [3]map[string]side{base, ours, theirs}
	branch := [3]string{o.ancestor, o.branch1, o.branch2}
	for _, target := range []int{1, 2} {
		other := 3 - target
		srcs := make([]string, 0, len(ren[target]))
		for src := range ren[target] {
			srcs = append(srcs, src)
		}
		sort.Strings(srcs)
		for _, src := range srcs {
			dst := ren[target][src]
			ov, inOther := trees[other][src]
			if sameVersion(base[src], true, ov, inOther) {
				continue
			}
			if d2, ok := ren[other][src]; ok {
				if d2 != dst {
					m.unsupported = "rename/rename of " + src
					return nil
				}
				if target == 2 {
					continue // done from side 1
				}
				e := m.entries[dst]
				e.st[0], e.has[0], e.names[0] = base[src], true, src
				e.renamed = true
				m.entries[src].removed = true
				continue
			}
			_, collision := trees[other][dst]
			e := m.entries[dst]
			e.renamed = true
			switch {
			case collision && inOther:
				// rename/add: the rename's content merge first (markers one
				// longer), then an add/add with what the other side has at
				// the new path.
				tmp := &ortEntry{names: [3]string{src, src, src}, has: [3]bool{true, true, true}, markerExtra: 1}
				tmp.st[0], tmp.st[other] = base[src], ov
				tmp.st[target], tmp.names[target] = e.st[target], dst
				if objType(tmp.st[1].mode) != objType(tmp.st[2].mode) || objType(ov.mode) == 3 || objType(e.st[target].mode) == 3 {
					m.unsupported = "a rename onto " + dst
					return nil
				}
				res, clean, err := m.contentMerge(ctx, src, tmp, o)
				if err != nil {
					return err
				}
				if m.unsupported != "" {
					return nil
				}
				e.st[target] = res
				if !clean {
					m.msg(dst, "CONFLICT (rename involved in collision): rename of %s -> %s has content conflicts AND collides with another path; this may result in nested conflict markers.", src, dst)
				}
			case !inOther:
				// rename/delete (with an add at the new name: add/add).
				e.pathConflict = true
				if !collision {
					e.st[0], e.has[0], e.names[0] = base[src], true, src
				}
				m.msg(dst, "CONFLICT (rename/delete): %s renamed to %s in %s, but deleted in %s.", src, dst, branch[target], branch[other])
			default:
				e.st[0], e.has[0], e.names[0] = base[src], true, src
				e.st[other], e.has[other], e.names[other] = ov, true, src
			}
			m.entries[src].removed = true
		}
	}
	return nil
}

// processEntries resolves each path (process_entries): a trivial merge
// takes the side that changed, two versions of one type merge their
// content, an add or a modify/delete leaves the version there is.
func (m *ortMerge) processEntries(ctx context.Context, o ortOptions) error {
	paths := make([]string, 0, len(m.entries))
	for p := range m.entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e := m.entries[p]
		for i := 0; i < 3; i++ {
			if e.has[i] {
				e.filemask |= 1 << i
			}
		}
		b, bok := e.st[0], e.has[0]
		a, aok := e.st[1], e.has[1]
		t, tok := e.st[2], e.has[2]
		e.clean = true
		if e.removed {
			e.resultOK = false
			continue
		}
		trivial := !e.renamed
		switch {
		case e.renamed:
		case sameVersion(a, aok, t, tok), sameVersion(b, bok, t, tok):
			e.result, e.resultOK = a, aok
		case sameVersion(b, bok, a, aok):
			e.result, e.resultOK = t, tok
		default:
			trivial = false
		}
		if trivial {
			if e.pathConflict && e.resultOK {
				e.clean, e.conflicts, m.clean = false, true, false
			}
			continue
		}
		for _, s := range []side{b, a, t} {
			if s.mode == filemode.Submodule {
				m.unsupported = "a submodule at " + p
				return nil
			}
		}
		switch {
		case aok && tok && objType(a.mode) != objType(t.mode):
			m.unsupported = "two types at " + p
			return nil
		case aok && tok:
			res, clean, err := m.contentMerge(ctx, p, e, o)
			if err != nil {
				return err
			}
			e.result, e.resultOK, e.clean = res, true, clean && !e.pathConflict
			if !clean {
				reason := "content"
				if e.filemask == 6 {
					reason = "add/add"
				}
				m.msg(p, "CONFLICT (%s): Merge conflict in %s", reason, p)
			}
		case (aok || tok) && !bok:
			// Added on one side (a rename/delete's new path).
			e.result, e.resultOK, e.clean = e.st[1], aok, !e.pathConflict
			if tok {
				e.result = t
			}
		case aok || tok:
			// Modify/delete: the modified side's version is left.
			side, modBranch, delBranch := 1, o.branch1, o.branch2
			if tok {
				side, modBranch, delBranch = 2, o.branch2, o.branch1
			}
			e.result, e.resultOK, e.clean = e.st[side], true, false
			if !(e.pathConflict && e.st[0].hash == e.st[side].hash) {
				m.msg(p, "CONFLICT (modify/delete): %s deleted in %s and modified in %s.  Version %s of %s left in tree.", p, delBranch, modBranch, modBranch, p)
			}
		default:
			e.resultOK = false // deleted on both sides
		}
		if !e.clean {
			e.conflicts = true
			m.clean = false
		}
	}
	return nil
}

// contentMerge is handle_content_merge for two versions of one type.
func (m *ortMerge) contentMerge(ctx context.Context, p string, e *ortEntry, o ortOptions) (side, bool, error) {
	b, a, t := e.st[0], e.st[1], e.st[2]
	if !e.has[0] {
		b = side{}
	}
	clean := true
	res := side{}
	if a.mode == t.mode || a.mode == b.mode {
		res.mode = t.mode
	} else {
		res.mode = a.mode
		clean = t.mode == b.mode
	}
	switch {
	case a.hash == t.hash || (e.has[0] && a.hash == b.hash):
		res.hash, res.load = t.hash, t.load
		return res, clean, nil
	case e.has[0] && t.hash == b.hash:
		res.hash, res.load = a.hash, a.load
		return res, clean, nil
	}
	if objType(a.mode) == 2 {
		// Two symbolic links: ours stays, a conflict.
		res.hash, res.load = a.hash, a.load
		return res, false, nil
	}
	var bd []byte
	if e.has[0] && objType(b.mode) == objType(a.mode) {
		var err error
		if bd, err = b.load(); err != nil {
			return res, false, err
		}
	}
	ad, err := a.load()
	if err != nil {
		return res, false, err
	}
	td, err := t.load()
	if err != nil {
		return res, false, err
	}
	base, name1, name2 := o.ancestor, o.branch1, o.branch2
	if e.names[0] != e.names[1] || e.names[1] != e.names[2] {
		base += ":" + e.names[0]
		name1 += ":" + e.names[1]
		name2 += ":" + e.names[2]
	}
	// ll_merge: the merge attribute picks the driver (find_ll_merge_driver);
	// binary content keeps ours as a conflict whatever the driver.
	markerSize := 7
	driver := "text"
	if o.attrs != nil {
		at := o.attrs.Lookup(p, "merge", "conflict-marker-size")
		switch v := at["merge"]; {
		case v.Unset:
			driver = "binary"
		case v.Str == "binary" || v.Str == "union":
			driver = v.Str
		case v.Str != "" && v.Str != "text":
			if o.userDriver != nil && o.userDriver(v.Str) {
				m.unsupported = "the merge driver " + v.Str
				return res, false, nil
			}
		}
		if v := at["conflict-marker-size"]; v.Str != "" {
			if n, err := strconv.Atoi(v.Str); err == nil && n > 0 {
				markerSize = n
			}
		}
	}
	markerSize += e.markerExtra
	var out []byte
	conflicted := false
	if driver == "binary" || xdiff.IsBinary(bd) || xdiff.IsBinary(ad) || xdiff.IsBinary(td) {
		out, conflicted = ad, true
		m.msg(p, "warning: Cannot merge binary files: %s (%s vs. %s)", p, name1, name2)
	} else {
		favor := xdiff.FavorNone
		if driver == "union" {
			favor = xdiff.FavorUnion
		}
		var n int
		out, n, err = xdiff.Merge(ctx, bd, ad, td, xdiff.MergeParams{Algorithm: "histogram", Level: xdiff.LevelZealous, Style: o.style, Favor: favor,
			MarkerSize: markerSize, Ancestor: base, Name1: name1, Name2: name2})
		if err != nil {
			return res, false, err
		}
		conflicted = n > 0
	}
	res.hash = blobHash(out)
	data := out
	res.load = func() ([]byte, error) { return data, nil }
	m.msg(p, "Auto-merging %s", p)
	return res, clean && !conflicted, nil
}
