package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// GitLab is the Forge for gitlab.com and self-hosted GitLab: merge
// requests of a project addressed by its full path, subgroups included
// (group/sub/project).
type GitLab struct {
	client  *gitlab.Client
	project string
	retry   *policy
}

// NewGitLab builds the GitLab forge for a project path with a personal,
// project or group access token (sent as PRIVATE-TOKEN, as client-go
// does). Without WithAPIURL or WithBaseURL it talks to gitlab.com.
func NewGitLab(project, token string, opts ...Option) (*GitLab, error) {
	o := defaultOptions()
	for _, f := range opts {
		f(&o)
	}
	if project == "" || !strings.Contains(project, "/") {
		return nil, fmt.Errorf("forge: GitLab project path %q: want group/project or group/sub/project", project)
	}
	base := "https://gitlab.com/api/v4/"
	switch {
	case o.apiURL != "":
		base = o.apiURL
	case o.baseURL != "":
		base = o.baseURL // client-go appends api/v4/
	}
	c, err := gitlab.NewClient(token, gitlab.WithBaseURL(base), gitlab.WithHTTPClient(o.client()),
		// One policy retries on every host (and reports each retry):
		// client-go's own would retry 429s and 5xx unseen.
		gitlab.WithoutRetries())
	if err != nil {
		return nil, fmt.Errorf("forge: GitLab API URL %q: %w", base, err)
	}
	return &GitLab{client: c, project: project, retry: o.policy(ProviderGitLab)}, nil
}

// Provider implements Describer.
func (g *GitLab) Provider() string { return ProviderGitLab }

func (g *GitLab) do(ctx context.Context, op string, call func() (*gitlab.Response, error)) error {
	return g.retry.do(ctx, op, func() (*http.Response, error) {
		resp, err := call()
		if resp == nil {
			return nil, err
		}
		return resp.Response, err
	}, gitlabErr)
}

func gitlabErr(resp *http.Response, err error) error {
	var er *gitlab.ErrorResponse
	msg := err.Error()
	if errors.As(err, &er) && er.Message != "" {
		msg = er.Message
	}
	if resp == nil {
		return err
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		return &AuthError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
	case http.StatusForbidden:
		if strings.Contains(msg, "insufficient_scope") {
			return &AuthError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
		}
	}
	return &APIError{Host: "GitLab", Status: resp.StatusCode, Message: msg}
}

func glState(s string) string {
	switch s {
	case "opened", "locked":
		return "open"
	}
	return s // closed, merged
}

func (g *GitLab) toPR(m *gitlab.BasicMergeRequest, created bool) *PR {
	return &PR{Number: int(m.IID), URL: m.WebURL, Head: m.SourceBranch, Base: m.TargetBranch, State: glState(m.State),
		Created: created, Provider: ProviderGitLab, Term: Term(ProviderGitLab)}
}

// Verify implements Verifier: the project, read with the token.
func (g *GitLab) Verify(ctx context.Context) error {
	err := g.do(ctx, "read project", func() (*gitlab.Response, error) {
		_, resp, err := g.client.Projects.GetProject(g.project, nil, gitlab.WithContext(ctx))
		return resp, err
	})
	var api *APIError
	if errors.As(err, &api) && (api.Status == http.StatusNotFound || api.Status == http.StatusForbidden) {
		// GitLab answers 404 for a private project the token cannot see.
		return &AuthError{Host: "GitLab", Status: api.Status, Message: fmt.Sprintf("%s (project %s)", api.Message, g.project)}
	}
	return err
}

// FindPR implements Forge: the open merge request whose source branch is
// head.
func (g *GitLab) FindPR(ctx context.Context, head string) (*PR, error) {
	opt := &gitlab.ListProjectMergeRequestsOptions{
		ListOptions: gitlab.ListOptions{PerPage: 100}, SourceBranch: gitlab.Ptr(head), State: gitlab.Ptr("opened"),
	}
	for {
		var mrs []*gitlab.BasicMergeRequest
		var next int64
		err := g.do(ctx, "list merge requests", func() (*gitlab.Response, error) {
			m, resp, err := g.client.MergeRequests.ListProjectMergeRequests(g.project, opt, gitlab.WithContext(ctx))
			mrs = m
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		for _, m := range mrs {
			if m.SourceBranch == head && glState(m.State) == "open" {
				return g.toPR(m, false), nil
			}
		}
		if next == 0 {
			return nil, nil
		}
		opt.Page = next
	}
}

// OpenOrUpdatePR implements Forge: it is idempotent per source branch.
func (g *GitLab) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	if req.Title == "" || req.Head == "" || req.Base == "" {
		return nil, fmt.Errorf("forge: title, head and base are required")
	}
	ctx, col := withCollector(ctx)
	pr, err := g.openOrUpdate(ctx, req)
	if pr != nil {
		pr.Retries = col.retries()
	}
	return pr, err
}

func glTitle(req PRRequest) string {
	if req.Draft && !strings.HasPrefix(req.Title, "Draft:") {
		return "Draft: " + req.Title // GitLab's way to open a draft
	}
	return req.Title
}

func (g *GitLab) openOrUpdate(ctx context.Context, req PRRequest) (*PR, error) {
	existing, err := g.FindPR(ctx, req.Head)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return g.update(ctx, existing, req)
	}
	var out *PR
	err = g.do(ctx, "create merge request", func() (*gitlab.Response, error) {
		m, resp, err := g.client.MergeRequests.CreateMergeRequest(g.project, &gitlab.CreateMergeRequestOptions{
			Title: gitlab.Ptr(glTitle(req)), Description: gitlab.Ptr(req.Body),
			SourceBranch: gitlab.Ptr(req.Head), TargetBranch: gitlab.Ptr(req.Base),
		}, gitlab.WithContext(ctx))
		if err == nil {
			out = g.toPR(&m.BasicMergeRequest, true)
		}
		return resp, err
	})
	var api *APIError
	if errors.As(err, &api) && api.Status == http.StatusConflict && strings.Contains(api.Message, "already exists") {
		// "Another open merge request already exists for this source
		// branch": opened by another process since our look-up, or by a
		// create retried after a 5xx that had gone through.
		if existing, ferr := g.FindPR(ctx, req.Head); ferr == nil && existing != nil {
			return g.update(ctx, existing, req)
		}
	}
	return out, err
}

func (g *GitLab) update(ctx context.Context, pr *PR, req PRRequest) (*PR, error) {
	err := g.do(ctx, "update merge request", func() (*gitlab.Response, error) {
		_, resp, err := g.client.MergeRequests.UpdateMergeRequest(g.project, int64(pr.Number), &gitlab.UpdateMergeRequestOptions{
			Title: gitlab.Ptr(glTitle(req)), Description: gitlab.Ptr(req.Body),
		}, gitlab.WithContext(ctx))
		return resp, err
	})
	return pr, err
}

// Comment implements Forge: a note on the merge request.
func (g *GitLab) Comment(ctx context.Context, number int, body string) error {
	return g.do(ctx, "comment", func() (*gitlab.Response, error) {
		_, resp, err := g.client.Notes.CreateMergeRequestNote(g.project, int64(number), &gitlab.CreateMergeRequestNoteOptions{Body: gitlab.Ptr(body)}, gitlab.WithContext(ctx))
		return resp, err
	})
}
