package gittools

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/tools"
)

type statusArgs struct {
	Porcelain  bool   `json:"porcelain,omitempty" default:"true" jsonschema:"Use porcelain output (--porcelain=1)"`
	Branch     bool   `json:"branch,omitempty" default:"true" jsonschema:"Include branch info (-b)"`
	Untracked  bool   `json:"untracked,omitempty" default:"true" jsonschema:"Include untracked files (when false, uses -uno)"`
	TimeoutMS  int    `json:"timeout_ms,omitempty" minimum:"100" jsonschema:"Timeout in milliseconds (default: tools.git.timeout_ms in the configuration, 30000)"`
	WorkingDir string `json:"working_dir,omitempty" jsonschema:"Working directory for git command"`
}

func statusTool(d Deps) *tools.Tool {
	return tools.Define(tools.Spec[statusArgs]{
		Name:        "git_status",
		Facts:       tools.Facts{ReadsToolbox: true},
		Description: "Show the working tree status (git status --porcelain=1 -b by default; porcelain=false for the long format).",
		Annotations: tools.Annotations{ReadOnly: true, Idempotent: true, Risk: tools.RiskLow},
		Summary:     func(statusArgs) string { return "Show git status" },
		Extra:       StatusFields{},
		Run: func(ctx context.Context, a statusArgs) (tools.Result, error) {
			var f *StatusFields
			res, err := d.text(ctx, a.WorkingDir, a.TimeoutMS, 0, func(ctx context.Context, r *git.Repository) (string, error) {
				f = &StatusFields{}
				return status(r, d.settings(r), d.relDir(a.WorkingDir), a, f)
			})
			if err == nil && f != nil && !res.Truncated {
				res.Extra = *f
			}
			return res, err
		},
	})
}

// StatusFields are git_status's structured fields beside git's text
// (MCP structuredContent): the branch, its upstream and every entry with
// its two status letters, as in the porcelain format.
type StatusFields struct {
	Branch   string `json:"branch,omitempty"`
	Detached bool   `json:"detached,omitempty"`
	// Upstream is the branch's upstream (origin/main), with how far the
	// branch is ahead of and behind it; Gone: the upstream ref is missing.
	Upstream string        `json:"upstream,omitempty"`
	Ahead    int           `json:"ahead,omitempty"`
	Behind   int           `json:"behind,omitempty"`
	Gone     bool          `json:"gone,omitempty"`
	Entries  []StatusEntry `json:"entries"`
}

// StatusEntry is one path of git_status: Index and Worktree are git's X
// and Y letters (" " unchanged, "M", "A", "D", "R", "U", "?" untracked).
type StatusEntry struct {
	Path     string `json:"path"`
	From     string `json:"from,omitempty"`
	Index    string `json:"index"`
	Worktree string `json:"worktree"`
}

type entry struct {
	x, y byte
	path string
	from string // the old path of a rename
	// stages is the conflict stage mask of an unmerged path (0: none).
	stages byte
	// wtFrom is the source of a rename in the worktree (y 'R' or 'C').
	wtFrom string
}

func status(r *git.Repository, cfg *settings, wd string, a statusArgs, f *StatusFields) (string, error) {
	// -uall also lists what a directory that replaced a tracked file
	// holds (normal mode shows neither the directory nor its files).
	all := a.Untracked && cfg.orDefault().showUntracked == "all"
	st, idx, _, err := scanStatus(r, cfg, statusScan{untracked: a.Untracked && cfg.orDefault().showUntracked != "no", underIndexFiles: all})
	if err != nil {
		return "", err
	}
	if err := checkSubmodulePaths(r, idx, nil); err != nil {
		return "", err
	}
	// trackedDirs are the directories holding a tracked file, made when a
	// first untracked path needs them.
	var trackedDirs map[string]bool
	var entries []entry
	unmerged := unmergedStages(idx)
	for p := range unmerged {
		delete(st, p) // shown by its stages, never paired as a rename
	}
	untracked := map[string]bool{}
	// addUntracked lists p, or like git the top-most directory above it
	// that holds no tracked file.
	addUntracked := func(p string) {
		shown := p
		parts := strings.Split(p, "/")
		if cfg.orDefault().showUntracked == "all" {
			parts = nil // -uall: every file, no directory in its place
		}
		if len(parts) > 1 && trackedDirs == nil {
			trackedDirs = map[string]bool{}
			for _, e := range idx.Entries {
				for d := parentDir(e.Name); d != "" && !trackedDirs[d]; d = parentDir(d) {
					trackedDirs[d] = true
				}
			}
		}
		for i := 1; i < len(parts); i++ {
			if d := strings.Join(parts[:i], "/"); !trackedDirs[d] {
				shown = d + "/"
				break
			}
		}
		if !untracked[shown] {
			untracked[shown] = true
			entries = append(entries, entry{x: '?', y: '?', path: shown})
		}
	}
	for p, s := range st {
		if s.Staging == git.Untracked && s.Worktree == git.Untracked {
			if a.Untracked {
				addUntracked(p)
			}
			continue
		}
		x, y := byte(s.Staging), byte(s.Worktree)
		if x == ' ' && y == ' ' {
			continue
		}
		if x == 'D' && y == '?' {
			// removed from the index but still on disk: git lists it twice
			entries = append(entries, entry{x: 'D', y: ' ', path: p})
			if a.Untracked {
				addUntracked(p)
			}
			continue
		}
		entries = append(entries, entry{x: x, y: y, path: p})
	}
	if cfg.orDefault().statusRenames > 0 {
		entries = stagedRenames(r, st, entries, cfg.orDefault().statusRenames == 2)
		entries = worktreeRenames(r, cfg, idx, entries, unmerged)
	}
	for p, mask := range unmerged {
		x, y := unmergedShort(mask)
		entries = append(entries, entry{x: x, y: y, path: p, stages: mask})
	}
	// git lists tracked changes first, then untracked paths, each by path.
	sort.Slice(entries, func(i, j int) bool {
		ui, uj := entries[i].x == '?', entries[j].x == '?'
		if ui != uj {
			return uj
		}
		return entries[i].path < entries[j].path
	})
	head, headErr := r.Head()
	branchName, detached := currentBranch(r)
	if f != nil {
		f.Branch, f.Detached, f.Entries = branchName, detached, make([]StatusEntry, 0, len(entries))
		for _, e := range entries {
			f.Entries = append(f.Entries, StatusEntry{Path: e.path, From: e.from + e.wtFrom, Index: string(e.x), Worktree: string(e.y)})
		}
		if headErr == nil && !detached {
			if up, ahead, behind, gone, ok := upstream(r, branchName, head.Hash()); ok {
				f.Upstream, f.Ahead, f.Behind, f.Gone = up, ahead, behind, gone
			}
		}
	}
	var b strings.Builder
	if !a.Porcelain {
		if !cfg.orDefault().relativePaths {
			wd = ""
		}
		return longStatus(r, cfg, wd, a.Untracked && cfg.orDefault().showUntracked != "no", entries, branchName, detached, headErr == nil, head, merging(r)), nil
	}
	if a.Branch {
		b.WriteString("## ")
		switch {
		case detached:
			b.WriteString("HEAD (no branch)")
		case headErr != nil:
			b.WriteString("No commits yet on " + branchName)
		default:
			b.WriteString(branchName)
			if up, ahead, behind, gone, ok := upstream(r, branchName, head.Hash()); ok {
				b.WriteString("..." + up)
				switch {
				case gone:
					b.WriteString(" [gone]")
				case ahead > 0 && behind > 0:
					fmt.Fprintf(&b, " [ahead %d, behind %d]", ahead, behind)
				case ahead > 0:
					fmt.Fprintf(&b, " [ahead %d]", ahead)
				case behind > 0:
					fmt.Fprintf(&b, " [behind %d]", behind)
				}
			}
		}
		b.WriteByte('\n')
	}
	for _, e := range entries {
		if from := e.from + e.wtFrom; from != "" {
			fmt.Fprintf(&b, "%c%c %s -> %s\n", e.x, e.y, cfg.quoteSP(from), cfg.quoteSP(e.path))
			continue
		}
		fmt.Fprintf(&b, "%c%c %s\n", e.x, e.y, cfg.quoteSP(e.path))
	}
	return b.String(), nil
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// currentBranch is HEAD's branch name, or detached.
func currentBranch(r *git.Repository) (string, bool) {
	ref, err := r.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", true
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", true
	}
	return ref.Target().Short(), false
}

// upstream resolves branch.<b>.remote/merge and counts ahead/behind.
func upstream(r *git.Repository, branch string, head plumbing.Hash) (name string, ahead, behind int, gone, ok bool) {
	name, ref, ok := upstreamRef(r, branch)
	if !ok {
		return "", 0, 0, false, false
	}
	tip, err := r.Storer.Reference(ref)
	if err != nil {
		return name, 0, 0, true, true
	}
	ahead, behind = aheadBehind(r, head, tip.Hash())
	return name, ahead, behind, false, true
}

// upstreamRef is the remote-tracking ref of a branch's upstream, found as
// git does: branch.<b>.merge mapped through the remote's fetch refspecs
// ("." for a local branch). ok is false when nothing maps it.
func upstreamRef(r *git.Repository, branch string) (string, plumbing.ReferenceName, bool) {
	cfg, err := r.Config()
	if err != nil {
		return "", "", false
	}
	bc, ok := cfg.Branches[branch]
	if !ok || bc.Remote == "" || bc.Merge == "" {
		return "", "", false
	}
	if bc.Remote == "." {
		return bc.Merge.Short(), bc.Merge, true
	}
	rc, ok := cfg.Remotes[bc.Remote]
	if !ok {
		return "", "", false
	}
	for _, rs := range rc.Fetch {
		if rs.Match(bc.Merge) {
			dst := rs.Dst(bc.Merge)
			return dst.Short(), dst, true
		}
	}
	return "", "", false
}

// aheadBehind counts commits reachable from a but not b, and the reverse.
func aheadBehind(r *git.Repository, a, b plumbing.Hash) (int, int) {
	if a == b {
		return 0, 0 // up to date: no history to walk
	}
	reach := func(h plumbing.Hash) map[plumbing.Hash]bool {
		seen := map[plumbing.Hash]bool{}
		stack := []plumbing.Hash{h}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[x] {
				continue
			}
			seen[x] = true
			c, err := object.GetCommit(r.Storer, x)
			if err != nil {
				continue
			}
			stack = append(stack, c.ParentHashes...)
		}
		return seen
	}
	ra, rb := reach(a), reach(b)
	ahead, behind := 0, 0
	for h := range ra {
		if !rb[h] {
			ahead++
		}
	}
	for h := range rb {
		if !ra[h] {
			behind++
		}
	}
	return ahead, behind
}

// quoteC is git's quote_c_style: control characters, '"' and '\\' always
// escaped, bytes from 0x80 on as octal unless raw (core.quotePath=false).
func quoteC(p string, raw bool) string {
	need := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < 0x20 || c == '"' || c == '\\' || (c >= 0x80 && !raw) || c == 0x7f {
			need = true
			break
		}
	}
	if !need {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '\v':
			b.WriteString(`\v`)
		default:
			if c < 0x20 || c == 0x7f || (c >= 0x80 && !raw) {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// longStatus renders git's human-readable status, in the sections of
// wt_longstatus_print: the branch and its upstream, the state of a merge,
// the staged, unmerged, unstaged and untracked paths, then the summary.
func longStatus(r *git.Repository, cfg *settings, wd string, showUntracked bool, entries []entry, branch string, detached, hasHead bool, head *plumbing.Reference, inMerge bool) string {
	var b strings.Builder
	rel := func(p string) string { return cfg.quote(relativeTo(wd, p)) }
	writeStatusHeader(&b, r, branch, detached, hasHead, head)
	var staged, unstaged, untracked, conflicts []entry
	for _, e := range entries {
		if e.x == '?' {
			untracked = append(untracked, e)
			continue
		}
		if e.stages != 0 {
			conflicts = append(conflicts, e)
			continue
		}
		if e.x != ' ' {
			staged = append(staged, e)
		}
		if e.y != ' ' {
			unstaged = append(unstaged, e)
		}
	}
	// wt_longstatus_print_state: a merge in progress.
	if inMerge {
		if len(conflicts) > 0 {
			b.WriteString("You have unmerged paths.\n  (fix conflicts and run \"git commit\")\n  (use \"git merge --abort\" to abort the merge)\n\n")
		} else {
			b.WriteString("All conflicts fixed but you are still merging.\n  (use \"git commit\" to conclude merge)\n\n")
		}
	}
	if !hasHead {
		b.WriteString("\nNo commits yet\n\n")
	}
	if len(staged) > 0 {
		writeStaged(&b, staged, rel, inMerge, hasHead)
	}
	if len(conflicts) > 0 {
		writeUnmerged(&b, conflicts, rel, inMerge, hasHead)
	}
	if len(unstaged) > 0 {
		writeUnstaged(&b, unstaged, rel)
	}
	if len(untracked) > 0 {
		b.WriteString("Untracked files:\n  (use \"git add <file>...\" to include in what will be committed)\n")
		for _, e := range untracked {
			fmt.Fprintf(&b, "\t%s\n", rel(e.path))
		}
		b.WriteString("\n")
	} else if !showUntracked && len(staged) > 0 {
		b.WriteString("Untracked files not listed (use -u option to show untracked files)\n")
	}
	switch {
	case len(staged) > 0:
	case len(unstaged) > 0 || len(conflicts) > 0:
		b.WriteString("no changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
	case len(untracked) > 0:
		b.WriteString("nothing added to commit but untracked files present (use \"git add\" to track)\n")
	case !hasHead:
		b.WriteString("nothing to commit (create/copy files and use \"git add\" to track)\n")
	case !showUntracked:
		b.WriteString("nothing to commit (use -u to show untracked files)\n")
	default:
		b.WriteString("nothing to commit, working tree clean\n")
	}
	return b.String()
}

// writeStatusHeader is the branch (or the detached HEAD) and how it
// compares with its upstream.
func writeStatusHeader(b *strings.Builder, r *git.Repository, branch string, detached, hasHead bool, head *plumbing.Reference) {
	switch {
	case detached && head != nil:
		ab := newAbbrever(r)
		b.WriteString(detachedLine(r, head.Hash(), ab) + "\n")
		ab.Close()
	default:
		fmt.Fprintf(b, "On branch %s\n", branch)
	}
	if hasHead && !detached {
		if up, ahead, behind, gone, ok := upstream(r, branch, head.Hash()); ok {
			switch {
			case gone:
				fmt.Fprintf(b, "Your branch is based on '%s', but the upstream is gone.\n  (use \"git branch --unset-upstream\" to fixup)\n", up)
			case ahead == 0 && behind == 0:
				fmt.Fprintf(b, "Your branch is up to date with '%s'.\n", up)
			case behind == 0:
				fmt.Fprintf(b, "Your branch is ahead of '%s' by %d commit%s.\n  (use \"git push\" to publish your local commits)\n", up, ahead, plural(ahead))
			case ahead == 0:
				fmt.Fprintf(b, "Your branch is behind '%s' by %d commit%s, and can be fast-forwarded.\n  (use \"git pull\" to update your local branch)\n", up, behind, plural(behind))
			default:
				fmt.Fprintf(b, "Your branch and '%s' have diverged,\nand have %d and %d different commits each, respectively.\n  (use \"git pull\" to merge the remote branch into yours)\n", up, ahead, behind)
			}
			b.WriteString("\n")
		}
	}
}

// statusWord is how each change is named in the long format.
var statusWord = map[byte]string{'M': "modified:   ", 'A': "new file:   ", 'D': "deleted:    ", 'R': "renamed:    ", 'C': "copied:     ", 'U': "both modified:", 'T': "typechange: "}

// writeStaged is the section "Changes to be committed".
func writeStaged(b *strings.Builder, staged []entry, rel func(string) string, inMerge, hasHead bool) {
	b.WriteString("Changes to be committed:\n")
	if inMerge {
		// git has no unstage hint while merging (whence FROM_MERGE)
	} else if hasHead {
		b.WriteString("  (use \"git restore --staged <file>...\" to unstage)\n")
	} else {
		b.WriteString("  (use \"git rm --cached <file>...\" to unstage)\n")
	}
	for _, e := range staged {
		if e.from != "" {
			fmt.Fprintf(b, "\t%s%s -> %s\n", statusWord[e.x], rel(e.from), rel(e.path))
			continue
		}
		fmt.Fprintf(b, "\t%s%s\n", statusWord[e.x], rel(e.path))
	}
	b.WriteString("\n")
}

// writeUnmerged is the section "Unmerged paths", its hints as git gives
// them for the kinds of conflict listed.
func writeUnmerged(b *strings.Builder, conflicts []entry, rel func(string) string, inMerge, hasHead bool) {
	b.WriteString("Unmerged paths:\n")
	if !inMerge {
		if hasHead {
			b.WriteString("  (use \"git restore --staged <file>...\" to unstage)\n")
		} else {
			b.WriteString("  (use \"git rm --cached <file>...\" to unstage)\n")
		}
	}
	bothDeleted, delMod, notDeleted := false, false, false
	for _, e := range conflicts {
		switch e.stages {
		case 1:
			bothDeleted = true
		case 3, 5:
			delMod = true
		default:
			notDeleted = true
		}
	}
	switch {
	case !bothDeleted && !delMod:
		b.WriteString("  (use \"git add <file>...\" to mark resolution)\n")
	case bothDeleted && !delMod && !notDeleted:
		b.WriteString("  (use \"git rm <file>...\" to mark resolution)\n")
	default:
		b.WriteString("  (use \"git add/rm <file>...\" as appropriate to mark resolution)\n")
	}
	for _, e := range conflicts {
		how := unmergedLong(e.stages)
		fmt.Fprintf(b, "\t%s%s%s\n", how, strings.Repeat(" ", 17-len(how)), rel(e.path))
	}
	b.WriteString("\n")
}

// writeUnstaged is the section "Changes not staged for commit".
func writeUnstaged(b *strings.Builder, unstaged []entry, rel func(string) string) {
	b.WriteString("Changes not staged for commit:\n")
	b.WriteString("  (use \"git add")
	for _, e := range unstaged {
		if e.y == 'D' {
			b.WriteString("/rm")
			break
		}
	}
	b.WriteString(" <file>...\" to update what will be committed)\n")
	b.WriteString("  (use \"git restore <file>...\" to discard changes in working directory)\n")
	for _, e := range unstaged {
		if e.wtFrom != "" {
			fmt.Fprintf(b, "\t%s%s -> %s\n", statusWord[e.y], rel(e.wtFrom), rel(e.path))
			continue
		}
		fmt.Fprintf(b, "\t%s%s\n", statusWord[e.y], rel(e.path))
	}
	b.WriteString("\n")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// stagedRenames turns a staged deletion and a staged addition of the same
// (or a >= 50% similar) content into git's "R  old -> new" entry.
func stagedRenames(r *git.Repository, st git.Status, entries []entry, copies bool) []entry {
	hasDel, hasAdd := false, false
	for _, e := range entries {
		hasDel = hasDel || e.x == 'D' || (copies && e.x == 'M')
		hasAdd = hasAdd || e.x == 'A'
	}
	if !hasDel || !hasAdd {
		return entries // nothing to pair: skip reading HEAD and the index again
	}
	var dels, adds []*change
	headFiles := map[string]side{}
	if ht, err := headTree(r); err == nil && ht != nil {
		headFiles, _ = treeFiles(r, ht)
	}
	idxFiles, err := indexFiles(r)
	if err != nil {
		return entries
	}
	for _, e := range entries {
		switch e.x {
		case 'D':
			if h, ok := headFiles[e.path]; ok {
				dels = append(dels, &change{path: e.path, oldMode: h.mode, oldHash: h.hash, oldLoaded: h.load})
			}
		case 'M':
			// status.renames=copies: a staged modification's old version
			// is a copy source.
			h, okH := headFiles[e.path]
			i, okI := idxFiles[e.path]
			if copies && okH && okI {
				dels = append(dels, &change{path: e.path, oldMode: h.mode, oldHash: h.hash, oldLoaded: h.load, newMode: i.mode, newHash: i.hash, newLoad: i.load})
			}
		case 'A':
			if i, ok := idxFiles[e.path]; ok {
				adds = append(adds, &change{path: e.path, newMode: i.mode, newHash: i.hash, newLoad: i.load})
			}
		}
	}
	if len(dels) == 0 || len(adds) == 0 {
		return entries
	}
	// Git pairs in index order (sources and destinations by path); with
	// several identical candidates the first one wins, so the order decides
	// which of two empty files a rename came from.
	sort.Slice(dels, func(i, j int) bool { return dels[i].path < dels[j].path })
	sort.Slice(adds, func(i, j int) bool { return adds[i].path < adds[j].path })
	renamed := map[string]string{} // new → old
	copied := map[string]bool{}
	for _, c := range detectRenamesOrCopies(append(dels, adds...), copies) {
		if c.oldPath != "" {
			renamed[c.path] = c.oldPath
			copied[c.path] = c.copied
		}
	}
	if len(renamed) == 0 {
		return entries
	}
	gone := map[string]bool{}
	for _, old := range renamed {
		gone[old] = true
	}
	var out []entry
	for _, e := range entries {
		switch {
		case e.x == 'D' && gone[e.path]:
			continue
		case e.x == 'A' && renamed[e.path] != "":
			x := byte('R')
			if copied[e.path] {
				x = 'C'
			}
			out = append(out, entry{x: x, y: e.y, path: e.path, from: renamed[e.path]})
		default:
			out = append(out, e)
		}
	}
	return out
}

// relativeTo is p (repository-relative) as seen from directory wd, the way
// git prints paths in its long status: "../x" for a path outside wd; a
// directory keeps its trailing slash.
func relativeTo(wd, p string) string {
	if wd == "" {
		return p
	}
	slash := strings.HasSuffix(p, "/")
	rel, err := filepath.Rel(wd, strings.TrimSuffix(p, "/"))
	if err != nil {
		return p
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = "./"
		slash = false
	}
	if rel == ".." || strings.HasSuffix(rel, "/..") {
		// An ancestor of the working directory: git's relative_path
		// ends it with a slash ("../").
		slash = true
	}
	if slash {
		rel += "/"
	}
	return rel
}

// worktreeRenames is rename detection on status's worktree side (git's
// diff-files with status.renames): the sources are the files deleted from
// the worktree (with copies, the modified ones too), read from the index;
// the destinations are what diff-files queues as added with no object id,
// read from the worktree: files added with intent to add, and unmerged
// paths (see unmergedRenameDsts). An intent-to-add destination becomes
// " R old -> new"; an unmerged one stays as it is. A source renamed away
// leaves the worktree column.
func worktreeRenames(r *git.Repository, cfg *settings, idx *index.Index, entries []entry, unmerged map[string]byte) []entry {
	copies := cfg.orDefault().statusRenames == 2
	hasSrc, hasDst := false, len(unmerged) > 0
	for _, e := range entries {
		hasSrc = hasSrc || e.y == 'D' || (copies && e.y == 'M')
		hasDst = hasDst || e.y == 'A'
	}
	if !hasSrc || !hasDst || idx == nil {
		return entries
	}
	w, err := worktreeOf(r)
	if err != nil {
		return entries
	}
	eol := newEOLConverter(r, cfg)
	byName := map[string]*index.Entry{}
	for _, ie := range idx.Entries {
		if ie.Stage == 0 {
			byName[ie.Name] = ie
		}
	}
	worktreeSide := func(p string) (*change, bool) {
		data, mode, err := readWorktree(w.Filesystem, p)
		if err != nil {
			return nil, false
		}
		if mode != filemode.Symlink {
			data = eol.ToGit(p, data)
		}
		mode = cfg.worktreeMode(mode, 0)
		return &change{path: p, newMode: mode, newLoad: func() ([]byte, error) { return data, nil }, newWorktree: true}, true
	}
	var changes []*change
	srcs := map[string]*change{}
	dsts := map[string]*change{}
	for _, e := range entries {
		switch {
		case e.y == 'D' || (copies && e.y == 'M'):
			ie := byName[e.path]
			if ie == nil {
				continue
			}
			c := &change{path: e.path, oldMode: ie.Mode, oldHash: ie.Hash, oldLoaded: entryLoader(r, ie.Mode, ie.Hash)}
			if e.y == 'M' {
				if d, ok := worktreeSide(e.path); ok {
					c.newMode, c.newLoad, c.newWorktree = d.newMode, d.newLoad, true
				}
			}
			srcs[e.path] = c
			changes = append(changes, c)
		case e.y == 'A':
			if d, ok := worktreeSide(e.path); ok {
				dsts[e.path] = d
				changes = append(changes, d)
			}
		}
	}
	for p := range unmerged {
		if d, ok := worktreeSide(p); ok {
			dsts[p] = d
			changes = append(changes, d)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return entries
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	gone := map[string]bool{}
	renamed := map[string]*change{}
	for _, c := range detectRenamesOrCopies(changes, copies) {
		if dsts[c.path] == c && c.oldPath != "" {
			renamed[c.path] = c
			if !c.copied {
				gone[c.oldPath] = true
			}
		}
	}
	if len(renamed) == 0 {
		return entries
	}
	var out []entry
	for _, e := range entries {
		if gone[e.path] && e.y == 'D' {
			if e.x == ' ' {
				continue
			}
			e.y = ' '
		}
		if c := renamed[e.path]; c != nil && e.y == 'A' {
			e.y, e.wtFrom = 'R', c.oldPath
			if c.copied {
				e.y = 'C'
			}
		}
		out = append(out, e)
	}
	return out
}
