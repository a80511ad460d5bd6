package gitbackend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/internal/gitformat/idxfile"
	"github.com/tgp-go/tgp/internal/gitformat/packfile"
	"github.com/tgp-go/tgp/internal/receive"
)

// Group commit across the repositories of one process: the roots
// that push to one local remote's branch queue here before they queue on
// the remote's lock. The writer at the head of the queue takes the lock
// for everyone waiting behind it (a batch): it recreates each one's change
// in turn on the tip left by the one before (each change its own commit,
// with its own author and message, the commits chained), and pushes them
// all at once, one pack and one ref update. Contention then costs
// batching, not a queue of replays each waiting for the lock. Each writer
// brings its own root to the result afterwards, in its own goroutine.

// writerQueue is the queue of one remote ref in this process.
type writerQueue struct {
	mu      sync.Mutex
	leading bool // a writer has the turn (waits for the lock or holds it)
	waiting []*pushJob

	// coming are the writers of this process making a commit they will
	// push through this queue (by ticket); arrived is closed when one of
	// them joins the queue or gives up. hold is how long the last batch
	// held the remote's lock.
	coming  map[uint64]bool
	ticket  uint64
	arrived chan struct{}
	hold    time.Duration
}

// Bounds of a leader's wait for the writers still committing: it waits
// about as long as a batch holds the lock, the time those writers would
// otherwise wait in the queue behind it before pushing in a batch of
// their own.
// (A variable: tests wait without a bound.)
var (
	minComingWait = 2 * time.Millisecond
	maxComingWait = 100 * time.Millisecond
)

// arrival is a writer counted as coming to a queue (writerQueue.expect).
type arrival struct {
	q *writerQueue
	t uint64
}

// expect counts a writer about to make a commit it will push through q,
// until it joins the queue or calls done.
func (q *writerQueue) expect() *arrival {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ticket++
	if q.coming == nil {
		q.coming = map[uint64]bool{}
	}
	q.coming[q.ticket] = true
	return &arrival{q: q, t: q.ticket}
}

// arrivedLocked takes the writer off the queue's coming (q.mu held); once
// is enough, again does nothing.
func (a *arrival) arrivedLocked() {
	if !a.q.coming[a.t] {
		return
	}
	delete(a.q.coming, a.t)
	if a.q.arrived != nil {
		close(a.q.arrived)
		a.q.arrived = nil
	}
}

// done says the writer will not come (or came): a leader waits no more
// for it.
func (a *arrival) done() {
	a.q.mu.Lock()
	a.arrivedLocked()
	a.q.mu.Unlock()
}

// awaitComing is the wait of a writer given the turn, before it takes the
// remote's lock, for the writers of this process that were making their
// commits when it got the turn: each that joins the queue meanwhile goes
// in its batch, one push and one ref update instead of one more turn of
// the lock each. The wait ends when they have all joined (or given up),
// after about one batch's hold of the lock, or with ctx.
func (q *writerQueue) awaitComing(ctx context.Context) {
	q.mu.Lock()
	if len(q.coming) == 0 {
		q.mu.Unlock()
		return
	}
	last := q.ticket
	wait := min(max(q.hold, minComingWait), maxComingWait)
	q.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		q.mu.Lock()
		pending := false
		for t := range q.coming {
			pending = pending || t <= last
		}
		if !pending {
			q.mu.Unlock()
			return
		}
		if q.arrived == nil {
			q.arrived = make(chan struct{})
		}
		ch := q.arrived
		q.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

var writerQueues sync.Map // gitdir + "\x00" + ref -> *writerQueue

func writerQueueFor(gitdir, ref string) *writerQueue {
	q, _ := writerQueues.LoadOrStore(gitdir+"\x00"+ref, &writerQueue{})
	return q.(*writerQueue)
}

// arrivalKey carries, in a push's context, the writer's arrival.
type arrivalKey struct{}

// expectPush counts the caller as a writer about to push branch to l
// (writerQueue.expect) and returns ctx carrying its arrival, and the
// arrival, whose done the caller calls whatever happens.
func (l *localRemote) expectPush(ctx context.Context, branch string) (context.Context, *arrival) {
	a := writerQueueFor(l.path, "refs/heads/"+branch).expect()
	return context.WithValue(ctx, arrivalKey{}, a), a
}

// pushJob is one root's push, as localRemote.Update was called.
type pushJob struct {
	ctx   context.Context
	l     *localRemote
	known plumbing.Hash
	src   storer.EncodedObjectStorer
	sink  func(storer.EncodedObjectStorer, []plumbing.Hash) error
	fn    func(tip plumbing.Hash) (plumbing.Hash, *segment, error)

	// solo: the job goes in a batch of its own (it could not join one).
	solo bool
	// Set under the queue's mutex: lead is closed when the job's caller
	// is to lead the next batch (designated); taken when a batch holds it.
	lead             chan struct{}
	designated, done bool
	taken            bool
	finished         chan struct{}
	// The outcome, read once finished is closed: err, or again (retry in
	// a batch of its own).
	err   error
	again bool
	// seg is what fn returned, for a batch of one.
	seg *segment
}

func (j *pushJob) reset() {
	j.lead, j.finished = make(chan struct{}), make(chan struct{})
	j.designated, j.done, j.taken = false, false, false
	j.err, j.again, j.seg = nil, false, nil
}

// updateQueued is Update through the process's queue of writers (see
// writerQueue).
func (l *localRemote) updateQueued(ctx context.Context, branch string, lockWait time.Duration, known plumbing.Hash,
	src storer.EncodedObjectStorer, sink func(storer.EncodedObjectStorer, []plumbing.Hash) error,
	fn func(tip plumbing.Hash) (plumbing.Hash, *segment, error)) error {
	ref := "refs/heads/" + branch
	q := writerQueueFor(l.path, ref)
	j := &pushJob{ctx: ctx, l: l, known: known, src: src, sink: sink, fn: fn}
	for {
		j.reset()
		if err := q.join(ctx, j); err != nil {
			return err
		}
		if j.designated && !j.done {
			q.awaitComing(ctx)
			l.leadBatch(ctx, q, j, branch, lockWait)
		}
		<-j.finished
		if !j.again {
			return j.err
		}
		j.solo = true
	}
}

// join queues j and returns when j's caller is to lead a batch or when a
// batch has finished with j.
func (q *writerQueue) join(ctx context.Context, j *pushJob) error {
	q.mu.Lock()
	q.waiting = append(q.waiting, j)
	if a, ok := ctx.Value(arrivalKey{}).(*arrival); ok && a.q == q {
		a.arrivedLocked()
	}
	if !q.leading {
		q.leading, j.designated = true, true
		q.mu.Unlock()
		return nil
	}
	q.mu.Unlock()
	select {
	case <-j.finished:
		return nil
	case <-j.lead:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.taken {
		return nil // the batch holding it finishes it (fn sees ctx)
	}
	q.remove(j)
	if j.designated {
		q.handOffLocked() // the turn goes on to the next
	}
	return ctx.Err()
}

func (q *writerQueue) remove(j *pushJob) {
	for i, x := range q.waiting {
		if x == j {
			q.waiting = append(q.waiting[:i], q.waiting[i+1:]...)
			return
		}
	}
}

// handOffLocked gives the turn to the first writer waiting, if any.
func (q *writerQueue) handOffLocked() {
	if len(q.waiting) == 0 {
		q.leading = false
		return
	}
	n := q.waiting[0]
	n.designated = true
	close(n.lead)
}

// takeLocked is the next batch, led by leader: leader alone when it (or
// the next writer) must go alone, else every writer waiting that may join.
func (q *writerQueue) takeLocked(leader *pushJob) []*pushJob {
	batch := []*pushJob{leader}
	if !leader.solo {
		for _, j := range q.waiting {
			if j != leader && !j.solo {
				batch = append(batch, j)
			}
		}
	}
	kept := q.waiting[:0]
	for _, j := range q.waiting {
		in := false
		for _, b := range batch {
			in = in || b == j
		}
		if in {
			j.taken = true
		} else {
			kept = append(kept, j)
		}
	}
	clear(q.waiting[len(kept):])
	q.waiting = kept
	return batch
}

// leadBatch takes the remote ref's lock (other writers of this process
// queue meanwhile), pushes the batch of the writers waiting, releases the
// lock, gives the turn to the next writer and lets the batch's writers go.
func (l *localRemote) leadBatch(ctx context.Context, q *writerQueue, leader *pushJob, branch string, lockWait time.Duration) {
	ref := "refs/heads/" + branch
	wctx, cancel := context.WithTimeout(ctx, lockWait)
	lk, err := acquireRefLock(wctx, l.path, ref, true)
	cancel()

	q.mu.Lock()
	if err != nil {
		// The leader's wait ended (its budget, its context), not the
		// others': the turn goes on to the next.
		q.remove(leader)
		leader.err, leader.taken, leader.done = err, true, true
		q.handOffLocked()
		close(leader.finished)
		q.mu.Unlock()
		return
	}
	batch := q.takeLocked(leader)
	q.mu.Unlock()
	start := time.Now()
	l.pushBatch(ctx, lk, branch, batch)
	lk.release()
	q.mu.Lock()
	q.hold = time.Since(start)
	q.handOffLocked()
	for _, j := range batch {
		j.done = true
		close(j.finished)
	}
	q.mu.Unlock()
}

// pushBatch is Update's transaction for every job of the batch, the ref's
// lock held: each job's change recreated on the tip the one before it left
// (fn), then one push of them all.
func (l *localRemote) pushBatch(ctx context.Context, lk *refLock, branch string, batch []*pushJob) {
	ref := "refs/heads/" + branch
	tip, err := readRef(l.path, ref)
	if err != nil {
		for _, j := range batch {
			j.err = err
		}
		return
	}
	rs := l.open()
	defer func() { rs.Close() }()
	if len(batch) == 1 {
		j := batch[0]
		j.err = j.l.updateOne(j, &rs, lk, branch, tip)
		return
	}
	pr, err := packfile.Open(l.path, l.open, &l.packs)
	if err != nil {
		for _, j := range batch {
			j.again = true
		}
		return
	}
	defer pr.Close()
	bs := &batchSource{Reader: pr, objs: map[plumbing.Hash]plumbing.EncodedObject{}, raws: map[plumbing.Hash][]byte{}}
	chain := tip
	// The walk of the new commits goes on from where the last writer's
	// stopped when this one knew the same remote tip.
	var walked *newObjects
	var members []*pushJob
	var hashes []plumbing.Hash
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			continue
		}
		if !chain.IsZero() && chain != j.known {
			// The remote's new commits and those of the batch so far, read
			// through the batch's one reader of the remote's packs.
			var order []plumbing.Hash
			ok := false
			if !j.known.IsZero() {
				if walked == nil || walked.base != j.known {
					walked = &newObjects{base: j.known}
				}
				order, ok, err = walked.extend(j.ctx, bs, chain)
				if err != nil || !ok {
					walked = nil
				}
			}
			switch {
			case err == nil && ok:
				if len(order) > 0 {
					err = j.sink(bs, order)
				}
			case chain == tip:
				// Not a line of single-parent commits: the way of a batch
				// of one (the remote's commits only).
				err = j.l.fetchSince(j.ctx, &rs, j.known, tip, j.sink)
			default:
				err = errors.New("not a line of commits")
			}
			if err != nil {
				j.again = true
				continue
			}
		}
		head, seg, err := j.fn(chain)
		if err != nil {
			j.err = err
			continue
		}
		if head == chain {
			continue // nothing of its own to push
		}
		if seg == nil || seg.base != chain || seg.head != head || chain.IsZero() {
			j.again = true // its objects are not packed: alone
			continue
		}
		raws := packEntries(seg.pack)
		for _, h := range seg.pack.Hashes {
			if _, ok := bs.objs[h]; ok {
				continue
			}
			obj, err := j.src.EncodedObject(plumbing.AnyObject, h)
			if err != nil {
				j.again = true
				break
			}
			bs.objs[h] = obj
			if b, ok := raws[h]; ok {
				bs.raws[h] = b
			}
			hashes = append(hashes, h)
		}
		if j.again {
			continue
		}
		j.seg = seg
		chain = head
		members = append(members, j)
	}
	if chain == tip || len(members) == 0 {
		return
	}
	var seg *segment
	var src storer.EncodedObjectStorer = bs
	if len(members) == 1 {
		seg, src = members[0].seg, members[0].src
	} else {
		p, err := l.enc.Encode(bs, hashes)
		if err != nil {
			for _, j := range members {
				j.again = true
			}
			return
		}
		seg = &segment{base: tip, head: chain, pack: p}
	}
	// The remote's output goes to every writer of the batch.
	saved := l.progress
	l.progress = func(line string) {
		for _, j := range members {
			if j.l.progress != nil {
				j.l.progress(line)
			}
		}
	}
	err = l.receive(context.WithoutCancel(ctx), rs, lk, receive.Update{Ref: ref, Old: tip, New: chain}, seg, src)
	l.progress = saved
	if err != nil {
		for _, j := range members {
			if len(members) == 1 {
				j.err = err
			} else {
				j.again = true // each learns its own verdict, alone
			}
		}
		return
	}
	if len(members) > 1 {
		pushedTogether.Add(int64(len(members)))
	}
	if tip.IsZero() {
		pointHEADAt(l.path, branch)
	}
}

// updateOne is the transaction of a batch of one: fetch what j lacks of
// the tip, fn, push.
func (l *localRemote) updateOne(j *pushJob, rs **filesystem.Storage, lk *refLock, branch string, tip plumbing.Hash) error {
	ctx := j.ctx
	if !tip.IsZero() && tip != j.known {
		if err := l.fetchSince(ctx, rs, j.known, tip, j.sink); err != nil {
			return fmt.Errorf("fetch %s: %w", branch, err)
		}
	}
	head, seg, err := j.fn(tip)
	if err != nil {
		return err
	}
	if head == tip {
		return nil
	}
	if err := l.receive(ctx, *rs, lk, receive.Update{Ref: "refs/heads/" + branch, Old: tip, New: head}, seg, j.src); err != nil {
		return err
	}
	if tip.IsZero() {
		pointHEADAt(l.path, branch)
	}
	return nil
}

// batchSource is the remote's packs with the objects of the batch's
// commits made so far (held in memory by their writers). What it reads
// from the remote's packs is kept for the batch: every writer of a batch
// reads the same new commits.
type batchSource struct {
	*packfile.Reader
	objs map[plumbing.Hash]plumbing.EncodedObject
	raws map[plumbing.Hash][]byte
	// read are the remote's objects read so far; noRaw those with no
	// entry to copy.
	read  map[plumbing.Hash]plumbing.EncodedObject
	noRaw map[plumbing.Hash]bool
}

// EncodedObject hands out a copy of an object: each writer keeps what it
// reads, and the objects stay their writers'.
func (b *batchSource) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, ok := b.objs[h]
	if !ok {
		if o, ok = b.read[h]; !ok {
			var err error
			if o, err = b.Reader.EncodedObject(plumbing.AnyObject, h); err != nil {
				return nil, err
			}
			if b.read == nil {
				b.read = map[plumbing.Hash]plumbing.EncodedObject{}
			}
			b.read[h] = o
		}
	}
	if t != plumbing.AnyObject && o.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return nil, err
	}
	c := &plumbing.MemoryObject{}
	c.SetType(o.Type())
	c.SetSize(int64(len(data)))
	if _, err := c.Write(data); err != nil {
		return nil, err
	}
	return c, nil
}

func (b *batchSource) HasEncodedObject(h plumbing.Hash) error {
	if _, ok := b.objs[h]; ok {
		return nil
	}
	return b.Reader.HasEncodedObject(h)
}

func (b *batchSource) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	if o, ok := b.objs[h]; ok {
		return o.Size(), nil
	}
	return b.Reader.EncodedObjectSize(h)
}

func (b *batchSource) Raw(h plumbing.Hash) ([]byte, bool) {
	if r, ok := b.raws[h]; ok {
		return r, true
	}
	if _, ok := b.objs[h]; ok || b.noRaw[h] {
		return nil, false
	}
	r, ok := b.Reader.Raw(h)
	if !ok {
		if b.noRaw == nil {
			b.noRaw = map[plumbing.Hash]bool{}
		}
		b.noRaw[h] = true
		return nil, false
	}
	b.raws[h] = r // the pack's bytes, which stay as they are
	return r, true
}

// packEntries maps the objects of a pack we encoded (whole objects, no
// deltas) to their entries, as they are, from its .idx (nil: an index
// that does not fit the pack).
func packEntries(p *packfile.Packed) map[plumbing.Hash][]byte {
	ents, err := idxfile.Entries(p.Idx, len(p.Pack))
	if err != nil {
		return nil
	}
	end := len(p.Pack) - 20
	out := make(map[plumbing.Hash][]byte, len(ents))
	for i := len(ents) - 1; i >= 0; i-- {
		if int(ents[i].Offset) > end {
			return nil
		}
		out[ents[i].Hash] = p.Pack[ents[i].Offset:end]
		end = int(ents[i].Offset)
	}
	return out
}

// pushedTogether counts the commits pushed in batches of more than one
// writer (for tests and benchmarks).
var pushedTogether atomic.Int64
