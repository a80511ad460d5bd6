package gittools

import "testing"

// TestRegressRevisionRangesAsGit: git_diff's from_ref and git_show's
// commit take A..B and A...B as git does (handle_dotdot): a diff of A's
// (the merge base's) tree and B's, a show of every commit of the range in
// git log's order; one-sided forms mean HEAD; a tree on a side; a
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
		"HEAD:f.txt..HEAD", "main..side..x", "nope..HEAD"} {
		compareTool(t, f, "git_show", map[string]any{"commit": rev}, "", "show", rev)
		compareTool(t, f, "git_show", map[string]any{"commit": rev, "stat": true, "format": "%s"}, "", "show", "--stat", "--format=%s", rev)
		compareTool(t, f, "git_diff", map[string]any{"from_ref": rev}, "", "diff", rev)
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
