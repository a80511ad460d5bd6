package toolbox

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/tgp-go/tgp/forge"
	"github.com/tgp-go/tgp/forge/github"
	"github.com/tgp-go/tgp/forge/githubtest"
	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/registry"
	"github.com/tgp-go/tgp/tools"
)

// prEnv is a remote over smart HTTP and a GitHub API stand-in for it.
type prEnv struct {
	remoteDir string
	http      *gittest.HTTPServer
	gh        *githubtest.Server
}

func newPREnv(t *testing.T) *prEnv {
	t.Helper()
	rm := githubtest.NewRemote(t, "acme", "toolbox", "gh-token")
	return &prEnv{remoteDir: rm.Dir, http: rm.HTTP, gh: rm.GH}
}

// config is a pull-request Box on the HTTP remote whose pull requests go
// to the stand-in (provider github), or to no host (provider local).
func (e *prEnv) config(t *testing.T, provider string) Config {
	t.Helper()
	cfg := testConfig(e.http.URL("toolbox.git"))
	cfg.Git.Token = "gh-token"
	cfg.Git.Retry.MaxAttempts = 3
	cfg.Strategy = PullRequest
	if provider == "github" {
		gh, err := github.New("acme", "toolbox", "gh-token", forge.WithAPIURL(e.gh.BaseURL()))
		if err != nil {
			t.Fatal(err)
		}
		cfg.PR.Opener, cfg.PR.Host = testOpener{gh}, "GitHub"
	} else {
		cfg.PR.Opener = noHost{reason: "provider " + provider + " has no pull-request API; the branch was pushed, open the PR on your host"}
	}
	return cfg
}

// TestPRSessionSharedAcrossProcesses: one-shot boxes on one
// root (`tgp call` processes) resuming the recorded session add their
// commits to one branch and one pull request; once the PR is closed the
// next change starts a new session; EndSession does so on demand; boxes
// given the same session name share a branch from different roots.
func TestPRSessionSharedAcrossProcesses(t *testing.T) {
	e := newPREnv(t)
	root := t.TempDir()
	oneShot := func(write string) (*Box, *tools.Persisted) {
		t.Helper()
		cfg := e.config(t, "github")
		cfg.PR.Resume = true
		r := newRig(t, cfg, false, root)
		var p *tools.Persisted
		if write != "" {
			p = r.write(t, write, "/** "+write+". */\nexport default () => 1;\n")
			_ = r.box.Close(context.Background())
		}
		return r.box, p
	}
	_, p1 := oneShot("tools/a.ts")
	_, p2 := oneShot("tools/b.ts")
	if p1.Branch == "" || p2.Branch != p1.Branch || p2.PRURL != p1.PRURL || len(e.gh.PRs()) != 1 {
		t.Fatalf("two calls: %+v %+v, %d PRs", p1, p2, len(e.gh.PRs()))
	}
	if n := gittest.Git(t, e.remoteDir, "rev-list", "--count", "main.."+p1.Branch); strings.TrimSpace(n) != "2" {
		t.Fatalf("branch has %s commits, want 2", n)
	}

	e.gh.ClosePR(e.gh.PRs()[0].Number)
	_, p3 := oneShot("tools/c.ts")
	if p3.Branch == p1.Branch || len(e.gh.PRs()) != 2 {
		t.Fatalf("after the PR closed: %+v, %d PRs", p3, len(e.gh.PRs()))
	}
	cfg := e.config(t, "github")
	cfg.PR.Resume = true
	k4 := newRig(t, cfg, false, root)
	if ended := k4.box.EndSession(); ended != p3.Branch {
		t.Fatalf("EndSession ended %q, want %q", ended, p3.Branch)
	}
	if p4 := k4.write(t, "tools/d.ts", "/** D. */\nexport default () => 4;\n"); p4.Branch == p3.Branch {
		t.Fatal("EndSession did not start a new session")
	}

	named := func() *rig {
		cfg := e.config(t, "github")
		cfg.PR.Session = "Alpha Team"
		return newRig(t, cfg, false)
	}
	a, b := named(), named()
	pa := a.write(t, "tools/x.ts", "/** X. */\nexport default () => 5;\n")
	pb := b.write(t, "tools/y.ts", "/** Y. */\nexport default () => 6;\n")
	if pa.Branch != "tgp/session-alpha-team" || pb.Branch != pa.Branch || pb.PRURL != pa.PRURL {
		t.Fatalf("named session: %+v %+v", pa, pb)
	}
	if pr, branch, err := b.box.SessionPR(context.Background()); err != nil || pr == nil || branch != pa.Branch {
		t.Fatalf("session PR %+v %s %v", pr, branch, err)
	}
}

func TestPRModeTwoKernelsTwoBranches(t *testing.T) {
	e := newPREnv(t)
	mainBefore := gittest.Git(t, e.remoteDir, "rev-parse", "main")
	a, b := newRig(t, e.config(t, "github"), true), newRig(t, e.config(t, "github"), false)
	var wg sync.WaitGroup
	var pa, pb *tools.Persisted
	wg.Add(2)
	go func() { defer wg.Done(); pa = a.write(t, "tools/a.ts", "/** A. */\nexport default () => 1;\n") }()
	go func() { defer wg.Done(); pb = b.write(t, "tools/b.ts", "/** B. */\nexport default () => 2;\n") }()
	wg.Wait()
	if pa.Branch == pb.Branch || pa.PRURL == pb.PRURL || len(e.gh.PRs()) != 2 {
		t.Fatalf("%+v %+v %+v", pa, pb, e.gh.PRs())
	}
	if after := gittest.Git(t, e.remoteDir, "rev-parse", "main"); after != mainBefore {
		t.Fatal("PR mode pushed to main")
	}
}

func TestPRModeLocalProviderAndPushFailure(t *testing.T) {
	e := newPREnv(t)
	k := newRig(t, e.config(t, "local"), false)
	p := k.write(t, "tools/x.ts", "/** X. */\nexport default () => 1;\n")
	if !p.Persisted || p.PRURL != "" || !strings.Contains(p.Note, "no PR opened") || !strings.Contains(p.Note, "pushed") {
		t.Fatalf("%+v", p)
	}
	if len(e.gh.PRs()) != 0 {
		t.Fatal("a PR was opened for provider local")
	}
	// A push that keeps failing is an error, never a silent local success.
	e.http.FailReceivePacks.Store(100)
	_, err := k.try("write_file", map[string]string{"path": "tools/y.ts", "content": "/** Y. */\nexport default () => 2;\n"})
	if tools.KindOf(err) != tools.KindExecutionFailed || !strings.Contains(err.Error(), "push pull-request branch") {
		t.Fatalf("want a push error, got %v", err)
	}
}

// TestPRModeReportsTheForgeError: a configuration that could not make a
// pull-request host fails the change before anything is pushed, with that
// error; a git_commit (no paths) stays local.
func TestPRModeReportsTheForgeError(t *testing.T) {
	e := newPREnv(t)
	cfg := e.config(t, "github")
	cfg.PR.Opener, cfg.PR.OpenerErr = nil, errBadRepo
	k := newRig(t, cfg, false)
	_, err := k.try("write_file", map[string]string{"path": "tools/x.ts", "content": "/** X. */\nexport default () => 1;\n"})
	if err == nil || !strings.Contains(err.Error(), errBadRepo.Error()) || !strings.Contains(err.Error(), "nothing was pushed") {
		t.Fatalf("want the forge's configuration error, got %v", err)
	}
	if refs := gittest.Git(t, e.remoteDir, "for-each-ref", "refs/heads/tgp"); refs != "" || e.http.ReceivePacks.Load() != 0 {
		t.Fatalf("pushed despite the error: %s", refs)
	}
	per, err := k.box.Persist(context.Background(), tools.Change{Tool: "git_commit", Message: "m"})
	if err != nil || per.Persisted || !strings.Contains(per.Note, "stay local") {
		t.Fatalf("git_commit in pr mode: %+v %v", per, err)
	}
}

var errBadRepo = forgeConfigError("git.repo: not a repository (want owner/name)")

type forgeConfigError string

func (e forgeConfigError) Error() string { return string(e) }

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"tools/math/add.ts": "math-add",
		"tools/Ünïcode.ts":  "n-code",
		"tools/.ts":         "change",
		"tools/" + strings.Repeat("abcdefghij", 5) + ".ts": "abcdefghijabcdefghijabcdefghijabcdefghij",
		"Alpha Team": "alpha-team",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPRSessionBranchKeepsEveryRootsTools: roots sharing one session
// branch each commit meta.json with their tools; the branch's meta.json
// lists every tool on the branch, whichever root wrote last, whether the
// root joined the branch (built on its tip) or found it moved under its
// own push (rebuilt on the new tip). meta.json is checked against the
// registry the branch's own tree makes, read with the git CLI.
func TestPRSessionBranchKeepsEveryRootsTools(t *testing.T) {
	e := newPREnv(t)
	root := func() *rig {
		cfg := e.config(t, "local")
		cfg.PR.Session = "Shared"
		return newRig(t, cfg, false)
	}
	a, b := root(), root()
	const branch = "tgp/session-shared"
	check := func(step string, want ...string) {
		t.Helper()
		listed := strings.Fields(gittest.Git(t, e.remoteDir, "ls-tree", "-r", "--name-only", branch, "tools/"))
		if strings.Join(listed, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: branch has tools %v, want %v", step, listed, want)
		}
		reg := registry.New()
		for _, p := range listed {
			reg.Update(p, []byte(gittest.Git(t, e.remoteDir, "show", branch+":"+p)))
		}
		if got := gittest.Git(t, e.remoteDir, "show", branch+":"+registry.FileName); got != string(reg.Marshal()) {
			t.Fatalf("%s: the branch's meta.json\n%s\nwant the registry of its tools\n%s", step, got, reg.Marshal())
		}
	}
	for _, w := range []struct {
		r    *rig
		who  string
		path string
		want []string
	}{
		{a, "a", "tools/x.ts", []string{"tools/x.ts"}},
		{b, "b", "tools/y.ts", []string{"tools/x.ts", "tools/y.ts"}},               // b joins the branch
		{a, "a", "tools/z.ts", []string{"tools/x.ts", "tools/y.ts", "tools/z.ts"}}, // a's push is rejected: rebuilt
		{b, "b", "tools/x.ts", []string{"tools/x.ts", "tools/y.ts", "tools/z.ts"}}, // b changes a's tool
	} {
		p := w.r.write(t, w.path, "/** "+w.path+", written by "+w.who+". */\nexport default () => 1;\n")
		if p.Branch != branch || !p.Persisted {
			t.Fatalf("%s: %+v", w.path, p)
		}
		check("after writing "+w.path, w.want...)
	}
	if n := strings.TrimSpace(gittest.Git(t, e.remoteDir, "rev-list", "--count", "main.."+branch)); n != "4" {
		t.Fatalf("branch has %s commits, want 4", n)
	}
}

// testOpener is a forge as the toolbox's opener (the kernel has its own
// adapter; the toolbox's tests cannot import the kernel).
type testOpener struct{ f forge.Forge }

func (o testOpener) OpenOrUpdatePR(ctx context.Context, req PRRequest) (*PR, error) {
	pr, err := o.f.OpenOrUpdatePR(ctx, forge.PRRequest{Title: req.Title, Head: req.Head, Base: req.Base, Body: req.Body})
	return testPR(pr), err
}

func (o testOpener) FindPR(ctx context.Context, head string) (*PR, error) {
	pr, err := o.f.FindPR(ctx, head)
	return testPR(pr), err
}

func testPR(pr *forge.PR) *PR {
	if pr == nil {
		return nil
	}
	return &PR{Number: pr.Number, URL: pr.URL, Head: pr.Head, State: pr.State, Created: pr.Created, Name: pr.Name()}
}
