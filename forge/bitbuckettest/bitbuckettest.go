// Package bitbuckettest is a stand-in for the Bitbucket Cloud REST API 2.0
// endpoints the pull-request flow uses, for tests only: Bitbucket cannot
// be reached from here. It answers as Bitbucket does and refuses what
// Bitbucket refuses: access tokens as "Authorization: Bearer" (401 "Token
// is invalid, expired, or not supported for this endpoint." otherwise),
// token scopes (403 "Your credentials lack one or more required privilege
// scopes." without pullrequest, or pullrequest:write for writes), JSON
// bodies only (415), required fields with Bitbucket's error body
// ({"type":"error","error":{"message","fields"}}), branches that must exist
// in the real bare repository, BBQL queries (q=field = "value" AND ...;
// an unknown field is a 400) with only OPEN pull requests listed unless
// state= says otherwise, page-based pagination (pagelen 1-50, "next"
// links). A create for a source branch that already has an open pull
// request to the same destination answers that pull request (200) with
// the new title and description, as Bitbucket does, instead of an error.
// Rate limits and 5xx can be scripted; merging writes a real merge commit.
// The git remote wants the user name x-token-auth with an access token,
// as Bitbucket's does.
package bitbuckettest

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
	ID          int
	Title       string
	Description string
	Source      string
	Destination string
	State       string // OPEN, MERGED, DECLINED
	Reviewers   []string
	Comments    []string
}

// Server is the fake Bitbucket API for one repository.
type Server struct {
	*httptest.Server
	Workspace, Slug string
	Repo            *hosttest.Repo

	rt     *hosttest.Router
	mu     sync.Mutex
	tokens map[string][]string
	prs    []*PR
	stale  int
}

// New starts the API for workspace/slug (git data in repoDir) accepting
// token with the repository:write and pullrequest:write scopes.
func New(t testing.TB, workspace, slug, token, repoDir string) *Server {
	s := &Server{Workspace: workspace, Slug: slug, Repo: &hosttest.Repo{Dir: repoDir}, tokens: map[string][]string{}}
	if token != "" {
		s.tokens[token] = []string{"repository", "repository:write", "pullrequest", "pullrequest:write"}
	}
	s.rt = s.router()
	s.Server = httptest.NewServer(s.rt)
	t.Cleanup(s.Close)
	return s
}

// AddToken accepts another access token with the given scopes.
func (s *Server) AddToken(token string, scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = scopes
}

// Scopes are a token's scopes (nil: unknown token).
func (s *Server) Scopes(token string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens[token]
}

// APIURL is the API root (git.api_url).
func (s *Server) APIURL() string { return s.Server.URL + "/2.0" }

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
		out[i].Reviewers = append([]string(nil), p.Reviewers...)
	}
	return out
}

// AddReviewer adds a reviewer to pull request id, as a human would in the
// web interface (an update must keep it).
func (s *Server) AddReviewer(id int, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(id); p != nil {
		p.Reviewers = append(p.Reviewers, name)
	}
}

// Merge merges pull request id: a merge commit on its destination.
func (s *Server) Merge(id int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(id)
	if p == nil || p.State != "OPEN" {
		return fmt.Errorf("merge #%d: no open pull request", id)
	}
	if _, err := s.Repo.Merge(p.Source, p.Destination, fmt.Sprintf("Merged in %s (pull request #%d)", p.Source, p.ID)); err != nil {
		return err
	}
	p.State = "MERGED"
	return nil
}

// Decline declines pull request id.
func (s *Server) Decline(id int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.find(id); p != nil {
		p.State = "DECLINED"
	}
}

func (s *Server) find(id int) *PR {
	for _, p := range s.prs {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func bbErr(w http.ResponseWriter, status int, message string, fields map[string][]string) {
	e := map[string]any{"message": message}
	if fields != nil {
		e["fields"] = fields
	}
	hosttest.WriteJSON(w, status, map[string]any{"type": "error", "error": e})
}

// router is Bitbucket's: Bearer tokens with scopes, "Repository not
// found" for another repository.
func (s *Server) router() *hosttest.Router {
	return &hosttest.Router{
		Record: func(r *http.Request) string { return r.Method + " " + r.URL.RequestURI() },
		Admit: func(w http.ResponseWriter, r *http.Request) (hosttest.Caller, bool) {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			scopes := s.Scopes(token)
			if !ok || scopes == nil {
				bbErr(w, http.StatusUnauthorized, "Token is invalid, expired, or not supported for this endpoint.", nil)
				return hosttest.Caller{}, false
			}
			return hosttest.Caller{Token: token, Scopes: scopes}, true
		},
		Split:    hosttest.SplitAfter("/2.0/repositories/"+s.Workspace+"/"+s.Slug, func(w http.ResponseWriter) { bbErr(w, http.StatusNotFound, "Repository not found", nil) }),
		NotFound: func(w http.ResponseWriter) { bbErr(w, http.StatusNotFound, "Resource not found", nil) },
		Needs:    func(w http.ResponseWriter, c hosttest.Caller, scope string) bool { return s.needs(w, c.Scopes, scope) },
		FaultBody: func(status int) any {
			return map[string]any{"type": "error", "error": map[string]string{"message": http.StatusText(status)}}
		},
		Routes: []hosttest.Route{
			{Method: http.MethodGet, Path: "", Scope: "repository", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) {
				hosttest.WriteJSON(w, http.StatusOK, map[string]any{"type": "repository", "full_name": s.Workspace + "/" + s.Slug,
					"mainbranch": map[string]string{"type": "branch", "name": "main"}, "is_private": true})
			}},
			{Method: http.MethodGet, Path: "pullrequests", Scope: "pullrequest", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) { s.list(w, r) }},
			{Method: http.MethodPost, Path: "pullrequests", Scope: "pullrequest:write", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) { s.create(w, r) }},
			{Method: http.MethodPut, Path: "pullrequests/*", Scope: "pullrequest:write", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.update(w, r, a[0]) }},
			{Method: http.MethodPost, Path: "pullrequests/*/comments", Scope: "pullrequest", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.comment(w, r, a[0]) }},
		},
	}
}

func (s *Server) needs(w http.ResponseWriter, have []string, scope string) bool {
	// A :write scope implies the read one, as on Bitbucket.
	if slices.Contains(have, scope) || slices.Contains(have, scope+":write") {
		return true
	}
	hosttest.WriteJSON(w, http.StatusForbidden, map[string]any{"type": "error", "error": map[string]any{
		"message": "Your credentials lack one or more required privilege scopes.",
		"detail":  map[string]any{"granted": have, "required": []string{scope}}}})
	return false
}

func (s *Server) prJSON(p *PR) map[string]any {
	repo := map[string]any{"type": "repository", "full_name": s.Workspace + "/" + s.Slug}
	reviewers := []map[string]string{}
	for _, r := range p.Reviewers {
		reviewers = append(reviewers, map[string]string{"display_name": r})
	}
	return map[string]any{
		"type": "pullrequest", "id": p.ID, "title": p.Title, "description": p.Description, "state": p.State,
		"source":      map[string]any{"branch": map[string]string{"name": p.Source}, "commit": map[string]string{"hash": s.Repo.BranchSHA(p.Source)}, "repository": repo},
		"destination": map[string]any{"branch": map[string]string{"name": p.Destination}, "repository": repo},
		"reviewers":   reviewers, "close_source_branch": false,
		"links": map[string]any{
			"html": map[string]string{"href": fmt.Sprintf("https://bitbucket.example/%s/%s/pull-requests/%d", s.Workspace, s.Slug, p.ID)},
			"self": map[string]string{"href": fmt.Sprintf("%s/2.0/repositories/%s/%s/pullrequests/%d", s.Server.URL, s.Workspace, s.Slug, p.ID)},
		},
	}
}

// bbql is a parsed q: field op "value" joined by AND.
type bbql []struct{ field, op, value string }

var bbqlFields = map[string]func(*PR) string{
	"source.branch.name":      func(p *PR) string { return p.Source },
	"destination.branch.name": func(p *PR) string { return p.Destination },
	"state":                   func(p *PR) string { return p.State },
	"title":                   func(p *PR) string { return p.Title },
	"id":                      func(p *PR) string { return strconv.Itoa(p.ID) },
}

// parseBBQL parses q; problem is Bitbucket's message for a query it refuses.
func parseBBQL(q string) (out bbql, problem string) {
	rest := strings.TrimSpace(q)
	for rest != "" {
		i := strings.IndexAny(rest, " !=")
		if i <= 0 {
			return nil, fmt.Sprintf("Invalid query: %s", q)
		}
		field := rest[:i]
		if _, ok := bbqlFields[field]; !ok {
			return nil, fmt.Sprintf("Invalid field name: %s", field)
		}
		rest = strings.TrimSpace(rest[i:])
		op := "="
		if strings.HasPrefix(rest, "!=") {
			op, rest = "!=", rest[2:]
		} else if strings.HasPrefix(rest, "=") {
			rest = rest[1:]
		} else {
			return nil, fmt.Sprintf("Invalid query: %s", q)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, `"`) {
			return nil, fmt.Sprintf("Invalid query: %s", q)
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return nil, fmt.Sprintf("Invalid query: unterminated string in %s", q)
		}
		value, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			return nil, fmt.Sprintf("Invalid query: %s", q)
		}
		out = append(out, struct{ field, op, value string }{field, op, value})
		rest = strings.TrimSpace(rest[end+1:])
		if rest == "" {
			break
		}
		if !strings.HasPrefix(rest, "AND ") {
			return nil, fmt.Sprintf("Invalid query: %s", q)
		}
		rest = strings.TrimSpace(rest[4:])
	}
	return out, ""
}

func (q bbql) match(p *PR) bool {
	for _, c := range q {
		v := bbqlFields[c.field](p)
		if (c.op == "=") != (v == c.value) {
			return false
		}
	}
	return true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	q, problem := parseBBQL(query.Get("q"))
	if problem != "" {
		bbErr(w, http.StatusBadRequest, problem, nil)
		return
	}
	page, ok := hosttest.IntParam(r, "page", 1)
	per, ok2 := hosttest.IntParam(r, "pagelen", 10)
	if !ok || !ok2 || per > 50 {
		bbErr(w, http.StatusBadRequest, "Invalid pagelen", nil)
		return
	}
	states := query["state"]
	if len(states) == 0 {
		states = []string{"OPEN"} // Bitbucket lists open pull requests unless told
	}
	s.mu.Lock()
	var match []map[string]any
	if s.stale > 0 {
		s.stale--
	} else {
		for _, p := range s.prs {
			if slices.Contains(states, p.State) && q.match(p) {
				match = append(match, s.prJSON(p))
			}
		}
	}
	s.mu.Unlock()
	lo, hi, more := hosttest.Page(len(match), page, per)
	out := map[string]any{"pagelen": per, "size": len(match), "page": page, "values": append([]map[string]any{}, match[lo:hi]...)}
	if more {
		u := *r.URL
		qq := u.Query()
		qq.Set("page", strconv.Itoa(page+1))
		u.RawQuery = qq.Encode()
		out["next"] = s.Server.URL + u.RequestURI()
	}
	hosttest.WriteJSON(w, http.StatusOK, out)
}

type branchRef struct {
	Branch *struct {
		Name string `json:"name"`
	} `json:"branch"`
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	if !hosttest.IsJSON(r) {
		bbErr(w, http.StatusUnsupportedMediaType, "Unsupported Media Type", nil)
		return
	}
	var in struct {
		Title       *string    `json:"title"`
		Description string     `json:"description"`
		Source      *branchRef `json:"source"`
		Destination *branchRef `json:"destination"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		bbErr(w, http.StatusBadRequest, "Invalid JSON: "+err.Error(), nil)
		return
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		bbErr(w, http.StatusBadRequest, "title: This field is required.", map[string][]string{"title": {"This field is required."}})
		return
	}
	if in.Source == nil || in.Source.Branch == nil || in.Source.Branch.Name == "" {
		bbErr(w, http.StatusBadRequest, "source: This field is required.", map[string][]string{"source": {"This field is required."}})
		return
	}
	src, dst := in.Source.Branch.Name, "main" // the repository's main branch by default
	if in.Destination != nil && in.Destination.Branch != nil && in.Destination.Branch.Name != "" {
		dst = in.Destination.Branch.Name
	}
	for f, b := range map[string]string{"source": src, "destination": dst} {
		if s.Repo.BranchSHA(b) == "" {
			bbErr(w, http.StatusBadRequest, f+": Branch not found: "+b, map[string][]string{f: {"Branch not found: " + b}})
			return
		}
	}
	if src == dst {
		bbErr(w, http.StatusBadRequest, "source and destination branches must differ", nil)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.prs {
		if p.State == "OPEN" && p.Source == src && p.Destination == dst {
			p.Title, p.Description = *in.Title, in.Description
			hosttest.WriteJSON(w, http.StatusOK, s.prJSON(p))
			return
		}
	}
	p := &PR{ID: len(s.prs) + 1, Title: *in.Title, Description: in.Description, Source: src, Destination: dst, State: "OPEN"}
	s.prs = append(s.prs, p)
	w.Header().Set("Location", fmt.Sprintf("%s/2.0/repositories/%s/%s/pullrequests/%d", s.Server.URL, s.Workspace, s.Slug, p.ID))
	hosttest.WriteJSON(w, http.StatusCreated, s.prJSON(p))
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, id string) {
	if !hosttest.IsJSON(r) {
		bbErr(w, http.StatusUnsupportedMediaType, "Unsupported Media Type", nil)
		return
	}
	var in map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		bbErr(w, http.StatusBadRequest, "Invalid JSON: "+err.Error(), nil)
		return
	}
	n, _ := strconv.Atoi(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(n)
	if p == nil {
		bbErr(w, http.StatusNotFound, fmt.Sprintf("No pullrequest found with id %s", id), nil)
		return
	}
	if p.State != "OPEN" {
		bbErr(w, http.StatusBadRequest, "You can't edit a pull request that isn't open.", nil)
		return
	}
	if raw, ok := in["title"]; ok {
		var t string
		if json.Unmarshal(raw, &t) != nil || strings.TrimSpace(t) == "" {
			bbErr(w, http.StatusBadRequest, "title: This field may not be blank.", map[string][]string{"title": {"This field may not be blank."}})
			return
		}
		p.Title = t
	}
	if raw, ok := in["description"]; ok {
		_ = json.Unmarshal(raw, &p.Description)
	}
	if raw, ok := in["reviewers"]; ok {
		// A PUT replaces the reviewers with what it sends.
		var rs []map[string]string
		_ = json.Unmarshal(raw, &rs)
		p.Reviewers = nil
		for _, r := range rs {
			p.Reviewers = append(p.Reviewers, r["display_name"]+r["uuid"])
		}
	}
	hosttest.WriteJSON(w, http.StatusOK, s.prJSON(p))
}

func (s *Server) comment(w http.ResponseWriter, r *http.Request, id string) {
	if !hosttest.IsJSON(r) {
		bbErr(w, http.StatusUnsupportedMediaType, "Unsupported Media Type", nil)
		return
	}
	var in struct {
		Content *struct {
			Raw string `json:"raw"`
		} `json:"content"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		bbErr(w, http.StatusBadRequest, "Invalid JSON: "+err.Error(), nil)
		return
	}
	if in.Content == nil || in.Content.Raw == "" {
		bbErr(w, http.StatusBadRequest, "content: This field is required.", map[string][]string{"content": {"This field is required."}})
		return
	}
	n, _ := strconv.Atoi(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.find(n)
	if p == nil {
		bbErr(w, http.StatusNotFound, fmt.Sprintf("No pullrequest found with id %s", id), nil)
		return
	}
	p.Comments = append(p.Comments, in.Content.Raw)
	hosttest.WriteJSON(w, http.StatusCreated, map[string]any{"type": "pullrequest_comment", "id": len(p.Comments), "content": map[string]string{"raw": in.Content.Raw}})
}

// Remote is a Bitbucket repository for pull-request tests: its bare
// repository over smart HTTP and the API for it.
type Remote struct {
	Dir  string
	HTTP *gittest.HTTPServer
	API  *Server
}

// NewRemote makes workspace/slug's remote with an access token that has
// the repository and pull-request scopes. Git over HTTP wants the user
// name x-token-auth with an access token, as Bitbucket does: write scope
// to push, read to fetch.
func NewRemote(t testing.TB, workspace, slug, token string) *Remote {
	t.Helper()
	root := t.TempDir()
	repo := hosttest.SeedBare(t, root, workspace+"/"+slug+".git")
	api := New(t, workspace, slug, token, repo.Dir)
	h := gittest.NewHTTPServer(t, root, "", gittest.WithAuthorize(func(user, pass string, push bool) bool {
		sc := api.Scopes(pass)
		if user != "x-token-auth" || sc == nil {
			return false
		}
		return slices.Contains(sc, "repository:write") || (!push && slices.Contains(sc, "repository"))
	}))
	return &Remote{Dir: repo.Dir, HTTP: h, API: api}
}

// URL is the repository's git URL.
func (r *Remote) URL() string { return r.HTTP.URL(r.API.Workspace + "/" + r.API.Slug + ".git") }
