// Package hosttest is what the code-host stand-ins (forge/githubtest,
// gitlabtest, bitbuckettest, giteatest) share: a real bare repository
// served over smart HTTP (git-http-backend behind net/http/cgi), branch
// look-ups in it, merges done the way a host merges (a merge commit on the
// base branch, written by the git CLI), and scripted faults (rate limits,
// 5xx, a 5xx after the change was made).
package hosttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// Repo is a bare repository on disk.
type Repo struct{ Dir string }

// SeedBare makes root/rel (e.g. group/sub/toolbox.git): a bare repository
// with one commit on main holding a README, accepting pushes over HTTP.
func SeedBare(t testing.TB, root, rel string) *Repo {
	t.Helper()
	dir := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	seed := gittest.SeedRemote(t, map[string]string{"README.md": "toolbox\n"})
	gittest.Git(t, "", "clone", "-q", "--bare", seed, dir)
	gittest.Git(t, dir, "config", "http.receivepack", "true")
	return &Repo{Dir: dir}
}

// BranchSHA reads refs/heads/<b> (loose or packed); "" when it does not
// exist.
func (r *Repo) BranchSHA(branch string) string {
	if branch == "" || strings.Contains(branch, "..") {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "refs", "heads", filepath.FromSlash(branch))); err == nil {
		return strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if h, name, ok := strings.Cut(line, " "); ok && name == "refs/heads/"+branch {
				return h
			}
		}
	}
	return ""
}

// Merge merges head into base as a host's merge button does: a merge
// commit whose first parent is base's tip, base moved to it (compare and
// swap on the old tip). It returns the merge commit.
func (r *Repo) Merge(head, base, message string) (string, error) {
	baseSHA, headSHA := r.BranchSHA(base), r.BranchSHA(head)
	if baseSHA == "" || headSHA == "" {
		return "", fmt.Errorf("merge %s into %s: branch missing", head, base)
	}
	tree, err := gittest.GitErr(r.Dir, "merge-tree", "--write-tree", baseSHA, headSHA)
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %v: %s", head, base, err, tree)
	}
	tree = strings.TrimSpace(strings.SplitN(tree, "\n", 2)[0])
	commit, err := gittest.GitErr(r.Dir, "commit-tree", tree, "-p", baseSHA, "-p", headSHA, "-m", message)
	if err != nil {
		return "", fmt.Errorf("merge %s into %s: %v: %s", head, base, err, commit)
	}
	commit = strings.TrimSpace(commit)
	if out, err := gittest.GitErr(r.Dir, "update-ref", "refs/heads/"+base, commit, baseSHA); err != nil {
		return "", fmt.Errorf("merge %s into %s: %v: %s", head, base, err, out)
	}
	return commit, nil
}

// Fault is one scripted answer: Status with Retry-After (when set) and
// Header. AfterCommit makes the server do the request's work first and
// then answer Status, as a host whose proxy times out after the write.
type Fault struct {
	Status      int
	RetryAfter  string
	Header      http.Header
	Body        any
	AfterCommit bool
}

// Faults is a queue of scripted answers, taken one per API request.
type Faults struct {
	mu sync.Mutex
	q  []Fault
}

// Push queues f for the next request not yet faulted.
func (f *Faults) Push(x Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.q = append(f.q, x)
}

// Pop takes the next fault, or nil (also for a queued Fault{}, which lets
// one request through: a fault can aim past it).
func (f *Faults) Pop() *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.q) == 0 {
		return nil
	}
	x := f.q[0]
	f.q = f.q[1:]
	if x.Status == 0 {
		return nil
	}
	return &x
}

// Write answers the fault (its headers, Retry-After, its body as JSON).
func (x *Fault) Write(w http.ResponseWriter, body any) {
	for k, vs := range x.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if x.RetryAfter != "" {
		w.Header().Set("Retry-After", x.RetryAfter)
	}
	if x.Body != nil {
		body = x.Body
	}
	if text, ok := body.(string); ok {
		// Proxies and rate limiters answer plain text.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(x.Status)
		_, _ = w.Write([]byte(text))
		return
	}
	WriteJSON(w, x.Status, body)
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// IsJSON says whether a request body is declared JSON (hosts refuse a
// write whose Content-Type is anything else).
func IsJSON(r *http.Request) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(r.Header.Get("Content-Type"), ";", 2)[0]))
	return ct == "application/json"
}

// Page cuts n items into the page'th page of size per (1-based); it
// returns the bounds and whether a next page exists.
func Page(n, page, per int) (lo, hi int, more bool) {
	if page < 1 {
		page = 1
	}
	lo = (page - 1) * per
	if lo > n {
		lo = n
	}
	hi = min(lo+per, n)
	return lo, hi, hi < n
}

// IntParam reads a positive integer query parameter (def when absent);
// ok is false for a value that is not one.
func IntParam(r *http.Request, name string, def int) (int, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// Caller is who sent a request, as a stand-in's Admit found it.
type Caller struct {
	Token  string
	Scopes []string
	// ReadOnly: the token's account may read but not write.
	ReadOnly bool
}

// Route is one endpoint: Method on Path, segments after the repository's
// prefix where "*" matches any one segment (handed to Handle in order);
// Scope is the token scope it needs ("" none).
type Route struct {
	Method string
	Path   string
	Scope  string
	Handle func(w http.ResponseWriter, r *http.Request, c Caller, args []string)
}

// Router is what the four stand-ins share: every request is recorded,
// admitted (the token, its scopes: refusals written by Admit), given its
// scripted fault (before its work, or after it with the work's answer
// discarded) and routed; an unknown route is NotFound, a missing scope
// Needs' refusal. The hosts differ only in the hooks, so each stays as
// strict as its host.
type Router struct {
	// Record is the request as Requests lists it.
	Record func(r *http.Request) string
	// Admit authenticates; false: it answered (401, 403) already.
	Admit func(w http.ResponseWriter, r *http.Request) (Caller, bool)
	// Split is the path's segments after the repository's prefix; false:
	// not this repository, and Split answered so.
	Split func(w http.ResponseWriter, r *http.Request) ([]string, bool)
	// NotFound answers an unknown route the host's way.
	NotFound func(w http.ResponseWriter)
	// Needs checks a route's scope; false: it answered the refusal.
	Needs func(w http.ResponseWriter, c Caller, scope string) bool
	// FaultBody is the body of a scripted fault without its own, in the
	// host's error shape.
	FaultBody func(status int) any
	Routes    []Route

	Faults Faults
	mu     sync.Mutex
	reqs   []string
}

// Requests lists the requests served, in order.
func (rt *Router) Requests() []string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]string(nil), rt.reqs...)
}

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, rt.Record(r))
	rt.mu.Unlock()
	c, ok := rt.Admit(w, r)
	if !ok {
		return
	}
	fault := rt.Faults.Pop()
	if fault != nil && !fault.AfterCommit {
		fault.Write(w, rt.FaultBody(fault.Status))
		return
	}
	rw := w
	if fault != nil {
		rw = discard{w.Header()} // do the work, then answer the fault
	}
	rt.route(rw, r, c)
	if fault != nil {
		fault.Write(w, rt.FaultBody(fault.Status))
	}
}

func (rt *Router) route(w http.ResponseWriter, r *http.Request, c Caller) {
	segs, ok := rt.Split(w, r)
	if !ok {
		return
	}
	for _, rr := range rt.Routes {
		args, ok := match(rr.Path, segs)
		if !ok || rr.Method != r.Method {
			continue
		}
		if rr.Scope != "" && rt.Needs != nil && !rt.Needs(w, c, rr.Scope) {
			return
		}
		rr.Handle(w, r, c, args)
		return
	}
	rt.NotFound(w)
}

// match matches segs against a route path ("" is the repository itself).
func match(path string, segs []string) ([]string, bool) {
	var want []string
	if path != "" {
		want = strings.Split(path, "/")
	}
	if len(want) != len(segs) {
		return nil, false
	}
	var args []string
	for i, w := range want {
		switch {
		case w == "*":
			args = append(args, segs[i])
		case w != segs[i]:
			return nil, false
		}
	}
	return args, true
}

// SplitAfter is a Split for the repository at prefix (a path); another
// path is answered with notFound.
func SplitAfter(prefix string, notFound func(http.ResponseWriter)) func(http.ResponseWriter, *http.Request) ([]string, bool) {
	return func(w http.ResponseWriter, r *http.Request) ([]string, bool) {
		path := r.URL.Path
		if path != prefix && !strings.HasPrefix(path, prefix+"/") {
			notFound(w)
			return nil, false
		}
		rest := strings.Trim(strings.TrimPrefix(path, prefix), "/")
		if rest == "" {
			return nil, true
		}
		return strings.Split(rest, "/"), true
	}
}

// discard is where the answer of a request faulted after its work goes.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h.Clone() }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
