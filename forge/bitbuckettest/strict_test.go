package bitbuckettest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func call(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRefusesWhatBitbucketRefuses: every answer below is Bitbucket's to
// the same request.
func TestRefusesWhatBitbucketRefuses(t *testing.T) {
	rm := NewRemote(t, "acme", "toolbox", "tok")
	rm.API.AddToken("git-only", "repository:write")
	gittest.Git(t, rm.Dir, "branch", "feature", "main")
	prs := rm.API.APIURL() + "/repositories/acme/toolbox/pullrequests"
	tok := []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}
	create := `{"title":"t","source":{"branch":{"name":"feature"}},"destination":{"branch":{"name":"main"}}}`
	for _, c := range []struct {
		name, method, url, body string
		header                  []string
		status                  int
		want                    string
	}{
		{"no token", "GET", prs, "", nil, 401, `"type":"error"`},
		{"GitLab's header", "GET", prs, "", []string{"PRIVATE-TOKEN", "tok"}, 401, "Token is invalid"},
		{"token without pullrequest scope", "GET", prs, "", []string{"Authorization", "Bearer git-only"}, 403, "lack one or more required privilege scopes"},
		{"bad query", "GET", prs + `?q=author.name%3D"x"`, "", tok, 400, "Invalid field name: author.name"},
		{"pagelen too big", "GET", prs + "?pagelen=100", "", tok, 400, "Invalid pagelen"},
		{"form body", "POST", prs, "title=t", []string{"Authorization", "Bearer tok", "Content-Type", "application/x-www-form-urlencoded"}, 415, "Unsupported Media Type"},
		{"no title", "POST", prs, `{"source":{"branch":{"name":"feature"}}}`, tok, 400, `"title":["This field is required."]`},
		{"unknown branch", "POST", prs, `{"title":"t","source":{"branch":{"name":"nope"}}}`, tok, 400, "Branch not found: nope"},
		{"created", "POST", prs, create, tok, 201, `"id":1`},
		{"duplicate answers the open one", "POST", prs, strings.Replace(create, `"t"`, `"t2"`, 1), tok, 200, `"title":"t2"`},
		{"only OPEN listed by default", "GET", prs + `?q=state%3D"MERGED"`, "", tok, 200, `"size":0`},
		{"comment without content", "POST", prs + "/1/comments", `{}`, tok, 400, "content: This field is required."},
	} {
		status, body := call(t, c.method, c.url, c.body, c.header...)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, status, body, c.status, c.want)
		}
	}
	// Git over HTTP wants x-token-auth as the user name.
	if _, err := gittest.GitErr("", "ls-remote", strings.Replace(rm.URL(), "http://", "http://x-access-token:tok@", 1)); err == nil {
		t.Error("the git remote took another user name")
	}
	gittest.Git(t, "", "ls-remote", strings.Replace(rm.URL(), "http://", "http://x-token-auth:tok@", 1))
}
