package receive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// fileLock is git's lock on a loose ref, as a pusher holds it.
type fileLock struct {
	path string
	f    *os.File
}

func lockRef(t *testing.T, gitdir, ref string) *fileLock {
	t.Helper()
	path := filepath.Join(gitdir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return &fileLock{path: path, f: f}
}

func (l *fileLock) Commit(h plumbing.Hash, adjust func(string) error) error {
	if _, err := l.f.WriteString(h.String() + "\n"); err != nil {
		return err
	}
	if err := l.f.Close(); err != nil {
		return err
	}
	if err := adjust(l.path + ".lock"); err != nil {
		return err
	}
	return os.Rename(l.path+".lock", l.path)
}

func (l *fileLock) Delete() error {
	l.f.Close()
	if err := os.Remove(l.path); err != nil {
		return err
	}
	return os.Remove(l.path + ".lock")
}

func (l *fileLock) NewDirs() []string { return nil }

func (l *fileLock) release() {
	l.f.Close()
	os.Remove(l.path + ".lock")
}

func storeOf(gitdir string) *filesystem.Storage {
	return filesystem.NewStorage(osfs.New(gitdir), cache.NewObjectLRUDefault())
}

// outcome is what a push did: the reason it was refused ("" accepted),
// the remote's lines, and where the ref is after it.
type outcome struct {
	reason string
	remote []string
	ref    string
}

func refOf(t *testing.T, gitdir, ref string) string {
	out, err := gittest.GitErr(gitdir, "rev-parse", "-q", "--verify", ref)
	if err != nil {
		return "(none)"
	}
	return strings.TrimSpace(out)
}

// pushWithGit pushes src to ref of remote with the git CLI (receive-pack).
func pushWithGit(t *testing.T, work, remote, src, ref string) outcome {
	cmd := exec.Command("git", "push", "--porcelain", "--force", remote, src+":"+ref)
	cmd.Dir, cmd.Env = work, gittest.Env(t.TempDir())
	out, _ := cmd.CombinedOutput()
	var o outcome
	for _, l := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(l, "remote: "); ok {
			// Not on a terminal, git pads each line to clear what a
			// progress line left (sideband.c's DUMB_SUFFIX).
			o.remote = append(o.remote, strings.TrimRight(rest, " "))
		}
		if strings.HasPrefix(l, "!\t") {
			_, summary, _ := strings.Cut(l[2:], "\t")
			if i := strings.LastIndex(summary, " ("); i >= 0 {
				o.reason = strings.TrimSuffix(summary[i+2:], ")")
			}
		}
	}
	o.ref = refOf(t, remote, ref)
	return o
}

// pushInProcess pushes the commit src of work to ref of remote through
// Policy.Receive.
func pushInProcess(t *testing.T, work, remote, src, ref string) outcome {
	newHash := plumbing.ZeroHash
	if src != "" {
		newHash = plumbing.NewHash(strings.TrimSpace(gittest.Git(t, work, "rev-parse", src)))
	}
	oldHash := plumbing.ZeroHash
	if h := refOf(t, remote, ref); h != "(none)" {
		oldHash = plumbing.NewHash(h)
	}
	from, to := storeOf(filepath.Join(work, ".git")), storeOf(remote)
	defer from.Close()
	defer to.Close()
	pol, err := LoadPolicy(remote)
	if err != nil {
		t.Fatal(err)
	}
	lk := lockRef(t, remote, ref)
	defer lk.release()
	var o outcome
	err = pol.Receive(context.Background(), Push{
		Update: Update{Ref: ref, Old: oldHash, New: newHash},
		Src:    from, Remote: to, Lock: lk,
		Missing: func() ([]plumbing.Hash, []plumbing.Hash, error) {
			var missing []plumbing.Hash
			list := gittest.Git(t, work, "rev-list", "--objects", newHash.String())
			for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
				h := plumbing.NewHash(strings.Fields(l)[0])
				if to.HasEncodedObject(h) != nil {
					missing = append(missing, h)
				}
			}
			return missing, nil, nil
		},
		Progress: func(l string) { o.remote = append(o.remote, strings.TrimPrefix(l, "remote: ")) },
	})
	var rej *PushRejectedError
	switch {
	case errors.As(err, &rej):
		o.reason, o.remote = rej.Reason, rej.Output
		if !errors.Is(err, ErrDeclined) {
			t.Fatal("a refusal is not ErrDeclined")
		}
	case err != nil:
		t.Fatalf("push %s: %v", ref, err)
	}
	o.ref = refOf(t, remote, ref)
	return o
}

// TestReceiveAsGitReceivePack: for each policy, a push through Receive is
// accepted or refused as git push to the same repository is, with the
// same reason and the same remote lines, and leaves the ref where git
// leaves it.
func TestReceiveAsGitReceivePack(t *testing.T) {
	gittest.RequireGit(t)
	cases := []struct {
		name   string
		config [][2]string
		hooks  map[string]string
		// src "" deletes; before pushes HEAD~1 to main first.
		src, ref string
	}{
		{name: "fast-forward", src: "HEAD", ref: "refs/heads/main"},
		{name: "new branch", src: "HEAD~1", ref: "refs/heads/topic"},
		{name: "non-fast-forward denied", config: [][2]string{{"receive.denyNonFastForwards", "true"}}, src: "side", ref: "refs/heads/main"},
		{name: "non-fast-forward allowed", src: "side", ref: "refs/heads/main"},
		{name: "deletion denied", config: [][2]string{{"receive.denyDeletes", "true"}}, src: "", ref: "refs/heads/old"},
		{name: "deletion", src: "", ref: "refs/heads/old"},
		{name: "hidden ref", config: [][2]string{{"receive.hideRefs", "refs/hidden"}}, src: "HEAD", ref: "refs/hidden/x"},
		{name: "hidden ref negated", config: [][2]string{{"transfer.hideRefs", "refs/hidden"}, {"receive.hideRefs", "!refs/hidden/x"}}, src: "HEAD", ref: "refs/hidden/x"},
		{name: "pre-receive declines", hooks: map[string]string{"pre-receive": "echo refused by policy\nread old new ref\necho \"$ref\" >&2\nexit 1"}, src: "HEAD", ref: "refs/heads/main"},
		{name: "update declines one ref", hooks: map[string]string{"update": "case $1 in refs/heads/blocked) echo \"no $1\"; exit 1;; esac"}, src: "HEAD", ref: "refs/heads/blocked"},
		{name: "update lets another pass", hooks: map[string]string{"update": "case $1 in refs/heads/blocked) exit 1;; esac\necho ok $1"}, src: "HEAD", ref: "refs/heads/free"},
		{name: "fsck refuses a bad tree", config: [][2]string{{"receive.fsckObjects", "true"}}, src: "bad", ref: "refs/heads/main"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			gittest.Git(t, "", "init", "-q", "-b", "main", work)
			gittest.WriteFile(t, work, "a.txt", "a\n")
			gittest.Git(t, work, "add", "-A")
			gittest.Git(t, work, "commit", "-q", "-m", "one")
			gittest.Git(t, work, "branch", "old")
			gittest.Git(t, work, "checkout", "-q", "-b", "side")
			gittest.WriteFile(t, work, "s.txt", "s\n")
			gittest.Git(t, work, "add", "-A")
			gittest.Git(t, work, "commit", "-q", "-m", "side")
			gittest.Git(t, work, "checkout", "-q", "main")
			gittest.WriteFile(t, work, "a.txt", "a\nb\n")
			gittest.Git(t, work, "commit", "-q", "-am", "two")
			// A commit whose tree has a ".git" entry: fsck's hasDotgit.
			blob := strings.TrimSpace(gittest.Git(t, work, "hash-object", "-w", "a.txt"))
			tree := strings.TrimSpace(runIn(t, work, fmt.Sprintf("100644 blob %s\t.git\n", blob), "mktree"))
			bad := strings.TrimSpace(gittest.Git(t, work, "commit-tree", "-p", "HEAD", "-m", "bad", tree))
			gittest.Git(t, work, "branch", "bad", bad)

			var got, want outcome
			for i, push := range []func(*testing.T, string, string, string, string) outcome{pushWithGit, pushInProcess} {
				remote := filepath.Join(t.TempDir(), "remote.git")
				gittest.Git(t, "", "init", "-q", "--bare", "-b", "main", remote)
				gittest.Git(t, work, "push", "-q", remote, "HEAD~1:refs/heads/main", "old:refs/heads/old")
				for _, kv := range c.config {
					gittest.Git(t, remote, "config", "--add", kv[0], kv[1])
				}
				for name, body := range c.hooks {
					p := filepath.Join(remote, "hooks", name)
					if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				o := push(t, work, remote, c.src, c.ref)
				if i == 0 {
					want = o
				} else {
					got = o
				}
			}
			if got.reason != want.reason || got.ref != want.ref || !slices.Equal(got.remote, want.remote) {
				t.Fatalf("in process: refused %q, ref at %s, remote lines %q\ngit push:   refused %q, ref at %s, remote lines %q",
					got.reason, got.ref, got.remote, want.reason, want.ref, want.remote)
			}
		})
	}
}

// runIn runs git in dir with stdin, in gittest's pinned environment.
func runIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, gittest.Env(t.TempDir()), strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}
