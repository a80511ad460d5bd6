// Package gitlabtest is a stand-in for the GitLab REST API v4 endpoints the
// merge-request flow uses, for tests only: GitLab cannot be reached from
// here. It answers as GitLab does and refuses what GitLab refuses: tokens
// in PRIVATE-TOKEN or "Authorization: Bearer" (401 "401 Unauthorized"
// otherwise), token scopes (403 insufficient_scope without api, or
// read_api for reads), the project addressed by its numeric id or its
// URL-encoded path (group%2Fsub%2Fproject; an unencoded path is another
// route, 404), required fields (400 "title is missing"), JSON or form
// bodies only (415), a source branch that must exist in the real bare
// repository (422), one open merge request per source branch (409
// "Another open merge request already exists for this source branch:
// !1"), offset pagination (per_page up to 100, X-Next-Page, X-Total,
// Link). Rate limits and 5xx can be scripted; merging writes a real merge
// commit on the target branch.
package gitlabtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/forge/hosttest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// MR is a stored merge request.
type MR struct {
	IID          int
	Title        string
	Description  string
	SourceBranch string
	TargetBranch string
	State        string // opened, closed, merged
	Notes        []string
}

// Server is the fake GitLab API for one project.
type Server struct {
	*httptest.Server
	// Project is the project's full path (group/sub/project).
	Project   string
	ProjectID int
	Repo      *hosttest.Repo

	rt     *hosttest.Router
	mu     sync.Mutex
	tokens map[string][]string
	mrs    []*MR
	stale  int
}

// New starts the API for project (its git data in repoDir) accepting
// token with the api scope.
func New(t testing.TB, project, token, repoDir string) *Server {
	s := &Server{Project: project, ProjectID: 42, Repo: &hosttest.Repo{Dir: repoDir}, tokens: map[string][]string{}}
	if token != "" {
		s.tokens[token] = []string{"api"}
	}
	s.rt = s.router()
	s.Server = httptest.NewServer(s.rt)
	t.Cleanup(s.Close)
	return s
}

// AddToken accepts another token with the given scopes (api, read_api,
// read_repository, write_repository).
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
func (s *Server) APIURL() string { return s.Server.URL + "/api/v4" }

// Fail scripts the answer to the next API request not yet faulted.
func (s *Server) Fail(f hosttest.Fault) { s.rt.Faults.Push(f) }

// StaleListOnce makes the next list answer as if no merge request existed
// yet (a replica behind the primary): a create after it meets the
// duplicate.
func (s *Server) StaleListOnce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stale++
}

// Requests lists "METHOD escaped-path" of every API request.
func (s *Server) Requests() []string { return s.rt.Requests() }

// MRs returns copies of the stored merge requests.
func (s *Server) MRs() []MR {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]MR, len(s.mrs))
	for i, m := range s.mrs {
		out[i] = *m
		out[i].Notes = append([]string(nil), m.Notes...)
	}
	return out
}

// Merge merges merge request iid as GitLab's merge button does: a merge
// commit on the target branch, the request merged.
func (s *Server) Merge(iid int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(iid)
	if m == nil || m.State != "opened" {
		return fmt.Errorf("merge !%d: no open merge request", iid)
	}
	if _, err := s.Repo.Merge(m.SourceBranch, m.TargetBranch, fmt.Sprintf("Merge branch '%s' into '%s'", m.SourceBranch, m.TargetBranch)); err != nil {
		return err
	}
	m.State = "merged"
	return nil
}

// CloseMR closes merge request iid unmerged.
func (s *Server) CloseMR(iid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.find(iid); m != nil {
		m.State = "closed"
	}
}

func (s *Server) find(iid int) *MR {
	for _, m := range s.mrs {
		if m.IID == iid {
			return m
		}
	}
	return nil
}

func msg(w http.ResponseWriter, status int, m any) {
	hosttest.WriteJSON(w, status, map[string]any{"message": m})
}

// router is GitLab's: PRIVATE-TOKEN or Bearer tokens, the api scope (or
// read_api for reads), the project by its id or URL-encoded path.
func (s *Server) router() *hosttest.Router {
	notFound := func(w http.ResponseWriter) {
		hosttest.WriteJSON(w, http.StatusNotFound, map[string]string{"error": "404 Not Found"})
	}
	h := func(f func(w http.ResponseWriter, r *http.Request)) func(http.ResponseWriter, *http.Request, hosttest.Caller, []string) {
		return func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, _ []string) { f(w, r) }
	}
	return &hosttest.Router{
		Record: func(r *http.Request) string { return r.Method + " " + r.URL.EscapedPath() },
		Admit: func(w http.ResponseWriter, r *http.Request) (hosttest.Caller, bool) {
			token := r.Header.Get("Private-Token")
			if token == "" {
				token, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			scopes := s.Scopes(token)
			if token == "" || scopes == nil {
				msg(w, http.StatusUnauthorized, "401 Unauthorized")
				return hosttest.Caller{}, false
			}
			read := r.Method == http.MethodGet || r.Method == http.MethodHead
			if !slices.Contains(scopes, "api") && !(read && slices.Contains(scopes, "read_api")) {
				hosttest.WriteJSON(w, http.StatusForbidden, map[string]string{"error": "insufficient_scope",
					"error_description": "The request requires higher privileges than provided by the access token.", "scope": "api read_api"})
				return hosttest.Caller{}, false
			}
			return hosttest.Caller{Token: token, Scopes: scopes}, true
		},
		Split: func(w http.ResponseWriter, r *http.Request) ([]string, bool) {
			rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/v4/projects/")
			if !ok {
				notFound(w)
				return nil, false
			}
			seg := strings.Split(rest, "/")
			id, err := url.PathUnescape(seg[0])
			if err != nil || (id != s.Project && id != strconv.Itoa(s.ProjectID)) {
				// An unencoded group/sub/project is split into segments
				// here, as in GitLab's router: the project is not found.
				msg(w, http.StatusNotFound, "404 Project Not Found")
				return nil, false
			}
			return seg[1:], true
		},
		NotFound:  notFound,
		FaultBody: func(status int) any { return map[string]string{"message": http.StatusText(status)} },
		Routes: []hosttest.Route{
			{Method: http.MethodGet, Path: "", Handle: func(w http.ResponseWriter, _ *http.Request, _ hosttest.Caller, _ []string) { s.project(w) }},
			{Method: http.MethodGet, Path: "merge_requests", Handle: h(s.list)},
			{Method: http.MethodPost, Path: "merge_requests", Handle: h(s.create)},
			{Method: http.MethodPut, Path: "merge_requests/*", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.update(w, r, a[0]) }},
			{Method: http.MethodPost, Path: "merge_requests/*/notes", Handle: func(w http.ResponseWriter, r *http.Request, _ hosttest.Caller, a []string) { s.note(w, r, a[0]) }},
		},
	}
}

func (s *Server) webURL() string { return s.Server.URL + "/" + s.Project }

func (s *Server) project(w http.ResponseWriter) {
	hosttest.WriteJSON(w, http.StatusOK, map[string]any{
		"id": s.ProjectID, "path_with_namespace": s.Project, "default_branch": "main", "web_url": s.webURL(),
		"http_url_to_repo": s.webURL() + ".git",
		"permissions":      map[string]any{"project_access": map[string]any{"access_level": 30}, "group_access": nil},
	})
}

func (s *Server) mrJSON(m *MR) map[string]any {
	return map[string]any{
		"id": 1000 + m.IID, "iid": m.IID, "project_id": s.ProjectID, "title": m.Title, "description": m.Description,
		"state": m.State, "source_branch": m.SourceBranch, "target_branch": m.TargetBranch,
		"source_project_id": s.ProjectID, "target_project_id": s.ProjectID,
		"draft": strings.HasPrefix(m.Title, "Draft:"), "sha": s.Repo.BranchSHA(m.SourceBranch),
		"web_url":    fmt.Sprintf("%s/-/merge_requests/%d", s.webURL(), m.IID),
		"references": map[string]string{"short": fmt.Sprintf("!%d", m.IID)},
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state != "" && !slices.Contains([]string{"opened", "closed", "locked", "merged", "all"}, state) {
		hosttest.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "state does not have a valid value"})
		return
	}
	page, ok1 := hosttest.IntParam(r, "page", 1)
	per, ok2 := hosttest.IntParam(r, "per_page", 20)
	if !ok1 || !ok2 {
		hosttest.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "page is invalid"})
		return
	}
	per = min(per, 100) // GitLab caps per_page at 100
	s.mu.Lock()
	var match []map[string]any
	if s.stale > 0 {
		s.stale--
	} else {
		for _, m := range s.mrs {
			if (state == "" || state == "all" || state == m.State) &&
				(q.Get("source_branch") == "" || q.Get("source_branch") == m.SourceBranch) &&
				(q.Get("target_branch") == "" || q.Get("target_branch") == m.TargetBranch) {
				match = append(match, s.mrJSON(m))
			}
		}
	}
	s.mu.Unlock()
	slices.Reverse(match) // newest first, GitLab's default order
	lo, hi, more := hosttest.Page(len(match), page, per)
	pages := max(1, (len(match)+per-1)/per)
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(len(match)))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", "")
	if more {
		h.Set("X-Next-Page", strconv.Itoa(page+1))
		u := *r.URL
		qq := u.Query()
		qq.Set("page", strconv.Itoa(page+1))
		u.RawQuery = qq.Encode()
		h.Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, s.Server.URL, u.RequestURI()))
	}
	out := match[lo:hi]
	if out == nil {
		out = []map[string]any{}
	}
	hosttest.WriteJSON(w, http.StatusOK, out)
}

// params reads a JSON or form body, as Grape does; ok=false has answered.
func params(w http.ResponseWriter, r *http.Request) (map[string]string, bool) {
	out := map[string]string{}
	ct := strings.SplitN(r.Header.Get("Content-Type"), ";", 2)[0]
	switch strings.TrimSpace(strings.ToLower(ct)) {
	case "application/json":
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			msg(w, http.StatusBadRequest, "400 Bad request - Failed to parse JSON")
			return nil, false
		}
		for k, v := range body {
			switch v := v.(type) {
			case string:
				out[k] = v
			case float64:
				out[k] = strconv.FormatFloat(v, 'f', -1, 64)
			case bool:
				out[k] = strconv.FormatBool(v)
			}
		}
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			msg(w, http.StatusBadRequest, "400 Bad request")
			return nil, false
		}
		for k := range r.PostForm {
			out[k] = r.PostForm.Get(k)
		}
	default:
		msg(w, http.StatusUnsupportedMediaType, "415 Unsupported Media Type")
		return nil, false
	}
	return out, true
}

func missing(w http.ResponseWriter, p map[string]string, names ...string) bool {
	var miss []string
	for _, n := range names {
		if _, ok := p[n]; !ok {
			miss = append(miss, n+" is missing")
		}
	}
	if len(miss) > 0 {
		hosttest.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": strings.Join(miss, ", ")})
		return true
	}
	return false
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	p, ok := params(w, r)
	if !ok || missing(w, p, "title", "source_branch", "target_branch") {
		return
	}
	if strings.TrimSpace(p["title"]) == "" {
		msg(w, http.StatusBadRequest, map[string][]string{"title": {"can't be blank"}})
		return
	}
	src, dst := p["source_branch"], p["target_branch"]
	if src == dst {
		msg(w, http.StatusUnprocessableEntity, []string{"You can't use same project/branch for source and target"})
		return
	}
	if s.Repo.BranchSHA(src) == "" {
		msg(w, http.StatusUnprocessableEntity, []string{fmt.Sprintf("Source branch \"%s\" does not exist", src)})
		return
	}
	if s.Repo.BranchSHA(dst) == "" {
		msg(w, http.StatusUnprocessableEntity, []string{fmt.Sprintf("Target branch \"%s\" does not exist", dst)})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.mrs {
		if m.State == "opened" && m.SourceBranch == src && m.TargetBranch == dst {
			msg(w, http.StatusConflict, []string{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", m.IID)})
			return
		}
	}
	m := &MR{IID: len(s.mrs) + 1, Title: p["title"], Description: p["description"], SourceBranch: src, TargetBranch: dst, State: "opened"}
	s.mrs = append(s.mrs, m)
	hosttest.WriteJSON(w, http.StatusCreated, s.mrJSON(m))
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, iid string) {
	p, ok := params(w, r)
	if !ok {
		return
	}
	n, _ := strconv.Atoi(iid)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(n)
	if m == nil {
		msg(w, http.StatusNotFound, "404 Not found")
		return
	}
	known := []string{"title", "description", "target_branch", "state_event", "labels", "assignee_id", "remove_source_branch", "squash"}
	given := false
	for _, k := range known {
		if _, ok := p[k]; ok {
			given = true
		}
	}
	if !given {
		hosttest.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": strings.Join(known, ", ") + " are missing, at least one parameter must be provided"})
		return
	}
	if t, ok := p["title"]; ok {
		if strings.TrimSpace(t) == "" {
			msg(w, http.StatusBadRequest, map[string][]string{"title": {"can't be blank"}})
			return
		}
		m.Title = t
	}
	if d, ok := p["description"]; ok {
		m.Description = d
	}
	hosttest.WriteJSON(w, http.StatusOK, s.mrJSON(m))
}

func (s *Server) note(w http.ResponseWriter, r *http.Request, iid string) {
	p, ok := params(w, r)
	if !ok || missing(w, p, "body") {
		return
	}
	n, _ := strconv.Atoi(iid)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.find(n)
	if m == nil {
		msg(w, http.StatusNotFound, "404 Not found")
		return
	}
	m.Notes = append(m.Notes, p["body"])
	hosttest.WriteJSON(w, http.StatusCreated, map[string]any{"id": len(m.Notes), "body": p["body"], "noteable_iid": m.IID, "noteable_type": "MergeRequest"})
}

// Remote is a GitLab project for merge-request tests: its bare repository
// served over smart HTTP at HTTP.URL(Project+".git") and the API for it.
type Remote struct {
	Dir  string
	HTTP *gittest.HTTPServer
	API  *Server
}

// NewRemote makes project's remote (group/sub/project) with a token that
// has the api scope. Git over HTTP takes, as GitLab does, any non-blank
// user name with a token whose scopes allow it (write_repository or api
// to push; read_repository too to fetch).
func NewRemote(t testing.TB, project, token string) *Remote {
	t.Helper()
	root := t.TempDir()
	repo := hosttest.SeedBare(t, root, project+".git")
	api := New(t, project, token, repo.Dir)
	h := gittest.NewHTTPServer(t, root, "", gittest.WithAuthorize(func(user, pass string, push bool) bool {
		sc := api.Scopes(pass)
		if user == "" || sc == nil {
			return false
		}
		if slices.Contains(sc, "api") || slices.Contains(sc, "write_repository") {
			return true
		}
		return !push && slices.Contains(sc, "read_repository")
	}))
	return &Remote{Dir: filepath.Clean(repo.Dir), HTTP: h, API: api}
}

// URL is the project's git URL.
func (r *Remote) URL() string { return r.HTTP.URL(r.API.Project + ".git") }
