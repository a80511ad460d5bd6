package gitbackend

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/internal/gitformat"
)

// This file tests the index as git stores it in ways go-git cannot read:
// a split index (git update-index --split-index: a "link" extension to
// .git/sharedindex.<hex>) and version 4 (compressed names). The oracle is
// the git CLI: git ls-files -s --debug and git ls-files -v print what git
// read, and our decoding printed the same way must be the same bytes.

// gitEnv runs the git CLI in dir with gittest's pinned environment and
// extra variables; it returns stdout, or stdout and stderr and the error.
func gitEnv(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "tgp-gittest-home")
	_ = os.MkdirAll(home, 0o755)
	cmd.Env = append(gittest.Env(home), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// stampOf is a time as the index stores it.
func stampOf(t time.Time) (uint32, uint32) {
	if t.IsZero() {
		return 0, 0
	}
	return uint32(t.Unix()), uint32(t.Nanosecond())
}

// fileFlags are the bits of git's ce_flags an index file holds: the
// stage, assume-valid, extended, intent-to-add and skip-worktree (git
// ls-files --debug prints its in-memory ones too).
const fileFlags = 0x3000 | 0x8000 | 0x4000 | 1<<29 | 1<<30

// lsFilesDebug prints entries as `git ls-files -s --debug -z` does.
func lsFilesDebug(idx *index.Index, valid map[string]bool) string {
	var b strings.Builder
	for _, e := range idx.Entries {
		flags := uint32(e.Stage) << 12
		if e.Stage == 0 && valid[e.Name] {
			flags |= 0x8000
		}
		if e.IntentToAdd || e.SkipWorktree {
			flags |= 0x4000
		}
		if e.IntentToAdd {
			flags |= 1 << 29
		}
		if e.SkipWorktree {
			flags |= 1 << 30
		}
		cs, cn := stampOf(e.CreatedAt)
		ms, mn := stampOf(e.ModifiedAt)
		fmt.Fprintf(&b, "%06o %s %d\t%s\x00", uint32(e.Mode), e.Hash, e.Stage, e.Name)
		fmt.Fprintf(&b, "  ctime: %d:%d\n  mtime: %d:%d\n", cs, cn, ms, mn)
		fmt.Fprintf(&b, "  dev: %d\tino: %d\n  uid: %d\tgid: %d\n", e.Dev, e.Inode, e.UID, e.GID)
		fmt.Fprintf(&b, "  size: %d\tflags: %x\n", e.Size, flags)
	}
	return b.String()
}

// lsFilesV prints entries as `git ls-files -v -z` does: H cached, S
// skip-worktree, M a conflict stage, in lower case when assume-valid.
func lsFilesV(idx *index.Index, valid map[string]bool) string {
	var b strings.Builder
	for _, e := range idx.Entries {
		tag := "H"
		switch {
		case e.Stage != 0:
			tag = "M"
		case e.SkipWorktree:
			tag = "S"
		}
		if e.Stage == 0 && valid[e.Name] {
			tag = strings.ToLower(tag)
		}
		fmt.Fprintf(&b, "%s %s\x00", tag, e.Name)
	}
	return b.String()
}

var flagsLine = regexp.MustCompile(`(?m)^  size: (\d+)\tflags: ([0-9a-f]+)$`)

// maskFlags reduces the flags git ls-files --debug prints to fileFlags.
func maskFlags(s string) string {
	return flagsLine.ReplaceAllStringFunc(s, func(l string) string {
		m := flagsLine.FindStringSubmatch(l)
		f, _ := strconv.ParseUint(m[2], 16, 32)
		return fmt.Sprintf("  size: %s\tflags: %x", m[1], f&fileFlags)
	})
}

// failStore is the go-git fallback, which these tests must not reach.
type failStore struct{}

func (failStore) Index() (*index.Index, error) {
	return nil, fmt.Errorf("the fast decoder fell back to go-git")
}
func (failStore) SetIndex(*index.Index) error { return fmt.Errorf("written by go-git") }

// diffWithGit compares our reading of dir's index with git's; "" when they
// agree.
func diffWithGit(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err != nil {
		return "" // no index yet: go-git's empty one
	}
	dot := osfs.New(filepath.Join(dir, ".git"))
	idx, _, valid, _, err := readIndex(dot, failStore{})
	wantS, gerr := gitEnv(dir, nil, "ls-files", "-s", "--debug", "-z")
	if err != nil || gerr != nil {
		if err != nil && gerr != nil {
			return "" // both refuse it
		}
		return fmt.Sprintf("read: ours %v, git's %v %s", err, gerr, wantS)
	}
	wantV, gerr := gitEnv(dir, nil, "ls-files", "-v", "-z")
	if gerr != nil {
		return fmt.Sprintf("git ls-files -v: %v %s", gerr, wantV)
	}
	if got, want := lsFilesDebug(idx, valid), maskFlags(wantS); got != want {
		return fmt.Sprintf("ls-files -s --debug differs:\n%s\ngit:\n%s", strings.ReplaceAll(got, "\x00", "\n"), strings.ReplaceAll(want, "\x00", "\n"))
	}
	if got := lsFilesV(idx, valid); got != wantV {
		return fmt.Sprintf("ls-files -v differs:\n%q\ngit:\n%q", got, wantV)
	}
	return ""
}

// writeBack reads dir's index through the cache and writes it as the git
// tools do; it returns the version written.
func writeBack(dir string) (uint32, error) {
	dot := osfs.New(filepath.Join(dir, ".git"))
	var c indexCache
	idx, err := c.load(dot, failStore{})
	if err != nil {
		return 0, err
	}
	if err := c.save(dot, failStore{}, idx); err != nil {
		return 0, err
	}
	return idx.Version, nil
}

// indexVersion is the version in dir's index header.
func indexVersion(t testing.TB, dir string) uint32 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil || len(data) < 8 {
		t.Fatalf("read index: %v", err)
	}
	return uint32(data[4])<<24 | uint32(data[5])<<16 | uint32(data[6])<<8 | uint32(data[7])
}

// TestSplitIndexRead: after git update-index --split-index and changes
// on top (a file changed, one added, one removed, assume-unchanged and
// skip-worktree set), the index reads as git reads it, and the tools'
// write is a whole index git reads the same, splits again and checks.
func TestSplitIndexRead(t *testing.T) {
	gittest.RequireGit(t)
	for _, ver := range []string{"2", "4"} {
		t.Run("v"+ver, func(t *testing.T) {
			dir := t.TempDir()
			gittest.Git(t, "", "init", "-q", "-b", "main", dir)
			for _, p := range []string{"a", "b", "c", "d/e", "d/f"} {
				gittest.WriteFile(t, dir, p, p+"\n")
			}
			gittest.Git(t, dir, "add", ".")
			gittest.Git(t, dir, "commit", "-q", "-m", "one")
			gittest.Git(t, dir, "update-index", "--index-version", ver)
			gittest.Git(t, dir, "update-index", "--split-index")
			gittest.WriteFile(t, dir, "b", "bb\n")
			gittest.WriteFile(t, dir, "g", "g\n")
			gittest.Git(t, dir, "add", "b", "g")
			gittest.Git(t, dir, "rm", "-q", "--cached", "c")
			gittest.Git(t, dir, "update-index", "--assume-unchanged", "a")
			gittest.Git(t, dir, "update-index", "--skip-worktree", "d/e")
			data, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if !bytes.Contains(data, []byte("link")) {
				t.Fatal("the index is not split")
			}
			if _, _, ok := gitformat.DecodeIndex(data); ok {
				t.Fatal("a split index decoded without its shared index")
			}
			if d := diffWithGit(dir); d != "" {
				t.Fatal(d)
			}
			status := gittest.Git(t, dir, "status", "--porcelain")
			before := maskFlags(gittest.Git(t, dir, "ls-files", "-s", "--debug", "-z"))
			v, err := writeBack(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := indexVersion(t, dir); got != v || strconv.Itoa(int(got)) != ver && !(ver == "2" && got == 3) {
				t.Fatalf("written as version %d (read %s)", got, ver)
			}
			data, _ = os.ReadFile(filepath.Join(dir, ".git", "index"))
			if bytes.Contains(data, []byte("link")) {
				t.Fatal("written split")
			}
			if after := maskFlags(gittest.Git(t, dir, "ls-files", "-s", "--debug", "-z")); after != before {
				t.Fatalf("git reads our write differently:\n%s\nbefore:\n%s", after, before)
			}
			if got := gittest.Git(t, dir, "status", "--porcelain"); got != status {
				t.Fatalf("git status after our write:\n%s\nbefore:\n%s", got, status)
			}
			gittest.Git(t, dir, "fsck", "--no-dangling")
			gittest.Git(t, dir, "update-index", "--split-index")
			gittest.WriteFile(t, dir, "h", "h\n")
			gittest.Git(t, dir, "add", "h")
			if d := diffWithGit(dir); d != "" {
				t.Fatal("split again:", d)
			}
		})
	}
}

// TestIndexKeepsAssumeUnchangedV4Split: TestIndexKeepsAssumeUnchanged on
// a split index of version 4: StageFiles reads it (the bit kept, the
// cache used), writes it whole at version 4, and git agrees.
func TestIndexKeepsAssumeUnchangedV4Split(t *testing.T) {
	gittest.RequireGit(t)
	dir := t.TempDir()
	gittest.Git(t, "", "init", "-q", "-b", "main", dir)
	for _, p := range []string{"a.txt", "b.txt", "c.txt", "d/e.txt"} {
		gittest.WriteFile(t, dir, p, p+"\n")
	}
	gittest.Git(t, dir, "add", ".")
	gittest.Git(t, dir, "commit", "-q", "-m", "one")
	gittest.Git(t, dir, "update-index", "--index-version", "4")
	gittest.Git(t, dir, "update-index", "--split-index")
	gittest.Git(t, dir, "update-index", "--assume-unchanged", "a.txt")
	gittest.Git(t, dir, "update-index", "--skip-worktree", "b.txt")
	gittest.WriteFile(t, dir, "d/e.txt", "changed\n")
	gittest.Git(t, dir, "add", "d/e.txt")
	gittest.WriteFile(t, dir, "new.txt", "new\n")
	r, err := Open(t.Context(), diskRoot(t, dir), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.idx.mu.Lock()
	_, cached, err := r.idx.current(r.dot, failStore{})
	r.idx.mu.Unlock()
	if err != nil || !cached {
		t.Fatalf("a split index of version 4 is not cached (%v)", err)
	}
	if v := AssumeUnchangedIn(r.gitStorage()); !v["a.txt"] || v["b.txt"] {
		t.Fatal("AssumeUnchanged does not name exactly a.txt")
	}
	if err := r.Do(t.Context(), func(g *git.Repository) error {
		return StageFiles(t.Context(), g.Storer, r.Worktree(), []string{"new.txt"}, nil)
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := gittest.Git(t, dir, "ls-files", "-v"), "h a.txt\nS b.txt\nH c.txt\nH d/e.txt\nH new.txt\n"; got != want {
		t.Fatalf("ls-files -v after staging:\n%swant\n%s", got, want)
	}
	if v := indexVersion(t, dir); v != 4 {
		t.Fatalf("written as version %d", v)
	}
	if got, want := gittest.Git(t, dir, "status", "--porcelain"), "M  d/e.txt\nA  new.txt\n"; got != want {
		t.Fatalf("git status:\n%swant\n%s", got, want)
	}
	gittest.Git(t, dir, "fsck", "--no-dangling")
	if d := diffWithGit(dir); d != "" {
		t.Fatal(d)
	}
}

// TestNewIndexVersionFromConfig: an index written where there was none
// takes the version git gives a new index (index.version, else 4 with
// feature.manyFiles, else 2 or 3), as git add does.
func TestNewIndexVersionFromConfig(t *testing.T) {
	gittest.RequireGit(t)
	for _, c := range []struct {
		name string
		cfg  []string
		ita  bool
	}{
		{"none", nil, false},
		{"none, intent-to-add", nil, true},
		{"manyFiles", []string{"feature.manyFiles", "true"}, false},
		{"index.version 3", []string{"index.version", "3"}, false},
		{"index.version 3, intent-to-add", []string{"index.version", "3"}, true},
		{"index.version 4", []string{"index.version", "4"}, false},
		{"index.version 9", []string{"index.version", "9"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var versions [2]uint32
			for i := range versions {
				dir := t.TempDir()
				gittest.Git(t, "", "init", "-q", "-b", "main", dir)
				if c.cfg != nil {
					gittest.Git(t, dir, append([]string{"config"}, c.cfg...)...)
				}
				gittest.WriteFile(t, dir, "a.txt", "a\n")
				if i == 0 {
					args := []string{"add", "a.txt"}
					if c.ita {
						args = []string{"add", "-N", "a.txt"}
					}
					gittest.Git(t, dir, args...)
				} else {
					r, err := Open(t.Context(), diskRoot(t, dir), Config{})
					if err != nil {
						t.Fatal(err)
					}
					if err := r.Do(t.Context(), func(g *git.Repository) error {
						if c.ita {
							idx, err := g.Storer.Index()
							if err != nil {
								return err
							}
							idx.Entries = append(idx.Entries, &index.Entry{Name: "a.txt", Mode: 0o100644, IntentToAdd: true, Hash: plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")})
							return g.Storer.SetIndex(idx)
						}
						return StageFiles(t.Context(), g.Storer, r.Worktree(), []string{"a.txt"}, nil)
					}); err != nil {
						t.Fatal(err)
					}
					r.Close()
				}
				versions[i] = indexVersion(t, dir)
			}
			if versions[0] != versions[1] {
				t.Fatalf("version %d, git's %d", versions[1], versions[0])
			}
		})
	}
}
