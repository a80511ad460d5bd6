package gittools

import "testing"

// TestRegressTrailersEndAsGit: the trailer block ends where git's
// ignore_non_trailer says: before the "Conflicts:" block old merges wrote,
// a final run of comment and empty lines, and the scissors line.
func TestRegressTrailersEndAsGit(t *testing.T) {
	f := newRepo(t)
	msgs := []string{
		"Merge branch 'x'\n\nSigned-off-by: A U Thor <a@example.com>\nReviewed-by: R <r@example.com>\n\nConflicts:\n\tfile.txt\n\tother.txt\n",
		"Merge branch 'y'\n\nKey: value\nConflicts:\n\tfile.txt\n",
		"Subject\n\nKey: v\n  folded on\n# a comment\n\n",
		"Subject\n\nKey: v\n# ------------------------ >8 ------------------------\nIgnored: yes\n",
		"Subject\n\nKey: v\n  \n",
		"Subject\n\nbody\n\nConflicts:\n\ta.txt\nnot a path\n",
	}
	for i, m := range msgs {
		f.write(t, "f.txt", string(rune('a'+i)))
		f.commitAt(t, "", "1700000000 +0000", m)
	}
	f = open(t, f.dir)
	for _, format := range []string{"%(trailers)", "%(trailers:only)", "%(trailers:unfold)", "%(trailers:key=Key)", "%(trailers:separator=%x2C)"} {
		compareTool(t, f, "git_log", map[string]any{"format": format}, "", "log", "--format="+format)
	}
}
