package pretty

// Notes (refs/notes/commits) as git log shows them: under a commit in the
// builtin formats when no format was asked for, and as %N.

import (
	"io"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// loadNotes maps each annotated object to its note blob: the notes
// tree's paths with the fan-out slashes removed are object names.
func loadNotes(r *git.Repository) map[plumbing.Hash]plumbing.Hash {
	out := map[plumbing.Hash]plumbing.Hash{}
	ref, err := r.Reference(plumbing.ReferenceName("refs/notes/commits"), true)
	if err != nil {
		return out
	}
	c, err := object.GetCommit(r.Storer, ref.Hash())
	if err != nil {
		return out
	}
	t, err := c.Tree()
	if err != nil {
		return out
	}
	var walk func(t *object.Tree, prefix string)
	walk = func(t *object.Tree, prefix string) {
		for _, e := range t.Entries {
			name := prefix + e.Name
			if e.Mode == filemode.Dir {
				if len(name) < 40 && isHexString(e.Name) {
					if sub, err := object.GetTree(r.Storer, e.Hash); err == nil {
						walk(sub, name)
					}
				}
				continue
			}
			if len(name) == 40 && isHexString(name) {
				out[plumbing.NewHash(name)] = e.Hash
			}
		}
	}
	walk(t, "")
	return out
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return s != ""
}

// noteText is format_note: the note's lines, indented under "Notes:" for
// the builtin formats, as is for %N.
func noteText(r *git.Repository, blob plumbing.Hash, raw bool) string {
	b, err := object.GetBlob(r.Storer, blob)
	if err != nil {
		return ""
	}
	rd, err := b.Reader()
	if err != nil {
		return ""
	}
	data, err := io.ReadAll(rd)
	rd.Close()
	if err != nil {
		return ""
	}
	msg := strings.TrimSuffix(string(data), "\n")
	var sb strings.Builder
	if !raw {
		sb.WriteString("\nNotes:\n")
	}
	if len(data) == 0 {
		return sb.String()
	}
	for _, l := range strings.Split(msg, "\n") {
		if !raw {
			sb.WriteString("    ")
		}
		sb.WriteString(l + "\n")
	}
	return sb.String()
}
