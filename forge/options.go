package forge

import (
	"context"
	"net/http"
	"time"
)

// Option configures a forge (every host takes the same options).
type Option func(*Settings)

// Settings are the options as a host package reads them (forge/github,
// forge/gitlab...): every host takes the same ones, so they live here.
type Settings struct {
	BaseURL    string
	APIURL     string
	HTTPClient *http.Client
	Retries    int
	MaxWait    time.Duration
	Backoff    time.Duration
	Report     func(Retry)
	Sleep      func(context.Context, time.Duration) error
	Now        func() time.Time
}

// Apply is the settings opts make, on top of the defaults.
func Apply(opts []Option) Settings {
	s := Settings{Retries: 4, MaxWait: 2 * time.Minute, Backoff: 500 * time.Millisecond, Sleep: sleepCtx, Now: time.Now}
	for _, f := range opts {
		f(&s)
	}
	return s
}

// Policy is the one retry policy, for provider's host.
func (s *Settings) Policy(provider string) *Policy {
	return &Policy{host: hostName(provider), retries: s.Retries, maxWait: s.MaxWait, base: s.Backoff,
		sleep: s.Sleep, report: s.Report, now: s.Now}
}

// Client is the HTTP client: WithHTTPClient's, else one with a timeout.
func (s *Settings) Client() *http.Client {
	if s.HTTPClient != nil {
		return s.HTTPClient
	}
	return &http.Client{Timeout: time.Minute}
}

// WithBaseURL targets a self-hosted instance by its web root
// (https://ghe.example.com, https://gitlab.example.com); the API root is
// derived the host's way (api/v3/ on GitHub Enterprise, api/v4/ on GitLab,
// api/v1/ on Gitea and Forgejo).
func WithBaseURL(u string) Option { return func(o *Settings) { o.BaseURL = u } }

// WithAPIURL sets the exact REST API root (git.api_url; proxies, tests).
func WithAPIURL(u string) Option { return func(o *Settings) { o.APIURL = u } }

// WithHTTPClient sets the HTTP client.
func WithHTTPClient(c *http.Client) Option { return func(o *Settings) { o.HTTPClient = c } }

// WithRetries bounds retries on rate limits and server errors (default 4
// after the first attempt) and the longest wait honoured (default 2
// minutes): a host asking for more fails the call at once, saying so.
func WithRetries(n int, maxWait time.Duration) Option {
	return func(o *Settings) { o.Retries, o.MaxWait = n, maxWait }
}

// WithBackoff sets the first wait after a server error that names none
// (default 500ms; it doubles per attempt).
func WithBackoff(d time.Duration) Option { return func(o *Settings) { o.Backoff = d } }

// WithRetryReport receives every retry as it happens (the kernel logs
// them; PR.Retries carries them too).
func WithRetryReport(f func(Retry)) Option { return func(o *Settings) { o.Report = f } }

// WithSleep replaces the wait between attempts: tests record the waits
// instead of sleeping them.
func WithSleep(f func(context.Context, time.Duration) error) Option {
	return func(o *Settings) { o.Sleep = f }
}
