package gitbackend

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// ErrRateLimited matches every *RateLimitError with errors.Is.
var ErrRateLimited = errors.New("rate limited")

// RateLimitError is a session the remote refused for its rate limit
// (HTTP 429, a 403 with Retry-After or X-RateLimit-* headers, a
// rate-limit ERR line over git:// or ssh), or one this machine did not
// start because it would have gone over git.pushes_per_minute (Local).
// It is retryable: the push waits RetryAfter (when the host said) and
// tries again within git.retry.deadline.
type RateLimitError struct {
	// Limit names the limit: the host's words, or the budget's.
	Limit string
	// RetryAfter is the host's hint (0: none given).
	RetryAfter time.Duration
	// Local: the machine's own budget, not a refusal by the host.
	Local bool
}

func (e *RateLimitError) Error() string {
	who := "the remote's rate limit"
	if e.Local {
		who = "git.pushes_per_minute"
	}
	msg := fmt.Sprintf("%s: %s (%s)", ErrRateLimited, e.Limit, who)
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf("; retry after %v", e.RetryAfter.Round(time.Millisecond))
	}
	return msg
}

func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// rateLimited reads a rate-limit refusal out of a go-git error: an HTTP
// status 429 (its response's headers give the wait), or a server's
// message saying so. nil when err is something else.
func rateLimited(err error) *RateLimitError {
	if err == nil {
		return nil
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl
	}
	if he := httpErr(err); he != nil && he.Response != nil && he.Response.StatusCode == http.StatusTooManyRequests {
		return &RateLimitError{Limit: "HTTP 429 Too Many Requests", RetryAfter: retryAfter(he.Response.Header, time.Now())}
	}
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "rate limit") || strings.Contains(msg, "too many requests") || strings.Contains(msg, "rate-limit") {
		rl := &RateLimitError{Limit: strings.TrimSpace(err.Error())}
		if m := retryAfterText.FindStringSubmatch(msg); m != nil {
			if s, perr := strconv.Atoi(m[1]); perr == nil {
				rl.RetryAfter = time.Duration(s) * time.Second
			}
		}
		return rl
	}
	return nil
}

// retryAfterText is a wait in a server's words: "retry after 12",
// "Retry-After: 12".
var retryAfterText = regexp.MustCompile(`retry[- ]after:?\s*(\d+)`)

// httpErr is go-git's HTTP status error inside err. go-git wraps it in a
// plumbing.UnexpectedError, which does not unwrap.
func httpErr(err error) *githttp.Err {
	var he *githttp.Err
	if errors.As(err, &he) {
		return he
	}
	var ue *plumbing.UnexpectedError
	if errors.As(err, &ue) && errors.As(ue.Err, &he) {
		return he
	}
	return nil
}

// retryAfter is the wait a rate-limited response asks for: Retry-After
// (seconds or an HTTP date), else X-RateLimit-Reset (Unix seconds, as
// GitHub and GitLab send it); 0 when neither says.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	for _, k := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if v := strings.TrimSpace(h.Get(k)); v != "" {
			if s, err := strconv.ParseInt(v, 10, 64); err == nil {
				if s > 1e9 { // a Unix time
					return max(time.Unix(s, 0).Sub(now), 0)
				}
				return time.Duration(s) * time.Second // IETF draft: seconds left
			}
		}
	}
	return 0
}

// rateLimitTransport turns a 403 that is a rate limit (GitHub's
// secondary limits answer 403 with Retry-After, or with
// X-RateLimit-Remaining: 0) into the 429 it means. go-git reports a 403
// as an authorization failure and drops the response, so the wait the
// host asked for would be lost and the push would fail as if the token
// were wrong.
type rateLimitTransport struct {
	base http.RoundTripper
}

func (t *rateLimitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusForbidden {
		return resp, err
	}
	h := resp.Header
	if h.Get("Retry-After") != "" || h.Get("X-RateLimit-Remaining") == "0" {
		resp.StatusCode = http.StatusTooManyRequests
		resp.Status = "429 Too Many Requests (403 rate limit)"
	}
	return resp, nil
}
