// Package gitlab is the forge of gitlab.com and self-hosted GitLab (merge
// requests of a project addressed by its full path, subgroups included),
// on gitlab.com/gitlab-org/api/client-go. Importing it registers the
// gitlab provider with forge.New.
package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gl "gitlab.com/gitlab-org/api/client-go"

	"github.com/tgp-go/tgp/forge"
)

func init() {
	forge.Register(forge.ProviderGitLab, New)
}

type api struct {
	client  *gl.Client
	project string
	retry   *forge.Policy
}

// New builds the GitLab forge for a project path (group/project or
// group/sub/project) with a personal, project or group access token (sent
// as PRIVATE-TOKEN, as client-go does). Without WithAPIURL or WithBaseURL
// it talks to gitlab.com.
func New(project, token string, opts ...forge.Option) (*forge.Client, error) {
	o := forge.Apply(opts)
	if project == "" || !strings.Contains(project, "/") {
		return nil, fmt.Errorf("forge: GitLab project path %q: want group/project or group/sub/project", project)
	}
	base := "https://gitlab.com/api/v4/"
	switch {
	case o.APIURL != "":
		base = o.APIURL
	case o.BaseURL != "":
		base = o.BaseURL // client-go appends api/v4/
	}
	c, err := gl.NewClient(token, gl.WithBaseURL(base), gl.WithHTTPClient(o.Client()),
		// One policy retries on every host (and reports each retry):
		// client-go's own would retry 429s and 5xx unseen.
		gl.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("forge: GitLab API URL %q: %w", base, err)
	}
	return forge.FromAPI(&api{client: c, project: project, retry: o.Policy(forge.ProviderGitLab)}), nil
}

func (g *api) Provider() string { return forge.ProviderGitLab }

func (g *api) do(ctx context.Context, op string, call func() (*gl.Response, error)) error {
	return g.retry.Do(ctx, op, func() (*http.Response, error) {
		resp, err := call()
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, classify)
}

func classify(resp *http.Response, err error) error {
	var er *gl.ErrorResponse
	msg := err.Error()
	if errors.As(err, &er) && er.Message != "" {
		msg = er.Message
	}
	if resp == nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &forge.AuthError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
	case http.StatusForbidden:
		if strings.Contains(msg, "insufficient_scope") {
			return &forge.AuthError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
		}
	}
	return &forge.APIError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
}

func state(s string) string {
	switch s {
	case "opened", "locked":
		return "open"
	}
	return s // closed, merged
}

func toPR(m *gl.BasicMergeRequest, created bool) *forge.PR {
	return &forge.PR{Number: int(m.IID), URL: m.WebURL, Head: m.SourceBranch, Base: m.TargetBranch, State: state(m.State),
		Created: created, Provider: forge.ProviderGitLab, Term: forge.Term(forge.ProviderGitLab)}
}

// Verify reads the project with the token.
func (g *api) Verify(ctx context.Context) error {
	err := g.do(ctx, "read project", func() (*gl.Response, error) {
		_, resp, err := g.client.Projects.GetProject(g.project, nil, gl.WithContext(ctx))
		return resp, err
	})
	var apiErr *forge.APIError
	if errors.As(err, &apiErr) && (apiErr.Status == http.StatusNotFound || apiErr.Status == http.StatusForbidden) {
		// GitLab answers 404 for a private project the token cannot see.
		return &forge.AuthError{Host: "GitLab", Status: apiErr.Status, Message: fmt.Sprintf("%s (project %s)", apiErr.Message, g.project)}
	}
	return err
}

// ListOpen lists the opened merge requests whose source branch is head.
func (g *api) ListOpen(ctx context.Context, head, page string) ([]*forge.PR, string, error) {
	opt := &gl.ListProjectMergeRequestsOptions{
		ListOptions: gl.ListOptions{PerPage: 100}, SourceBranch: gl.Ptr(head), State: gl.Ptr("opened"),
	}
	if n, err := strconv.ParseInt(page, 10, 64); err == nil {
		opt.Page = n
	}
	var mrs []*gl.BasicMergeRequest
	var next int64
	err := g.do(ctx, "list merge requests", func() (*gl.Response, error) {
		m, resp, err := g.client.MergeRequests.ListProjectMergeRequests(g.project, opt, gl.WithContext(ctx))
		mrs = m
		if resp != nil {
			next = resp.NextPage
		}
		return resp, err
	})
	if err != nil {
		return nil, "", err
	}
	out := make([]*forge.PR, 0, len(mrs))
	for _, m := range mrs {
		out = append(out, toPR(m, false))
	}
	if next == 0 {
		return out, "", nil
	}
	return out, strconv.FormatInt(next, 10), nil
}

// title is GitLab's way to open a draft: a "Draft:" prefix.
func title(req forge.PRRequest) string {
	if req.Draft && !strings.HasPrefix(req.Title, "Draft:") {
		return "Draft: " + req.Title
	}
	return req.Title
}

// Create opens the merge request.
func (g *api) Create(ctx context.Context, req forge.PRRequest) (*forge.PR, error) {
	var out *forge.PR
	err := g.do(ctx, "create merge request", func() (*gl.Response, error) {
		m, resp, err := g.client.MergeRequests.CreateMergeRequest(g.project, &gl.CreateMergeRequestOptions{
			Title: gl.Ptr(title(req)), Description: gl.Ptr(req.Body),
			SourceBranch: gl.Ptr(req.Head), TargetBranch: gl.Ptr(req.Base),
		}, gl.WithContext(ctx))
		if err == nil {
			out = toPR(&m.BasicMergeRequest, true)
		}
		return resp, err
	})
	return out, err
}

// Duplicate: 409 "Another open merge request already exists for this
// source branch".
func (g *api) Duplicate(err error) bool { return forge.AlreadyExists(err) }

// Update sets the title and description.
func (g *api) Update(ctx context.Context, pr *forge.PR, req forge.PRRequest) error {
	return g.do(ctx, "update merge request", func() (*gl.Response, error) {
		_, resp, err := g.client.MergeRequests.UpdateMergeRequest(g.project, int64(pr.Number), &gl.UpdateMergeRequestOptions{
			Title: gl.Ptr(title(req)), Description: gl.Ptr(req.Body),
		}, gl.WithContext(ctx))
		return resp, err
	})
}

// Comment adds a note to the merge request.
func (g *api) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func() (*gl.Response, error) {
		_, resp, err := g.client.Notes.CreateMergeRequestNote(g.project, int64(number), &gl.CreateMergeRequestNoteOptions{Body: gl.Ptr(body)}, gl.WithContext(ctx))
		return resp, err
	})
}
