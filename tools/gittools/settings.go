package gittools

import (
	"io"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/tgp-go/tgp/internal/gitattr"
	"github.com/tgp-go/tgp/internal/gitconfig"
	"github.com/tgp-go/tgp/internal/xdiff"
)

// settings are the git configuration values that change what the git
// commands the tools stand for print, read for each call from every scope
// git reads (internal/gitconfig), so a repository with core.quotepath=false
// or diff.noprefix=true gets the bytes git prints there. A nil *settings
// is git's defaults.
type settings struct {
	rawPaths           bool   // core.quotepath=false: bytes >= 0x80 unquoted
	noFileMode         bool   // core.filemode=false: the exec bit is not compared
	showUntracked      string // status.showUntrackedFiles: normal, no, all
	noPrefix           bool   // diff.noprefix
	mnemonic           bool   // diff.mnemonicPrefix
	context            int    // diff.context
	interHunk          int    // diff.interHunkContext
	renames            int    // diff.renames: 0 off, 1 renames, 2 copies
	statusRenames      int    // status.renames (diff.renames when unset)
	algorithm          string // diff.algorithm
	indentHeuristic    bool   // diff.indentHeuristic
	suppressBlankEmpty bool   // diff.suppressBlankEmpty
	statGraphWidth     int    // diff.statGraphWidth (0: unset)
	relative           bool   // diff.relative
	date               string // log.date ("": default)
	decorate           string // log.decorate ("": auto, which is "no" off a terminal)
	pretty             string // format.pretty ("": medium)
	abbrevCommit       bool   // log.abbrevCommit
	showRoot           bool   // log.showRoot
	mailmap            bool   // log.mailmap
	relativePaths      bool   // status.relativePaths
	conf               *gitconfig.Config
}

var defaultSettings = settings{showUntracked: "normal", context: 3, renames: 1, statusRenames: 1, indentHeuristic: true, showRoot: true, mailmap: true, relativePaths: true}

// settings reads the configuration for repository r.
func (d Deps) settings(r *git.Repository) *settings {
	// The file as written (one read; go-git's Config would parse it and
	// Marshal would write it out again), else go-git's view of it.
	var raw []byte
	if dot, ok := r.Storer.(interface{ Filesystem() billy.Filesystem }); ok {
		if f, err := dot.Filesystem().Open("config"); err == nil {
			raw, _ = io.ReadAll(f)
			f.Close()
		}
	}
	if raw == nil {
		if cfg, err := r.Config(); err == nil {
			raw, _ = cfg.Marshal()
		}
	}
	return readSettings(gitconfig.Load(d.Environ, raw, ""))
}

// readSettings picks the values out of a loaded configuration; a value
// git would reject keeps the default (git would stop with an error).
func readSettings(c *gitconfig.Config) *settings {
	s := defaultSettings
	s.conf = c
	s.rawPaths = !c.Bool("core.quotepath", true)
	s.noFileMode = !c.Bool("core.filemode", true)
	switch v := strings.ToLower(c.String("status.showUntrackedFiles", "normal")); v {
	case "no", "all", "normal":
		s.showUntracked = v
	default:
		if b, ok := gitconfig.ParseBool(v); ok {
			s.showUntracked = map[bool]string{true: "normal", false: "no"}[b]
		}
	}
	s.noPrefix = c.Bool("diff.noprefix", false)
	s.mnemonic = c.Bool("diff.mnemonicPrefix", false)
	if n := c.Int("diff.context", 3); n >= 0 {
		s.context = n
	}
	if n := c.Int("diff.interHunkContext", 0); n >= 0 {
		s.interHunk = n
	}
	s.renames = renameSetting(c, "diff.renames", 1)
	s.statusRenames = renameSetting(c, "status.renames", s.renames)
	switch v := strings.ToLower(c.String("diff.algorithm", "")); v {
	case "myers", "default", "minimal", "patience", "histogram":
		s.algorithm = v
	}
	s.indentHeuristic = c.Bool("diff.indentHeuristic", true)
	s.suppressBlankEmpty = c.Bool("diff.suppressBlankEmpty", false)
	s.statGraphWidth = c.Int("diff.statGraphWidth", 0)
	s.relative = c.Bool("diff.relative", false)
	s.date = c.String("log.date", "")
	s.decorate = strings.ToLower(c.String("log.decorate", ""))
	if b, ok := gitconfig.ParseBool(s.decorate); ok && s.decorate != "" {
		s.decorate = map[bool]string{true: "short", false: "no"}[b]
	}
	s.pretty = c.String("format.pretty", "")
	s.abbrevCommit = c.Bool("log.abbrevCommit", false)
	s.showRoot = c.Bool("log.showRoot", true)
	s.mailmap = c.Bool("log.mailmap", true)
	s.relativePaths = c.Bool("status.relativePaths", true)
	return &s
}

// renameSetting reads diff.renames / status.renames: a boolean or
// "copies" ("copy").
func renameSetting(c *gitconfig.Config, key string, def int) int {
	v, ok := c.Get(key)
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "copies", "copy":
		return 2
	}
	if b, ok := gitconfig.ParseBool(v); ok {
		if b {
			return 1
		}
		return 0
	}
	return def
}

func (s *settings) orDefault() *settings {
	if s == nil {
		return &defaultSettings
	}
	return s
}

// quote is git's quote_c_style of a path under core.quotepath.
func (s *settings) quote(p string) string {
	return quoteC(p, s.orDefault().rawPaths)
}

// quoteSP also quotes a name holding a space (short status).
func (s *settings) quoteSP(p string) string {
	if q := s.quote(p); q != p || !strings.Contains(p, " ") {
		return q
	}
	return `"` + p + `"`
}

// worktreeMode is the mode git records for a worktree file read as mode m
// when its index entry has mode idx (0: not in the index): with
// core.filemode=false the exec bit is not trusted, so a regular file keeps
// its entry's mode, and a new one is 100644 (ce_mode_from_stat).
func (s *settings) worktreeMode(m, idx filemode.FileMode) filemode.FileMode {
	if !s.orDefault().noFileMode || (m != filemode.Regular && m != filemode.Executable) {
		return m
	}
	if idx == filemode.Regular || idx == filemode.Executable {
		return idx
	}
	return filemode.Regular
}

// patchOpts is how one diff is printed: the settings, the context lines
// and the prefixes of its two sides.
type patchOpts struct {
	*settings
	ctx              int
	aPrefix, bPrefix string
	ab               *abbrever           // nil: 7 digits
	attr             *gitattr.Attributes // .gitattributes (nil: none)
	drivers          *gitconfig.Config
	funcs            map[string]funcMatcher // compiled hunk-header rules by driver, for this diff
}

// diffKind names the two sides of a diff for diff.mnemonicPrefix.
type diffKind int

const (
	diffTrees    diffKind = iota // two commits: a/ b/
	diffFiles                    // index and worktree: i/ w/
	diffCached                   // commit and index: c/ i/
	diffWorktree                 // commit and worktree: c/ w/
)

// diffSidesOf is the kind of diff git_diff's arguments ask for.
func diffSidesOf(a diffArgs) diffKind {
	switch {
	case a.Cached:
		return diffCached // the index against HEAD or from_ref
	case a.FromRef != "" && a.ToRef != "":
		return diffTrees
	case a.FromRef != "":
		return diffWorktree
	}
	return diffFiles
}

var mnemonicPrefixes = map[diffKind][2]string{
	diffTrees: {"a/", "b/"}, diffFiles: {"i/", "w/"}, diffCached: {"c/", "i/"}, diffWorktree: {"c/", "w/"},
}

// patch is the printing options for a diff of kind k.
func (s *settings) patch(k diffKind) patchOpts {
	s = s.orDefault()
	po := patchOpts{settings: s, ctx: s.context, aPrefix: "a/", bPrefix: "b/", drivers: s.conf, funcs: map[string]funcMatcher{}}
	switch {
	case s.noPrefix:
		po.aPrefix, po.bPrefix = "", ""
	case s.mnemonic:
		p := mnemonicPrefixes[k]
		po.aPrefix, po.bPrefix = p[0], p[1]
	}
	return po
}

// short is an object id in an index line: core.abbrev digits (7 by
// default), zeros for a missing side.
func (po patchOpts) short(h plumbing.Hash) string {
	n := 7
	if po.ab != nil {
		n = po.ab.min
	}
	if h.IsZero() {
		return strings.Repeat("0", n)
	}
	if po.ab != nil {
		return po.ab.Short(h)
	}
	return h.String()[:n]
}

// changes diffs two texts with the configured algorithm and heuristic;
// like xdi_diff it trims the common tail only for -U0.
func (po patchOpts) changes(a, b []byte) []xdiff.Change {
	s := po.settings.orDefault()
	return lineChanges(a, b, xdiff.Params{Algorithm: s.algorithm, IndentHeuristic: s.indentHeuristic, TrimTail: po.ctx == 0})
}

// detectRenames pairs deletions with additions as diff.renames asks
// (off: none; "copies": copies of modified and deleted files too).
func (po patchOpts) detectRenames(changes []*change) []*change {
	if po.settings != nil && po.renames == 0 {
		return changes
	}
	return detectRenamesIn(changes, po.settings != nil && po.renames == 2, nil, po.driverBinary)
}

// relativeMatch narrows match (nil: every path) to the paths under wd
// when diff.relative is set: git's diff prefix drops a path outside
// before renames are found, so a rename out of wd is a deletion.
func (s *settings) relativeMatch(wd string, match func(string) bool) func(string) bool {
	if !s.orDefault().relative || wd == "" || wd == "." {
		return match
	}
	prefix := strings.TrimSuffix(wd, "/") + "/"
	return func(p string) bool { return strings.HasPrefix(p, prefix) && (match == nil || match(p)) }
}

// relativeFilter is diff.relative from directory wd for git commit's
// summary: only changes under wd, their paths left whole (before rename
// detection, so a file moved across wd's edge is a creation or a
// deletion).
func (s *settings) relativeFilter(changes []*change, wd string) []*change {
	match := s.relativeMatch(wd, nil)
	if match == nil {
		return changes
	}
	out := changes[:0:0]
	for _, c := range changes {
		if match(c.path) && (c.oldPath == "" || match(c.oldPath)) {
			out = append(out, c)
		}
	}
	return out
}

// relativize is diff.relative from directory wd ("" is the top): only
// changes under wd, their paths relative to it.
func (s *settings) relativize(changes []*change, wd string) []*change {
	if !s.orDefault().relative || wd == "" || wd == "." {
		return changes
	}
	prefix := strings.TrimSuffix(wd, "/") + "/"
	out := changes[:0:0]
	for _, c := range changes {
		p, ok := strings.CutPrefix(c.path, prefix)
		if !ok {
			continue
		}
		cc := *c
		cc.path = p
		if cc.oldPath != "" {
			if cc.oldPath, ok = strings.CutPrefix(cc.oldPath, prefix); !ok {
				continue
			}
		}
		out = append(out, &cc)
	}
	return out
}
