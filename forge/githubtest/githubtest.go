// Package githubtest is a stand-in for the GitHub REST endpoints the PR flow
// uses (read the repository, list, create and edit pull requests, comment
// on an issue), for tests only: GitHub cannot be reached from here. It
// checks every request as GitHub would — the token, the JSON fields, that
// the head branch exists in a real git remote, duplicates — and answers
// with GitHub-shaped JSON and GitHub's error bodies. Rate limits, 5xx and
// auth failures can be scripted; merging writes a real merge commit.
package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/forge/hosttest"
)

// PR is a stored pull request.
type PR struct {
	Number int
	Title  string
	Head   string
	Base   string
	Body   string
	State  string
	Merged bool
}

// Server is the fake GitHub API.
type Server struct {
	*httptest.Server
	Owner, Repo string
	Token       string
	// RemoteDir is the bare repository the head branches must exist in.
	RemoteDir string
	// Prefix is "" for github.com and "/api/v3" for Enterprise.
	Prefix string

	mu       sync.Mutex
	prs      []*PR
	comments map[int][]string
	failures []failure
	rt       *hosttest.Router
	stale    int
	readOnly map[string]bool
}

type failure struct {
	status     int
	retryAfter int
	secondary  bool
}

// New starts a server for owner/repo accepting token.
func New(t testing.TB, owner, repo, token, remoteDir string, enterprise bool) *Server {
	s := &Server{Owner: owner, Repo: repo, Token: token, RemoteDir: remoteDir, comments: map[int][]string{}}
	if enterprise {
		s.Prefix = "/api/v3"
	}
	s.rt = s.router()
	s.Server = httptest.NewServer(s.rt)
	t.Cleanup(s.Close)
	return s
}

// ClosePR closes a pull request as merging or closing it on GitHub would
// (it is no longer open).
func (s *Server) ClosePR(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Number == n {
			p.State = "closed"
		}
	}
}

// Merge merges pull request n as GitHub's merge button does: a merge
// commit on the base branch, the pull request closed and merged.
func (s *Server) Merge(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Number == n && p.State == "open" {
			if _, err := (&hosttest.Repo{Dir: s.RemoteDir}).Merge(p.Head, p.Base, fmt.Sprintf("Merge pull request #%d from %s/%s", n, s.Owner, p.Head)); err != nil {
				return err
			}
			p.State, p.Merged = "closed", true
			return nil
		}
	}
	return fmt.Errorf("merge #%d: no open pull request", n)
}

// Fail scripts the answer to the next request not yet faulted (after
// FailNext's).
func (s *Server) Fail(f hosttest.Fault) { s.rt.Faults.Push(f) }

// StaleListOnce makes the next list answer as if no pull request existed.
func (s *Server) StaleListOnce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale++
}

// AddReadOnlyToken accepts another token whose account can read but not
// push (the repository's permissions say push: false).
func (s *Server) AddReadOnlyToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readOnly == nil {
		s.readOnly = map[string]bool{}
	}
	s.readOnly[token] = true
}

// Requests lists "METHOD path" of every API request.
func (s *Server) Requests() []string { return s.rt.Requests() }

// BaseURL is what a client should use as its API base.
func (s *Server) BaseURL() string { return s.Server.URL + s.Prefix + "/" }

// FailNext makes the next request fail: 403 secondary rate limit
// (secondary=true) or the given status, with a Retry-After in seconds.
func (s *Server) FailNext(status, retryAfter int, secondary bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, failure{status, retryAfter, secondary})
}

// PRs returns the stored pull requests.
func (s *Server) PRs() []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PR, len(s.prs))
	for i, p := range s.prs {
		out[i] = *p
	}
	return out
}

// Comments returns the comments of a PR.
func (s *Server) Comments(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string{}, s.comments[n]...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func ghError(w http.ResponseWriter, status int, msg string, errs ...map[string]string) {
	body := map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

// router is GitHub's: Bearer or token tokens (read-only ones refused
// writes), a User-Agent and an Accept header required, and FailNext's
// rate limits before anything else.
func (s *Server) router() *hosttest.Router {
	h := func(f func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, hosttest.Caller, []string) {
		return func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) { f(w, r) }
	}
	notFound := func(w http.ResponseWriter) { ghError(w, http.StatusNotFound, "Not Found") }
	return &hosttest.Router{
		Record: func(r *http.Request) string { return r.Method + " " + r.URL.Path },
		Admit:  s.admit,
		Split:  hosttest.SplitAfter(s.Prefix+"/repos/"+s.Owner+"/"+s.Repo, notFound),
		Needs: func(w http.ResponseWriter, c hosttest.Caller, scope string) bool {
			if scope == "write" && c.ReadOnly {
				ghError(w, http.StatusForbidden, "Resource not accessible by personal access token")
				return false
			}
			return true
		},
		NotFound:  notFound,
		FaultBody: func(status int) any { return map[string]string{"message": http.StatusText(status)} },
		Routes: []hosttest.Route{
			{Method: http.MethodGet, Path: "", Handle: func(w http.ResponseWriter, _ *http.Request, c hosttest.Caller, _ []string) {
				writeJSON(w, http.StatusOK, map[string]any{"full_name": s.Owner + "/" + s.Repo, "default_branch": "main", "private": true,
					"permissions": map[string]bool{"admin": false, "maintain": false, "push": !c.ReadOnly, "triage": true, "pull": true}})
			}},
			{Method: http.MethodGet, Path: "pulls", Handle: h(s.listPulls)},
			{Method: http.MethodPost, Path: "pulls", Scope: "write", Handle: h(s.createPull)},
			{Method: http.MethodPatch, Path: "pulls/*", Scope: "write", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.editPull(w, r, a[0]) }},
			{Method: http.MethodPost, Path: "issues/*/comments", Scope: "write", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.comment(w, r, a[0]) }},
		},
	}
}

func (s *Server) admit(w http.ResponseWriter, r *http.Request) (hosttest.Caller, bool) {
	s.mu.Lock()
	var fail *failure
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		fail = &f
	}
	readOnly := false
	auth := r.Header.Get("Authorization")
	for tok := range s.readOnly {
		if auth == "Bearer "+tok || auth == "token "+tok {
			readOnly = true
		}
	}
	s.mu.Unlock()
	if auth != "Bearer "+s.Token && auth != "token "+s.Token && !readOnly {
		ghError(w, http.StatusUnauthorized, "Bad credentials")
		return hosttest.Caller{}, false
	}
	if r.Header.Get("User-Agent") == "" || r.Header.Get("Accept") == "" {
		ghError(w, http.StatusForbidden, "Request forbidden by administrative rules. Please make sure your request has a User-Agent header")
		return hosttest.Caller{}, false
	}
	if fail != nil {
		w.Header().Set("Retry-After", strconv.Itoa(fail.retryAfter))
		if fail.secondary {
			writeJSON(w, http.StatusForbidden, map[string]string{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
				"documentation_url": "https://docs.github.com/rest/overview/resources-in-the-rest-api#secondary-rate-limits"})
			return hosttest.Caller{}, false
		}
		ghError(w, fail.status, http.StatusText(fail.status))
		return hosttest.Caller{}, false
	}
	return hosttest.Caller{ReadOnly: readOnly}, true
}

func (s *Server) prJSON(p *PR) map[string]any {
	return map[string]any{
		"number": p.Number, "state": p.State, "title": p.Title, "body": p.Body, "merged": p.Merged,
		"html_url": fmt.Sprintf("https://github.example/%s/%s/pull/%d", s.Owner, s.Repo, p.Number),
		"url":      fmt.Sprintf("%s%s/repos/%s/%s/pulls/%d", s.Server.URL, s.Prefix, s.Owner, s.Repo, p.Number),
		"head":     map[string]any{"ref": p.Head, "label": s.Owner + ":" + p.Head, "sha": s.branchSHA(p.Head)},
		"base":     map[string]any{"ref": p.Base, "label": s.Owner + ":" + p.Base},
		"user":     map[string]any{"login": "tgp-bot"},
	}
}

// branchSHA reads refs/heads/<b> from the real remote (loose or packed).
func (s *Server) branchSHA(branch string) string {
	return (&hosttest.Repo{Dir: s.RemoteDir}).BranchSHA(branch)
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	head := r.URL.Query().Get("head")
	state := r.URL.Query().Get("state")
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	if s.stale > 0 {
		s.stale--
		writeJSON(w, http.StatusOK, out)
		return
	}
	for _, p := range s.prs {
		if head != "" && head != s.Owner+":"+p.Head {
			continue
		}
		if state != "" && state != "all" && state != p.State {
			continue
		}
		out = append(out, s.prJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		ghError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	for _, f := range []string{"title", "head", "base"} {
		if v, ok := body[f].(string); !ok || v == "" {
			ghError(w, http.StatusUnprocessableEntity, "Validation Failed", map[string]string{"resource": "PullRequest", "code": "missing_field", "field": f})
			return
		}
	}
	head, base := body["head"].(string), body["base"].(string)
	head = strings.TrimPrefix(head, s.Owner+":")
	if s.branchSHA(head) == "" {
		ghError(w, http.StatusUnprocessableEntity, "Validation Failed", map[string]string{"resource": "PullRequest", "code": "invalid", "field": "head"})
		return
	}
	if s.branchSHA(base) == "" {
		ghError(w, http.StatusUnprocessableEntity, "Validation Failed", map[string]string{"resource": "PullRequest", "code": "invalid", "field": "base"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Head == head && p.State == "open" {
			ghError(w, http.StatusUnprocessableEntity, "Validation Failed", map[string]string{"resource": "PullRequest", "code": "custom",
				"message": fmt.Sprintf("A pull request already exists for %s:%s.", s.Owner, head)})
			return
		}
	}
	bodyText, _ := body["body"].(string)
	p := &PR{Number: len(s.prs) + 1, Title: body["title"].(string), Head: head, Base: base, Body: bodyText, State: "open"}
	s.prs = append(s.prs, p)
	writeJSON(w, http.StatusCreated, s.prJSON(p))
}

func (s *Server) editPull(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		ghError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.Number == n {
			if t, ok := body["title"].(string); ok {
				p.Title = t
			}
			if b, ok := body["body"].(string); ok {
				p.Body = b
			}
			if st, ok := body["state"].(string); ok {
				if st != "open" && st != "closed" {
					ghError(w, http.StatusUnprocessableEntity, "Validation Failed")
					return
				}
				p.State = st
			}
			writeJSON(w, http.StatusOK, s.prJSON(p))
			return
		}
	}
	ghError(w, http.StatusNotFound, "Not Found")
}

func (s *Server) comment(w http.ResponseWriter, r *http.Request, num string) {
	n, _ := strconv.Atoi(num)
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		ghError(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	text, ok := body["body"].(string)
	if !ok || text == "" {
		ghError(w, http.StatusUnprocessableEntity, "Validation Failed", map[string]string{"resource": "IssueComment", "code": "missing_field", "field": "body"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.prs) {
		ghError(w, http.StatusNotFound, "Not Found")
		return
	}
	s.comments[n] = append(s.comments[n], text)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(s.comments[n]), "body": text})
}
