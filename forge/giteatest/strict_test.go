package giteatest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

func call(t *testing.T, method, url, body string, header ...string) (int, string, http.Header) {
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
	return resp.StatusCode, string(b), resp.Header
}

// TestRefusesWhatGiteaRefuses: every answer below is Gitea's to the same
// request.
func TestRefusesWhatGiteaRefuses(t *testing.T) {
	rm := NewRemote(t, "acme", "toolbox", "tok")
	rm.API.AddToken("reader", false, "read:repository")
	gittest.Git(t, rm.Dir, "branch", "feature", "main")
	pulls := rm.API.APIURL() + "/repos/acme/toolbox/pulls"
	tok := []string{"Authorization", "token tok", "Content-Type", "application/json"}
	for _, c := range []struct {
		name, method, url, body string
		header                  []string
		status                  int
		want                    string
	}{
		{"no token", "GET", pulls, "", nil, 401, "invalid username, password or token"},
		{"GitLab's header", "GET", pulls, "", []string{"PRIVATE-TOKEN", "tok"}, 401, "invalid username"},
		{"read-only scope writes", "POST", pulls, `{"title":"t","head":"feature","base":"main"}`, []string{"Authorization", "token reader", "Content-Type", "application/json"}, 403, "required=[write:repository]"},
		{"text body", "POST", pulls, `x`, []string{"Authorization", "token tok", "Content-Type", "text/plain"}, 415, "Unsupported Media Type"},
		{"no title", "POST", pulls, `{"head":"feature","base":"main"}`, tok, 422, "[Title]: Required"},
		{"unknown head", "POST", pulls, `{"title":"t","head":"nope","base":"main"}`, tok, 404, "The target couldn't be found."},
		{"created", "POST", pulls, `{"title":"t","head":"feature","base":"main"}`, []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}, 201, `"number":1`},
		{"duplicate", "POST", pulls, `{"title":"t","head":"feature","base":"main"}`, tok, 409, "pull request already exists for these targets"},
		{"edit answers 201", "PATCH", pulls + "/1", `{"body":"b"}`, tok, 201, `"body":"b"`},
		{"comment without body", "POST", rm.API.APIURL() + "/repos/acme/toolbox/issues/1/comments", `{}`, tok, 422, "[Body]: Required"},
	} {
		status, body, _ := call(t, c.method, c.url, c.body, c.header...)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, status, body, c.status, c.want)
		}
	}
	if _, _, h := call(t, "GET", pulls+"?limit=1&page=1", "", tok...); h.Get("X-Total-Count") != "1" {
		t.Errorf("X-Total-Count %q", h.Get("X-Total-Count"))
	}
	// A reader may fetch over git but not push.
	clone := t.TempDir()
	gittest.Git(t, "", "clone", "-q", strings.Replace(rm.URL(), "http://", "http://any:reader@", 1), clone)
	gittest.Git(t, clone, "commit", "-q", "--allow-empty", "-m", "x")
	if _, err := gittest.GitErr(clone, "push", "-q", "origin", "HEAD:refs/heads/x"); err == nil {
		t.Error("a reader pushed")
	}
}
