package gitbackend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	gitpackfile "github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/tgp-go/tgp/internal/gitformat/packfile"
)

// Many machines, one push budget: a journal. The machine queue
// (machine.go) makes each machine one contender, but machines share
// nothing but the remote, where every step of coordination is one more
// push. With a journal (Config.Journal, a database every machine
// reaches) a write is recorded durably, with its commits as a pack, and
// one pusher at a time per remote branch, elected among the processes
// that have a write waiting, takes every waiting entry, recreates them as
// one line of commits on the remote's tip (the replay of the machine
// queue, with the entries' objects read from their packs), pushes once
// within the fleet's budget, and settles each entry with its commit.
// Each writer waits for its entry's outcome and takes it as a machine
// queue ticket's result.
//
// Nothing is lost or pushed twice when a pusher dies: the commit it
// planned for each entry is recorded before the push, and the next pusher
// settles as landed every entry whose planned commit the remote's tip
// already holds.
//
// Carries (carry.go) are not used with a journal: a write that waits is
// in the journal, not on the remote.

// Journal is the durable queue of writes shared by every machine pushing
// to a remote (the journal package implements it on PostgreSQL).
type Journal interface {
	// Record stores e durably (one transaction) and returns its id; older
	// waiting entries of the same root are superseded by it (its commits
	// include theirs).
	Record(ctx context.Context, e *JournalEntry) (int64, error)
	// Outcome is what a pusher said of entry id (nil: still waiting).
	Outcome(ctx context.Context, id int64) (*JournalOutcome, error)
	// Lead makes the caller the pusher of remote's branch when nobody is
	// (ok false otherwise); release gives it up. A pusher that dies gives
	// it up with its connection.
	Lead(ctx context.Context, remote, branch string) (release func(), ok bool, err error)
	// Waiting lists the entries of remote's branch with no outcome, in
	// the order they were recorded.
	Waiting(ctx context.Context, remote, branch string) ([]*JournalEntry, error)
	// Plan records the commit each entry will be pushed as, before the
	// push.
	Plan(ctx context.Context, planned map[int64]string) error
	// Settle records outcomes.
	Settle(ctx context.Context, outcomes map[int64]*JournalOutcome) error
	// PushBudget is the fleet's push budget for remote: how long until a
	// push fits n in window (0: now), counting one started now when take
	// is set and it fits.
	PushBudget(ctx context.Context, remote string, n int, window time.Duration, take bool) (time.Duration, error)
	// LastLanded is the tip of remote's branch the last push through the
	// journal left ("" when none is recorded): a boot whose root is there
	// already does not fetch.
	LastLanded(ctx context.Context, remote, branch string) (string, error)
}

// JournalEntry is one root's write: the commits Base..Head, as a pack of
// the objects they add to Base.
type JournalEntry struct {
	ID             int64
	Remote, Branch string
	// Root names the root that wrote it (host and .git path): a root's
	// newer entry supersedes its older waiting ones.
	Root       string
	Base, Head string
	Pack       []byte
	// Planned is the commit a pusher planned for it (empty: none yet).
	Planned string
	Created time.Time
}

// JournalOutcome is what the pusher that took an entry says of it.
type JournalOutcome struct {
	// Commit holds the entry's change on the remote, Final is the pushed
	// tip.
	Commit, Final string
	// Conflict lists the paths another write changed on the same lines:
	// the writer keeps its version on a conflict branch.
	Conflict []string
	// Err: the entry could not be taken (its commits stay pending in
	// their root).
	Err string
}

// A writer looks for its entry's outcome and for a free turn to push
// every journalPoll at first, then less often, up to journalPollMax: a
// batch waits seconds for the push budget, and a fleet's waiting writers
// poll the database together (docs/scaling.md counts the load).
const (
	journalPoll    = 50 * time.Millisecond
	journalPollMax = 500 * time.Millisecond
)

// pushJournaled is pushNet through the journal. ok false: the journal
// could not record the write (unreachable); the caller pushes directly.
func (r *Repo) pushJournaled(ctx, dctx context.Context, branch string, base, head plumbing.Hash) (n int, commit plumbing.Hash, ok bool, err error) {
	j := r.cfg.Journal
	pack, err := r.journalPack(dctx, base, head)
	if err != nil {
		r.progressf("journal: cannot record %s..%s (%v); pushing directly", short(base), short(head), err)
		return 0, plumbing.ZeroHash, false, nil
	}
	host, _ := os.Hostname()
	e := &JournalEntry{Remote: redact(r.cfg.Remote), Branch: branch, Root: host + ":" + r.gitDirPath(), Base: base.String(), Head: head.String(), Pack: pack}
	id, err := j.Record(dctx, e)
	if err != nil {
		r.noteJournal(fmt.Sprintf("journal unreachable (%v): pushed directly", redactErr(err)))
		return 0, plumbing.ZeroHash, false, nil
	}
	if r.cfg.JournalAckDurable && r.acking {
		// Durable is enough for this write: the root keeps its commits
		// ahead of the remote, and its next write's entry supersedes this
		// one (it holds these commits too).
		r.journalAcked = id
		r.progressf("journal: recorded as entry %d; it lands with the fleet's next push", id)
		return 0, head, true, nil
	}
	own := &batchItem{own: true, base: base, head: head, gitdir: r.gitDirPath(), journalID: id}
	poll := journalPoll
	for {
		out, err := j.Outcome(dctx, id)
		if err != nil {
			return 0, plumbing.ZeroHash, true, r.pendingErr(ctx, branch, base, head, true, err)
		}
		if out != nil {
			res := &ticketResult{Commit: out.Commit, Final: out.Final, Conflict: out.Conflict, Err: out.Err, Attempts: 1}
			n, c, err := r.adopt(ctx, branch, own, res)
			return n, c, true, err
		}
		release, lead, err := j.Lead(dctx, e.Remote, branch)
		if err != nil {
			return 0, plumbing.ZeroHash, true, r.pendingErr(ctx, branch, base, head, true, err)
		}
		if lead {
			n, commit, done, _, err := r.leadJournal(ctx, dctx, branch, own)
			release()
			if done {
				return n, commit, true, err
			}
			continue // another pusher settled this entry meanwhile
		}
		poll = min(poll*3/2, journalPollMax)
		if err := r.sleep(dctx, poll); err != nil {
			return 0, plumbing.ZeroHash, true, r.pendingErr(ctx, branch, base, head, true, fmt.Errorf("journaled as entry %d, not landed within %v (git.retry.deadline): %w", id, r.cfg.Retry.Deadline, err))
		}
	}
}

// leadJournal pushes every waiting entry as the elected pusher. done
// false: this root's own entry was settled by another pusher before this
// one took the turn (the caller reads its outcome). An own item with no
// entry (journalID 0, no commits: DrainJournal) pushes the others'.
// settled counts the entries it settled as landed.
func (r *Repo) leadJournal(ctx, dctx context.Context, branch string, own *batchItem) (_ int, _ plumbing.Hash, done bool, settled int, _ error) {
	j := r.cfg.Journal
	if own.journalID != 0 {
		if out, err := j.Outcome(dctx, own.journalID); err != nil || out != nil {
			return 0, plumbing.ZeroHash, false, 0, nil
		}
	}
	if _, err := r.awaitPushBudget(dctx); err != nil {
		return 0, plumbing.ZeroHash, true, 0, r.pendingErr(ctx, branch, own.base, own.head, true, err)
	}
	tip, err := r.remote.Fetch(dctx, branch, 0)
	if err != nil {
		return 0, plumbing.ZeroHash, true, 0, r.pendingErr(ctx, branch, own.base, own.head, true, r.wrapRemoteErr("fetch", err))
	}
	taken := map[int64]bool{own.journalID: true}
	found := map[int64]*JournalOutcome{}
	more := func() []*batchItem {
		entries, err := j.Waiting(dctx, redact(r.cfg.Remote), branch)
		if err != nil {
			r.progressf("journal: %v", redactErr(err))
			return nil
		}
		var out []*batchItem
		for _, e := range entries {
			if taken[e.ID] {
				continue
			}
			taken[e.ID] = true
			if landed, ok := r.plannedLanded(e, tip); ok {
				// A pusher that died after its push: the remote has it.
				found[e.ID] = &JournalOutcome{Commit: landed.String(), Final: tip.String()}
				continue
			}
			out = append(out, r.journalItem(e))
		}
		return out
	}
	items := append([]*batchItem{own}, more()...)
	if len(found) > 0 {
		if err := j.Settle(dctx, found); err != nil {
			r.progressf("journal: %v", redactErr(err))
		} else {
			settled += len(found)
		}
	}
	r.beforePush = func(items []*batchItem) error {
		planned := map[int64]string{}
		for _, it := range items {
			if it.journalID != 0 && it.err == nil && len(it.conflict) == 0 && !it.commit.IsZero() {
				planned[it.journalID] = it.holds().String()
			}
		}
		return j.Plan(dctx, planned)
	}
	n, plan, final, err := r.leadPush(dctx, branch, tip, false, items, func() []*batchItem {
		m := more()
		items = append(items, m...)
		return m
	})
	r.beforePush = nil
	if err == nil {
		for _, it := range items {
			// An entry whose change the tip already held (a dead pusher's
			// batch, taken again by its root's next write) made no commit
			// of its own: name the commit that holds it, not the tip.
			if it.err == nil && len(it.conflict) == 0 && it.landedAt.IsZero() && !it.commit.IsZero() {
				if h := r.landedAs(it.commit, it); !h.IsZero() && h != it.commit {
					it.landedAt = h
				}
			}
		}
	}
	outcomes := map[int64]*JournalOutcome{}
	for _, it := range items {
		switch {
		case it.journalID == 0:
			continue // DrainJournal's root: no entry of its own
		case it.err != nil:
			outcomes[it.journalID] = &JournalOutcome{Err: it.err.Error()}
		case err != nil:
			if it.own || !errors.Is(err, ErrDeclined) && !errors.Is(err, ErrAuth) {
				continue // still waiting: the next pusher takes it
			}
			outcomes[it.journalID] = &JournalOutcome{Err: err.Error()}
		default:
			outcomes[it.journalID] = &JournalOutcome{Commit: it.holds().String(), Final: final.String(), Conflict: it.conflict}
		}
	}
	if serr := j.Settle(dctx, outcomes); serr != nil {
		r.progressf("journal: settle: %v", redactErr(serr))
	} else {
		for _, o := range outcomes {
			if o.Err == "" {
				settled++
			}
		}
	}
	if err == nil {
		err = r.finishBatch(ctx, branch, plan, final)
	}
	if err != nil {
		return n, plumbing.ZeroHash, true, settled, r.pendingErr(ctx, branch, own.base, own.head, false, err)
	}
	return n, own.holds(), true, settled, r.ownOutcome(ctx, branch, own)
}

// DrainJournal lands the journal's waiting entries of the root's branch
// when no other process is pushing them: the writes a fleet acknowledged
// once durable (Config.JournalAckDurable) land even when no writer waits
// for its own (`tgp serve` calls it now and then). The root's own
// acknowledged commits go first, as a write that waits for its landing.
// It returns how many entries it settled as landed (0: none waiting, or
// another process has the pusher's turn).
func (r *Repo) DrainJournal(ctx context.Context) (int, error) {
	j := r.cfg.Journal
	if j == nil || r.remote == nil {
		return 0, nil
	}
	if _, ok := r.remote.(*localRemote); ok {
		return 0, nil // a local remote takes every write at once
	}
	if err := r.lock(ctx); err != nil {
		return 0, err
	}
	defer r.unlock()
	branch, err := r.branch()
	if err != nil {
		return 0, fmt.Errorf("drain journal: %w", err)
	}
	head, err := r.head()
	if err != nil {
		return 0, fmt.Errorf("drain journal: %w", err)
	}
	base := r.trackingTip(branch)
	if head.IsZero() {
		return 0, nil // nothing cloned yet: Hydrate first
	}
	if head != base {
		// This root's acknowledged commits (or a crashed write's): a
		// newer entry for them, which this call waits for.
		if _, _, err := r.pushNet(ctx, branch, plumbing.ZeroHash, 0); err != nil {
			return 0, fmt.Errorf("drain journal: %w", err)
		}
		return 1, nil
	}
	waiting, err := j.Waiting(ctx, redact(r.cfg.Remote), branch)
	if err != nil {
		return 0, fmt.Errorf("drain journal: %w", err)
	}
	if len(waiting) == 0 {
		return 0, nil
	}
	release, lead, err := j.Lead(ctx, redact(r.cfg.Remote), branch)
	if err != nil {
		return 0, fmt.Errorf("drain journal: %w", err)
	}
	if !lead {
		return 0, nil // the pusher in turn takes them
	}
	defer release()
	dctx, cancel := context.WithTimeout(ctx, r.cfg.Retry.Deadline)
	defer cancel()
	own := &batchItem{own: true, base: head, head: head, gitdir: r.gitDirPath()}
	_, _, _, settled, err := r.leadJournal(ctx, dctx, branch, own)
	if err != nil {
		return settled, fmt.Errorf("drain journal: %w", err)
	}
	return settled, nil
}

// plannedLanded says whether a pusher planned e as a commit that the
// remote's tip holds (it pushed, then died before settling).
func (r *Repo) plannedLanded(e *JournalEntry, tip plumbing.Hash) (plumbing.Hash, bool) {
	planned, ok := hashFromHex(e.Planned)
	if !ok || tip.IsZero() || r.objs().HasEncodedObject(planned) != nil {
		return plumbing.ZeroHash, false
	}
	return planned, r.reaches(tip, planned)
}

// reaches says whether from's history holds target (within the last
// 100,000 commits: a planned commit is near the tip).
func (r *Repo) reaches(from, target plumbing.Hash) bool {
	seen := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{from}
	for len(queue) > 0 && len(seen) < 100_000 {
		h := queue[0]
		queue = queue[1:]
		if h == target {
			return true
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(r.objs(), h)
		if err != nil {
			return false
		}
		queue = append(queue, c.ParentHashes...)
	}
	return false
}

// journalItem is another root's entry as an item of the batch: its
// objects come from its pack, its base from the remote.
func (r *Repo) journalItem(e *JournalEntry) *batchItem {
	it := &batchItem{journalID: e.ID}
	b, ok1 := hashFromHex(e.Base)
	h, ok2 := hashFromHex(e.Head)
	it.base, it.head = b, h
	if !ok1 || !ok2 {
		it.err = fmt.Errorf("journal entry %d: unreadable commits %q..%q", e.ID, e.Base, e.Head)
		return it
	}
	st := memory.NewStorage()
	if err := gitpackfile.UpdateObjectStorage(st, bytes.NewReader(e.Pack)); err != nil {
		it.err = fmt.Errorf("journal entry %d: unreadable pack: %w", e.ID, err)
		return it
	}
	if st.HasEncodedObject(h) != nil {
		it.err = fmt.Errorf("journal entry %d: its pack lacks its commit %s", e.ID, short(h))
		return it
	}
	it.objects = st
	return it
}

// journalPack is the pack of the objects base..head adds: a line of
// single-parent commits, as every persist makes.
func (r *Repo) journalPack(ctx context.Context, base, head plumbing.Hash) ([]byte, error) {
	order, line, err := collectNew(ctx, r.objs(), base, head)
	if err != nil {
		return nil, err
	}
	if !line || len(order) == 0 {
		return nil, errors.New("not a line of commits on the remote's tip")
	}
	var enc packfile.Encoder
	p, err := enc.Encode(r.store, order)
	if err != nil {
		return nil, err
	}
	return p.Pack, nil
}

// noteJournal reports a journal problem to the caller's progress and in
// the next result's notes.
func (r *Repo) noteJournal(msg string) {
	r.progressf("%s", msg)
	r.journalNotes = append(r.journalNotes, msg)
}

// journalTipTimeout bounds a boot's question to the journal: a database
// that does not answer soon costs the boot its fetch, not more.
const journalTipTimeout = 2 * time.Second

// atJournalTip says whether the root's head is the tip the journal last
// recorded as landed on branch: then a boot need not fetch. Any doubt (no
// journal, a local remote, a database away) is false.
func (r *Repo) atJournalTip(ctx context.Context, branch string, head plumbing.Hash) bool {
	if r.cfg.Journal == nil || head.IsZero() {
		return false
	}
	if _, ok := r.remote.(*netRemote); !ok {
		return false
	}
	jctx, cancel := context.WithTimeout(ctx, journalTipTimeout)
	defer cancel()
	tip, err := r.cfg.Journal.LastLanded(jctx, redact(r.cfg.Remote), branch)
	if err != nil {
		r.progressf("journal: last landed tip: %s; fetching", redactErr(err))
		return false
	}
	return tip == head.String()
}

// JournalPending is an entry of the journal for the root's remote
// branch that has not landed yet, from any machine.
type JournalPending struct {
	ID   int64  `json:"id"`
	Root string `json:"root"`
	// Base..Head are the entry's commits, as its root made them.
	Base    string    `json:"base"`
	Head    string    `json:"head"`
	Created time.Time `json:"created"`
	// Message (its subject) and Author ("Name <email>") are the entry's
	// last commit's, read from its pack (empty: unreadable).
	Message string `json:"message,omitempty"`
	Author  string `json:"author,omitempty"`
}

// Unlanded lists the journal's entries for the root's remote branch not
// landed yet, oldest first, from every machine (none without a journal).
func (r *Repo) Unlanded(ctx context.Context) ([]JournalPending, error) {
	if r.cfg.Journal == nil || r.remote == nil {
		return nil, nil
	}
	branch := r.cfg.Branch
	if branch == "" {
		b, err := r.branch()
		if err != nil {
			return nil, fmt.Errorf("journal: unlanded entries: %w", err)
		}
		branch = b
	}
	return r.unlanded(ctx, branch)
}

func (r *Repo) unlanded(ctx context.Context, branch string) ([]JournalPending, error) {
	entries, err := r.cfg.Journal.Waiting(ctx, redact(r.cfg.Remote), branch)
	if err != nil {
		// A driver's error may quote the DSN: only its redacted text.
		return nil, fmt.Errorf("journal: unlanded entries: %s", redactErr(err))
	}
	out := make([]JournalPending, 0, len(entries))
	for _, e := range entries {
		p := JournalPending{ID: e.ID, Root: e.Root, Base: e.Base, Head: e.Head, Created: e.Created}
		p.Message, p.Author = packCommitSummary(e.Pack, e.Head)
		out = append(out, p)
	}
	return out, nil
}

// packCommitSummary is the subject and author of commit head in pack
// (empty when the pack does not hold it readably).
func packCommitSummary(pack []byte, head string) (subject, author string) {
	h, ok := hashFromHex(head)
	if !ok || len(pack) == 0 {
		return "", ""
	}
	st := memory.NewStorage()
	if err := gitpackfile.UpdateObjectStorage(st, bytes.NewReader(pack)); err != nil {
		return "", ""
	}
	c, err := object.GetCommit(st, h)
	if err != nil {
		return "", ""
	}
	subject, _, _ = strings.Cut(strings.TrimSpace(c.Message), "\n")
	return subject, fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email)
}

// redactErr is err's text with any URL's userinfo and any password=
// setting removed (a DSN in a driver's error carries its password).
func redactErr(err error) string {
	s := urlUserinfo.ReplaceAllString(err.Error(), "${1}***@")
	return passwordSetting.ReplaceAllString(s, "${1}***")
}

var (
	urlUserinfo     = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@`)
	passwordSetting = regexp.MustCompile(`(?i)(password\s*=\s*)\S+`)
)
