package gittools

// The differences from git kept on purpose or not yet closed, each
// proved here against git (docs/git-fidelity.md says why).

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// TestKnownRacilyCleanEntryNotSmudged: when git writes an index it zeroes
// the size of an entry that is racily clean (its file changed, same size,
// within the second the index it read was written, so the stat data,
// seconds only, are the entry's: ce_smudge_racily_clean_entry), so that
// the change is looked at again once the index is newer. The tools'
// index writes keep the size: git status after them takes the file as
// unchanged. Still open: the tools would have to hash such files on every
// index write. Two repositories are readied in one second (retried until
// they are), then both index writes come a second later.
func TestKnownRacilyCleanEntryNotSmudged(t *testing.T) {
	ready := func() *fixture {
		f := newRepo(t)
		f.write(t, "other.txt", "o\n")
		f.write(t, "f.txt", "aaaa\n")
		f.commitAll(t, "base")
		return f
	}
	var tool, git *fixture
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Skip("could not ready both repositories within one second")
		}
		tool, git = ready(), ready()
		start := time.Now().Unix()
		for _, f := range []*fixture{tool, git} {
			f.write(t, "f.txt", "bbbb\n")
			gittest.Git(t, f.dir, "add", "f.txt")
			f.write(t, "f.txt", "cccc\n")
			f.write(t, "other.txt", "o2\n")
		}
		if time.Now().Unix() == start {
			break
		}
	}
	for time.Now().Unix() == mtimeOf(t, filepath.Join(git.dir, ".git/index")) {
		time.Sleep(10 * time.Millisecond) // the writes must come a second later
	}
	g := open(t, tool.dir)
	g.call(t, "git_add", map[string]any{"paths": []string{"other.txt"}})
	gittest.Git(t, git.dir, "add", "other.txt")
	size := func(dir string) string {
		out := gittest.Git(t, dir, "ls-files", "--debug", "f.txt")
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "size:") {
				return strings.TrimSpace(l[strings.Index(l, "size:"):])
			}
		}
		return ""
	}
	if got, want := size(tool.dir), size(git.dir); got == want || !strings.HasPrefix(want, "size: 0") {
		t.Errorf("the racily clean entry: tools %q, git %q (is the difference closed? update docs/git-fidelity.md)", got, want)
	}
	// The worktree column of f.txt (staged, then changed again).
	wt := func(dir string) byte {
		for _, l := range strings.Split(gittest.Git(t, dir, "status", "--porcelain"), "\n") {
			if len(l) > 3 && l[3:] == "f.txt" {
				return l[1]
			}
		}
		return 0
	}
	if c := wt(git.dir); c != 'M' {
		t.Errorf("git's index: git status misses the change (%q)", c)
	}
	if c := wt(tool.dir); c == 'M' {
		t.Errorf("the tools' index: git status sees the change (is the difference closed?)")
	}
	if out := g.call(t, "git_status", map[string]any{"porcelain": true}); !strings.Contains(out, "MM f.txt") {
		t.Errorf("git_status misses the change:\n%s", out)
	}
}

func mtimeOf(t *testing.T, p string) int64 {
	t.Helper()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.ModTime().Unix()
}

// TestKnownSparseIndexRefused: a sparse checkout's repository
// (extensions.worktreeConfig, an index with sparse directory entries)
// is refused by every git tool, with git's extension named, and left as
// it was; git reads it. Kept: the tools would have to expand and
// collapse sparse directories on every index they read and write.
func TestKnownSparseIndexRefused(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a/x.txt", "x\n")
	f.write(t, "b/y.txt", "y\n")
	f.commitAll(t, "base")
	f.git(t, "sparse-checkout", "init", "--cone", "--sparse-index")
	f.git(t, "sparse-checkout", "set", "a")
	before := f.git(t, "status", "--porcelain=2") + f.git(t, "ls-files", "--sparse", "-s")
	_, err := tryOpen(f.dir)
	if err == nil || !strings.Contains(err.Error(), "worktreeconfig") {
		t.Fatalf("opening a sparse checkout: %v, want the extension named", err)
	}
	if after := f.git(t, "status", "--porcelain=2") + f.git(t, "ls-files", "--sparse", "-s"); after != before {
		t.Errorf("the refusal changed the repository:\n%s\nwas\n%s", after, before)
	}
}

// tryOpen opens the repository at dir as a kernel's root does.
func tryOpen(dir string) (*gitbackend.Repo, error) {
	f, err := vfs.NewOS(dir)
	if err != nil {
		return nil, err
	}
	return gitbackend.Open(context.Background(), f.Billy(), gitbackend.Config{})
}

// indexHas reports whether the index file in dir carries the extension
// sig (its four letters and a size below 16 MiB: no entry of these
// fixtures holds them).
func indexHas(t *testing.T, dir, sig string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), sig+"\x00")
}

// TestKnownCacheTreeAndUntrackedCacheNotWritten: git keeps the index's
// cache tree (TREE, the trees of unchanged directories) and untracked
// cache (UNTR, core.untrackedCache) across an add; the tools' index
// writes leave both out. Kept: both are caches git rebuilds when it
// needs them (write-tree, status), and one the tools kept without
// invalidating exactly as git does would be wrong, not slow. Nothing git
// prints differs.
func TestKnownCacheTreeAndUntrackedCacheNotWritten(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.write(t, "d/b.txt", "b\n")
	f.write(t, "e/c.txt", "c\n")
	f.commitAll(t, "base")
	f.git(t, "config", "core.untrackedCache", "true")
	f.write(t, "d/new.txt", "n\n")
	f.write(t, "u/untracked.txt", "u\n")
	f.git(t, "status", "--porcelain")
	if !indexHas(t, f.dir, "TREE") || !indexHas(t, f.dir, "UNTR") {
		t.Fatal("git wrote no TREE or UNTR extension: the fixture proves nothing")
	}
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	open(t, toolDir).call(t, "git_add", map[string]any{"paths": []string{"d/new.txt"}})
	gittest.Git(t, gitDir, "add", "--", "d/new.txt")
	if !indexHas(t, gitDir, "TREE") || !indexHas(t, gitDir, "UNTR") {
		t.Error("git's add dropped its caches")
	}
	if indexHas(t, toolDir, "TREE") || indexHas(t, toolDir, "UNTR") {
		t.Error("the tools' index keeps TREE or UNTR (is the difference closed? update docs/git-fidelity.md)")
	}
	view := func(dir string) string {
		return gittest.Git(t, dir, "status", "--porcelain=2", "-uall") + gittest.Git(t, dir, "ls-files", "-s") + gittest.Git(t, dir, "write-tree")
	}
	same(t, "what git reads", view(toolDir), view(gitDir))
}

// TestKnownStashLeavesAssumeUnchangedChange: git stash push resets a
// file marked assume-unchanged that was changed anyway: the stash does
// not hold the change (git takes the file as unchanged) and the reset
// overwrites it, so the change is nowhere. git_stash leaves that file as
// it is. Kept on purpose: the tools lose no work git would not have
// saved; everything else (the stash's commits, the index) is git's.
func TestKnownStashLeavesAssumeUnchangedChange(t *testing.T) {
	f := newRepo(t)
	f.write(t, "flagged.txt", "committed\n")
	f.write(t, "other.txt", "o\n")
	f.commitAll(t, "base")
	f.git(t, "update-index", "--assume-unchanged", "flagged.txt")
	f.write(t, "flagged.txt", "local work\n")
	f.write(t, "other.txt", "o2\n")
	dates := []string{"GIT_AUTHOR_DATE=1700500000 +0100", "GIT_COMMITTER_DATE=1700500000 +0100"}
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	if _, err := openEnv(t, toolDir, dates...).set.Call(context.Background(), "git_stash", []byte(`{"action":"push"}`)); err != nil {
		t.Fatal(err)
	}
	if _, errOut, ok := gitAt(t, gitDir, dates, "stash", "push", "-q"); !ok {
		t.Fatal(errOut)
	}
	read := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "flagged.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read(toolDir), read(gitDir); got != "local work\n" || want != "committed\n" {
		t.Errorf("flagged.txt: tools %q, git %q (is the difference closed? update docs/git-fidelity.md)", got, want)
	}
	view := func(dir string) string {
		return gittest.Git(t, dir, "rev-parse", "refs/stash", "refs/stash^2") + gittest.Git(t, dir, "ls-files", "-s", "-v")
	}
	same(t, "the stash and the index", view(toolDir), view(gitDir))
}

// TestKnownTerminalControlStripped: the git tools' output carries no
// terminal control sequence (CSI, OSC, a two-byte ESC sequence), where
// git prints a file's or a message's bytes as they are (differential
// corpus: a PNG's blame holding ESC Z). Kept on purpose: a result shown
// on a terminal must not drive it. Everything else is git's, byte for
// byte.
func TestKnownTerminalControlStripped(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "plain\n")
	f.commitAll(t, "base")
	f.write(t, "a.txt", "plain\n\x1b[31mred\x1b[0m and \x1bZ and \x1b]0;title\x07 end\n")
	f.git(t, "add", "a.txt")
	f.git(t, "commit", "-q", "-m", "colour \x1b[1mbold\x1b[0m")
	f = open(t, f.dir)
	for _, c := range []struct {
		tool string
		args map[string]any
		git  []string
	}{
		{"git_show", map[string]any{}, []string{"show"}},
		{"git_diff", map[string]any{"from_ref": "HEAD~1", "to_ref": "HEAD"}, []string{"diff", "HEAD~1", "HEAD"}},
		{"git_blame", map[string]any{"path": "a.txt"}, []string{"blame", "--", "a.txt"}},
		{"git_log", map[string]any{"format": "%s"}, []string{"log", "--format=%s"}},
	} {
		got := f.call(t, c.tool, c.args)
		want := f.git(t, c.git...)
		if !strings.Contains(want, "\x1b") {
			t.Fatalf("%s: git printed no ESC: the fixture proves nothing", c.tool)
		}
		if got == want || got != StripTerminalControl(want) {
			t.Errorf("%s: tool %q, git %q (is the difference closed? update docs/git-fidelity.md)", c.tool, got, want)
		}
	}
}

// TestKnownReflogDatesNotRead: git reads "<ref>@{<spec>}" whose spec is
// not a count as a date (approxidate: "HEAD@{yesterday}", "main@{2 weeks
// ago}") and picks the reflog entry of that time; it even reads
// "HEAD@{0}..HEAD^{tree}", a string ending in "}", as HEAD at the date
// "0}..HEAD^{tree" (get_oid_basic finds the last "@{" before the final
// "}"), where git_checkout with paths takes it as a tree-ish (differential
// seed 740178). The tools read counts only and refuse the rest as an
// unknown revision. Not yet closed: it needs git's approxidate.
func TestKnownReflogDatesNotRead(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "one\n")
	f.commitAll(t, "one")
	f.write(t, "f.txt", "two\n")
	f.commitAll(t, "two")
	for _, c := range []struct {
		tool string
		args map[string]any
		git  []string
	}{
		{"git_checkout", map[string]any{"commit": "HEAD@{0}..HEAD^{tree}", "paths": []string{"f.txt"}}, []string{"checkout", "-q", "HEAD@{0}..HEAD^{tree}", "--", "f.txt"}},
		{"git_show", map[string]any{"commit": "HEAD@{yesterday}"}, []string{"show", "-s", "HEAD@{yesterday}"}},
	} {
		dir := copyTree(t, f.dir)
		if _, errOut, ok := gitAt(t, dir, nil, c.git...); !ok {
			t.Fatalf("git %v: %s", c.git, errOut)
		}
		te := open(t, copyTree(t, f.dir)).callErr(t, c.tool, c.args)
		if te == nil || !strings.Contains(te.Message, "unknown revision") {
			t.Errorf("%s %v: tool error %v, want an unknown revision (is the difference closed? update docs/git-fidelity.md)", c.tool, c.args, te)
		}
	}
}

// TestKnownStashApplyIgnoresDirectoryRenames: merge-ort detects that the
// index moved every file of d/ to e/ while the stash adds d/c, reports
// CONFLICT (file location), puts the file at e/c (stage 3) and fails.
// git_stash applies d/c where the stash put it and reports no conflict.
// Not yet closed: merge-ort's directory-rename detection (its
// dir_rename_counts, the majority rule, the rename/rename cases it
// raises) is not rebuilt, and the file is applied, not lost.
func TestKnownStashApplyIgnoresDirectoryRenames(t *testing.T) {
	f := newRepo(t)
	f.write(t, "d/a.txt", "a\n")
	f.write(t, "d/b.txt", "b\n")
	f.write(t, "top.txt", "t\n")
	f.commitAll(t, "base")
	f.write(t, "d/c.txt", "c\n")
	f.git(t, "add", "d/c.txt")
	f.git(t, "stash", "-q")
	f.git(t, "mv", "d", "e")
	f.commitAll(t, "move")
	toolDir, gitDir := copyTree(t, f.dir), copyTree(t, f.dir)
	_, terr := open(t, toolDir).set.Call(context.Background(), "git_stash", []byte(`{"action":"apply"}`))
	gitOut, gerr := gittest.GitErr(gitDir, "stash", "apply")
	if gerr == nil || !strings.Contains(gitOut, "CONFLICT (file location)") {
		t.Fatalf("git stash apply: %v\n%s", gerr, gitOut)
	}
	view := func(dir string) string { return gittest.Git(t, dir, "ls-files", "-s") }
	want := view(gitDir)
	if !strings.Contains(want, "3\te/c.txt") {
		t.Fatalf("git's index:\n%s", want)
	}
	got := view(toolDir)
	if terr != nil || !strings.Contains(got, "0\td/c.txt") || strings.Contains(got, "e/c.txt") {
		t.Errorf("git_stash apply: %v, index\n%s(is the difference closed? update docs/git-fidelity.md)", terr, got)
	}
}

// TestKnownReplaceRefsNotRead: git reads an object through its
// replacement (refs/replace/<hash>, git replace, unless
// GIT_NO_REPLACE_OBJECTS or core.useReplaceRefs=false), so a commit
// grafted onto an older parent hides the commits between them from git
// log, with or without a path. The tools read objects as stored and list
// them: one extra commit here. Not yet closed: every object read (commits,
// trees and blobs, and the pretty formats that read a commit again by its
// hash) would have to go through the replacement, keeping the original
// hash on display, and the commit-graph be left unread when replacements
// exist, as git does.
func TestKnownReplaceRefsNotRead(t *testing.T) {
	f := newRepo(t)
	for _, c := range []string{"1", "2", "3", "4"} {
		f.write(t, "a.txt", c+"\n")
		f.commitAll(t, "c"+c)
	}
	f.git(t, "replace", "--graft", "HEAD~1", "HEAD~3")
	f = open(t, f.dir)
	for _, path := range []string{"", "a.txt"} {
		args := []string{"log", "--format=%s"}
		if path != "" {
			args = append(args, "--", path)
		}
		want, _, ok := gitAt(t, f.dir, nil, args...)
		if !ok || want != "c4\nc3\nc1\n" {
			t.Fatalf("git log %v: %q", args, want)
		}
		got := f.call(t, "git_log", map[string]any{"format": "%s", "path": path})
		if got != "c4\nc3\nc2\nc1\n" {
			t.Errorf("git_log path %q: %q (is the difference closed? update docs/git-fidelity.md)", path, got)
		}
	}
}

// TestKnownUntrackedCacheStaleDirectory: with core.untrackedCache, git
// status can list a directory as untracked after its last file was
// deleted (the cache validates a directory by its own stat data, and
// big/'s did not change when big/a/b/c lost its file); git status with
// the cache off, and git_status, read the directories and list nothing.
// Kept: the tools do not read git's untracked cache (they do not write
// it either, TestKnownCacheTreeAndUntrackedCacheNotWritten); they answer
// what git's own uncached scan answers. Found by the differential suite
// (seed 529), which counts it as documented.
func TestKnownUntrackedCacheStaleDirectory(t *testing.T) {
	f := newRepo(t)
	f.write(t, "a.txt", "a\n")
	f.commitAll(t, "base")
	f.write(t, "big/a/b/c/readme", "r\n")
	f.git(t, "config", "core.untrackedCache", "true")
	f.git(t, "update-index", "--untracked-cache")
	f.git(t, "status", "-s")
	if err := os.Remove(filepath.Join(f.dir, "big/a/b/c/readme")); err != nil {
		t.Fatal(err)
	}
	cached := f.git(t, "status", "--porcelain")
	uncached := gittest.Git(t, copyTree(t, f.dir), "-c", "core.untrackedCache=false", "status", "--porcelain")
	if uncached != "" {
		t.Fatalf("git without its cache lists %q: the fixture proves nothing", uncached)
	}
	got := open(t, f.dir).call(t, "git_status", map[string]any{"porcelain": true, "untracked": true, "branch": false})
	if got != uncached {
		t.Errorf("git_status printed %q, git without its untracked cache %q", got, uncached)
	}
	if cached == uncached {
		// The cache's staleness depends on timing (a directory's mtime
		// against the cache's): the seed met it, a quick run may not.
		t.Logf("git's untracked cache was not stale in this run")
	}
}
