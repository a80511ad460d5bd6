package gitlabtest

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

// TestRefusesWhatGitLabRefuses: every answer below is GitLab's to the
// same request.
func TestRefusesWhatGitLabRefuses(t *testing.T) {
	rm := NewRemote(t, "acme/sub/toolbox", "tok")
	rm.API.AddToken("git-only", "write_repository")
	gittest.Git(t, rm.Dir, "branch", "feature", "main")
	mrs := rm.API.APIURL() + "/projects/acme%2Fsub%2Ftoolbox/merge_requests"
	tok := []string{"PRIVATE-TOKEN", "tok", "Content-Type", "application/json"}
	for _, c := range []struct {
		name, method, url, body string
		header                  []string
		status                  int
		want                    string
	}{
		{"no token", "GET", mrs, "", nil, 401, `"401 Unauthorized"`},
		{"GitHub's header", "GET", mrs, "", []string{"Authorization", "token tok"}, 401, "401 Unauthorized"},
		{"token without api scope", "GET", mrs, "", []string{"PRIVATE-TOKEN", "git-only"}, 403, "insufficient_scope"},
		{"unencoded subgroup path", "GET", rm.API.APIURL() + "/projects/acme/sub/toolbox/merge_requests", "", tok, 404, "404 Project Not Found"},
		{"bad state", "GET", mrs + "?state=open", "", tok, 400, "state does not have a valid value"},
		{"missing fields", "POST", mrs, `{"title":"t"}`, tok, 400, "source_branch is missing, target_branch is missing"},
		{"text body", "POST", mrs, `title=t`, []string{"PRIVATE-TOKEN", "tok", "Content-Type", "text/plain"}, 415, "415"},
		{"unknown branch", "POST", mrs, `{"title":"t","source_branch":"nope","target_branch":"main"}`, tok, 422, `Source branch \"nope\" does not exist`},
		{"created", "POST", mrs, `{"title":"t","source_branch":"feature","target_branch":"main"}`, []string{"Authorization", "Bearer tok", "Content-Type", "application/json"}, 201, `"iid":1`},
		{"duplicate", "POST", mrs, `{"title":"t","source_branch":"feature","target_branch":"main"}`, tok, 409, "Another open merge request already exists for this source branch: !1"},
		{"empty update", "PUT", mrs + "/1", `{}`, tok, 400, "at least one parameter must be provided"},
		{"note without body", "POST", mrs + "/1/notes", `{}`, tok, 400, "body is missing"},
		{"note", "POST", mrs + "/1/notes", `{"body":"hi"}`, tok, 201, `"noteable_iid":1`},
	} {
		status, body := call(t, c.method, c.url, c.body, c.header...)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, status, body, c.status, c.want)
		}
	}
	// Git over HTTP: any non-blank user with a token allowed to push.
	clone := t.TempDir()
	u := strings.Replace(rm.URL(), "http://", "http://oauth2:git-only@", 1)
	gittest.Git(t, "", "clone", "-q", u, clone)
	if _, err := gittest.GitErr("", "ls-remote", strings.Replace(rm.URL(), "http://", "http://oauth2:wrong@", 1)); err == nil {
		t.Error("the git remote took a wrong token")
	}
}
