// Package backoff is the one retry delay outside gitbackend's push path
// (whose helpers stay until that path is restructured, #45): doubling
// from a base, capped, with jitter so that many agents behind one failing
// host do not come back at once.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Delay is the wait before retry attempt (0 first): base doubled attempt
// times, at most limit, then a random point in its upper half [d/2, d].
func Delay(base, limit time.Duration, attempt int) time.Duration {
	d := base << min(attempt, 16)
	if d > limit || d < 0 { // d < 0: the shift overflowed
		d = limit
	}
	if d <= 1 {
		return d
	}
	// Jitter needs no cryptographic randomness: it only spreads retries.
	return d/2 + rand.N(d/2+1)
}
