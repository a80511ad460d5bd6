package gitbackend

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/reflog"
)

// TestPersistReflogsAsGit: two persists (a message with a body and runs of
// white space, one with a message padded with spaces) leave in HEAD's,
// the branch's and the remote-tracking branch's logs the entries git
// commit and git push leave for the same two commits and pushes: the same
// messages byte for byte, the same moves, in the committer's name. From
// an empty remote the first commit is git's "commit (initial)". Over
// HTTP the push is go-git's, not the in-process receive: the same entries.
func TestPersistReflogsAsGit(t *testing.T) {
	messages := []string{"first  line\n\nthe body", "  two words  "}
	for _, c := range []struct{ empty, http bool }{{false, false}, {true, false}, {false, true}} {
		empty := c.empty
		t.Run(fmt.Sprintf("empty=%v,http=%v", c.empty, c.http), func(t *testing.T) {
			seed := func() string {
				if empty {
					return gittest.BareRemote(t)
				}
				return gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
			}
			// The kernel.
			remote := seed()
			if c.http {
				remote = gittest.NewHTTPServer(t, filepath.Dir(remote), "").URL(filepath.Base(remote))
			}
			a := newAgent(t, remote, false)
			for i, msg := range messages {
				p := fmt.Sprintf("f%d.txt", i)
				if err := a.fs.WriteFile(p, []byte(msg+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if _, err := a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: msg}); err != nil {
					t.Fatal(err)
				}
			}
			// git, on a remote seeded the same way.
			dir := filepath.Join(t.TempDir(), "clone")
			gittest.Git(t, "", "clone", "-q", seed(), dir)
			for i, msg := range messages {
				gittest.WriteFile(t, dir, fmt.Sprintf("f%d.txt", i), msg+"\n")
				gittest.Git(t, dir, "add", "-A")
				gittest.Git(t, dir, "commit", "-q", "-m", msg)
				gittest.Git(t, dir, "push", "-q", "origin", "HEAD:main")
			}
			for _, ref := range []string{"HEAD", "refs/heads/main", "refs/remotes/origin/main"} {
				got := movesOf(t, a.fs.Root(), ref, "Agent <agent@example.com>")
				want := movesOf(t, dir, ref, "Test <test@example.com>")
				if !slices.Equal(got, want) {
					t.Errorf("%s: the kernel logged\n\t%s\ngit logged\n\t%s", ref, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
				}
			}
		})
	}
}

// movesOf reads the log of ref in the work tree dir, but a clone's
// entries, as "<old> <new>\t<message>" with the commits named by their
// place in the branch's history (c0 the oldest, "-" none), and checks that
// each entry names who.
func movesOf(t *testing.T, dir, ref, who string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".git", "logs", ref))
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	names := map[string]string{strings.Repeat("0", 40): "-"}
	for i, h := range strings.Fields(gittest.Git(t, dir, "rev-list", "--reverse", "main")) {
		names[h] = fmt.Sprint("c", i)
	}
	var out []string
	for _, e := range reflog.Parse(b) {
		if strings.HasPrefix(e.Message, "clone: ") {
			continue
		}
		if !strings.HasPrefix(e.Who, who+" ") {
			t.Errorf("%s: entry %q in the name of %q, want %q", ref, e.Message, e.Who, who)
		}
		out = append(out, names[e.Old.String()]+" "+names[e.New.String()]+"\t"+e.Message)
	}
	return out
}

// TestRefreshReflogsAsGit: a refresh that moves the branch to the
// remote's tip logs the branch and HEAD as git pull's fast-forward does
// ("pull: Fast-forward"), after the clone's and the commit's entries: a
// twin made with the git CLI (clone, commit, push, pull on its own copy
// of the remote) reads the same.
func TestRefreshReflogsAsGit(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "r\n"})
	twinRemote := filepath.Join(t.TempDir(), "twin.git")
	if out, err := exec.Command("cp", "-a", remote, twinRemote).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	a := newAgent(t, remote, false)
	twin := filepath.Join(t.TempDir(), "twin")
	gittest.Git(t, "", "clone", "-q", "-b", "main", twinRemote, twin)
	gittest.Git(t, twin, "config", "user.name", "Agent")
	gittest.Git(t, twin, "config", "user.email", "agent@example.com")

	a.write(t, "tools/new.ts", "export default 1;\n")
	gittest.WriteFile(t, twin, "tools/new.ts", "export default 1;\n")
	gittest.Git(t, twin, "add", "tools/new.ts")
	gittest.Git(t, twin, "commit", "-q", "-m", "forge: tools/new.ts")
	gittest.Git(t, twin, "push", "-q")

	// Someone else pushes to both remotes; both pull it.
	for _, r := range []string{remote, twinRemote} {
		other := gittest.Clone(t, r)
		gittest.WriteFile(t, other, "other.txt", "o\n")
		gittest.Git(t, other, "add", "other.txt")
		gittest.Git(t, other, "commit", "-q", "-m", "other")
		gittest.Git(t, other, "push", "-q")
	}
	if _, err := a.repo.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, twin, "pull")

	logs := func(dir, remote string) string {
		var b strings.Builder
		for _, ref := range []string{"HEAD", "main"} {
			out := gittest.Git(t, dir, "reflog", "show", "--format=%gs", ref)
			b.WriteString(ref + ":\n" + strings.ReplaceAll(out, remote, "<remote>"))
		}
		return b.String()
	}
	if got, want := logs(a.fs.Root(), remote), logs(twin, twinRemote); got != want {
		t.Errorf("reflogs differ from git's:\n--- kernel\n%s--- git\n%s", got, want)
	}
}
