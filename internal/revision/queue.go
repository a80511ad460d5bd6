package revision

import "container/heap"

// DateQueue is git's prio_queue ordered by compare_commits_by_commit_date
// (commit.c): the newest committer date first, and among equal dates the
// first queued first. The walks, the merge-base paint and blame all take
// commits from one.
type DateQueue[T any] struct {
	h   dateHeap[T]
	seq int
}

// Push queues v with its committer date (Unix seconds).
func (q *DateQueue[T]) Push(v T, date int64) {
	heap.Push(&q.h, dated[T]{v: v, date: date, seq: q.seq})
	q.seq++
}

// Pop takes the newest; Len must be above 0.
func (q *DateQueue[T]) Pop() T { return heap.Pop(&q.h).(dated[T]).v }

// Len is how many are queued.
func (q *DateQueue[T]) Len() int { return len(q.h) }

// Any reports whether a queued value satisfies f (in no order).
func (q *DateQueue[T]) Any(f func(T) bool) bool {
	for _, d := range q.h {
		if f(d.v) {
			return true
		}
	}
	return false
}

type dated[T any] struct {
	v    T
	date int64
	seq  int
}

type dateHeap[T any] []dated[T]

func (h dateHeap[T]) Len() int { return len(h) }
func (h dateHeap[T]) Less(i, j int) bool {
	if h[i].date != h[j].date {
		return h[i].date > h[j].date
	}
	return h[i].seq < h[j].seq
}
func (h dateHeap[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dateHeap[T]) Push(x any)   { *h = append(*h, x.(dated[T])) }
func (h *dateHeap[T]) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
