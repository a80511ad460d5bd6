package gittools

import (
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/tgp-go/tgp/internal/reflog"
)

// detachedLine is the first line of git's long status on a detached HEAD:
// "HEAD detached at/from X", or "Not currently on any branch." when the
// reflog does not say where HEAD was detached.
func detachedLine(r *git.Repository, head plumbing.Hash, ab *abbrever) string {
	from, at, ok := detachedFrom(r, head, ab)
	switch {
	case !ok:
		return "Not currently on any branch."
	case at:
		return "HEAD detached at " + from
	}
	return "HEAD detached from " + from
}

// detachedBranch is git branch's name for a detached HEAD
// (get_head_description).
func detachedBranch(r *git.Repository, head plumbing.Hash, ab *abbrever) string {
	from, at, ok := detachedFrom(r, head, ab)
	switch {
	case !ok:
		return "(no branch)"
	case at:
		return "(HEAD detached at " + from + ")"
	}
	return "(HEAD detached from " + from + ")"
}

// detachedFrom is wt_status_get_detached_from: the last "checkout: moving
// from A to B" in HEAD's reflog names where HEAD was detached; at is true
// while HEAD is still there. B is printed as the ref it names (tags and
// remote-tracking branches short) when that ref points there, else as the
// commit's abbreviation; ok is false with no such entry.
func detachedFrom(r *git.Repository, head plumbing.Hash, ab *abbrever) (from string, at, ok bool) {
	target, noid, ok := lastSwitch(r)
	if !ok {
		return "", false, false
	}
	if target != "HEAD" {
		if ref, h, ok := dwimRef(r, target); ok && (h == noid || peelsTo(r, h, noid)) {
			from = ref
			if s, ok := strings.CutPrefix(from, "refs/tags/"); ok {
				from = s
			} else if s, ok := strings.CutPrefix(from, "refs/remotes/"); ok {
				from = s
			}
		}
	}
	if from == "" {
		from = ab.Short(noid)
	}
	return from, head == noid, true
}

// lastSwitch reads HEAD's reflog for its newest checkout entry: the target
// as written and the commit HEAD moved to.
func lastSwitch(r *git.Repository) (target string, noid plumbing.Hash, ok bool) {
	fsr, isFS := r.Storer.(interface{ Filesystem() billy.Filesystem })
	if !isFS {
		return "", plumbing.ZeroHash, false
	}
	es, err := reflog.Read(fsr.Filesystem(), plumbing.HEAD)
	if err != nil {
		return "", plumbing.ZeroHash, false
	}
	for i := len(es) - 1; i >= 0; i-- {
		rest, isCheckout := strings.CutPrefix(es[i].Message, "checkout: moving from ")
		if !isCheckout {
			continue
		}
		if _, to, found := strings.Cut(rest, " to "); found {
			return to, es[i].New, true
		}
	}
	return "", plumbing.ZeroHash, false
}

// dwimRef is git's dwim_ref: the one ref name (by the ref_rev_parse_rules)
// that exists; ok is false when none or several do.
func dwimRef(r *git.Repository, name string) (string, plumbing.Hash, bool) {
	var found string
	var hash plumbing.Hash
	n := 0
	for _, rule := range []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"} {
		full := strings.ReplaceAll(rule, "%s", name)
		ref, err := r.Reference(plumbing.ReferenceName(full), true)
		if err != nil {
			continue
		}
		if n == 0 {
			found, hash = full, ref.Hash()
		}
		n++
	}
	return found, hash, n == 1
}

// peelsTo reports whether the object h (a tag) dereferences to commit c.
func peelsTo(r *git.Repository, h, c plumbing.Hash) bool {
	for i := 0; i < 8; i++ {
		t, err := object.GetTag(r.Storer, h)
		if err != nil {
			return false
		}
		if t.Target == c {
			return true
		}
		h = t.Target
	}
	return false
}
