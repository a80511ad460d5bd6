// Package giteatest is a stand-in for the Gitea (and Forgejo) REST API v1
// endpoints the pull-request flow uses, for tests only. It answers as
// Gitea does and refuses what Gitea refuses: tokens as "Authorization:
// token" or "Bearer" (401 otherwise), token scopes (403 "token does not
// have at least one of required scope(s)"), JSON bodies only (415),
// required fields (422 "[Title]: Required"), a head branch that must exist
// in the real bare repository (404), one open pull request per head and
// base (409 "pull request already exists for these targets [...]"), page
// pagination (limit up to 50, Link and X-Total-Count headers) with no head
// filter in the list. An edit answers 201, as Gitea's does. Rate limits
// and 5xx can be scripted; merging writes a real merge commit.
package giteatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/forge/hosttest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// PR is a stored pull request.
type PR struct {
	Number   int
	Title    string
	Body     string
	Head     string
	Base     string
	State    string // open, closed
	Merged   bool
	Comments []string
}

// Server is the fake Gitea API for one repository.
type Server struct {
	*httptest.Server
	Owner, Repo string
	Git         *hosttest.Repo
	// CanPush is what the repository's permissions say of the token's
	// account.
	canPush map[string]bool

	rt     *hosttest.Router
	mu     sync.Mutex
	tokens map[string][]string
	prs    []*PR
	issues int // issues and pull requests share one index
	stale  int
}

const swagger = "https://gitea.example/api/swagger"

// New starts the API for owner/repo (git data in repoDir) accepting token
// with the write:repository and write:issue scopes.
func New(t testing.TB, owner, repo, token, repoDir string) *Server {
	s := &Server{Owner: owner, Repo: repo, Git: &hosttest.Repo{Dir: repoDir}, tokens: map[string][]string{}, canPush: map[string]bool{}}
	if token != "" {
		s.tokens[token] = []string{"write:repository", "write:issue"}
		s.canPush[token] = true
	}
	s.rt = s.router()
	s.Server = httptest.NewServer(s.rt)
	t.Cleanup(s.Close)
	return s
}

// AddToken accepts another token with the given scopes; canPush is
// whether its account may push to the repository.
func (s *Server) AddToken(token string, canPush bool, scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = scopes
	s.canPush[token] = canPush
}

// Scopes are a token's scopes (nil: unknown token).
func (s *Server) Scopes(token string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token]
}

// CanPush says whether the token's account may push.
func (s *Server) CanPush(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.canPush[token]
}

// APIURL is the API root (git.api_url).
func (s *Server) APIURL() string { return s.Server.URL + "/api/v1" }

// Fail scripts the answer to the next API request not yet faulted.
func (s *Server) Fail(f hosttest.Fault) { s.rt.Faults.Push(f) }

// StaleListOnce makes the next list answer as if no pull request existed.
func (s *Server) StaleListOnce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale++
}

// Requests lists "METHOD path?query" of every API request.
func (s *Server) Requests() []string { return s.rt.Requests() }

// PRs returns copies of the stored pull requests.
func (s *Server) PRs() []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PR, len(s.prs))
	for i, p := range s.prs {
		out[i] = *p
		out[i].Comments = append([]string(nil), p.Comments...)
	}
	return out
}

// AddIssue files an issue: it takes the next index, as on Gitea.
func (s *Server) AddIssue() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issues++
	return s.issues
}

// Merge merges pull request n: a merge commit on its base.
func (s *Server) Merge(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(n)
	if p == nil || p.State != "open" {
		return fmt.Errorf("merge #%d: no open pull request", n)
	}
	if _, err := s.Git.Merge(p.Head, p.Base, fmt.Sprintf("Merge pull request '%s' (#%d) from %s into %s", p.Title, p.Number, p.Head, p.Base)); err != nil {
		return err
	}
	p.State, p.Merged = "closed", true
	return nil
}

// ClosePR closes pull request n unmerged.
func (s *Server) ClosePR(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(n); p != nil {
		p.State = "closed"
	}
}

func (s *Server) find(n int) *PR {
	for _, p := range s.prs {
		if p.Number == n {
			return p
		}
	}
	return nil
}

func apiErr(w http.ResponseWriter, status int, message string) {
	hosttest.WriteJSON(w, status, map[string]any{"message": message, "url": swagger})
}

// router is Gitea's: "token" or "Bearer" tokens with scopes (write:x
// implies read:x).
func (s *Server) router() *hosttest.Router {
	h := func(f func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, hosttest.Caller, []string) {
		return func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) { f(w, r) }
	}
	return &hosttest.Router{
		Record: func(r *http.Request) string { return r.Method + " " + r.URL.RequestURI() },
		Admit: func(w http.ResponseWriter, r *http.Request) (hosttest.Caller, bool) {
			auth := r.Header.Get("Authorization")
			token, ok := strings.CutPrefix(auth, "token ")
			if !ok {
				token, ok = strings.CutPrefix(auth, "Bearer ")
			}
			scopes := s.Scopes(token)
			if !ok || scopes == nil {
				apiErr(w, http.StatusUnauthorized, "invalid username, password or token")
				return hosttest.Caller{}, false
			}
			return hosttest.Caller{Token: token, Scopes: scopes}, true
		},
		Split:     hosttest.SplitAfter("/api/v1/repos/"+s.Owner+"/"+s.Repo, func(w http.ResponseWriter) { apiErr(w, http.StatusNotFound, "not found") }),
		NotFound:  func(w http.ResponseWriter) { apiErr(w, http.StatusNotFound, "not found") },
		Needs:     func(w http.ResponseWriter, c hosttest.Caller, scope string) bool { return needs(w, c.Scopes, scope) },
		FaultBody: func(status int) any { return map[string]string{"message": http.StatusText(status), "url": swagger} },
		Routes: []hosttest.Route{
			{Method: http.MethodGet, Path: "", Scope: "read:repository", Handle: func(w http.ResponseWriter, r *http.Request, c hosttest.Caller, _ []string) {
				hosttest.WriteJSON(w, http.StatusOK, map[string]any{"id": 7, "full_name": s.Owner + "/" + s.Repo, "default_branch": "main",
					"html_url": s.Server.URL + "/" + s.Owner + "/" + s.Repo, "permissions": map[string]bool{"admin": false, "push": s.CanPush(c.Token), "pull": true}})
			}},
			{Method: http.MethodGet, Path: "pulls", Scope: "read:repository", Handle: h(s.list)},
			{Method: http.MethodPost, Path: "pulls", Scope: "write:repository", Handle: h(s.create)},
			{Method: http.MethodPatch, Path: "pulls/*", Scope: "write:repository", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.edit(w, r, a[0]) }},
			{Method: http.MethodPost, Path: "issues/*/comments", Scope: "write:issue", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.comment(w, r, a[0]) }},
		},
	}
}

// needs checks a token scope (write:x implies read:x), as Gitea does.
func needs(w http.ResponseWriter, have []string, scope string) bool {
	_, cat, _ := strings.Cut(scope, ":")
	if slices.Contains(have, scope) || slices.Contains(have, "write:"+cat) || slices.Contains(have, "all") {
		return true
	}
	apiErr(w, http.StatusForbidden, fmt.Sprintf("token does not have at least one of required scope(s), required=[%s], token scope=%s", scope, strings.Join(have, ",")))
	return false
}

func (s *Server) prJSON(p *PR) map[string]any {
	return map[string]any{
		"id": 500 + p.Number, "number": p.Number, "title": p.Title, "body": p.Body, "state": p.State, "merged": p.Merged,
		"draft":    strings.HasPrefix(p.Title, "WIP:"),
		"html_url": fmt.Sprintf("%s/%s/%s/pulls/%d", s.Server.URL, s.Owner, s.Repo, p.Number),
		"head":     map[string]any{"label": p.Head, "ref": p.Head, "sha": s.Git.BranchSHA(p.Head), "repo_id": 7},
		"base":     map[string]any{"label": p.Base, "ref": p.Base, "sha": s.Git.BranchSHA(p.Base), "repo_id": 7},
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if !slices.Contains([]string{"open", "closed", "all"}, state) {
		apiErr(w, http.StatusUnprocessableEntity, "[State]: invalid state")
		return
	}
	page, ok := hosttest.IntParam(r, "page", 1)
	limit, ok2 := hosttest.IntParam(r, "limit", 30)
	if !ok || !ok2 {
		apiErr(w, http.StatusUnprocessableEntity, "[Page]: invalid page")
		return
	}
	limit = min(limit, 50) // MAX_RESPONSE_ITEMS
	s.mu.Lock()
	var match []map[string]any
	if s.stale > 0 {
		s.stale--
	} else {
		for i := len(s.prs) - 1; i >= 0; i-- { // newest first
			if p := s.prs[i]; state == "all" || p.State == state {
				match = append(match, s.prJSON(p))
			}
		}
	}
	s.mu.Unlock()
	lo, hi, more := hosttest.Page(len(match), page, limit)
	w.Header().Set("X-Total-Count", strconv.Itoa(len(match)))
	if more {
		u := *r.URL
		qq := u.Query()
		qq.Set("page", strconv.Itoa(page+1))
		u.RawQuery = qq.Encode()
		last := *r.URL
		ql := last.Query()
		ql.Set("page", strconv.Itoa((len(match)+limit-1)/limit))
		last.RawQuery = ql.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next",<%s%s>; rel="last"`, s.Server.URL, u.RequestURI(), s.Server.URL, last.RequestURI()))
	}
	hosttest.WriteJSON(w, http.StatusOK, append([]map[string]any{}, match[lo:hi]...))
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if !hosttest.IsJSON(r) {
		apiErr(w, http.StatusUnsupportedMediaType, "Unsupported Media Type")
		return false
	}
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		apiErr(w, http.StatusUnprocessableEntity, "[]: "+err.Error())
		return false
	}
	return true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Head, Base, Title, Body string
	}
	if !decode(w, r, &in) {
		return
	}
	if strings.TrimSpace(in.Title) == "" {
		apiErr(w, http.StatusUnprocessableEntity, "[Title]: Required")
		return
	}
	if in.Head == "" || in.Base == "" || s.Git.BranchSHA(in.Head) == "" || s.Git.BranchSHA(in.Base) == "" {
		hosttest.WriteJSON(w, http.StatusNotFound, map[string]any{"message": "The target couldn't be found.", "url": swagger, "errors": []string{}})
		return
	}
	if in.Head == in.Base {
		apiErr(w, http.StatusUnprocessableEntity, "Invalid PullRequest: There are no changes between the head and the base")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.State == "open" && p.Head == in.Head && p.Base == in.Base {
			apiErr(w, http.StatusConflict, fmt.Sprintf("pull request already exists for these targets [id: %d, issue_id: %d, head_repo_id: 7, base_repo_id: 7, head_branch: %s, base_branch: %s]",
				500+p.Number, p.Number, p.Head, p.Base))
			return
		}
	}
	s.issues++
	p := &PR{Number: s.issues, Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, State: "open"}
	s.prs = append(s.prs, p)
	hosttest.WriteJSON(w, http.StatusCreated, s.prJSON(p))
}

func (s *Server) edit(w http.ResponseWriter, r *http.Request, num string) {
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if !decode(w, r, &in) {
		return
	}
	n, _ := strconv.Atoi(num)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(n)
	if p == nil {
		apiErr(w, http.StatusNotFound, "not found")
		return
	}
	if in.Title != nil && *in.Title != "" {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.State != nil {
		if *in.State != "open" && *in.State != "closed" {
			apiErr(w, http.StatusUnprocessableEntity, "[State]: invalid state")
			return
		}
		p.State = *in.State
	}
	hosttest.WriteJSON(w, http.StatusCreated, s.prJSON(p))
}

func (s *Server) comment(w http.ResponseWriter, r *http.Request, num string) {
	var in struct{ Body string }
	if !decode(w, r, &in) {
		return
	}
	if in.Body == "" {
		apiErr(w, http.StatusUnprocessableEntity, "[Body]: Required")
		return
	}
	n, _ := strconv.Atoi(num)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(n)
	if p == nil {
		apiErr(w, http.StatusNotFound, "not found")
		return
	}
	p.Comments = append(p.Comments, in.Body)
	hosttest.WriteJSON(w, http.StatusCreated, map[string]any{"id": len(p.Comments), "body": in.Body,
		"html_url": fmt.Sprintf("%s/%s/%s/pulls/%d#issuecomment-%d", s.Server.URL, s.Owner, s.Repo, p.Number, len(p.Comments))})
}

// Remote is a Gitea repository for pull-request tests: its bare repository
// over smart HTTP and the API for it.
type Remote struct {
	Dir  string
	HTTP *gittest.HTTPServer
	API  *Server
}

// NewRemote makes owner/repo's remote with a token whose account can push.
// Git over HTTP takes any user name with a token as the password, as
// Gitea does: write:repository to push, read:repository to fetch.
func NewRemote(t testing.TB, owner, repo, token string) *Remote {
	t.Helper()
	root := t.TempDir()
	r := hosttest.SeedBare(t, root, owner+"/"+repo+".git")
	api := New(t, owner, repo, token, r.Dir)
	h := gittest.NewHTTPServer(t, root, "", gittest.WithAuthorize(func(user, pass string, push bool) bool {
		sc := api.Scopes(pass)
		if sc == nil {
			return false
		}
		if push {
			return api.CanPush(pass) && (slices.Contains(sc, "write:repository") || slices.Contains(sc, "all"))
		}
		return slices.Contains(sc, "read:repository") || slices.Contains(sc, "write:repository") || slices.Contains(sc, "all")
	}))
	return &Remote{Dir: r.Dir, HTTP: h, API: api}
}

// URL is the repository's git URL.
func (r *Remote) URL() string { return r.HTTP.URL(r.API.Owner + "/" + r.API.Repo + ".git") }
