package revision

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/tgp-go/tgp/internal/revparse"
)

// LimitWalk replays the flags git's revision machinery leaves on the
// commits of a range (revision.c: handle_commit, limit_list,
// mark_parents_uninteresting), because git's answer depends on them and
// not on reachability: limit_list stops once every commit still queued is
// UNINTERESTING (five more after that, its "slop"), so with committer
// dates out of order an ancestor of A can be listed by git log A..B, or
// blamed by git blame A..B as if it were not excluded. An
// UNINTERESTING mark spreads to a commit's parents, and on through the
// commits already parsed; git blame spreads it further as it meets
// UNINTERESTING commits. A shallow boundary has no parents.
type LimitWalk struct {
	ctx     context.Context
	r       *git.Repository
	shallow map[plumbing.Hash]bool
	nodes   map[plumbing.Hash]*Node
	// flags are the marks of the objects named (a tag hands its marks
	// to what it points at).
	flags map[plumbing.Hash]uint8
	// limited: a commit named was UNINTERESTING (git's revs->limited).
	limited bool
}

// The marks of a named object: git's UNINTERESTING and SYMMETRIC_LEFT.
const (
	markUninteresting uint8 = 1 << iota
	markLeft
)

// Node is one commit and its flags.
type Node struct {
	hash    plumbing.Hash
	commit  *object.Commit
	date    int64
	parents []plumbing.Hash
	parsed  bool
	// uninteresting, seen and added are git's UNINTERESTING, SEEN and
	// ADDED; left is SYMMETRIC_LEFT, a commit of A...B's left side (that
	// %m prints as "<").
	uninteresting, seen, added, left bool
}

// WorktreeNode is git blame's commit of the working tree
// (fake_working_tree_commit): dated date, with parents, no hash.
func WorktreeNode(date int64, parents []plumbing.Hash) *Node {
	return &Node{date: date, parents: parents, parsed: true}
}

// Uninteresting says whether n carries the UNINTERESTING mark now.
func (n *Node) Uninteresting() bool { return n.uninteresting }

// limitSlop is revision.c's SLOP.
const limitSlop = 5

func newLimitWalk(ctx context.Context, r *git.Repository) *LimitWalk {
	return &LimitWalk{ctx: ctx, r: r, shallow: Shallow(r), nodes: map[plumbing.Hash]*Node{}, flags: map[plumbing.Hash]uint8{}}
}

// node is the commit h (not parsed yet: git's lookup_commit).
func (w *LimitWalk) node(h plumbing.Hash) *Node {
	n, ok := w.nodes[h]
	if !ok {
		n = &Node{hash: h}
		w.nodes[h] = n
	}
	return n
}

// parse reads n's date and parents (git's repo_parse_commit); false when
// the commit cannot be read.
func (w *LimitWalk) parse(n *Node) bool {
	if n.parsed {
		return true
	}
	c, err := object.GetCommit(w.r.Storer, n.hash)
	if err != nil {
		return false
	}
	n.commit, n.date, n.parsed = c, c.Committer.When.Unix(), true
	if !w.shallow[n.hash] {
		n.parents = c.ParentHashes
	}
	return true
}

// Parsed is the commit h's node, parsed (git's lookup_commit then
// repo_parse_commit: what git blame does to a commit it looks at, which
// lets an UNINTERESTING mark spread through it).
func (w *LimitWalk) Parsed(h plumbing.Hash) *Node {
	n := w.node(h)
	w.parse(n)
	return n
}

// Uninteresting says whether h carries the UNINTERESTING mark now.
func (w *LimitWalk) Uninteresting(h plumbing.Hash) bool {
	n, ok := w.nodes[h]
	return ok && n.uninteresting
}

// MarkParentsUninteresting is mark_parents_uninteresting: n's parents are
// marked, and the parents of every newly marked commit already parsed.
func (w *LimitWalk) MarkParentsUninteresting(n *Node) {
	stack := append([]plumbing.Hash(nil), n.parents...)
	for len(stack) > 0 {
		p := w.node(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		if p.uninteresting {
			continue
		}
		p.uninteresting = true
		// Pushed in reverse so the first parent is marked first, as
		// git's stack of pending commits does.
		for i := len(p.parents) - 1; i >= 0; i-- {
			stack = append(stack, p.parents[i])
		}
	}
}

// start is prepare_revision_walk's handling of the objects named, in
// order (their UNINTERESTING marks set in w.flags beforehand): each is
// peeled to a commit (a tree or a blob starts nothing), parsed, and, if
// marked, marks its parents. It returns the distinct commits sorted by
// date (stable), and whether any was marked (git's revs->limited).
func (w *LimitWalk) start(names []plumbing.Hash) (list []*Node, limited bool, err error) {
	for _, h := range names {
		fl := w.flags[h]
		o, err := object.GetObject(w.r.Storer, h)
		if err != nil {
			return nil, false, fmt.Errorf("read object %s: %w", h, err)
		}
		for o.Type() == plumbing.TagObject {
			t := o.(*object.Tag)
			if o, err = t.Object(); err != nil {
				return nil, false, fmt.Errorf("peel tag %s: %w", h, err)
			}
			w.flags[o.ID()] |= fl
		}
		if o.Type() != plumbing.CommitObject {
			continue
		}
		n := w.node(o.ID())
		if !w.parse(n) {
			return nil, false, fmt.Errorf("read commit %s", n.hash)
		}
		if (fl|w.flags[n.hash])&markUninteresting != 0 {
			n.uninteresting = true
		}
		if (fl|w.flags[n.hash])&markLeft != 0 {
			n.left = true
		}
		if n.uninteresting {
			w.MarkParentsUninteresting(n)
			limited = true
		}
		if !n.seen {
			n.seen = true
			list = append(list, n)
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].date > list[j].date })
	return list, limited, nil
}

// insertByDate is commit_list_insert_by_date: after every commit at least
// as new.
func insertByDate(list []*Node, n *Node) []*Node {
	i := sort.Search(len(list), func(i int) bool { return list[i].date < n.date })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = n
	return list
}

// processParents is process_parents without history simplification: an
// UNINTERESTING commit marks its parents (and, once parsed, theirs) and
// queues them; another queues its parents once.
func (w *LimitWalk) processParents(n *Node, list []*Node) []*Node {
	if n.added {
		return list
	}
	n.added = true
	for _, ph := range n.parents {
		p := w.node(ph)
		if n.uninteresting {
			p.uninteresting = true
		} else if n.left {
			p.left = true
		}
		if !w.parse(p) {
			continue
		}
		if n.uninteresting && len(p.parents) > 0 {
			w.MarkParentsUninteresting(p)
		}
		if p.seen {
			continue
		}
		p.seen = true
		list = insertByDate(list, p)
	}
	return list
}

// limit is limit_list: the walk from the started commits until only
// UNINTERESTING ones are left (and slop more), the commits met that were
// not UNINTERESTING then, in the order they were met. A commit of it
// marked later is dropped by git when it prints (see visible).
func (w *LimitWalk) limit(list []*Node) ([]*Node, error) {
	slop := limitSlop
	date := int64(1<<63 - 1)
	var out []*Node
	for len(list) > 0 {
		if err := w.ctx.Err(); err != nil {
			return nil, err
		}
		n := list[0]
		list = list[1:]
		list = w.processParents(n, list)
		if n.uninteresting {
			w.MarkParentsUninteresting(n)
			slop = stillInteresting(list, date, slop)
			if slop > 0 {
				continue
			}
			break
		}
		date = n.date
		out = append(out, n)
	}
	return out, nil
}

// stillInteresting is still_interesting.
func stillInteresting(list []*Node, date int64, slop int) int {
	if len(list) == 0 {
		return 0
	}
	if date <= list[0].date {
		return limitSlop
	}
	for _, n := range list {
		if !n.uninteresting {
			return limitSlop
		}
	}
	return slop - 1
}

// WalkRange sets up the walk of a range as setup_revisions and
// prepare_revision_walk do: A..B names A (UNINTERESTING) and B; A...B
// names the merge bases (UNINTERESTING), A and B. The commits limit_list
// kept are returned. fake is git blame's working-tree commit when it is
// the final: one more commit named, the newest. Git walks a range with nothing UNINTERESTING (a tree
// on the left) without limit_list, in the same order: limit keeps every
// commit then.
func WalkRange(ctx context.Context, r *git.Repository, rr Range, fake *Node) (*LimitWalk, []*Node, error) {
	w := newLimitWalk(ctx, r)
	if fake != nil {
		// Its parents were parsed to make it (fake_working_tree_commit).
		w.nodes[fake.hash] = fake
		for _, h := range fake.parents {
			w.parse(w.node(h))
		}
	}
	// What git parsed before it marks anything lets its marks spread
	// further: the commits its revision names went through, and those
	// the merge base search met.
	w.parseNamed(rr.LeftName)
	w.parseNamed(rr.RightName)
	var names []plumbing.Hash
	if rr.Symmetric {
		if err := w.paintParse(rr.Left.(*object.Commit).Hash, rr.Right.(*object.Commit).Hash); err != nil {
			return nil, nil, err
		}
		bases, err := MergeBases(ctx, r, rr.Left.(*object.Commit), rr.Right.(*object.Commit))
		if err != nil {
			return nil, nil, err
		}
		for _, b := range bases {
			w.flags[b.Hash] |= markUninteresting
			names = append(names, b.Hash)
		}
		w.flags[rr.LeftID] |= markLeft
	} else {
		w.flags[rr.LeftID] |= markUninteresting
	}
	names = append(names, rr.LeftID, rr.RightID)
	list, limited, err := w.start(names)
	if err != nil {
		return nil, nil, err
	}
	w.limited = limited
	if fake != nil {
		fake.seen = true
		list = insertByDate(list, fake)
	}
	kept, err := w.limit(list)
	return w, kept, err
}

// visible are the commits of kept git prints: those not UNINTERESTING
// by the end of the walk; left holds those of A...B's left side.
func (w *LimitWalk) visible(kept []*Node) (out []*object.Commit, left map[plumbing.Hash]bool) {
	left = map[plumbing.Hash]bool{}
	for _, n := range kept {
		if !n.uninteresting {
			out = append(out, n.commit)
			if n.left {
				left[n.hash] = true
			}
		}
	}
	return out, left
}

// parseNamed parses the commits git's get_oid parses resolving rev: each
// commit "~n" steps from (get_nth_ancestor), the commit "^n" takes a
// parent of and the one "^{...}" peels (lookup_commit_reference), and
// the commit the name ends at (handle_dotdot's parse_object). A name
// that git resolves otherwise (":path", ":/text") parses nothing here.
func (w *LimitWalk) parseNamed(rev string) {
	if strings.Contains(rev, ":") {
		return
	}
	i := revparse.NameEnd(rev)
	o, err := revparse.Object(w.r, rev[:i])
	for err == nil {
		t, ok := o.(*object.Tag)
		if !ok {
			break
		}
		o, err = t.Object()
	}
	if err != nil || o.Type() != plumbing.CommitObject {
		return
	}
	cur := w.node(o.ID())
	number := func() int {
		j := i
		for j < len(rev) && rev[j] >= '0' && rev[j] <= '9' {
			j++
		}
		n := 1
		if j > i {
			n, _ = strconv.Atoi(rev[i:j])
		}
		i = j
		return n
	}
	for i < len(rev) {
		op := rev[i]
		i++
		if !w.parse(cur) {
			return
		}
		switch {
		case op == '^' && i < len(rev) && rev[i] == '{':
			j := strings.IndexByte(rev[i:], '}')
			if j < 0 {
				return
			}
			typ := rev[i+1 : i+j]
			i += j + 1
			if typ != "" && typ != "commit" && typ != "object" {
				return // a tree or a blob: no commit to go on from
			}
		case op == '~':
			for n := number(); n > 0; n-- {
				if !w.parse(cur) || len(cur.parents) == 0 {
					return
				}
				cur = w.node(cur.parents[0])
			}
		case op == '^':
			n := number()
			if n == 0 {
				continue
			}
			if n > len(cur.parents) {
				return
			}
			cur = w.node(cur.parents[n-1])
		default:
			return
		}
	}
	w.parse(cur)
}

// paintParse parses the commits git's merge base search
// (paint_down_to_common) parses from one and two: a walk newest
// committer date first, painting each commit with the sides that reach
// it, a commit both reach painting its parents stale, until only stale
// commits are queued.
func (w *LimitWalk) paintParse(one, two plumbing.Hash) error {
	if one == two {
		return nil
	}
	const (
		parent1 = 1 << iota
		parent2
		stale
	)
	paint := map[plumbing.Hash]uint8{one: parent1, two: parent2}
	var q DateQueue[*Node]
	for _, h := range []plumbing.Hash{one, two} {
		n := w.node(h)
		if !w.parse(n) {
			return fmt.Errorf("read commit %s", h)
		}
		q.Push(n, n.date)
	}
	nonStale := func() bool {
		return q.Any(func(n *Node) bool { return paint[n.hash]&stale == 0 })
	}
	for nonStale() {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		n := q.Pop()
		f := paint[n.hash] & (parent1 | parent2 | stale)
		if f == parent1|parent2 {
			f |= stale
		}
		for _, ph := range n.parents {
			if paint[ph]&f == f {
				continue
			}
			p := w.node(ph)
			if !w.parse(p) {
				return fmt.Errorf("read commit %s", ph)
			}
			paint[ph] |= f
			q.Push(p, p.date)
		}
	}
	return nil
}
