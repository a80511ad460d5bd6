package forge

import (
	"context"
	"net/http"
	"time"
)

// Option configures a forge (every host takes the same options).
type Option func(*options)

type options struct {
	baseURL    string
	apiURL     string
	httpClient *http.Client
	retries    int
	maxWait    time.Duration
	backoff    time.Duration
	report     func(Retry)
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
}

func defaultOptions() options {
	return options{retries: 4, maxWait: 2 * time.Minute, backoff: 500 * time.Millisecond, sleep: sleepCtx, now: time.Now}
}

func (o *options) policy(provider string) *policy {
	return &policy{host: hostName(provider), retries: o.retries, maxWait: o.maxWait, base: o.backoff,
		sleep: o.sleep, report: o.report, now: o.now}
}

func (o *options) client() *http.Client {
	if o.httpClient != nil {
		return o.httpClient
	}
	return &http.Client{Timeout: time.Minute}
}

// WithBaseURL targets a self-hosted instance by its web root
// (https://ghe.example.com, https://gitlab.example.com); the API root is
// derived the host's way (api/v3/ on GitHub Enterprise, api/v4/ on GitLab,
// api/v1/ on Gitea and Forgejo).
func WithBaseURL(u string) Option { return func(o *options) { o.baseURL = u } }

// WithAPIURL sets the exact REST API root (git.api_url; proxies, tests).
func WithAPIURL(u string) Option { return func(o *options) { o.apiURL = u } }

// WithHTTPClient sets the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.httpClient = c } }

// WithRetries bounds retries on rate limits and server errors (default 4
// after the first attempt) and the longest wait honoured (default 2
// minutes): a host asking for more fails the call at once, saying so.
func WithRetries(n int, maxWait time.Duration) Option {
	return func(o *options) { o.retries, o.maxWait = n, maxWait }
}

// WithBackoff sets the first wait after a server error that names none
// (default 500ms; it doubles per attempt).
func WithBackoff(d time.Duration) Option { return func(o *options) { o.backoff = d } }

// WithRetryReport receives every retry as it happens (the kernel logs
// them; PR.Retries carries them too).
func WithRetryReport(f func(Retry)) Option { return func(o *options) { o.report = f } }

// withSleep replaces the wait between attempts (tests record the waits
// instead of sleeping).
func withSleep(f func(context.Context, time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}
