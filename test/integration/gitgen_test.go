package integration

// A seeded generator of git repositories, built with the git CLI.
//
// A repository is a list of operations (data, not closures), so a failing
// case can be shrunk by deleting operations and rebuilding. Operations pick
// their targets by index modulo what exists when they run, so any subset of
// a list still builds. Every command the builder runs is also written to a
// shell script: the minimal reproduction printed for a failure.

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// op is one step of building a repository.
type op struct {
	Kind    string
	Path    string // a new name (write/rename/symlink/...)
	Path2   string
	Sel     int // picks an existing file: Sel mod len(files)
	Content int // content kind for writes
	Seed    int64
	Msg     string
	Flag    bool
}

func (o op) String() string {
	return fmt.Sprintf("%s(path=%q path2=%q sel=%d content=%d seed=%d msg=%q flag=%v)", o.Kind, o.Path, o.Path2, o.Sel, o.Content, o.Seed, o.Msg, o.Flag)
}

// names git accepts that exercise quoting and path handling.
var nameParts = []string{
	"a", "b", "c", "readme", "notes", "main", "util", "data",
	"with space", "quote\"d", "tab\there", "ctl\x01x", "caf\u00e9", "\u65e5\u672c",
	"back\\slash", "hash#", "-dash", "dots..x", "UPPER", "x.y.z", "star*", "q?",
	"new\nline", "emoji\U0001F600", "semi;colon", "tr\u00e4ilin g ",
}

var exts = []string{".txt", ".ts", ".md", ".log", "", ".bin", ".json"}

var dirParts = []string{"src", "lib", "docs", "deep/er", "sp ace", "n\u00e9", "build", "tools", "a/b/c"}

var words = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
	"return x;", "}", "{", "func f() {", "\tindented", "  two spaces", "// comment", "", "let y = 1;", "end", "// $Id$"}

// genName makes a random file path (possibly in nested directories).
func genName(r *rand.Rand) string {
	var b strings.Builder
	if r.Intn(3) > 0 {
		b.WriteString(dirParts[r.Intn(len(dirParts))])
		b.WriteString("/")
		if r.Intn(4) == 0 {
			b.WriteString(nameParts[r.Intn(len(nameParts))])
			b.WriteString("/")
		}
	}
	// Mostly plain names; odd ones often enough to matter.
	if r.Intn(3) == 0 {
		b.WriteString(nameParts[r.Intn(len(nameParts))])
	} else {
		b.WriteString(nameParts[r.Intn(8)])
	}
	fmt.Fprintf(&b, "%d", r.Intn(20))
	b.WriteString(exts[r.Intn(len(exts))])
	return b.String()
}

var messages = []string{
	"feat: add things", "fix(app): repair\n\nWith a body line.\n\nAnd a second paragraph.",
	"tab\tin subject", "body with tab\n\n\tindented body\n", "caf\u00e9 \u65e5\u672c", "trailing spaces   ",
	"multi\nline subject", "docs: a much longer subject line that goes on and on beyond the usual width of seventy two columns",
	"x", "Merge-like: words", "percent % and %s", "chore: [bracket] {brace}",
}

var identities = [][2]string{{"Test", "test@example.com"}, {"Alice Long-Name", "alice@example.com"}, {"Bob", "bob@example.org"}, {"Ren\u00e9", "rene@example.fr"}}

var zones = []string{"+0000", "+0530", "-0800", "+0100", "-0330"}

// genOps makes the operation list for a seed.
func genOps(seed int64) []op {
	r := rand.New(rand.NewSource(seed))
	var ops []op
	add := func(o op) { ops = append(ops, o) }
	randFileOp := func() {
		switch k := r.Intn(20); {
		case k < 7:
			add(op{Kind: "write", Path: genName(r), Content: r.Intn(9), Seed: r.Int63()})
		case k < 11:
			add(op{Kind: "edit", Sel: r.Intn(1000), Content: r.Intn(9), Seed: r.Int63()})
		case k < 12:
			add(op{Kind: "chmod", Sel: r.Intn(1000)})
		case k < 13:
			add(op{Kind: "chmod", Sel: r.Intn(1000)})
			add(op{Kind: "edit", Sel: r.Intn(1000), Content: r.Intn(9), Seed: r.Int63()})
		case k < 14:
			add(op{Kind: "symlink", Path: genName(r), Sel: r.Intn(1000), Flag: r.Intn(3) == 0})
		case k < 16:
			add(op{Kind: "rename", Sel: r.Intn(1000), Path: genName(r), Flag: r.Intn(2) == 0, Seed: r.Int63()})
		case k < 18:
			add(op{Kind: "delete", Sel: r.Intn(1000)})
		case k < 19:
			add(op{Kind: "todir", Sel: r.Intn(1000), Path: nameParts[r.Intn(8)] + ".txt", Seed: r.Int63()})
		default:
			add(op{Kind: "ignore", Path: dirParts[r.Intn(len(dirParts))], Sel: r.Intn(4)})
		}
	}
	commits := 2 + r.Intn(6)
	branched := false
	for c := 0; c < commits; c++ {
		for n := 1 + r.Intn(4); n > 0; n-- {
			randFileOp()
		}
		add(op{Kind: "commit", Msg: messages[r.Intn(len(messages))], Sel: r.Intn(len(identities)), Content: r.Intn(len(zones))})
		switch k := r.Intn(12); {
		case k == 0:
			add(op{Kind: "tag", Path: fmt.Sprintf("v%d", c), Flag: r.Intn(2) == 0})
		case k == 1 && !branched:
			branched = true
			name := []string{"topic", "feature/x", "fix-1"}[r.Intn(3)]
			add(op{Kind: "branch", Path: name})
			for n := 1 + r.Intn(3); n > 0; n-- {
				randFileOp()
			}
			add(op{Kind: "commit", Msg: "on branch", Sel: r.Intn(len(identities))})
			add(op{Kind: "switch", Path: "main"})
			if r.Intn(2) == 0 {
				// Same file both sides: a conflict resolved by hand.
				add(op{Kind: "edit", Sel: r.Intn(1000), Content: r.Intn(9), Seed: r.Int63()})
				add(op{Kind: "commit", Msg: "on main", Sel: r.Intn(len(identities))})
			}
			add(op{Kind: "merge", Path: name, Seed: r.Int63(), Flag: r.Intn(2) == 0})
		case k == 2:
			add(op{Kind: "gitlink", Path: []string{"sub", "vendor/mod", "ext lib"}[r.Intn(3)], Seed: r.Int63(), Flag: r.Intn(2) == 0})
			add(op{Kind: "commit", Msg: "add submodule", Sel: r.Intn(len(identities))})
		}
	}
	// Repository settings that change what git prints. They come from
	// their own generator so adding settings leaves every seed's other
	// operations as they were.
	cr := rand.New(rand.NewSource(seed ^ 0x6c0f19))
	if cr.Intn(5) < 2 {
		for n := 1 + cr.Intn(3); n > 0; n-- {
			add(op{Kind: "config", Sel: cr.Intn(len(repoSettings)), Content: cr.Intn(8)})
		}
	}
	if cr.Intn(4) == 0 {
		// .gitattributes that change how diffs print (binary, -diff,
		// diff, a driver with its own hunk-header rule) and how files are
		// stored and checked out (text, eol), in the root or a
		// subdirectory: from the first commit on (so history, clones and
		// checkouts carry it) or only in the final worktree.
		at := op{Kind: "attributes", Sel: cr.Intn(len(attributeSets)), Path: []string{"", "src/", "docs/"}[cr.Intn(3)], Flag: cr.Intn(2) == 0}
		if cr.Intn(2) == 0 {
			ops = append([]op{at}, ops...)
		} else {
			add(at)
		}
	}
	// The repository's shape at the end.
	switch k := r.Intn(10); {
	case k == 0:
		add(op{Kind: "detach", Sel: 1 + r.Intn(2)})
	case k == 1:
		add(op{Kind: "upstream", Sel: r.Intn(3), Flag: r.Intn(2) == 0})
	case k == 2:
		add(op{Kind: "shallow", Sel: 1 + r.Intn(3)})
	case k == 3:
		add(op{Kind: "conflict", Sel: r.Intn(1000), Content: 1 + r.Intn(15), Seed: r.Int63()})
	}
	// Stashes: changes put away (with untracked files and a message
	// sometimes) before the final worktree, which may touch the same
	// files. Their own generator, so other operations stay as they were.
	sr := rand.New(rand.NewSource(seed ^ 0x57a54))
	for n := sr.Intn(4) - 1; n > 0; n-- {
		for k := 1 + sr.Intn(3); k > 0; k-- {
			switch sr.Intn(4) {
			case 0:
				add(op{Kind: "write", Path: genName(sr), Content: sr.Intn(9), Seed: sr.Int63()})
			case 1:
				add(op{Kind: "stage", Sel: sr.Intn(1000), Flag: sr.Intn(2) == 0})
			default:
				add(op{Kind: "edit", Sel: sr.Intn(1000), Content: sr.Intn(9), Seed: sr.Int63()})
			}
		}
		add(op{Kind: "stash", Flag: sr.Intn(3) == 0, Sel: sr.Intn(2)})
	}
	// How the repository is stored: packs with delta chains (gc, repack),
	// packed refs, an index of version 4, split or with an untracked
	// cache, a commit graph; somewhere in the history, so objects made
	// after it are loose beside the packs. Their own generator.
	gr := rand.New(rand.NewSource(seed ^ 0x5707a6e))
	if gr.Intn(3) == 0 {
		for n := 1 + gr.Intn(2); n > 0; n-- {
			at := gr.Intn(len(ops) + 1)
			st := op{Kind: "storage", Sel: gr.Intn(len(storageShapes))}
			ops = append(ops[:at], append([]op{st}, ops[at:]...)...)
		}
	}
	// Type changes: a file replaced by a symbolic link or the reverse, a
	// gitlink put in a file's place in the index or a file in a
	// gitlink's place, staged or not, in the history or in the final
	// worktree. Their own generator.
	tr := rand.New(rand.NewSource(seed ^ 0x7e7c4a))
	if tr.Intn(3) == 0 {
		for n := 1 + tr.Intn(3); n > 0; n-- {
			at := tr.Intn(len(ops) + 1)
			if tr.Intn(2) == 0 {
				at = len(ops) // the final worktree
			}
			rt := op{Kind: "retype", Sel: tr.Intn(1000), Content: tr.Intn(4), Seed: tr.Int63(), Flag: tr.Intn(2) == 0}
			ops = append(ops[:at], append([]op{rt}, ops[at:]...)...)
		}
	}
	// Type changes through directories: a directory of tracked files
	// replaced by a file or a symbolic link, a symbolic link by a
	// directory, a symbolic link by a gitlink in the index; staged or
	// not, in the history or in the final worktree. Their own generator.
	dr := rand.New(rand.NewSource(seed ^ 0xd17e))
	if dr.Intn(4) == 0 {
		for n := 1 + dr.Intn(2); n > 0; n-- {
			at := dr.Intn(len(ops) + 1)
			if dr.Intn(2) == 0 {
				at = len(ops)
			}
			rt := op{Kind: "retypedir", Sel: dr.Intn(1000), Content: dr.Intn(4), Seed: dr.Int63(), Flag: dr.Intn(2) == 0}
			ops = append(ops[:at], append([]op{rt}, ops[at:]...)...)
		}
	}
	// A big file (its diff over 1 MiB), written somewhere in the history
	// or the final worktree, now and then. Its own generator.
	bgr := rand.New(rand.NewSource(seed ^ 0xb16f11e))
	if bgr.Intn(12) == 0 {
		at := bgr.Intn(len(ops) + 1)
		big := op{Kind: "write", Path: "big/" + genName(bgr), Content: 9, Seed: bgr.Int63()}
		ops = append(ops[:at], append([]op{big}, ops[at:]...)...)
	}
	// Signed commits: a commit replaced by itself with an OpenPGP or an
	// SSH signature (fixtures), somewhere in the history. Their own
	// generator.
	sgr := rand.New(rand.NewSource(seed ^ 0x516e))
	if sgr.Intn(4) == 0 {
		var commitsAt []int
		for i, o := range ops {
			if o.Kind == "commit" {
				commitsAt = append(commitsAt, i)
			}
		}
		for n := 1 + sgr.Intn(2); n > 0 && len(commitsAt) > 0; n-- {
			at := commitsAt[sgr.Intn(len(commitsAt))] + 1
			ops = append(ops[:at], append([]op{{Kind: "sign", Flag: sgr.Intn(3) == 0}}, ops[at:]...)...)
			for i := range commitsAt {
				if commitsAt[i] >= at {
					commitsAt[i]++
				}
			}
		}
	}
	// A worktree with staged, unstaged-on-staged, untracked, ignored and
	// deleted files.
	for n := r.Intn(7); n > 0; n-- {
		switch k := r.Intn(10); {
		case k < 6:
			randFileOp()
		case k < 8:
			add(op{Kind: "stage", Sel: r.Intn(1000), Flag: r.Intn(2) == 0})
		case k < 9:
			add(op{Kind: "rmcached", Sel: r.Intn(1000)})
		default:
			add(op{Kind: "mv", Sel: r.Intn(1000), Path: genName(r)})
		}
	}
	// Index entries with flags an agent's repository may carry: files
	// marked assume-unchanged or skip-worktree (then changed anyway, or
	// not), new files added with intent to add. Their own generator.
	fr := rand.New(rand.NewSource(seed ^ 0xf1a65))
	if fr.Intn(4) == 0 {
		for n := 1 + fr.Intn(3); n > 0; n-- {
			add(op{Kind: "flag", Sel: fr.Intn(1000), Content: fr.Intn(3), Flag: fr.Intn(2) == 0, Path: genName(fr), Seed: fr.Int63()})
		}
	}
	// A long history under everything else, now and then: hundreds of
	// commits with side branches merged back, tags far down, and
	// committer clocks out of order here and there. Its own generator;
	// first, as the history the other operations build on.
	hgr := rand.New(rand.NewSource(seed ^ 0x415707))
	if hgr.Intn(8) == 0 {
		ops = append([]op{{Kind: "history", Content: 150 + hgr.Intn(450), Seed: hgr.Int63()}}, ops...)
	}
	return ops
}

// storageShapes are ways git stores the same repository, as git commands.
var storageShapes = [][][]string{
	{{"gc", "-q"}},
	{{"repack", "-adq", "--depth=50", "--window=50"}, {"pack-refs", "--all"}},
	{{"repack", "-dq"}},
	{{"update-index", "--index-version", "4"}},
	{{"config", "core.untrackedCache", "true"}, {"update-index", "--untracked-cache"}, {"status", "-s"}},
	{{"update-index", "--split-index"}},
	{{"commit-graph", "write", "--reachable"}},
	{{"config", "feature.manyFiles", "true"}, {"update-index", "--index-version", "4"}},
}

// repoSettings are configuration keys that change the output of the git
// commands the tools stand for, each with values git accepts.
var repoSettings = []struct {
	key    string
	values []string
}{
	{"core.quotepath", []string{"false", "true"}},
	{"core.filemode", []string{"false"}},
	{"status.showUntrackedFiles", []string{"all", "no", "normal"}},
	{"diff.noprefix", []string{"true"}},
	{"diff.mnemonicPrefix", []string{"true"}},
	{"diff.context", []string{"1", "5", "0"}},
	{"diff.renames", []string{"false", "copies", "true"}},
	{"diff.algorithm", []string{"histogram", "patience", "minimal", "myers"}},
	{"log.date", []string{"iso", "relative", "short", "raw", "format:%Y-%m", "rfc", "unix", "iso-strict"}},
	{"log.decorate", []string{"short", "full", "no"}},
	{"format.pretty", []string{"oneline", "fuller", "format:%h %s", "medium", "short", "raw"}},
	{"core.abbrev", []string{"10", "12", "4"}},
	{"log.abbrevCommit", []string{"true"}},
	{"status.renames", []string{"false", "copies"}},
	{"diff.interHunkContext", []string{"2", "10"}},
	{"log.showRoot", []string{"false"}},
	{"log.follow", []string{"true"}},
	{"diff.suppressBlankEmpty", []string{"true"}},
	{"log.mailmap", []string{"false"}},
	{"diff.statGraphWidth", []string{"10"}},
	{"diff.relative", []string{"true"}},
	{"log.showSignature", []string{"false"}},
	{"core.autocrlf", []string{"true", "input"}},
	{"diff.indentHeuristic", []string{"false"}},
	{"status.relativePaths", []string{"false"}},
}

// attributeSets are .gitattributes contents.
var attributeSets = []string{
	"*.bin binary\n*.log -diff\n",
	"*.txt diff\n*.bin diff\n",
	"*.ts diff=fn\n*.md diff=fn\n",
	"*.json -diff\n*.json diff\n",
	"* -diff\n*.txt diff\n",
	"*.txt diff=bin\n",
	"* text=auto\n",
	"*.txt text eol=crlf\n*.md -text\n",
	"*.ts text\n*.log eol=lf\n",
	"*.txt ident\n*.ts ident text\n",
}

// content makes file bytes of one of several kinds.
func content(kind int, seed int64) []byte {
	r := rand.New(rand.NewSource(seed))
	lines := func(n int, eol string) []byte {
		var b bytes.Buffer
		for i := 0; i < n; i++ {
			b.WriteString(words[r.Intn(len(words))])
			b.WriteString(eol)
		}
		return b.Bytes()
	}
	switch kind {
	case 0:
		return nil // empty
	case 1:
		b := lines(1+r.Intn(5), "\n")
		return b[:len(b)-1] // no trailing newline
	case 2:
		return lines(1+r.Intn(6), "\r\n") // CRLF
	case 3:
		b := lines(2+r.Intn(8), "\n")
		b = append(b, 0, 1, 2, 0xff) // binary
		return b
	case 4:
		return lines(40+r.Intn(40), "\n") // long enough for several hunks
	case 9:
		// Long enough that a diff of it is over the tools' default
		// output cap (1 MiB).
		var b bytes.Buffer
		for i := 0; i < 120000; i++ {
			fmt.Fprintf(&b, "%d %s\n", i, words[r.Intn(len(words))])
		}
		return b.Bytes()
	default:
		return lines(1+r.Intn(12), "\n")
	}
}

// editContent changes some lines of old so renames stay similar.
func editContent(old []byte, kind int, seed int64) []byte {
	r := rand.New(rand.NewSource(seed))
	if kind < 4 || len(old) == 0 || bytes.IndexByte(old, 0) >= 0 {
		return content(kind, seed)
	}
	ls := strings.SplitAfter(string(old), "\n")
	for n := 1 + r.Intn(3); n > 0; n-- {
		i := r.Intn(len(ls) + 1)
		switch r.Intn(3) {
		case 0:
			ls = append(ls[:i], append([]string{words[r.Intn(len(words))] + "\n"}, ls[i:]...)...)
		case 1:
			if i < len(ls) {
				ls = append(ls[:i], ls[i+1:]...)
			}
		default:
			if i < len(ls) {
				ls[i] = "changed " + ls[i]
			}
		}
	}
	return []byte(strings.Join(ls, ""))
}

// builder runs operations in a directory, recording a shell script.
type builder struct {
	t      testing.TB
	dir    string
	script []string
	clock  int64
	zone   string
	who    [2]string
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./=:,+@%^", c))
	}) < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, c := range []byte(s) {
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String()
}

// gitEnv is the pinned environment of every git command the tests run.
func gitEnv(extra ...string) []string {
	home := filepath.Join(os.TempDir(), "tgp-integration-home")
	_ = os.MkdirAll(home, 0o755)
	env := []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TZ=UTC", "LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat",
	}
	return append(env, extra...)
}

// runGit runs git in dir and returns stdout, stderr and the error.
func runGit(dir string, env []string, args ...string) (string, string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func (b *builder) env() []string {
	date := fmt.Sprintf("%d %s", b.clock, b.zone)
	return gitEnv("GIT_AUTHOR_NAME="+b.who[0], "GIT_AUTHOR_EMAIL="+b.who[1], "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
}

// git runs a command that may fail (recorded either way).
func (b *builder) git(args ...string) (string, error) {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	out, stderr, err := runGit(b.dir, b.env(), args...)
	line := "git " + strings.Join(q, " ")
	if err != nil {
		line += " || true # " + strings.TrimSpace(strings.SplitN(stderr, "\n", 2)[0])
	}
	b.script = append(b.script, line)
	return out, err
}

func (b *builder) mustGit(args ...string) string {
	out, err := b.git(args...)
	if err != nil {
		b.t.Fatalf("git %q: %v\n%s", args, err, strings.Join(b.script, "\n"))
	}
	return out
}

func (b *builder) writeFile(p string, data []byte, mode os.FileMode) bool {
	full := filepath.Join(b.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return false
	}
	if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
		return false
	}
	_ = os.Remove(full)
	if err := os.WriteFile(full, data, mode); err != nil {
		return false
	}
	b.script = append(b.script, fmt.Sprintf("mkdir -p %s && printf '%%s' %s > %s && chmod %o %s",
		shellQuote(filepath.Dir(p)), shellQuote(string(data)), shellQuote(p), mode, shellQuote(p)))
	return true
}

// files lists regular files and symlinks in the worktree (not .git), sorted.
func (b *builder) files() []string {
	var out []string
	_ = filepath.Walk(b.dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(b.dir, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if !info.IsDir() {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func (b *builder) pick(sel int) (string, bool) {
	fs := b.files()
	if len(fs) == 0 {
		return "", false
	}
	return fs[sel%len(fs)], true
}

// build makes a repository from ops in a new directory and returns it.
func build(t testing.TB, ops []op) (string, *builder) {
	t.Helper()
	dir := t.TempDir()
	b := &builder{t: t, dir: dir, clock: 1700000000, zone: "+0000", who: identities[0]}
	b.mustGit("init", "-q", "-b", "main")
	for _, o := range ops {
		b.apply(o)
	}
	return b.dir, b
}

func (b *builder) apply(o op) {
	b.clock += 3607
	switch o.Kind {
	case "write":
		mode := os.FileMode(0o644)
		if o.Content == 7 {
			mode = 0o755
		}
		b.writeFile(o.Path, content(o.Content, o.Seed), mode)
	case "edit":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		full := filepath.Join(b.dir, p)
		fi, err := os.Lstat(full)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return
		}
		old, _ := os.ReadFile(full)
		b.writeFile(p, editContent(old, o.Content, o.Seed), fi.Mode().Perm())
	case "chmod":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		full := filepath.Join(b.dir, p)
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		mode := fi.Mode().Perm() ^ 0o111
		_ = os.Chmod(full, mode)
		b.script = append(b.script, fmt.Sprintf("chmod %o %s", mode, shellQuote(p)))
	case "symlink":
		target := "nowhere"
		if p, ok := b.pick(o.Sel); ok && !o.Flag {
			target = p
			if d := filepath.Dir(o.Path); d != "." {
				target = strings.Repeat("../", strings.Count(o.Path, "/")) + p
			}
		}
		full := filepath.Join(b.dir, o.Path)
		if _, err := os.Lstat(full); err == nil {
			return
		}
		if os.MkdirAll(filepath.Dir(full), 0o755) != nil || os.Symlink(target, full) != nil {
			return
		}
		b.script = append(b.script, fmt.Sprintf("mkdir -p %s && ln -s %s %s", shellQuote(filepath.Dir(o.Path)), shellQuote(target), shellQuote(o.Path)))
	case "rename", "mv":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		full, dst := filepath.Join(b.dir, p), filepath.Join(b.dir, o.Path)
		if _, err := os.Lstat(dst); err == nil {
			return
		}
		if o.Kind == "mv" {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return
			}
			b.script = append(b.script, "mkdir -p "+shellQuote(filepath.Dir(o.Path)))
			b.git("mv", "--", p, o.Path)
			return
		}
		if os.MkdirAll(filepath.Dir(dst), 0o755) != nil || os.Rename(full, dst) != nil {
			return
		}
		b.script = append(b.script, fmt.Sprintf("mkdir -p %s && mv %s %s", shellQuote(filepath.Dir(o.Path)), shellQuote(p), shellQuote(o.Path)))
		fi, err := os.Lstat(dst)
		if o.Flag && err == nil && fi.Mode().IsRegular() {
			old, _ := os.ReadFile(dst)
			if bytes.IndexByte(old, 0) < 0 && len(old) > 40 {
				b.writeFile(o.Path, append(old, []byte("one more line\n")...), fi.Mode().Perm())
			}
		}
	case "delete":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		_ = os.Remove(filepath.Join(b.dir, p))
		b.script = append(b.script, "rm "+shellQuote(p))
	case "todir":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		_ = os.Remove(filepath.Join(b.dir, p))
		b.script = append(b.script, "rm "+shellQuote(p))
		b.writeFile(p+"/"+o.Path, content(5, o.Seed), 0o644)
	case "ignore":
		patterns := [][]string{{"*.log", "!keep*.log"}, {"build/", "*.bin"}, {"/b*", "!b1*"}, {"*.json", "deep/"}}[o.Sel%4]
		var data []byte
		for _, p := range patterns {
			data = append(data, p+"\n"...)
		}
		b.writeFile(o.Path+"/.gitignore", data, 0o644)
	case "commit":
		b.who = identities[o.Sel%len(identities)]
		b.zone = zones[o.Content%len(zones)]
		b.git("add", "-A")
		b.git("commit", "-q", "--allow-empty", "-m", o.Msg)
	case "tag":
		if o.Flag {
			b.git("tag", "-a", "-m", "release "+o.Path, o.Path)
		} else {
			b.git("tag", o.Path)
		}
	case "branch":
		b.git("checkout", "-q", "-b", o.Path)
	case "switch":
		b.git("checkout", "-q", o.Path)
	case "merge":
		args := []string{"merge", "-q", "--no-edit"}
		if o.Flag {
			args = append(args, "--no-ff")
		}
		if _, err := b.git(append(args, o.Path)...); err != nil {
			out, _ := b.git("diff", "--name-only", "--diff-filter=U")
			for _, p := range strings.Split(strings.TrimSpace(out), "\n") {
				if p != "" {
					p = unquoteGit(p)
					b.writeFile(p, append(content(5, o.Seed), "resolved\n"...), 0o644)
				}
			}
			b.git("add", "-A")
			b.git("commit", "-q", "--no-edit")
		}
	case "gitlink":
		sha := fmt.Sprintf("%040x", o.Seed)[:40]
		b.git("update-index", "--add", "--cacheinfo", "160000,"+sha+","+o.Path)
		if o.Flag {
			_ = os.MkdirAll(filepath.Join(b.dir, o.Path), 0o755)
			b.script = append(b.script, "mkdir -p "+shellQuote(o.Path))
		}
	case "detach":
		b.git("checkout", "-q", "--detach", fmt.Sprintf("HEAD~%d", o.Sel))
	case "upstream":
		// A remote-tracking branch behind, ahead or beside the branch.
		target := "HEAD~1"
		if o.Sel == 1 {
			target = "HEAD"
		}
		rev, err := b.git("rev-parse", "-q", "--verify", target+"^{commit}")
		if err != nil {
			return
		}
		rev = strings.TrimSpace(rev)
		if o.Sel == 2 {
			// Diverged: a commit on top of HEAD~1 that main lacks.
			tree, err := b.git("rev-parse", "HEAD~1^{tree}")
			if err != nil {
				return
			}
			c, err := b.git("commit-tree", "-p", rev, "-m", "remote work", strings.TrimSpace(tree))
			if err != nil {
				return
			}
			rev = strings.TrimSpace(c)
		}
		b.git("update-ref", "refs/remotes/origin/main", rev)
		b.git("config", "remote.origin.url", "https://example.com/r.git")
		b.git("config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
		if o.Flag {
			b.git("config", "branch.main.remote", "origin")
			b.git("config", "branch.main.merge", "refs/heads/main")
		}
	case "shallow":
		// Continue in a shallow clone of what was built so far.
		clone := b.t.TempDir()
		out, stderr, err := runGit(clone, gitEnv(), "clone", "-q", "--no-local", "--depth", fmt.Sprint(o.Sel), "file://"+b.dir, "c")
		_ = out
		if err != nil {
			b.script = append(b.script, "# shallow clone failed: "+stderr)
			return
		}
		b.script = append(b.script, fmt.Sprintf("git clone -q --no-local --depth %d file://$PWD c && cd c", o.Sel))
		b.dir = filepath.Join(clone, "c")
	case "stage":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		b.git("add", "--", p)
		if o.Flag {
			// Unstaged on top of staged.
			full := filepath.Join(b.dir, p)
			if fi, err := os.Lstat(full); err == nil && fi.Mode().IsRegular() {
				old, _ := os.ReadFile(full)
				b.writeFile(p, append(old, "unstaged line\n"...), fi.Mode().Perm())
			}
		}
	case "attributes":
		b.writeFile(o.Path+".gitattributes", []byte(attributeSets[o.Sel%len(attributeSets)]), 0o644)
		b.git("config", "diff.fn.xfuncname", "^(let [a-z]+).*$")
		b.git("config", "diff.bin.binary", "true")
		if o.Flag {
			b.git("add", "--", o.Path+".gitattributes")
		}
	case "config":
		s := repoSettings[o.Sel%len(repoSettings)]
		b.git("config", s.key, s.values[o.Content%len(s.values)])
	case "conflict":
		// A merge left unresolved: the index holds stages 1-3 and
		// MERGE_HEAD names the other side. Content bits choose the kinds:
		// 1 both modified, 2 modified here and deleted there, 4 deleted
		// here and modified there, 8 added on both sides.
		cur, err := b.git("symbolic-ref", "-q", "--short", "HEAD")
		if err != nil {
			return
		}
		cur = strings.TrimSpace(cur)
		sel := func(i int) int { return o.Sel + 7*i }
		b.git("checkout", "-q", "-b", "side")
		if o.Content&1 != 0 {
			b.apply(op{Kind: "edit", Sel: sel(0), Content: 1, Seed: o.Seed})
		}
		if o.Content&2 != 0 {
			b.apply(op{Kind: "delete", Sel: sel(1)})
		}
		if o.Content&4 != 0 {
			b.apply(op{Kind: "edit", Sel: sel(2), Content: 2, Seed: o.Seed + 1})
		}
		if o.Content&8 != 0 {
			b.apply(op{Kind: "write", Path: "both/added.txt", Content: 5, Seed: o.Seed})
		}
		b.apply(op{Kind: "commit", Msg: "side"})
		b.git("checkout", "-q", cur)
		if o.Content&1 != 0 {
			b.apply(op{Kind: "edit", Sel: sel(0), Content: 3, Seed: o.Seed + 2})
		}
		if o.Content&2 != 0 {
			b.apply(op{Kind: "edit", Sel: sel(1), Content: 1, Seed: o.Seed + 3})
		}
		if o.Content&4 != 0 {
			b.apply(op{Kind: "delete", Sel: sel(2)})
		}
		if o.Content&8 != 0 {
			b.apply(op{Kind: "write", Path: "both/added.txt", Content: 4, Seed: o.Seed + 4})
		}
		b.apply(op{Kind: "commit", Msg: "here"})
		b.git("merge", "-q", "--no-edit", "side")
	case "stash":
		args := []string{"stash", "push", "-q"}
		if o.Flag {
			args = append(args, "-u")
		}
		if o.Sel == 1 {
			args = append(args, "-m", "generated stash")
		}
		b.git(args...)
	case "storage":
		for _, args := range storageShapes[o.Sel%len(storageShapes)] {
			b.git(args...)
		}
	case "flag":
		switch o.Content {
		case 0, 1:
			p, ok := b.pick(o.Sel)
			if !ok {
				return
			}
			flag := []string{"--assume-unchanged", "--skip-worktree"}[o.Content]
			if _, err := b.git("update-index", flag, "--", p); err != nil {
				return
			}
			if o.Flag {
				b.apply(op{Kind: "edit", Sel: o.Sel, Content: 1, Seed: o.Seed})
			}
		default:
			if b.writeFile(o.Path, content(1, o.Seed), 0o644) {
				b.git("add", "-N", "--", o.Path)
			}
			if o.Flag {
				b.apply(op{Kind: "write", Path: o.Path, Content: 2, Seed: o.Seed + 1})
			}
		}
	case "retype":
		b.retype(o)
	case "history":
		b.history(o)
	case "retypedir":
		b.retypeDir(o)
	case "sign":
		b.sign(o.Flag)
	case "rmcached":
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		b.git("rm", "-q", "--cached", "--", p)
	}
}

// sign replaces HEAD's commit by the same commit signed (a fixture
// signature: SSH when ssh, else OpenPGP) and moves HEAD's branch to it.
func (b *builder) sign(ssh bool) {
	raw, err := b.git("cat-file", "commit", "HEAD")
	if err != nil {
		return
	}
	head, msg, ok := strings.Cut(raw, "\n\n")
	if !ok || strings.Contains(head, "\ngpgsig ") {
		return
	}
	sig := gittest.PGPSignature
	if ssh {
		sig = gittest.SSHSignature
	}
	obj := head + "\ngpgsig " + strings.ReplaceAll(sig, "\n", "\n ") + "\n\n" + msg
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = b.dir, b.env(), strings.NewReader(obj)
	out, err := cmd.Output()
	if err != nil {
		return
	}
	b.script = append(b.script, fmt.Sprintf("printf '%%s' %s | git hash-object -t commit -w --stdin", shellQuote(obj)))
	b.git("update-ref", "-m", "sign", "HEAD", strings.TrimSpace(string(out)))
}

// retype changes the kind of a path (DIFF_STATUS_TYPE_CHANGED): by
// o.Content, 0 a file becomes a symbolic link, 1 a link becomes a file,
// 2 the index records a gitlink where a file is (its file left in place
// unless o.Flag), 3 a file takes a gitlink's place. o.Flag stages a
// worktree change (0, 1, 3).
func (b *builder) retype(o op) {
	var links []string
	for _, p := range b.files() {
		if fi, err := os.Lstat(filepath.Join(b.dir, p)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			links = append(links, p)
		}
	}
	stage := func(p string) {
		if o.Flag {
			b.git("add", "--", p)
		}
	}
	switch o.Content {
	case 0:
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		full := filepath.Join(b.dir, p)
		if fi, err := os.Lstat(full); err != nil || !fi.Mode().IsRegular() {
			return
		}
		target := "nowhere"
		if q, ok := b.pick(o.Sel/7 + 1); ok && o.Seed%3 != 0 && q != p {
			target = strings.Repeat("../", strings.Count(p, "/")) + q
		}
		_ = os.Remove(full)
		if os.Symlink(target, full) != nil {
			return
		}
		b.script = append(b.script, fmt.Sprintf("rm %s && ln -s %s %s", shellQuote(p), shellQuote(target), shellQuote(p)))
		stage(p)
	case 1:
		if len(links) == 0 {
			return
		}
		p := links[o.Sel%len(links)]
		_ = os.Remove(filepath.Join(b.dir, p))
		b.script = append(b.script, "rm "+shellQuote(p))
		b.writeFile(p, content(1+int(o.Seed%5), o.Seed), 0o644)
		stage(p)
	case 2:
		p, ok := b.pick(o.Sel)
		if !ok {
			return
		}
		if _, err := b.git("ls-files", "--error-unmatch", "--", p); err != nil {
			return
		}
		sha := fmt.Sprintf("%040x", o.Seed)[:40]
		if _, err := b.git("update-index", "--cacheinfo", "160000,"+sha+","+p); err != nil {
			return
		}
		if o.Flag {
			_ = os.Remove(filepath.Join(b.dir, p))
			_ = os.MkdirAll(filepath.Join(b.dir, p), 0o755)
			b.script = append(b.script, fmt.Sprintf("rm %s && mkdir %s", shellQuote(p), shellQuote(p)))
		}
	case 3:
		out, err := b.git("ls-files", "-s", "-z")
		if err != nil {
			return
		}
		var gitlinks []string
		for _, l := range nulSplit(out) {
			if strings.HasPrefix(l, "160000 ") {
				_, name, _ := strings.Cut(l, "\t")
				gitlinks = append(gitlinks, name)
			}
		}
		if len(gitlinks) == 0 {
			return
		}
		p := gitlinks[o.Sel%len(gitlinks)]
		full := filepath.Join(b.dir, p)
		if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
			if os.Remove(full) != nil {
				return // not empty
			}
			b.script = append(b.script, "rmdir "+shellQuote(p))
		}
		if o.Seed%2 == 0 {
			_ = os.MkdirAll(filepath.Dir(full), 0o755)
			if os.Symlink("nowhere", full) != nil {
				return
			}
			b.script = append(b.script, fmt.Sprintf("mkdir -p %s && ln -s nowhere %s", shellQuote(filepath.Dir(p)), shellQuote(p)))
		} else {
			b.writeFile(p, content(5, o.Seed), 0o644)
		}
		stage(p)
	}
}

// history imports o.Content commits onto main with git fast-import: each
// edits one of a few files under hist/ (lines inserted, deleted,
// replaced), one in six or so is on a side branch that a merge brings
// back, every fiftieth is tagged h<n>, and one in fifteen has a committer
// time up to five days behind its parent's. The worktree is then reset to
// it.
func (b *builder) history(o op) {
	r := rand.New(rand.NewSource(o.Seed))
	var buf bytes.Buffer
	files := map[string][]string{}
	edit := func(p string) []string {
		ls := append([]string(nil), files[p]...)
		for k := 1 + r.Intn(3); k > 0; k-- {
			at := r.Intn(len(ls) + 1)
			switch r.Intn(3) {
			case 0:
				ls = append(ls[:at], append([]string{words[r.Intn(len(words))]}, ls[at:]...)...)
			case 1:
				if at < len(ls) {
					ls = append(ls[:at], ls[at+1:]...)
				}
			default:
				if at < len(ls) {
					ls[at] = fmt.Sprintf("%s %d", words[r.Intn(len(words))], r.Intn(100))
				}
			}
		}
		files[p] = ls
		return ls
	}
	data := func(s string) { fmt.Fprintf(&buf, "data %d\n%s\n", len(s), s) }
	when := int64(1690000000)
	mark, mainMark, sideMark, sideLeft := 0, 0, 0, 0
	commit := func(ref string, from, merge int, changed ...string) int {
		mark++
		when += 300 + r.Int63n(3000)
		date := when
		if r.Intn(15) == 0 {
			date -= r.Int63n(5 * 86400)
		}
		who := identities[r.Intn(len(identities))]
		zone := zones[r.Intn(len(zones))]
		fmt.Fprintf(&buf, "commit %s\nmark :%d\n", ref, mark)
		fmt.Fprintf(&buf, "author %s <%s> %d %s\n", who[0], who[1], date-r.Int63n(600), zone)
		fmt.Fprintf(&buf, "committer %s <%s> %d %s\n", who[0], who[1], date, zone)
		data(messages[r.Intn(len(messages))])
		if from > 0 {
			fmt.Fprintf(&buf, "from :%d\n", from)
		}
		if merge > 0 {
			fmt.Fprintf(&buf, "merge :%d\n", merge)
		}
		for _, p := range changed {
			fmt.Fprintf(&buf, "M 100644 inline %s\n", p)
			content := strings.Join(files[p], "\n")
			if content != "" {
				content += "\n"
			}
			fmt.Fprintf(&buf, "data %d\n%s\n", len(content), content)
		}
		return mark
	}
	for i := 0; i < o.Content; i++ {
		switch {
		case sideLeft > 0 && r.Intn(3) == 0:
			// Main goes on while the side branch is open.
			p := fmt.Sprintf("hist/f%d.txt", r.Intn(5))
			edit(p)
			mainMark = commit("refs/heads/main", mainMark, 0, p)
		case sideLeft > 0:
			edit("hist/side.txt")
			sideMark = commit("refs/heads/hist-side", sideMark, 0, "hist/side.txt")
			sideLeft--
			if sideLeft == 0 {
				mainMark = commit("refs/heads/main", mainMark, sideMark, "hist/side.txt")
			}
		case mainMark > 0 && r.Intn(6) == 0:
			sideMark, sideLeft = mainMark, 1+r.Intn(5)
			edit("hist/side.txt")
			sideMark = commit("refs/heads/hist-side", sideMark, 0, "hist/side.txt")
			sideLeft--
			if sideLeft == 0 {
				mainMark = commit("refs/heads/main", mainMark, sideMark, "hist/side.txt")
			}
		default:
			p := fmt.Sprintf("hist/f%d.txt", r.Intn(5))
			edit(p)
			mainMark = commit("refs/heads/main", mainMark, 0, p)
		}
		if mainMark > 0 && i%50 == 49 {
			fmt.Fprintf(&buf, "reset refs/tags/h%d\nfrom :%d\n\n", i+1, mainMark)
		}
	}
	if sideLeft > 0 {
		commit("refs/heads/main", mainMark, sideMark, "hist/side.txt")
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env, cmd.Stdin = b.dir, b.env(), bytes.NewReader(buf.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.script = append(b.script, "# fast-import failed: "+firstLine(string(out)))
		return
	}
	b.script = append(b.script, fmt.Sprintf("printf '%%s' %s | git fast-import --quiet", shellQuote(buf.String())))
	b.git("reset", "-q", "--hard")
	b.clock = max(b.clock, when+3600)
}

// retypeDir changes a path's kind through a directory: by o.Content, 0
// a directory of files becomes a file, 1 it becomes a symbolic link, 2 a
// symbolic link becomes a directory holding a file, 3 the index records
// a gitlink where a symbolic link is (the link left in place unless
// o.Flag, which puts an empty directory there). o.Flag stages the
// worktree change (0, 1, 2).
func (b *builder) retypeDir(o op) {
	var dirs, links []string
	seen := map[string]bool{}
	for _, p := range b.files() {
		if fi, err := os.Lstat(filepath.Join(b.dir, p)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			links = append(links, p)
		}
		for d := filepath.Dir(p); d != "."; d = filepath.Dir(d) {
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	sort.Strings(dirs)
	stage := func(p string) {
		if o.Flag {
			b.git("add", "-A", "--", p)
		}
	}
	switch o.Content {
	case 0, 1:
		if len(dirs) == 0 {
			return
		}
		d := dirs[o.Sel%len(dirs)]
		if os.RemoveAll(filepath.Join(b.dir, d)) != nil {
			return
		}
		b.script = append(b.script, "rm -r "+shellQuote(d))
		if o.Content == 0 {
			b.writeFile(d, content(1+int(o.Seed%5), o.Seed), 0o644)
		} else {
			if os.Symlink("nowhere", filepath.Join(b.dir, d)) != nil {
				return
			}
			b.script = append(b.script, fmt.Sprintf("ln -s nowhere %s", shellQuote(d)))
		}
		stage(d)
	case 2:
		if len(links) == 0 {
			return
		}
		p := links[o.Sel%len(links)]
		_ = os.Remove(filepath.Join(b.dir, p))
		b.script = append(b.script, "rm "+shellQuote(p))
		b.writeFile(p+"/inside.txt", content(5, o.Seed), 0o644)
		stage(p)
	case 3:
		if len(links) == 0 {
			return
		}
		p := links[o.Sel%len(links)]
		if _, err := b.git("ls-files", "--error-unmatch", "--", p); err != nil {
			return
		}
		sha := fmt.Sprintf("%040x", o.Seed)[:40]
		if _, err := b.git("update-index", "--cacheinfo", "160000,"+sha+","+p); err != nil {
			return
		}
		if o.Flag {
			_ = os.Remove(filepath.Join(b.dir, p))
			_ = os.MkdirAll(filepath.Join(b.dir, p), 0o755)
			b.script = append(b.script, fmt.Sprintf("rm %s && mkdir %s", shellQuote(p), shellQuote(p)))
		}
	}
}

// unquoteGit undoes git's C-style quoting of a path in its output.
func unquoteGit(s string) string {
	if len(s) < 2 || s[0] != '"' {
		return s
	}
	s = s[1 : len(s)-1]
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'r':
			b = append(b, '\r')
		case 'v':
			b = append(b, '\v')
		case '0', '1', '2', '3':
			if i+2 < len(s) {
				var v byte
				for _, d := range s[i : i+3] {
					v = v*8 + byte(d-'0')
				}
				b = append(b, v)
				i += 2
			}
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}
