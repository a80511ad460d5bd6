// Package bitbucket is the forge of Bitbucket Cloud, on the REST API 2.0
// through net/http. Importing it registers the bitbucket provider with
// forge.New.
//
// Not github.com/ktrysmt/go-bitbucket: that client (v0.10.0) cannot do
// what the session needs. It drops the request context (req.WithContext's
// result is discarded, so a cancelled call runs on), its
// PullRequests.Update sends reviewers=[] and close_source_branch=false
// with every edit (refreshing the description would remove the reviewers
// a human added), its errors carry no response headers (Retry-After is
// lost), and it answers with untyped maps.
package bitbucket

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

	"github.com/tgp-go/tgp/forge"
)

func init() {
	forge.Register(forge.ProviderBitbucket, forge.ByOwner(New))
}

// api is Bitbucket's part of a forge. The token is a repository, project
// or workspace access token (or an OAuth access token), sent as
// "Authorization: Bearer".
type api struct {
	api       string // https://api.bitbucket.org/2.0
	token     string
	hc        *http.Client
	workspace string
	slug      string
	retry     *forge.Policy
}

// New builds the Bitbucket Cloud forge for workspace/slug.
func New(workspace, slug, token string, opts ...forge.Option) (*forge.Client, error) {
	o := forge.Apply(opts)
	if workspace == "" || slug == "" {
		return nil, fmt.Errorf("forge: workspace and repository are required")
	}
	base := "https://api.bitbucket.org/2.0"
	switch {
	case o.APIURL != "":
		base = o.APIURL
	case o.BaseURL != "":
		base = strings.TrimSuffix(o.BaseURL, "/") + "/2.0"
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("forge: Bitbucket API URL %q is not an absolute URL", base)
	}
	return forge.FromAPI(&api{api: u.String(), token: token, hc: o.Client(), workspace: workspace, slug: slug, retry: o.Policy(forge.ProviderBitbucket)}), nil
}

func (b *api) Provider() string { return forge.ProviderBitbucket }

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

func (b *api) repoURL() string {
	return b.api + "/repositories/" + url.PathEscape(b.workspace) + "/" + url.PathEscape(b.slug)
}

// send makes one request; out, when set, receives the JSON answer.
func (b *api) send(ctx context.Context, method, u string, in, out any) (*http.Response, error) {
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
			return resp, fmt.Errorf("forge: Bitbucket answered %s with a body that is not the expected JSON: %w", resp.Status, err)
		}
	}
	return resp, nil
}

func (b *api) do(ctx context.Context, op, method, u string, in, out any) (*http.Response, error) {
	var last *http.Response
	err := b.retry.Do(ctx, op, func() (*http.Response, error) {
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
		return &forge.AuthError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
	case http.StatusForbidden:
		if strings.Contains(he.msg, "scope") || strings.Contains(he.msg, "privilege") {
			return &forge.AuthError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
		}
	}
	return &forge.APIError{Host: "Bitbucket", Status: resp.StatusCode, Message: he.msg}
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

func (b *api) toPR(p *bbPR, created bool) *forge.PR {
	return &forge.PR{Number: p.ID, URL: p.Links.HTML.Href, Head: p.Source.Branch.Name, Base: p.Destination.Branch.Name,
		State: bbState(p.State), Created: created, Provider: forge.ProviderBitbucket, Term: forge.Term(forge.ProviderBitbucket)}
}

// Verify reads one page of the repository's pull requests,
// read with the token (a token without the pullrequest scope is refused
// here, before anything is pushed).
func (b *api) Verify(ctx context.Context) error {
	_, err := b.do(ctx, "read pull requests", http.MethodGet, b.repoURL()+"/pullrequests?pagelen=1", nil, nil)
	var apiErr *forge.APIError
	if errors.As(err, &apiErr) && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusForbidden) {
		return &forge.AuthError{Host: "Bitbucket", Status: apiErr.Status, Message: fmt.Sprintf("%s (repository %s/%s)", apiErr.Message, b.workspace, b.slug)}
	}
	return err
}

// ListOpen reads one page of the open pull requests from head, asked for
// with a BBQL query; page is the next link Bitbucket gave.
func (b *api) ListOpen(ctx context.Context, head, page string) ([]*forge.PR, string, error) {
	if page == "" {
		q := url.Values{}
		q.Set("q", fmt.Sprintf(`source.branch.name = %s AND state = "OPEN"`, strconv.Quote(head)))
		q.Set("pagelen", "50")
		page = b.repoURL() + "/pullrequests?" + q.Encode()
	}
	var p bbPage
	if _, err := b.do(ctx, "list pull requests", http.MethodGet, page, nil, &p); err != nil {
		return nil, "", err
	}
	var out []*forge.PR
	for i := range p.Values {
		v := &p.Values[i]
		// A fork's branch of the same name is not this repository's.
		if v.Source.Repository.FullName == "" || strings.EqualFold(v.Source.Repository.FullName, b.workspace+"/"+b.slug) {
			out = append(out, b.toPR(v, false))
		}
	}
	return out, p.Next, nil
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

// Create opens the pull request. Bitbucket answers a create for a source
// branch that already has an open pull request to the same destination
// with that pull request (200, title and description replaced), not with
// an error: Created says which.
func (b *api) Create(ctx context.Context, req forge.PRRequest) (*forge.PR, error) {
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
	return b.toPR(&p, resp.StatusCode == http.StatusCreated), nil
}

// Duplicate is never true: Bitbucket answers a duplicate with the open one.
func (b *api) Duplicate(error) bool { return false }

// Update sets the title and description.
func (b *api) Update(ctx context.Context, pr *forge.PR, req forge.PRRequest) error {
	// Only the fields sent change: reviewers and close_source_branch a
	// human set stay as they are.
	in := struct {
		Title       string `json:"title"`
		Description string `json:"description"`
	}{req.Title, req.Body}
	_, err := b.do(ctx, "update pull request", http.MethodPut, b.repoURL()+"/pullrequests/"+strconv.Itoa(pr.Number), in, nil)
	return err
}

// Comment comments on the pull request.
func (b *api) Comment(ctx context.Context, number int, body string) error {
	in := struct {
		Content struct {
			Raw string `json:"raw"`
		} `json:"content"`
	}{}
	in.Content.Raw = body
	_, err := b.do(ctx, "comment", http.MethodPost, b.repoURL()+"/pullrequests/"+strconv.Itoa(number)+"/comments", in, nil)
	return err
}
