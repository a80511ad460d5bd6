package gittools

import (
	"fmt"
	"strings"
	"testing"
)

// TestRegressRevisionRangesAsGit: git_diff's from_ref and git_show's
// commit take A..B and A...B as git does (handle_dotdot): a diff of A's
// (the merge base's) tree and B's, a show of every commit of the range in
// git log's order (%m "<" on A...B's left side), a blame from B with A's
// history its boundary ("^");
// one-sided forms mean HEAD; a tree on a side; a
// symmetric difference of a tree is git's error; a range with a second
// revision is git diff's usage.
func TestRegressRevisionRangesAsGit(t *testing.T) {
	f := newRepo(t)
	for i, d := range []string{"1700000001 +0000", "1700000002 +0000", "1700000003 +0000"} {
		f.write(t, "f.txt", string(rune('a'+i))+"\n")
		f.commitAt(t, "", d, "c"+string(rune('1'+i)))
	}
	f.git(t, "checkout", "-q", "-b", "side", "HEAD~1")
	f.write(t, "s.txt", "s\n")
	f.commitAt(t, "", "1700000009 +0000", "side")
	f.git(t, "checkout", "-q", "main")
	f.git(t, "tag", "-a", "-m", "tag", "v1", "HEAD~1")
	f = open(t, f.dir)
	for _, rev := range []string{"HEAD~2..HEAD", "HEAD~2..", "..side", "main...side", "side...main", "main...", "...side",
		"HEAD..HEAD", "v1..side", "v1...main", "HEAD^{tree}..side", "HEAD~1..HEAD^{tree}", "main...HEAD^{tree}",
		"HEAD:f.txt..HEAD", "main..side..x", "nope..HEAD", "v1..v1", "v1...v1", "main..main", "side...side"} {
		compareTool(t, f, "git_show", map[string]any{"commit": rev}, "", "show", rev)
		compareTool(t, f, "git_show", map[string]any{"commit": rev, "stat": true, "format": "%s"}, "", "show", "--stat", "--format=%s", rev)
		compareTool(t, f, "git_show", map[string]any{"commit": rev, "format": "%m %s"}, "", "show", "--format=%m %s", rev)
		compareTool(t, f, "git_diff", map[string]any{"from_ref": rev}, "", "diff", rev)
		compareTool(t, f, "git_blame", map[string]any{"commit": rev, "path": "f.txt"}, "", "blame", rev, "--", "f.txt")
	}
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1..HEAD", "to_ref": "HEAD"}, "", "diff", "HEAD~1..HEAD", "HEAD")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD", "to_ref": "main...side"}, "", "diff", "HEAD", "main...side")
}

// TestRegressTreeRevisionAsGit: a revision naming a tree is a side of
// git_diff ("git diff HEAD^{tree}"), and an argument that is no range
// because a side does not resolve is one revision peeled at its last
// "^{", the type name read as a prefix (peel_onion): "X^{tree}..y@{0}"
// is X's tree to git_show and git_diff, and no commit to git_blame.
func TestRegressTreeRevisionAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "a\n")
	f.commitAt(t, "", "1700000001 +0000", "c1")
	f.git(t, "tag", "-a", "-m", "tag", "v1")
	f.write(t, "f.txt", "b\n")
	f.commitAt(t, "", "1700000002 +0000", "c2")
	f.write(t, "f.txt", "worktree\n")
	f = open(t, f.dir)
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD^{tree}"}, "", "diff", "HEAD^{tree}")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "v1", "to_ref": "HEAD^{tree}"}, "", "diff", "v1", "HEAD^{tree}")
	compareTool(t, f, "git_diff", map[string]any{"from_ref": "HEAD~1^{tree}", "to_ref": "v1"}, "", "diff", "HEAD~1^{tree}", "v1")
	for _, rev := range []string{"HEAD^{tree}..nope@{0}", "HEAD~1^{tree}x..y@{0}"} {
		compareTool(t, f, "git_show", map[string]any{"commit": rev}, "", "show", rev)
		compareTool(t, f, "git_diff", map[string]any{"from_ref": rev}, "", "diff", rev)
		compareTool(t, f, "git_blame", map[string]any{"commit": rev, "path": "f.txt"}, "", "blame", rev, "--", "f.txt")
	}
}

// TestRegressRangeWalkStopsAsGit: git walks a range until only
// UNINTERESTING commits are left, and five more (limit_list's slop), so
// with committer dates out of order it stops before its marks reach every
// ancestor of the excluded side: HEAD..low lists (and blames, its root a
// boundary) low and its ancestors, though HEAD reaches them through a
// chain of older commits. A mark spreads through every commit git has
// parsed, so naming low as HEAD~8 (whose resolution parses the chain)
// lists nothing, and so does HEAD~5..low. git_blame of ".." is
// HEAD..HEAD: the working tree, HEAD a boundary.
func TestRegressRangeWalkStopsAsGit(t *testing.T) {
	f := newRepo(t)
	for i, d := range []int{7, 8, 9, 10, 20, 1, 2, 3, 4, 5, 6, 26} {
		f.write(t, "f.txt", strings.Repeat("x\n", i)+fmt.Sprintf("line %d\n", i))
		f.commitAt(t, "", fmt.Sprintf("%d +0000", 1700000000+d*86400), fmt.Sprint("c", i+1))
		if i == 3 {
			f.git(t, "tag", "low")
			f.git(t, "tag", "-a", "-m", "t", "alow")
		}
	}
	f.write(t, "f.txt", "worktree\n"+strings.Repeat("x\n", 11)+"line 11\n")
	f = open(t, f.dir)
	for _, rev := range []string{"HEAD..low", "HEAD~1..low", "HEAD..alow", "HEAD~5..low", "alow...HEAD", "low...HEAD~2",
		"HEAD..HEAD~8", "HEAD...HEAD~8", "HEAD~8..HEAD", "HEAD~1..HEAD~7", "main^{commit}..low", ".."} {
		if rev != ".." {
			compareTool(t, f, "git_show", map[string]any{"commit": rev, "format": "%h %s"}, "", "show", "--format=%h %s", rev)
		}
		// sameBlame: the working tree's lines carry the clock's time.
		sameBlame(t, f, map[string]any{"commit": rev, "path": "f.txt"}, "", rev, "--", "f.txt")
	}
}

// TestRegressBlameRangeWorkingTreeAsGit: git_blame of A..A blames the
// working tree, and git's walk of the range starts from the working
// tree's commit too (the newest commit, interesting): the walk goes on
// past A's history long enough to mark HEAD's parent, an ancestor of A,
// a boundary; from A alone it would stop after five commits.
func TestRegressBlameRangeWorkingTreeAsGit(t *testing.T) {
	f := newRepo(t)
	day := func(d int) string { return fmt.Sprintf("%d +0000", 1700000000+d*86400) }
	f.write(t, "b.txt", "one\ntwo\n")
	f.commitAt(t, "", day(9), "c1")
	f.write(t, "b.txt", "one\ntwo\nthree\n")
	f.commitAt(t, "", day(21), "c2")
	f.git(t, "checkout", "-q", "-b", "side")
	for i, d := range []int{15, 14, 18, 10, 5, 6, 26, 15, 3, 17, 25, 5, 25, 19} {
		f.write(t, "s.txt", fmt.Sprintln(i))
		f.commitAt(t, "", day(d), fmt.Sprint("s", i))
	}
	f.git(t, "checkout", "-q", "main")
	f.write(t, "m.txt", "m\n")
	f.commitAt(t, "", day(21), "c3")
	f.write(t, "b.txt", "zero\none\ntwo\nthree\n")
	f = open(t, f.dir)
	for _, rev := range []string{"side..side", "side...side", "main..main", "HEAD~1..HEAD~1"} {
		sameBlame(t, f, map[string]any{"commit": rev, "path": "b.txt"}, "", rev, "--", "b.txt")
	}
}

// TestRegressCheckoutMergeBaseAsGit: git checkout takes "A...B" as the
// one merge base of A and B (get_oid_mb; HEAD for a side left out), to
// detach at, to start a branch from, or to check paths out of; with
// several merge bases or none, or "A..B", it is no revision.
func TestRegressCheckoutMergeBaseAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "1\n")
	f.commitAt(t, "", "1700000001 +0000", "c1")
	f.write(t, "f.txt", "2\n")
	f.commitAt(t, "", "1700000002 +0000", "c2")
	f.git(t, "checkout", "-q", "-b", "side", "HEAD~1")
	f.write(t, "s.txt", "s\n")
	f.commitAt(t, "", "1700000003 +0000", "s1")
	f.git(t, "checkout", "-q", "main")
	f.git(t, "checkout", "-q", "--orphan", "lone")
	f.write(t, "l.txt", "l\n")
	f.commitAt(t, "", "1700000004 +0000", "lone")
	f.git(t, "checkout", "-q", "main")
	for _, rev := range []string{"main...side", "side...", "...side", "main...main", "main...lone", "main..side", "nope...side"} {
		twin(t, f.dir, "", "git_checkout", map[string]any{"commit": rev}, "checkout", "-q", "--detach", rev)
		twin(t, f.dir, "", "git_checkout", map[string]any{"create_branch": "nb", "commit": rev}, "checkout", "-q", "-b", "nb", rev)
		twin(t, f.dir, "", "git_checkout", map[string]any{"commit": rev, "paths": []string{"f.txt"}}, "checkout", "-q", rev, "--", "f.txt")
	}
}

// TestRegressRangeDiffPrefixesAsGit: git diff A..B and A...B compare two
// trees, so diff.mnemonicPrefix leaves git's a/ and b/ (not the c/ and
// w/ of a commit against the worktree; differential seed 100253).
func TestRegressRangeDiffPrefixesAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "1\n")
	f.commitAll(t, "c1")
	f.write(t, "f.txt", "2\n")
	f.commitAll(t, "c2")
	f.write(t, "f.txt", "3\n")
	f.git(t, "config", "diff.mnemonicPrefix", "true")
	f = open(t, f.dir)
	for _, rev := range []string{"HEAD~1..", "HEAD~1..HEAD", "HEAD~1...HEAD", "..HEAD~1", "HEAD~1"} {
		compareTool(t, f, "git_diff", map[string]any{"from_ref": rev}, "", "diff", rev)
		compareTool(t, f, "git_diff", map[string]any{"from_ref": rev, "stat": true, "unified": 1}, "", "diff", "-U1", "--stat", rev)
	}
}

// TestRegressShowSymmetricNoMergeBaseAsGit: A...B of two commits with no
// merge base names nothing UNINTERESTING, so git show does not walk: it
// shows A and then B (A marked "<" by %m), not their histories
// (differential seed 100093: a stash's untracked-files commit, which
// has no parent, against a branch).
func TestRegressShowSymmetricNoMergeBaseAsGit(t *testing.T) {
	f := newRepo(t)
	f.write(t, "f.txt", "1\n")
	f.commitAt(t, "", "1700000001 +0000", "c1")
	f.write(t, "f.txt", "2\n")
	f.commitAt(t, "", "1700000002 +0000", "c2")
	f.git(t, "checkout", "-q", "--orphan", "lone")
	f.write(t, "l.txt", "l\n")
	f.commitAt(t, "", "1700000003 +0000", "l1")
	f.write(t, "l.txt", "l2\n")
	f.commitAt(t, "", "1700000004 +0000", "l2")
	f.git(t, "checkout", "-q", "main")
	f = open(t, f.dir)
	for _, rev := range []string{"main...lone", "lone...main", "lone...", "...lone", "main~1...lone~1"} {
		compareTool(t, f, "git_show", map[string]any{"commit": rev, "format": "%m %h %s"}, "", "show", "--format=%m %h %s", rev)
		compareTool(t, f, "git_show", map[string]any{"commit": rev, "stat": true}, "", "show", "--stat", rev)
	}
}
