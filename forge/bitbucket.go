package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Bitbucket is the Forge for Bitbucket Cloud, on the REST API 2.0 through
// net/http (the package doc says why not go-bitbucket). The token is a
// repository, project or workspace access token (or an OAuth access
// token), sent as "Authorization: Bearer".
type Bitbucket struct {
	api       string // https://api.bitbucket.org/2.0
	token     string
	hc        *http.Client
	workspace string
	slug      string
	retry     *policy
}

// NewBitbucket builds the Bitbucket Cloud forge for workspace/slug.
func NewBitbucket(workspace, slug, token string, opts ...Option) (*Bitbucket, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if workspace == "" || slug == "" {
		return nil, fmt.Errorf("forge: workspace and repository are required")
	}
	api := "https://api.bitbucket.org/2.0"
	switch {
	case o.apiURL != "":
		api = o.apiURL
	case o.baseURL != "":
		api = strings.TrimSuffix(o.baseURL, "/") + "/2.0"
	}
	u, err := url.Parse(strings.TrimSuffix(api, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("forge: Bitbucket API URL %q is not an absolute URL", api)
	}
	return &Bitbucket{api: u.String(), token: token, hc: o.client(), workspace: workspace, slug: slug, retry: o.policy(ProviderBitbucket)}, nil
}

// Provider implements Describer.
func (b *Bitbucket) Provider() string { return ProviderBitbucket }

// bbPR is the part of Bitbucket's pullrequest object the session reads.
type bbPR struct {
	ID          int    `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
	State       string `json:"state"` // OPEN, MERGED, DECLINED, SUPERSEDED
	Source      struct {
		Branch     struct{ Name string } `json:"branch"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	} `json:"source"`
	Destination struct {
		Branch struct{ Name string } `json:"branch"`
	} `json:"destination"`
	Links struct {
		HTML struct{ Href string } `json:"html"`
	} `json:"links"`
}

type bbPage struct {
	Values []bbPR `json:"values"`
	Next   string `json:"next"`
}

// bbError is Bitbucket's error body: {"type":"error","error":{"message":
// ..., "fields": {...}}}.
type bbError struct {
	Error struct {
		Message string              `json:"message"`
		Detail  json.RawMessage     `json:"detail"`
		Fields  map[string][]string `json:"fields"`
	} `json:"error"`
}

// httpError is one non-2xx answer.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.msg) }

func bbMessage(body []byte, status string) string {
	var e bbError
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		if s := strings.TrimSpace(string(body)); s != "" && len(s) < 300 {
			return s
		}
		return status
	}
	msg := e.Error.Message
	for f, ms := range e.Error.Fields {
		if !strings.Contains(msg, f) {
			msg += fmt.Sprintf(" (%s: %s)", f, strings.Join(ms, "; "))
		}
	}
	return msg
}

func (b *Bitbucket) repoURL() string {
	return b.api + "/repositories/" + url.PathEscape(b.workspace) + "/" + url.PathEscape(b.slug)
}

// send makes one request; out, when set, receives the JSON answer.
func (b *Bitbucket) send(ctx context.Context, method, u string, in, out any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return resp, &httpError{status: resp.StatusCode, msg: bbMessage(data, resp.Status)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp, fmt.Errorf("Bitbucket answered %s with a body that is not the expected JSON: %w", resp.Status, err)
		}
	}
	return resp, nil
}

func (b *Bitbucket) do(ctx context.Context, op, method, u string, in, out any) (*http.Response, error) {
	var last *http.Response
	err := b.retry.do(ctx, op, func() (*http.Response, error) {
		resp, err := b.send(ctx, method, u, in, out)
		last = resp
		return resp, err
	}, bbClassify)
	return last, err
}

func bbClassify(resp *http.Response, err error) error {
	var he *httpError
	if resp == nil || !errors.As(err, &he) {
		return err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &AuthError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
	case http.StatusForbidden:
		if strings.Contains(he.msg, "scope") || strings.Contains(he.msg, "privilege") {
			return &AuthError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
		}
	}
	return &APIError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
}

func bbState(s string) string {
	switch s {
	case "OPEN":
		return "open"
	case "MERGED":
		return "merged"
	}
	return "closed" // DECLINED, SUPERSEDED
}

func (b *Bitbucket) toPR(p *bbPR, created bool) *PR {
	return &PR{Number: p.ID, URL: p.Links.HTML.Href, Head: p.Source.Branch.Name, Base: p.Destination.Branch.Name,
		State: bbState(p.State), Created: created, Provider: ProviderBitbucket, Term: Term(ProviderBitbucket)}
}

// Verify implements Verifier: one page of the repository's pull requests,
// read with the token (a token without the pullrequest scope is refused
// here, before anything is pushed).
func (b *Bitbucket) Verify(ctx context.Context) error {
	_, err := b.do(ctx, "read pull requests", http.MethodGet, b.repoURL()+"/pullrequests?pagelen=1", nil, nil)
	var api *APIError
	if errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Status == http.StatusForbidden) {
		return &AuthError{Host: "Bitbucket", Status: api.Status, Message: fmt.Sprintf("%s (repository %s/%s)", api.Message, b.workspace, b.slug)}
	}
	return err
}

// FindPR implements Forge: the open pull request from head, asked for
// with a BBQL query and read page by page.
func (b *Bitbucket) FindPR(ctx context.Context, head string) (*PR, error) {
	q := url.Values{}
	q.Set("q", fmt.Sprintf(`source.branch.name = %s AND state = "OPEN"`, strconv.Quote(head)))
	q.Set("pagelen", "50")
	next := b.repoURL() + "/pullrequests?" + q.Encode()
	for pages := 0; next != "" && pages < 100; pages++ {
		var page bbPage
		if _, err := b.do(ctx, "list pull requests", http.MethodGet, next, nil, &page); err != nil {
			return nil, err
		}
		for i := range page.Values {
			p := &page.Values[i]
			if p.Source.Branch.Name == head && p.State == "OPEN" &&
				(p.Source.Repository.FullName == "" || strings.EqualFold(p.Source.Repository.FullName, b.workspace+"/"+b.slug)) {
				return b.toPR(p, false), nil
			}
		}
		next = page.Next
	}
	return nil, nil
}

// OpenOrUpdatePR implements Forge: it is idempotent per source branch.
func (b *Bitbucket) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	if req.Title == "" || req.Head == "" || req.Base == "" {
		return nil, fmt.Errorf("forge: title, head and base are required")
	}
	ctx, col := withCollector(ctx)
	pr, err := b.openOrUpdate(ctx, req)
	if pr != nil {
		pr.Retries = col.retries()
	}
	return pr, err
}

type bbBranch struct {
	Branch struct {
		Name string `json:"name"`
	} `json:"branch"`
}

func branchRef(name string) bbBranch {
	var r bbBranch
	r.Branch.Name = name
	return r
}

func (b *Bitbucket) openOrUpdate(ctx context.Context, req PRRequest) (*PR, error) {
	existing, err := b.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return b.update(ctx, existing, req)
	}
	in := struct {
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Source      bbBranch `json:"source"`
		Destination bbBranch `json:"destination"`
		Draft       bool     `json:"draft,omitempty"`
	}{req.Title, req.Body, branchRef(req.Head), branchRef(req.Base), req.Draft}
	var p bbPR
	resp, err := b.do(ctx, "create pull request", http.MethodPost, b.repoURL()+"/pullrequests", in, &p)
	if err != nil {
		return nil, err
	}
	// Bitbucket answers a create for a source branch that already has an
	// open pull request to the same destination with that pull request
	// (200, title and description replaced), not with an error.
	return b.toPR(&p, resp.StatusCode == http.StatusCreated), nil
}

func (b *Bitbucket) update(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	// Only the fields sent change: reviewers and close_source_branch a
	// human set stay as they are.
	in := struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}{req.Title, req.Body}
	_, err := b.do(ctx, "update pull request", http.MethodPut, b.repoURL()+"/pullrequests/"+strconv.Itoa(pr.Number), in, nil)
	return pr, err
}

// Comment implements Forge.
func (b *Bitbucket) Comment(ctx context.Context, number int, body string) error {
	in := struct {
		Content struct {
			Raw string `json:"raw"`
		} `json:"content"`
	}{}
	in.Content.Raw = body
	_, err := b.do(ctx, "comment", http.MethodPost, b.repoURL()+"/pullrequests/"+strconv.Itoa(number)+"/comments", in, nil)
	return err
}
