package gitbackend

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/fsck"
)

// Hostile tests for the receive policy of local remotes (receive.go): the
// remote's hooks and receive.* settings hold against the in-process push
// exactly where they hold against `git push`, which is the oracle.

// writeHook installs an executable shell hook in the remote.
func writeHook(t *testing.T, gitdir, name, body string) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh to run hooks")
	}
	p := filepath.Join(gitdir, "hooks", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// objectFiles lists every file of the remote's object store (loose
// objects, packs, and anything left in a quarantine directory).
func objectFiles(t *testing.T, gitdir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(gitdir, "objects")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), "tmp_objdir") {
				out = append(out, rel+"/")
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// countObjects is `git count-objects -v` without the size lines, which
// depend on the filesystem.
func countObjects(t *testing.T, gitdir string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(gittest.Git(t, gitdir, "count-objects", "-v"), "\n") {
		if strings.HasPrefix(l, "count:") || strings.HasPrefix(l, "in-pack:") || strings.HasPrefix(l, "packs:") || strings.HasPrefix(l, "garbage:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " ")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// persist writes a file through the agent and returns Persist's error.
func (a *agent) persist(t *testing.T, p, content string) (*PersistResult, error) {
	t.Helper()
	if err := a.fs.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return a.repo.Persist(context.Background(), Change{Paths: []string{p}, Message: "forge: " + p})
}

// cliCommit commits a file in a fresh clone of remote and returns the clone.
func cliCommit(t *testing.T, remote, p, content string) string {
	t.Helper()
	clone := gittest.Clone(t, remote)
	if err := os.WriteFile(filepath.Join(clone, p), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "cli "+p)
	return clone
}

// gitOut runs the git CLI and returns everything it printed, stdout and
// stderr, whether it failed or not (a push's "remote: " lines are on
// stderr, also when the push succeeds).
func gitOut(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = gittest.Env(home)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// remoteLines are the "remote: " lines of a git push's output, trimmed as
// git pads them.
func remoteLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "remote: "); ok {
			lines = append(lines, strings.TrimRight(rest, " "))
		}
	}
	return lines
}

func envOf(dump string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(dump, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

func TestPreReceiveRejectingEveryPush(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	writeHook(t, remote, "pre-receive", `echo run >> pre-receive.runs
cat > pre-receive.in
env | grep '^GIT_' > pre-receive.env
read old new ref < pre-receive.in
git cat-file -t "$new" > pre-receive.newtype 2>&1
echo "policy: pushes are closed"
echo "ask the owners" >&2
exit 1
`)
	tipBefore := gittest.Git(t, remote, "rev-parse", "main")
	objsBefore, countBefore := objectFiles(t, remote), countObjects(t, remote)

	_, err := a.persist(t, "b.txt", "b\n")
	if !errors.Is(err, ErrDeclined) {
		t.Fatalf("persist: %v, want ErrDeclined", err)
	}
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "pre-receive hook declined" || rej.Ref != "refs/heads/main" {
		t.Fatalf("rejection %+v", rej)
	}
	if got := strings.Join(rej.Output, "|"); got != "policy: pushes are closed|ask the owners" {
		t.Fatalf("hook output %q", got)
	}
	if !strings.Contains(err.Error(), "remote: policy: pushes are closed") {
		t.Fatalf("error does not carry the hook's output: %v", err)
	}
	if got := gittest.Git(t, remote, "rev-parse", "main"); got != tipBefore {
		t.Fatalf("remote ref moved: %s -> %s", tipBefore, got)
	}
	if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("objects changed on the remote:\nbefore %v\nafter  %v", objsBefore, got)
	}
	if got := countObjects(t, remote); got != countBefore {
		t.Fatalf("count-objects %q, was %q", got, countBefore)
	}
	if runs := readFile(t, filepath.Join(remote, "pre-receive.runs")); runs != "run\n" {
		t.Fatalf("the hook ran %d times: a policy refusal must not be retried", strings.Count(runs, "run"))
	}
	head := mustHead(t, a.repo)
	if got, want := readFile(t, filepath.Join(remote, "pre-receive.in")), strings.TrimSpace(tipBefore)+" "+head.String()+" refs/heads/main\n"; got != want {
		t.Fatalf("pre-receive stdin %q, want %q", got, want)
	}
	// The hook saw the pushed objects, in the quarantine.
	if got := readFile(t, filepath.Join(remote, "pre-receive.newtype")); got != "commit\n" {
		t.Fatalf("the hook could not read the pushed commit: %q", got)
	}
	ours := envOf(readFile(t, filepath.Join(remote, "pre-receive.env")))
	q := ours["GIT_QUARANTINE_PATH"]
	if !strings.HasPrefix(q, filepath.Join(remote, "objects", "tmp_objdir-incoming-")) || ours["GIT_OBJECT_DIRECTORY"] != q ||
		ours["GIT_ALTERNATE_OBJECT_DIRECTORIES"] != filepath.Join(remote, "objects") || ours["GIT_DIR"] != "." || ours["GIT_PUSH_OPTION_COUNT"] != "0" {
		t.Fatalf("hook environment %v", ours)
	}
	if _, err := os.Stat(q); !os.IsNotExist(err) {
		t.Fatalf("quarantine %s left behind: %v", q, err)
	}

	// The oracle: git push meets the same hook the same way.
	clone := cliCommit(t, remote, "c.txt", "c\n")
	out, err := gittest.GitErr(clone, "push", "origin", "main")
	if err == nil || !strings.Contains(out, "(pre-receive hook declined)") {
		t.Fatalf("git push: %v\n%s", err, out)
	}
	if got := strings.Join(remoteLines(out), "|"); got != strings.Join(rej.Output, "|") {
		t.Fatalf("git shows %q, we carry %q", got, strings.Join(rej.Output, "|"))
	}
	if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("git push left objects: %v", got)
	}
	theirs := envOf(readFile(t, filepath.Join(remote, "pre-receive.env")))
	for _, k := range []string{"GIT_DIR", "GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PUSH_OPTION_COUNT"} {
		if _, ok := theirs[k]; !ok {
			t.Errorf("git sets %s only in our run? git's env: %v", k, theirs)
		}
	}
	testEnv := envOf(strings.Join(gittest.Env(""), "\n")) // what the test gave git, not git's own
	for k := range theirs {
		if _, ok := ours[k]; !ok && k != "GIT_EXEC_PATH" && testEnv[k] == "" {
			t.Errorf("git gives the hook %s, we do not", k)
		}
	}
}

func TestUpdateHookRejectingOneRef(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	writeHook(t, remote, "update", `echo "$1 $2 $3" >> update.args
case "$1" in
refs/heads/main) echo "main is protected: use a pull request" >&2; exit 1;;
esac
`)
	tipBefore := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
	objsBefore := objectFiles(t, remote)

	_, err := a.persist(t, "b.txt", "b\n")
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "hook declined" {
		t.Fatalf("persist: %v", err)
	}
	want := "main is protected: use a pull request|error: hook declined to update refs/heads/main"
	if got := strings.Join(rej.Output, "|"); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != tipBefore {
		t.Fatalf("main moved to %s", got)
	}
	if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("a refused update left objects behind: %v", got)
	}
	head := mustHead(t, a.repo)
	if got := readFile(t, filepath.Join(remote, "update.args")); got != "refs/heads/main "+tipBefore+" "+head.String()+"\n" {
		t.Fatalf("update args %q", got)
	}

	// Another ref passes the same hook.
	if err := a.fs.WriteFile("f.txt", []byte("f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.repo.PersistBranch(context.Background(), Change{Paths: []string{"f.txt"}, Message: "feature"}, "feature")
	if err != nil {
		t.Fatalf("push to feature: %v", err)
	}
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "refs/heads/feature")); got != res.Commit {
		t.Fatalf("feature at %s, want %s", got, res.Commit)
	}
	if got := gittest.Git(t, remote, "show", "feature:f.txt"); got != "f\n" {
		t.Fatalf("feature content %q", got)
	}

	// The oracle.
	clone := cliCommit(t, remote, "c.txt", "c\n")
	out, err := gittest.GitErr(clone, "push", "origin", "main")
	if err == nil || !strings.Contains(out, "(hook declined)") {
		t.Fatalf("git push: %v\n%s", err, out)
	}
	if got := strings.Join(remoteLines(out), "|"); got != want {
		t.Fatalf("git shows %q, we carry %q", got, want)
	}
}

func TestPostReceiveRunsAfterTheRefMoved(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	var mu sync.Mutex
	var progress []string
	f := newAgentWithProgress(t, remote, func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() })
	writeHook(t, remote, "post-receive", `cat > post-receive.in
git rev-parse refs/heads/main > post-receive.ref
env | grep '^GIT_' > post-receive.env
echo "CI triggered"
exit 3
`)
	writeHook(t, remote, "post-update", `echo "$@" > post-update.args
`)
	tipBefore := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
	res, err := f.persist(t, "b.txt", "b\n")
	if err != nil {
		t.Fatalf("persist (a failing post-receive does not undo a push): %v", err)
	}
	if got := readFile(t, filepath.Join(remote, "post-receive.in")); got != tipBefore+" "+res.Commit+" refs/heads/main\n" {
		t.Fatalf("post-receive stdin %q", got)
	}
	if got := readFile(t, filepath.Join(remote, "post-receive.ref")); got != res.Commit+"\n" {
		t.Fatalf("post-receive saw main at %q, want the pushed %s", got, res.Commit)
	}
	if got := readFile(t, filepath.Join(remote, "post-update.args")); got != "refs/heads/main\n" {
		t.Fatalf("post-update args %q", got)
	}
	env := envOf(readFile(t, filepath.Join(remote, "post-receive.env")))
	if _, ok := env["GIT_QUARANTINE_PATH"]; ok || env["GIT_DIR"] != "." || env["GIT_PUSH_OPTION_COUNT"] != "0" {
		t.Fatalf("post-receive environment %v", env)
	}
	mu.Lock()
	defer mu.Unlock()
	if !contains(progress, "remote: CI triggered") {
		t.Fatalf("the hook's output did not reach the pusher: %q", progress)
	}
}

func newAgentWithProgress(t *testing.T, remote string, progress func(string)) *agent {
	t.Helper()
	a := newAgent(t, remote, true)
	a.repo.cfg.Progress = progress
	return a
}

// rawTree writes a tree object byte for byte (git mktree would sort and
// check it) into the local store and returns its hash.
type rawEntry struct {
	mode string
	name string
	hash plumbing.Hash
}

func rawTree(t *testing.T, s *filesystem.Storage, entries ...rawEntry) plumbing.Hash {
	t.Helper()
	var b bytes.Buffer
	for _, e := range entries {
		b.WriteString(e.mode + " " + e.name + "\x00")
		b.Write(e.hash[:])
	}
	o := s.NewEncodedObject()
	o.SetType(plumbing.TreeObject)
	w, _ := o.Writer()
	w.Write(b.Bytes())
	w.Close()
	h, err := s.SetEncodedObject(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// commitTree commits tree on top of the agent's head and moves its branch.
func commitTree(t *testing.T, a *agent, tree plumbing.Hash) plumbing.Hash {
	t.Helper()
	head := mustHead(t, a.repo)
	c, err := a.repo.writeCommit(tree, []plumbing.Hash{head}, "hostile tree", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.repo.setBranch("main", c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFsckObjectsRefusesDotGITConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config [][2]string
		refuse bool
	}{
		{"receive.fsckObjects", [][2]string{{"receive.fsckObjects", "true"}}, true},
		{"transfer.fsckObjects", [][2]string{{"transfer.fsckObjects", "true"}}, true},
		{"receive overrides transfer", [][2]string{{"transfer.fsckObjects", "true"}, {"receive.fsckObjects", "false"}}, false},
		{"hasDotgit demoted", [][2]string{{"receive.fsckObjects", "true"}, {"receive.fsck.hasDotgit", "ignore"}}, false},
		{"no fsck", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
			for _, kv := range tc.config {
				gittest.Git(t, remote, "config", kv[0], kv[1])
			}
			a := newAgent(t, remote, false)
			blob, err := storeBlob(a.repo.store, []byte("[core]\n\thooksPath = /tmp/evil\n"))
			if err != nil {
				t.Fatal(err)
			}
			inner := rawTree(t, a.repo.store, rawEntry{"100644", "config", blob})
			a1, _ := storeBlob(a.repo.store, []byte("a\n"))
			top := rawTree(t, a.repo.store, rawEntry{"40000", ".GIT", inner}, rawEntry{"100644", "a.txt", a1})
			c := commitTree(t, a, top)
			tipBefore := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
			objsBefore := objectFiles(t, remote)

			err = a.repo.Flush(context.Background())
			if !tc.refuse {
				if err != nil {
					t.Fatalf("flush: %v", err)
				}
				if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != c.String() {
					t.Fatalf("main at %s, want %s", got, c)
				}
				return
			}
			var rej *PushRejectedError
			if !errors.As(err, &rej) || rej.Reason != "unpacker error" {
				t.Fatalf("flush: %v", err)
			}
			wantLine := "error: object " + top.String() + ": hasDotgit: contains '.git'"
			if len(rej.Output) != 2 || rej.Output[0] != wantLine || rej.Output[1] != "fatal: fsck error in packed object" {
				t.Fatalf("output %q", rej.Output)
			}
			if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != tipBefore {
				t.Fatalf("main moved to %s", got)
			}
			if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
				t.Fatalf("objects left behind: %v", got)
			}
			out, gerr := gittest.GitErr("", "--git-dir="+filepath.Join(a.fs.Root(), ".git"), "push", remote, c.String()+":refs/heads/main")
			if gerr == nil || !strings.Contains(out, "(unpacker error)") {
				t.Fatalf("git push: %v\n%s", gerr, out)
			}
			if got := remoteLines(out); len(got) < 1 || got[0] != wantLine {
				t.Fatalf("git shows %q, we %q", got, rej.Output)
			}
		})
	}
}

// TestFsckAgreesWithGitReceivePack pushes hostile trees with the git CLI
// to a remote with receive.fsckObjects and compares git's verdict and
// messages with ours on the same objects.
func TestFsckAgreesWithGitReceivePack(t *testing.T) {
	gittest.RequireGit(t)
	work := filepath.Join(t.TempDir(), "work.git")
	gittest.Git(t, "", "init", "-q", "--bare", work)
	st := filesystem.NewStorage(osfs.New(work), cache.NewObjectLRUDefault())
	blob := func(s string) plumbing.Hash {
		h, err := storeBlob(st, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	b := blob("x\n")
	sub := rawTree(t, st, rawEntry{"100644", "f", b})
	link := blob("target")
	e := func(mode, name string, h plumbing.Hash) rawEntry { return rawEntry{mode, name, h} }
	cases := map[string][]rawEntry{
		"clean":             {e("100644", "a", b), e("40000", "d", sub)},
		".GIT":              {e("40000", ".GIT", sub)},
		"git~1":             {e("40000", "git~1", sub)},
		"GIT~1 file":        {e("100644", "GIT~1", b)},
		".git+ZWNJ":         {e("40000", ".git\u200c", sub)},
		".git. ntfs":        {e("100644", ".git. ", b)},
		".git::$INDEX":      {e("100644", ".git::$INDEX_ALLOCATION", b)},
		"backslash .git":    {e("100644", "a\\.git", b)},
		"dot":               {e("100644", ".", b)},
		"dotdot":            {e("40000", "..", sub)},
		"slash":             {e("100644", "a/b", b)},
		"zero-padded":       {e("040000", "d", sub)},
		"100664":            {e("100664", "a", b)},
		"100600":            {e("100600", "a", b)},
		"duplicate":         {e("100644", "a", b), e("100644", "a", b)},
		"unsorted":          {e("100644", "b", b), e("100644", "a", b)},
		"file and dir":      {e("100644", "a", b), e("40000", "a", sub)},
		"foo foo.bar foo/":  {e("100644", "foo", b), e("100644", "foo.bar", b), e("40000", "foo", sub)},
		"dir sorts as /":    {e("40000", "a", sub), e("100644", "a.c", b)},
		".gitmodules link":  {e("120000", ".gitmodules", link)},
		"gitmod~1 link":     {e("120000", "GITMOD~1", link)},
		".gitattributes ln": {e("120000", ".gitattributes", link)},
		".gitmodules url":   {e("100644", ".gitmodules", blob("[submodule \"x\"]\n\tpath = x\n\turl = -oProxyCommand=evil\n"))},
		".gitmodules name":  {e("100644", ".gitmodules", blob("[submodule \"../../x\"]\n\tpath = x\n\turl = https://example.com/x\n"))},
		".gitmodules path":  {e("100644", ".gitmodules", blob("[submodule \"x\"]\n\tpath = -x\n\turl = https://example.com/x\n"))},
		".gitmodules ok":    {e("100644", ".gitmodules", blob("[submodule \"x\"]\n\tpath = x\n\turl = https://example.com/x\n"))},
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	refused := 0
	defer func() {
		if refused < 15 {
			t.Errorf("git refused only %d of %d hostile trees: the cases do not test much", refused, len(names))
		}
	}()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tree := rawTree(t, st, cases[name]...)
			commit := strings.TrimSpace(gittest.Git(t, work, "commit-tree", tree.String(), "-m", name))
			dst := filepath.Join(t.TempDir(), "dst.git")
			gittest.Git(t, "", "init", "-q", "--bare", dst)
			gittest.Git(t, dst, "config", "receive.fsckObjects", "true")
			out, err := gitOut(t, work, "push", dst, commit+":refs/heads/main")
			gitRefused := err != nil
			if gitRefused {
				refused++
			}
			var gitLines []string
			for _, l := range remoteLines(out) {
				if strings.HasPrefix(l, "error: object ") || strings.HasPrefix(l, "warning: object ") {
					gitLines = append(gitLines, l)
				}
			}
			if gitRefused && !strings.Contains(out, "unpacker error") {
				t.Fatalf("git refused for another reason: %s", out)
			}

			missing, _, err := collectMissing(context.Background(), st, memory.NewStorage(), plumbing.NewHash(commit), 0)
			if err != nil {
				t.Fatal(err)
			}
			lines, failed, err := fsck.Objects(st, missing, &fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}})
			if err != nil {
				t.Fatal(err)
			}
			if failed != gitRefused || strings.Join(lines, "|") != strings.Join(gitLines, "|") {
				t.Fatalf("git: refused=%v %q\nours: refused=%v %q", gitRefused, gitLines, failed, lines)
			}
		})
	}
}

// unrelatedCommit makes a root commit in the agent's store that does not
// descend from anything on the remote.
func unrelatedCommit(t *testing.T, a *agent) plumbing.Hash {
	t.Helper()
	h, err := storeBlob(a.repo.store, []byte("rewritten\n"))
	if err != nil {
		t.Fatal(err)
	}
	tree := rawTree(t, a.repo.store, rawEntry{"100644", "r.txt", h})
	c, err := a.repo.writeCommit(tree, nil, "rewrite", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func localRemoteOf(t *testing.T, a *agent) *localRemote {
	t.Helper()
	lr, ok := a.repo.remote.(*localRemote)
	if !ok {
		t.Fatalf("remote is %T", a.repo.remote)
	}
	return lr
}

func TestDenyNonFastForwards(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	lr := localRemoteOf(t, a)
	tip := plumbing.NewHash(strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")))
	c := unrelatedCommit(t, a)

	gittest.Git(t, remote, "config", "receive.denyNonFastForwards", "true")
	objsBefore := objectFiles(t, remote)
	err := lr.Push(context.Background(), "main", tip, c)
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "non-fast-forward" {
		t.Fatalf("push: %v", err)
	}
	want := "error: denying non-fast-forward refs/heads/main (you should pull first)"
	if strings.Join(rej.Output, "|") != want {
		t.Fatalf("output %q", rej.Output)
	}
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != tip.String() {
		t.Fatalf("main moved to %s", got)
	}
	if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("objects left behind: %v", got)
	}
	// The oracle: a forced git push of the same commit.
	out, gerr := gittest.GitErr("", "--git-dir="+filepath.Join(a.fs.Root(), ".git"), "push", "-f", remote, c.String()+":refs/heads/main")
	if gerr == nil || !strings.Contains(out, "(non-fast-forward)") || strings.Join(remoteLines(out), "|") != want {
		t.Fatalf("git push -f: %v\n%s", gerr, out)
	}

	// A fast-forward still passes, and without the setting the rewrite does.
	a.write(t, "b.txt", "b\n")
	gittest.Git(t, remote, "config", "receive.denyNonFastForwards", "false")
	tip = plumbing.NewHash(strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")))
	if err := lr.Push(context.Background(), "main", tip, c); err != nil {
		t.Fatalf("non-fast-forward without the setting: %v", err)
	}
}

func TestDenyDeletes(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	lr := localRemoteOf(t, a)
	tip := plumbing.NewHash(strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")))
	gittest.Git(t, remote, "branch", "feature", "main")
	gittest.Git(t, remote, "pack-refs", "--all") // the ref lives in packed-refs
	gittest.Git(t, remote, "branch", "other", "main")

	gittest.Git(t, remote, "config", "receive.denyDeletes", "true")
	err := lr.Push(context.Background(), "feature", tip, plumbing.ZeroHash)
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "deletion prohibited" || strings.Join(rej.Output, "|") != "error: denying ref deletion for refs/heads/feature" {
		t.Fatalf("delete with denyDeletes: %v", err)
	}
	if _, err := gittest.GitErr(remote, "rev-parse", "--verify", "refs/heads/feature"); err != nil {
		t.Fatal("feature was deleted")
	}
	out, gerr := gittest.GitErr("", "--git-dir="+filepath.Join(a.fs.Root(), ".git"), "push", remote, ":refs/heads/feature")
	if gerr == nil || !strings.Contains(out, "(deletion prohibited)") {
		t.Fatalf("git push :feature: %v\n%s", gerr, out)
	}

	// Allowed: the packed and the loose ref go; the current branch stays
	// protected by receive.denyDeleteCurrent's default.
	gittest.Git(t, remote, "config", "receive.denyDeletes", "false")
	for _, b := range []string{"feature", "other"} {
		if err := lr.Push(context.Background(), b, tip, plumbing.ZeroHash); err != nil {
			t.Fatalf("delete %s: %v", b, err)
		}
		if out, err := gittest.GitErr(remote, "rev-parse", "--verify", "-q", "refs/heads/"+b); err == nil {
			t.Fatalf("%s still there: %s", b, out)
		}
	}
	err = lr.Push(context.Background(), "main", tip, plumbing.ZeroHash)
	if !errors.As(err, &rej) || rej.Reason != "deletion of the current branch prohibited" {
		t.Fatalf("delete main: %v", err)
	}
	gittest.Git(t, remote, "fsck", "--strict")
}

func TestDenyCurrentBranchOfNonBareRemote(t *testing.T) {
	gittest.RequireGit(t)
	remote := filepath.Join(t.TempDir(), "checkout")
	gittest.Git(t, "", "init", "-q", "-b", "main", remote)
	if err := os.WriteFile(filepath.Join(remote, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, remote, "add", "-A")
	gittest.Git(t, remote, "commit", "-q", "-m", "seed")
	a := newAgent(t, remote, false)
	_, err := a.persist(t, "b.txt", "b\n")
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "branch is currently checked out" {
		t.Fatalf("persist: %v", err)
	}
	if rej.Output[0] != "error: refusing to update checked out branch: refs/heads/main" {
		t.Fatalf("output %q", rej.Output)
	}
	clone := cliCommit(t, remote, "c.txt", "c\n")
	out, gerr := gittest.GitErr(clone, "push", "origin", "main")
	if gerr == nil || strings.Join(remoteLines(out), "|") != strings.Join(rej.Output, "|") {
		t.Fatalf("git push: %v\n%s\nours %q", gerr, out, rej.Output)
	}
	gittest.Git(t, remote, "config", "receive.denyCurrentBranch", "warn")
	var mu sync.Mutex
	var progress []string
	a.repo.cfg.Progress = func(s string) { mu.Lock(); progress = append(progress, s); mu.Unlock() }
	if _, err := a.persist(t, "d.txt", "d\n"); err != nil {
		t.Fatalf("persist with denyCurrentBranch=warn: %v", err)
	}
	if !contains(progress, "remote: warning: updating the current branch") {
		t.Fatalf("progress %q", progress)
	}
}

func TestHookThatCannotRunRefusesThePush(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{"not executable", "#!/bin/sh\nexit 0\n", 0o644, "is not executable"},
		{"no interpreter", "#!/nonexistent/interpreter\nexit 0\n", 0o755, "cannot run the 'pre-receive' hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
			a := newAgent(t, remote, false)
			if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(tc.body), tc.mode); err != nil {
				t.Fatal(err)
			}
			tipBefore := gittest.Git(t, remote, "rev-parse", "main")
			objsBefore := objectFiles(t, remote)
			_, err := a.persist(t, "b.txt", "b\n")
			if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("persist: %v", err)
			}
			if gittest.Git(t, remote, "rev-parse", "main") != tipBefore {
				t.Fatal("ref moved")
			}
			if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
				t.Fatalf("objects left behind: %v", got)
			}
		})
	}
}

func TestHooksPathAndQuarantinedPackMigrate(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	hooks := filepath.Join(t.TempDir(), "shared-hooks")
	gittest.Git(t, remote, "config", "core.hooksPath", hooks)
	seen := filepath.Join(t.TempDir(), "seen")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hooks, "pre-receive"), []byte("#!/bin/sh\nls \"$GIT_QUARANTINE_PATH/pack\" > '"+seen+"' 2>&1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Enough objects that the push goes as one pack (receive.unpackLimit).
	gittest.Git(t, remote, "config", "receive.unpackLimit", "20")
	var paths []string
	for i := 0; i < 30; i++ {
		p := "many/f" + hex.EncodeToString([]byte{byte(i)}) + ".txt"
		if err := a.fs.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	res, err := a.repo.Persist(context.Background(), Change{Paths: paths, Message: "many"})
	if err != nil {
		t.Fatal(err)
	}
	if seen := readFile(t, seen); !strings.Contains(seen, ".idx") || !strings.Contains(seen, ".pack") {
		t.Fatalf("the hook in core.hooksPath did not see a quarantined pack: %q", seen)
	}
	gittest.Git(t, remote, "fsck", "--strict")
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != res.Commit {
		t.Fatalf("main %s, want %s", got, res.Commit)
	}
	for _, f := range objectFiles(t, remote) {
		if strings.HasPrefix(f, "tmp_objdir") {
			t.Fatalf("quarantine left: %s", f)
		}
	}
}

// TestNetworkRemoteHookRefusalIsPermanent: a real receive-pack over smart
// HTTP whose pre-receive declines: one attempt, ErrDeclined, the hook's
// output in the error (go-git's sideband), no retry storm.
func TestNetworkRemoteHookRefusalIsPermanent(t *testing.T) {
	root := t.TempDir()
	remote := filepath.Join(root, "r.git")
	gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	gittest.Git(t, remote, "config", "http.receivepack", "true")
	srv := gittest.NewHTTPServer(t, root, "")
	a := newAgent(t, srv.URL("r.git"), true)
	a.write(t, "a.txt", "a\n")
	writeHook(t, remote, "pre-receive", "echo closed >&2\nexit 1\n")
	before := srv.ReceivePacks.Load()
	_, err := a.persist(t, "b.txt", "b\n")
	if !errors.Is(err, ErrDeclined) || !strings.Contains(err.Error(), "pre-receive hook declined") {
		t.Fatalf("persist: %v", err)
	}
	if n := srv.ReceivePacks.Load() - before; n != 1 {
		t.Fatalf("%d receive-packs for a permanent refusal", n)
	}
}

// modes maps every path under objects/ and refs/ to its permission bits
// (setgid included), the quarantine's own names aside.
func modes(t *testing.T, gitdir string) map[string]os.FileMode {
	t.Helper()
	m := map[string]os.FileMode{}
	for _, top := range []string{"objects", "refs"} {
		err := filepath.WalkDir(filepath.Join(gitdir, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(gitdir, p)
			m[rel] = fi.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeDir)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestSharedRepositoryPermissions: in a core.sharedRepository=group
// remote, what a push creates is group-writable (directories setgid),
// mode for mode what git push creates, so the next user can push too.
func TestSharedRepositoryPermissions(t *testing.T) {
	for _, shared := range []string{"group", "all", "0640"} {
		t.Run(shared, func(t *testing.T) {
			seed := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
			ours := filepath.Join(t.TempDir(), "ours.git")
			theirs := filepath.Join(t.TempDir(), "theirs.git")
			for _, r := range []string{ours, theirs} {
				gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", "--shared="+shared, r)
				gittest.Git(t, seed, "push", "-q", r, "main")
			}
			a := newAgent(t, ours, false)
			if err := a.fs.WriteFile("dir/new.txt", []byte("new\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := a.repo.PersistBranch(context.Background(), Change{Paths: []string{"dir/new.txt"}, Message: "new"}, "team/feature")
			if err != nil {
				t.Fatal(err)
			}
			gittest.Git(t, "", "--git-dir="+filepath.Join(a.fs.Root(), ".git"), "push", "-q", theirs, res.Commit+":refs/heads/team/feature")
			got, want := modes(t, ours), modes(t, theirs)
			checked := 0
			for p, w := range want {
				g, ok := got[p]
				if !ok {
					continue // git may pack where we write loose objects, or keep other files
				}
				checked++
				if g != w {
					t.Errorf("%s: %v, git push makes it %v", p, g, w)
				}
			}
			if checked < 10 {
				t.Fatalf("only %d paths in common: %v / %v", checked, got, want)
			}
			if m := got[filepath.Join("refs", "heads", "team")]; m&os.ModeSetgid == 0 || m&0o020 == 0 && shared != "0640" {
				t.Fatalf("refs/heads/team %v", m)
			}
		})
	}
}

func TestHiddenRefsAreNotUpdated(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, remote, "config", "--add", "transfer.hideRefs", "refs/heads/secret/")
	gittest.Git(t, remote, "config", "--add", "receive.hideRefs", "!refs/heads/secret/open")
	a := newAgent(t, remote, false)
	lr := localRemoteOf(t, a)
	head := mustHead(t, a.repo)
	err := lr.Push(context.Background(), "secret/x", plumbing.ZeroHash, head)
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "deny updating a hidden ref" {
		t.Fatalf("push to a hidden ref: %v", err)
	}
	out, gerr := gittest.GitErr("", "--git-dir="+filepath.Join(a.fs.Root(), ".git"), "push", remote, head.String()+":refs/heads/secret/x")
	if gerr == nil || !strings.Contains(out, "(deny updating a hidden ref)") {
		t.Fatalf("git push: %v\n%s", gerr, out)
	}
	gittest.Git(t, remote, "config", "receive.procReceiveRefs", "refs/heads/for")
	if err := lr.Push(context.Background(), "for/main", plumbing.ZeroHash, head); !errors.As(err, &rej) || rej.Reason != "fail to run proc-receive hook" {
		t.Fatalf("a proc-receive ref: %v", err)
	}
	if err := lr.Push(context.Background(), "secret/open", plumbing.ZeroHash, head); err != nil {
		t.Fatalf("a later negative pattern unhides: %v", err)
	}
	if err := lr.Push(context.Background(), "secretive", plumbing.ZeroHash, head); err != nil {
		t.Fatalf("a prefix that is not a whole component: %v", err)
	}
}

func TestDenyCurrentBranchUpdateInstead(t *testing.T) {
	gittest.RequireGit(t)
	remote := filepath.Join(t.TempDir(), "checkout")
	gittest.Git(t, "", "init", "-q", "-b", "main", remote)
	if err := os.WriteFile(filepath.Join(remote, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, remote, "add", "-A")
	gittest.Git(t, remote, "commit", "-q", "-m", "seed")
	gittest.Git(t, remote, "config", "receive.denyCurrentBranch", "updateInstead")
	a := newAgent(t, remote, false)
	res, err := a.persist(t, "b.txt", "b\n")
	if err != nil {
		t.Fatalf("persist into a clean checked-out branch: %v", err)
	}
	if got := readFile(t, filepath.Join(remote, "b.txt")); got != "b\n" {
		t.Fatalf("work tree not updated: %q", got)
	}
	if st := gittest.Git(t, remote, "status", "--porcelain"); st != "" {
		t.Fatalf("remote work tree not clean after the push: %q", st)
	}
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "HEAD")); got != res.Commit {
		t.Fatalf("HEAD %s, want %s", got, res.Commit)
	}

	// A dirty work tree refuses, as git does, and nothing moves.
	if err := os.WriteFile(filepath.Join(remote, "a.txt"), []byte("local edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objsBefore := objectFiles(t, remote+"/.git")
	_, err = a.persist(t, "c.txt", "c\n")
	var rej *PushRejectedError
	if !errors.As(err, &rej) || rej.Reason != "Working directory has unstaged changes" {
		t.Fatalf("persist into a dirty work tree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(remote, "c.txt")); !os.IsNotExist(err) {
		t.Fatalf("c.txt reached the dirty work tree: %v", err)
	}
	if got := objectFiles(t, remote+"/.git"); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("objects left behind: %v", got)
	}
	clone := cliCommit(t, remote, "d.txt", "d\n")
	out, gerr := gittest.GitErr(clone, "push", "origin", "main")
	if gerr == nil || !strings.Contains(out, "(Working directory has unstaged changes)") {
		t.Fatalf("git push: %v\n%s", gerr, out)
	}

	// A push-to-checkout hook takes over.
	if err := os.WriteFile(filepath.Join(remote, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeHook(t, filepath.Join(remote, ".git"), "push-to-checkout", `echo "deploying $1 to $GIT_WORK_TREE"
exit 1
`)
	_, err = a.persist(t, "e.txt", "e\n")
	if !errors.As(err, &rej) || rej.Reason != "push-to-checkout hook declined" || !strings.Contains(strings.Join(rej.Output, "|"), "deploying") {
		t.Fatalf("push-to-checkout: %v", err)
	}
}

// TestFsckCommitsAgreeWithGitReceivePack: hostile commit headers, git's
// verdict and messages against ours.
func TestFsckCommitsAgreeWithGitReceivePack(t *testing.T) {
	gittest.RequireGit(t)
	work := filepath.Join(t.TempDir(), "work.git")
	gittest.Git(t, "", "init", "-q", "--bare", work)
	st := filesystem.NewStorage(osfs.New(work), cache.NewObjectLRUDefault())
	b, _ := storeBlob(st, []byte("x\n"))
	tree := rawTree(t, st, rawEntry{"100644", "a", b})
	id := "A U Thor <a@example.com> 1700000000 +0000"
	cases := map[string]string{
		"clean":                  "author " + id + "\ncommitter " + id + "\n\nmsg\n",
		"missing space before <": "author A<a@example.com> 1700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"name starts with <":     "author <a@example.com> 1700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"bad email":              "author A <a@example.com 1700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"bad name":               "author A > <a@example.com> 1700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"zero-padded date":       "author A <a@example.com> 01700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"bad date":               "author A <a@example.com> x +0000\ncommitter " + id + "\n\nmsg\n",
		"bad timezone":           "author A <a@example.com> 1700000000 +00\ncommitter " + id + "\n\nmsg\n",
		"no space before date":   "author A <a@example.com>1700000000 +0000\ncommitter " + id + "\n\nmsg\n",
		"missing author":         "committer " + id + "\n\nmsg\n",
		"two authors":            "author " + id + "\nauthor " + id + "\ncommitter " + id + "\n\nmsg\n",
		"missing committer":      "author " + id + "\n\nmsg\n",
		"NUL in body":            "author " + id + "\ncommitter " + id + "\n\nm\x00sg\n",
		"extra header":           "author " + id + "\ncommitter " + id + "\nencoding latin1\n\nmsg\n",
	}
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	refused := 0
	defer func() {
		if refused < 10 {
			t.Errorf("git refused only %d of %d hostile commits: the cases do not test much", refused, len(names))
		}
	}()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			o := st.NewEncodedObject()
			o.SetType(plumbing.CommitObject)
			w, _ := o.Writer()
			w.Write([]byte("tree " + tree.String() + "\n" + cases[name]))
			w.Close()
			c, err := st.SetEncodedObject(o)
			if err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(t.TempDir(), "dst.git")
			gittest.Git(t, "", "init", "-q", "--bare", dst)
			gittest.Git(t, dst, "config", "receive.fsckObjects", "true")
			out, err := gitOut(t, work, "push", dst, c.String()+":refs/heads/main")
			gitRefused := err != nil
			if gitRefused {
				refused++
			}
			if gitRefused && !strings.Contains(out, "unpacker error") {
				t.Fatalf("git refused for another reason: %s", out)
			}
			var gitLines []string
			for _, l := range remoteLines(out) {
				if strings.HasPrefix(l, "error: object ") || strings.HasPrefix(l, "warning: object ") {
					gitLines = append(gitLines, l)
				}
			}
			lines, failed, err := fsck.Objects(st, []plumbing.Hash{c}, &fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}})
			if err != nil {
				t.Fatal(err)
			}
			if failed != gitRefused || strings.Join(lines, "|") != strings.Join(gitLines, "|") {
				t.Fatalf("git: refused=%v %q\nours: refused=%v %q", gitRefused, gitLines, failed, lines)
			}
		})
	}
}

// TestBranchesDuringAPush: listing a local remote's branches while a
// writer holds a ref lock sees the branches, not the lock file.
func TestBranchesDuringAPush(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	gittest.Git(t, remote, "branch", "packed", "main")
	gittest.Git(t, remote, "pack-refs", "--all")
	gittest.Git(t, remote, "branch", "team/loose", "main")
	a := newAgent(t, remote, true)
	lr := localRemoteOf(t, a)
	lk, err := acquireRefLock(context.Background(), remote, "refs/heads/main", false)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.release()
	got, err := lr.branches()
	if err != nil {
		t.Fatal(err)
	}
	tip := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
	if len(got) != 3 || got["main"].String() != tip || got["packed"].String() != tip || got["team/loose"].String() != tip {
		t.Fatalf("branches %v", got)
	}
	// What go-git's IterReferences meets at the same moment (why
	// branches exists).
	rs := lr.open()
	defer rs.Close()
	iter, err := rs.IterReferences()
	if err == nil {
		err = iter.ForEach(func(*plumbing.Reference) error { return nil })
	}
	t.Logf("go-git IterReferences during the push: %v", err)
}

// TestFsckRandomTreesAgreeWithGit: random trees built from the names and
// modes git's rules are about, pushed with git to a remote with
// receive.fsckObjects; our verdict and lines must be git's.
func TestFsckRandomTreesAgreeWithGit(t *testing.T) {
	gittest.RequireGit(t)
	n := envInt("TGP_FSCK_TREES", 120)
	if testing.Short() {
		n = min(n, 25)
	}
	seed := uint64(20261122)
	rng := rand.New(rand.NewPCG(seed, seed))
	work := filepath.Join(t.TempDir(), "work.git")
	gittest.Git(t, "", "init", "-q", "--bare", work)
	dst := filepath.Join(t.TempDir(), "dst.git")
	gittest.Git(t, "", "init", "-q", "--bare", dst)
	gittest.Git(t, dst, "config", "receive.fsckObjects", "true")
	st := filesystem.NewStorage(osfs.New(work), cache.NewObjectLRUDefault())
	blob, _ := storeBlob(st, []byte("x\n"))
	modules, _ := storeBlob(st, []byte("[submodule \"x\"]\n\tpath = x\n\turl = ./x\n"))
	sub := rawTree(t, st, rawEntry{"100644", "f", blob})
	tokens := []string{".git", ".GIT", ".Git", "git~1", "GIT~1", ".", "..", "a", "b", "a.c", "a-", "\u200c", "\u200e", "\ufeff", " ", "\\", ":", "/", ".gitmodules", "gitmod~1", ".gitattributes", "~", "1"}
	modes := []string{"100644", "100644", "100755", "40000", "40000", "040000", "120000", "160000", "100664", "100600", "644"}
	refused, skipped := 0, 0
	for i := 0; i < n; i++ {
		var entries []rawEntry
		for k := rng.IntN(5) + 1; k > 0; k-- {
			var name strings.Builder
			for j := rng.IntN(3) + 1; j > 0; j-- {
				name.WriteString(tokens[rng.IntN(len(tokens))])
			}
			mode := modes[rng.IntN(len(modes))]
			h := blob
			switch {
			case mode == "40000" || mode == "040000":
				h = sub
			case mode == "160000":
				h = plumbing.NewHash(fmt.Sprintf("%040x", rng.Uint64()|1))
			case strings.EqualFold(name.String(), ".gitmodules") && mode != "120000":
				h = modules
			}
			entries = append(entries, rawEntry{mode, name.String(), h})
		}
		if rng.IntN(2) == 0 { // mostly git's order, so that other rules show
			sort.SliceStable(entries, func(a, b int) bool {
				ka, kb := entries[a].name, entries[b].name
				if strings.TrimLeft(entries[a].mode, "0") == "40000" {
					ka += "/"
				}
				if strings.TrimLeft(entries[b].mode, "0") == "40000" {
					kb += "/"
				}
				return ka < kb
			})
		}
		tree := rawTree(t, st, entries...)
		commit := strings.TrimSpace(gittest.Git(t, work, "commit-tree", tree.String(), "-m", fmt.Sprint(i)))
		out, err := gitOut(t, work, "push", "--force", dst, commit+":refs/heads/case")
		gitRefused := err != nil
		if gitRefused && !strings.Contains(out, "unpacker error") {
			skipped++ // the client itself could not send it
			continue
		}
		if gitRefused {
			refused++
		}
		var gitLines []string
		for _, l := range remoteLines(out) {
			if strings.HasPrefix(l, "error: object ") || strings.HasPrefix(l, "warning: object ") {
				gitLines = append(gitLines, l)
			}
		}
		lines, failed, err := fsck.Objects(st, []plumbing.Hash{tree}, &fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}})
		if err != nil {
			t.Fatal(err)
		}
		if failed != gitRefused || strings.Join(lines, "|") != strings.Join(gitLines, "|") {
			var desc []string
			for _, e := range entries {
				desc = append(desc, e.mode+" "+strconv.Quote(e.name))
			}
			t.Fatalf("case %d (seed %d) entries %v:\ngit: refused=%v %q\nours: refused=%v %q", i, seed, desc, gitRefused, gitLines, failed, lines)
		}
	}
	t.Logf("%d random trees: %d refused by git, %d accepted, %d the client could not send", n, refused, n-refused-skipped, skipped)
	if refused == 0 || refused == n-skipped {
		t.Fatalf("the generator produced %d refusals of %d: not a test", refused, n-skipped)
	}
}

// TestFsckGitmodulesAgreeWithGit: hostile .gitmodules blobs (URLs, names,
// paths, update commands, and config syntax git and go-git read
// differently), git's verdict and lines against ours.
func TestFsckGitmodulesAgreeWithGit(t *testing.T) {
	gittest.RequireGit(t)
	work := filepath.Join(t.TempDir(), "work.git")
	gittest.Git(t, "", "init", "-q", "--bare", work)
	dst := filepath.Join(t.TempDir(), "dst.git")
	gittest.Git(t, "", "init", "-q", "--bare", dst)
	gittest.Git(t, dst, "config", "receive.fsckObjects", "true")
	st := filesystem.NewStorage(osfs.New(work), cache.NewObjectLRUDefault())
	sm := func(url string) string { return "[submodule \"x\"]\n\tpath = x\n\turl = " + url + "\n" }
	cases := []string{
		sm("https://example.com/x"), sm("./x"), sm("../x"), sm("x%0a"), sm("./x%0a"), sm("../x%0ay"),
		sm("https://ho%0ast/x"), sm("https:///x"), sm("https://host/pa%0ath"), sm("ssh://host/x%0a"),
		sm("http::https://h%0a/x"), sm("https://user%0a@host/x"), sm("https://host:80/x"), sm("https://host:8x/x"),
		sm("file:///x%0a"), sm("\"https://ho\\nst\""), sm("-oProxyCommand=evil"), sm("../../:evil"),
		sm("..\\\\../x"), sm("./../x"), sm(".././/x"), sm("../:x"), sm("git://host/x%0a"), sm("git://host/x"),
		sm("https://[::1]/x"), sm("https://[::1]:99/x"), sm("ftp://h/%0D%0Ax"),
		"[submodule \"../../x\"]\n\tpath = x\n\turl = ./x\n",
		"[submodule \"..\"]\n\turl = ./x\n",
		"[submodule \"a/../b\"]\n\turl = ./x\n",
		"[submodule \"a..b\"]\n\turl = ./x\n",
		"[submodule \"x\"]\n\tpath = -x\n",
		"[submodule \"x\"]\n\tupdate = !rm -rf /\n",
		"[submodule \"x\"]\n\tupdate = rebase\n",
		"[submodule.old]\n\turl = -x\n",
		"[submodule \"x\"]\n\tURL = -x\n",
		"x\n",
		"[submodule \"x\"\n\turl = -x\n",
		"[submodule \"x\"]\n\turl = -x\n[bad\n",
		"[submodule \"x\"]\n\turl = \"-x\n",
		"[submodule \"x\"]\n\turl = \\q\n",
		"[submodule \"x\"]\n\turl = ok # -comment\n",
		"[submodule \"x\"]\n\turl = \\\n-x\n",
		"[submodule \"x\"]\n\turl\n",
		"[submodule \"x\"] url = -x\n",
		"\xef\xbb\xbf[submodule \"x\"]\n\turl = -x\n",
		"[submodule \"x\"]\r\n\turl = -x\r\n",
		"; comment\n# another\n[submodule \"x\"]\n\t1url = -x\n",
	}
	refused := 0
	for i, content := range cases {
		blob, err := storeBlob(st, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		tree := rawTree(t, st, rawEntry{"100644", ".gitmodules", blob})
		commit := strings.TrimSpace(gittest.Git(t, work, "commit-tree", tree.String(), "-m", fmt.Sprint(i)))
		out, err := gitOut(t, work, "push", "--force", dst, commit+":refs/heads/case")
		gitRefused := err != nil
		if gitRefused && !strings.Contains(out, "unpacker error") {
			t.Fatalf("case %q: git refused for another reason: %s", content, out)
		}
		if gitRefused {
			refused++
		}
		var gitLines []string
		for _, l := range remoteLines(out) {
			if strings.HasPrefix(l, "error: object ") || strings.HasPrefix(l, "warning: object ") {
				gitLines = append(gitLines, l)
			}
		}
		lines, failed, err := fsck.Objects(st, []plumbing.Hash{tree, blob}, &fsck.Options{Severity: map[string]fsck.Severity{}, Skip: map[plumbing.Hash]bool{}})
		if err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, l := range lines {
			if strings.HasPrefix(l, "error: object ") || strings.HasPrefix(l, "warning: object ") {
				ours = append(ours, l)
			}
		}
		if strings.HasPrefix(content, "\xef\xbb\xbf") {
			// Deliberately stricter than git (see gitmodulesBlob): git's
			// warning, then the checks git skipped.
			if gitRefused || !failed || len(ours) != 2 || ours[0] != gitLines[0] || !strings.Contains(ours[1], "gitmodulesUrl") {
				t.Errorf("BOM case: git %v %q, ours %v %q", gitRefused, gitLines, failed, ours)
			}
			continue
		}
		if failed != gitRefused || strings.Join(ours, "|") != strings.Join(gitLines, "|") {
			t.Errorf("case %q:\ngit: refused=%v %q\nours: refused=%v %q", content, gitRefused, gitLines, failed, ours)
		}
	}
	if refused < 15 {
		t.Fatalf("git refused only %d of %d: the cases do not test much", refused, len(cases))
	}
}

// TestPolicyInIncludedConfig: receive.* set in a file the remote's config
// includes (include.path, includeIf "gitdir:") holds, as it does for git.
func TestPolicyInIncludedConfig(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	if err := os.WriteFile(filepath.Join(remote, "policy.inc"), []byte("[receive]\n\tdenyNonFastForwards = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "deny.inc")
	if err := os.WriteFile(other, []byte("[receive]\n\tdenyDeletes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, remote, "config", "include.path", "policy.inc")
	gittest.Git(t, remote, "config", "includeIf.gitdir:"+remote+"/.path", other)
	gittest.Git(t, remote, "config", "includeIf.gitdir:/nowhere/.path", "/dev/null/none")
	gittest.Git(t, remote, "branch", "feature", "main")
	// git itself sees both.
	if got := gittest.Git(t, remote, "config", "--get", "receive.denyNonFastForwards"); got != "true\n" {
		t.Fatalf("git reads %q", got)
	}
	if _, err := gittest.GitErr(remote, "config", "--get", "receive.denyDeletes"); err != nil {
		t.Fatalf("git does not see the includeIf: %v", err)
	}
	a := newAgent(t, remote, false)
	lr := localRemoteOf(t, a)
	tip := plumbing.NewHash(strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")))
	var rej *PushRejectedError
	if err := lr.Push(context.Background(), "main", tip, unrelatedCommit(t, a)); !errors.As(err, &rej) || rej.Reason != "non-fast-forward" {
		t.Fatalf("include.path policy: %v", err)
	}
	if err := lr.Push(context.Background(), "feature", tip, plumbing.ZeroHash); !errors.As(err, &rej) || rej.Reason != "deletion prohibited" {
		t.Fatalf("includeIf policy: %v", err)
	}
}

// TestCancelledHookIsNotARefusal: a push stopped while pre-receive runs
// is the caller's cancellation, not a permanent refusal, and leaves
// nothing behind.
func TestCancelledHookIsNotARefusal(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"a.txt": "a\n"})
	a := newAgent(t, remote, false)
	lr := localRemoteOf(t, a)
	marker := filepath.Join(t.TempDir(), "started")
	writeHook(t, remote, "pre-receive", "touch '"+marker+"'\nexec sleep 300\n")
	tip := plumbing.NewHash(strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")))
	objsBefore := objectFiles(t, remote)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lr.Push(ctx, "main", tip, unrelatedCommit(t, a)) }()
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("push ended before the hook started: %v", err)
		default:
		}
		runtime.Gosched()
	}
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrDeclined) {
		t.Fatalf("cancelled push: %v", err)
	}
	if got := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main")); got != tip.String() {
		t.Fatalf("main moved to %s", got)
	}
	if got := objectFiles(t, remote); strings.Join(got, ",") != strings.Join(objsBefore, ",") {
		t.Fatalf("objects left behind: %v", got)
	}
}
