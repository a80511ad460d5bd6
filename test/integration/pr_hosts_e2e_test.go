package integration

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/forge/bitbuckettest"
	"github.com/tgp-go/tgp/forge/giteatest"
	"github.com/tgp-go/tgp/forge/gitlabtest"
	"github.com/tgp-go/tgp/forge/hosttest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// prHost is one code host's stand-in (API and git remote) seen through
// the handles the end-to-end test needs.
type prHost struct {
	name, term, ref  string // ref: how the host writes PR number 1 (!1, #1)
	remote, api, dir string
	tokenEnv, token  string
	// gitOnly is a token the git remote takes and the API refuses.
	gitOnly      string
	prs          func() []e2ePR
	merge        func(n int) error
	fail         func(hosttest.Fault)
	stale        func()
	receivePacks func() int32
}

type e2ePR struct {
	number      int
	head, state string
	body        string
}

func gitlabHost(t *testing.T) *prHost {
	rm := gitlabtest.NewRemote(t, "acme/platform/toolbox", "glpat-good")
	rm.API.AddToken("deploy-token", "write_repository") // git yes, API no
	return &prHost{name: "gitlab", term: "merge request", ref: "!", remote: rm.URL(), api: rm.API.APIURL(), dir: rm.Dir,
		tokenEnv: "GL_TOKEN", token: "glpat-good", gitOnly: "deploy-token",
		prs: func() []e2ePR {
			var out []e2ePR
			for _, m := range rm.API.MRs() {
				out = append(out, e2ePR{m.IID, m.SourceBranch, m.State, m.Description})
			}
			return out
		},
		merge: rm.API.Merge, fail: rm.API.Fail, stale: rm.API.StaleListOnce, receivePacks: rm.HTTP.ReceivePacks.Load}
}

func bitbucketHost(t *testing.T) *prHost {
	rm := bitbuckettest.NewRemote(t, "acme", "toolbox", "bb-good")
	rm.API.AddToken("repo-only", "repository", "repository:write") // git yes, pull requests no
	return &prHost{name: "bitbucket", term: "pull request", ref: "#", remote: rm.URL(), api: rm.API.APIURL(), dir: rm.Dir,
		tokenEnv: "BB_TOKEN", token: "bb-good", gitOnly: "repo-only",
		prs: func() []e2ePR {
			var out []e2ePR
			for _, p := range rm.API.PRs() {
				out = append(out, e2ePR{p.ID, p.Source, map[string]string{"OPEN": "opened", "MERGED": "merged"}[p.State], p.Description})
			}
			return out
		},
		merge: rm.API.Merge, fail: rm.API.Fail, stale: rm.API.StaleListOnce, receivePacks: rm.HTTP.ReceivePacks.Load}
}

func giteaHost(t *testing.T) *prHost {
	rm := giteatest.NewRemote(t, "acme", "toolbox", "gt-good")
	rm.API.AddToken("reader", false, "read:repository") // clones; its account cannot push
	return &prHost{name: "gitea", term: "pull request", ref: "#", remote: rm.URL(), api: rm.API.APIURL(), dir: rm.Dir,
		tokenEnv: "GITEA_TOKEN", token: "gt-good", gitOnly: "reader",
		prs: func() []e2ePR {
			var out []e2ePR
			for _, p := range rm.API.PRs() {
				st := "opened"
				if p.Merged {
					st = "merged"
				} else if p.State == "closed" {
					st = "closed"
				}
				out = append(out, e2ePR{p.Number, p.Head, st, p.Body})
			}
			return out
		},
		merge: rm.API.Merge, fail: rm.API.Fail, stale: rm.API.StaleListOnce, receivePacks: rm.HTTP.ReceivePacks.Load}
}

// env configures a `tgp call` on the host: write_strategy pr, provider
// left to auto (git.api_url's shape names the host), the token in the
// variable git.token_env names.
func (h *prHost) env(token string) []string {
	env := append(kernelEnv(h.remote), "TGP_GIT_WRITE_STRATEGY=pr", "TGP_GIT_API_URL="+h.api, "TGP_GIT_TOKEN_ENV="+h.tokenEnv)
	if token != "" {
		env = append(env, h.tokenEnv+"="+token)
	}
	return env
}

type callResult struct {
	OK     bool `json:"ok"`
	Result struct {
		Persisted bool   `json:"persisted"`
		Branch    string `json:"branch"`
		PRURL     string `json:"pr_url"`
		Note      string `json:"note"`
	} `json:"result"`
	Error *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func (h *prHost) write(t *testing.T, root, token, path string) callResult {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"path": path, "content": fmt.Sprintf("/** Tool %s. */\nexport default () => 1;\n", path)})
	cmd := exec.Command(tgpBin, "call", "write_file", string(args), "--root", root, "--session", "s1")
	cmd.Env = h.env(token)
	out, _ := cmd.Output()
	var r callResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: not one JSON object: %q", path, out)
	}
	return r
}

func (h *prHost) tgpRefs(t *testing.T) string {
	return gittest.Git(t, h.dir, "for-each-ref", "--format=%(refname)", "refs/heads/tgp")
}

// TestPRSessionOnEveryHost: on GitLab (a project in a subgroup), Bitbucket
// Cloud and Gitea, through the tgp binary with git.provider auto: a
// missing token and a token the host refuses fail before anything is
// pushed; two agents forge in one PR session (one branch, one pull
// request whose description lists both agents' tools); a create that meets the host's duplicate answer
// returns the open one; a 429 is waited out and reported; once the host
// merges it, the next write opens a new one; tgp never moves main.
func TestPRSessionOnEveryHost(t *testing.T) {
	for _, mk := range []func(*testing.T) *prHost{gitlabHost, bitbucketHost, giteaHost} {
		h := mk(t)
		t.Run(h.name, func(t *testing.T) {
			mainBefore := strings.TrimSpace(gittest.Git(t, h.dir, "rev-parse", "main"))
			tmp := t.TempDir()
			root := func(name string) string { return filepath.Join(tmp, name) }

			// No token: the clone already fails, naming the variable.
			r := h.write(t, root("no-token"), "", "tools/none.ts")
			if r.OK || !strings.Contains(r.Error.Message, "no token: set the environment variable "+h.tokenEnv) {
				t.Fatalf("without a token: %+v", r.Error)
			}
			r = h.write(t, root("refused"), h.gitOnly, "tools/refused.ts")
			if r.OK || !strings.Contains(r.Error.Message, "token in "+h.tokenEnv+" was refused") || !strings.Contains(r.Error.Message, "nothing was pushed") {
				t.Fatalf("with a token the API refuses: %+v", r.Error)
			}
			r = h.write(t, root("wrong"), "wrong", "tools/wrong.ts")
			if r.OK || !strings.Contains(r.Error.Message, "the remote refused the token in "+h.tokenEnv) {
				t.Fatalf("with a wrong token: %+v", r.Error)
			}
			if refs := h.tgpRefs(t); refs != "" || h.receivePacks() != 0 {
				t.Fatalf("pushed without a usable token: %q, %d receive-packs", refs, h.receivePacks())
			}

			// Two agents (two processes) on one root, one session. (A
			// second root joining the open session is left out: see
			// TestPRSessionJoinedFromASecondRoot.)
			a := h.write(t, root("a"), h.token, "tools/a.ts")
			b := h.write(t, root("a"), h.token, "tools/b.ts")
			if !a.OK || !b.OK || a.Result.Branch != "tgp/session-s1" || b.Result.Branch != a.Result.Branch || b.Result.PRURL != a.Result.PRURL {
				t.Fatalf("one session: %+v %+v %+v", a, b, b.Error)
			}
			if !strings.HasPrefix(a.Result.Note, "opened "+h.term+" "+h.ref+"1") || !strings.HasPrefix(b.Result.Note, "updated "+h.term+" "+h.ref+"1") {
				t.Fatalf("notes: %q %q", a.Result.Note, b.Result.Note)
			}
			prs := h.prs()
			if len(prs) != 1 || prs[0].head != "tgp/session-s1" || !strings.Contains(prs[0].body, "tools/a.ts") || !strings.Contains(prs[0].body, "tools/b.ts") {
				t.Fatalf("PRs: %+v", prs)
			}
			if n := strings.TrimSpace(gittest.Git(t, h.dir, "rev-list", "--count", "main..tgp/session-s1")); n != "2" {
				t.Fatalf("session branch has %s commits, want 2", n)
			}
			if meta := gittest.Git(t, h.dir, "show", "tgp/session-s1:meta.json"); !strings.Contains(meta, `"tools/a.ts"`) || !strings.Contains(meta, `"tools/b.ts"`) {
				t.Fatalf("the branch's meta.json:\n%s", meta)
			}

			// The host's list is behind (another agent just opened it):
			// the create meets the duplicate and the open one is kept.
			h.stale()
			c := h.write(t, root("a"), h.token, "tools/c.ts")
			if !c.OK || !strings.HasPrefix(c.Result.Note, "updated "+h.term+" "+h.ref+"1") || len(h.prs()) != 1 {
				t.Fatalf("duplicate open: %+v, %d PRs", c, len(h.prs()))
			}

			prCmd := exec.Command(tgpBin, "pr", "--root", root("a"))
			prCmd.Env = h.env(h.token)
			out, err := prCmd.CombinedOutput()
			var shown map[string]any
			if err != nil || json.Unmarshal(out, &shown) != nil || shown["number"] != float64(1) || shown["term"] != h.term || shown["provider"] != h.name {
				t.Fatalf("tgp pr: %v %s", err, out)
			}

			// The host merges it; the next write opens a new one.
			if err := h.merge(1); err != nil {
				t.Fatal(err)
			}
			mainMerged := strings.TrimSpace(gittest.Git(t, h.dir, "rev-parse", "main"))
			h.fail(hosttest.Fault{}) // the token check
			h.fail(hosttest.Fault{}) // the look-up
			h.fail(hosttest.Fault{Status: 429, RetryAfter: "0", Body: "Retry later\n"})
			d := h.write(t, root("c"), h.token, "tools/d.ts")
			if !d.OK || !strings.HasPrefix(d.Result.Note, "opened "+h.term+" "+h.ref+"2") || !strings.Contains(d.Result.Note, "HTTP 429 (rate limited), retried after 0s") {
				t.Fatalf("after the merge: %+v", d)
			}
			prs = h.prs()
			if len(prs) != 2 || prs[0].state != "merged" || prs[1].state != "opened" || prs[1].head != "tgp/session-s1" {
				t.Fatalf("PRs after the merge: %+v", prs)
			}

			// Only the host's merge moved main.
			if now := strings.TrimSpace(gittest.Git(t, h.dir, "rev-parse", "main")); now != mainMerged {
				t.Fatalf("tgp moved main: %s, want %s", now, mainMerged)
			}
			if first := strings.Fields(gittest.Git(t, h.dir, "rev-list", "--first-parent", "main")); len(first) != 2 || first[1] != mainBefore {
				t.Fatalf("main's history: %v", first)
			}
			gittest.Git(t, h.dir, "fsck", "--strict")
		})
	}
}
