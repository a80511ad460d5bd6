package revision

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDateQueueOrder: against a stable sort of what was pushed (newest
// date first, push order among equal dates), over generated pushes and
// pops interleaved.
func TestDateQueueOrder(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed))
		var q DateQueue[int]
		type item struct {
			id   int
			date int64
		}
		var model []item
		id := 0
		for step := 0; step < 60; step++ {
			if len(model) > 0 && rng.IntN(3) == 0 {
				slices.SortStableFunc(model, func(a, b item) int {
					switch {
					case a.date > b.date:
						return -1
					case a.date < b.date:
						return 1
					}
					return 0
				})
				want := model[0]
				model = model[1:]
				if got := q.Pop(); got != want.id {
					t.Fatalf("seed %d step %d: popped %d, want %d", seed, step, got, want.id)
				}
				continue
			}
			d := int64(rng.IntN(5))
			q.Push(id, d)
			model = append(model, item{id, d})
			id++
		}
		if q.Len() != len(model) {
			t.Fatalf("seed %d: %d queued, want %d", seed, q.Len(), len(model))
		}
	}
}
