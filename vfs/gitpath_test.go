package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitpath"
)

// hostileNames are paths some filesystem reads as .git (or that git
// refuses for another reason); an agent must not be able to create any.
var hostileNames = []string{
	".git/config", ".GIT/config", "Sub/.Git/hooks/pre-commit", "git~1/config", "GIT~1/hooks/x",
	".git\u200c/config", "\ufeff.g\u200dit/config", ".git./config", ".git . /config",
	".git::$INDEX_ALLOCATION/config", "a\\.git\\config", "\\.git/config", ".gitmodules/x",
	"x/gitmod~1/y", ".gitattributes/x",
}

// wantGitRefusal checks err is the jail's refusal carrying git's message
// for the path rel.
func wantGitRefusal(t *testing.T, what string, err error, rel string) {
	t.Helper()
	if !errors.Is(err, ErrViolation) || !errors.Is(err, gitpath.ErrInvalidPath) {
		t.Fatalf("%s: %v, want a sandbox violation wrapping gitpath.ErrInvalidPath", what, err)
	}
	if want := "invalid path '" + rel + "'"; !strings.Contains(err.Error(), want) {
		t.Fatalf("%s: %q does not say %q", what, err.Error(), want)
	}
}

func TestGitPathRulesOnWrites(t *testing.T) {
	for _, mode := range []string{"os", "memory"} {
		t.Run(mode, func(t *testing.T) {
			var f *FS
			if mode == "os" {
				f = mustOS(t)
			} else {
				f = NewMemory()
			}
			for _, p := range hostileNames {
				wantGitRefusal(t, "WriteFile "+p, f.WriteFile(p, []byte("[core]\n\thooksPath = /tmp/x\n"), 0o644), p)
				wantGitRefusal(t, "WriteFile ./"+p, f.WriteFile("./"+p, []byte("x"), 0o644), p)
				wantGitRefusal(t, "MkdirAll "+p, f.MkdirAll(p, 0o755), p)
			}
			for _, d := range []string{".GIT", "git~1", ".gitmodules", "a/GITMOD~2", ".gitattributes"} {
				wantGitRefusal(t, "MkdirAll "+d, f.MkdirAll(d, 0o755), d)
			}
			// Nothing was created on the way to a refusal.
			var created []string
			if err := f.Walk(".", func(rel string, info fs.FileInfo, err error) error {
				if err == nil && rel != "." {
					created = append(created, rel)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if len(created) > 0 {
				t.Fatalf("refused writes left %v behind", created)
			}
			// Ordinary names, including dotfiles next to the rules, still work.
			for _, p := range []string{".github/workflows/ci.yml", ".gitignore", ".gitmodules", "tools/.git-keep", "a\\b", "git~2/x", "...", "caf\u00e9/\u200c"} {
				if err := f.WriteFile(p, []byte("ok"), 0o644); err != nil {
					t.Fatalf("WriteFile %q: %v", p, err)
				}
			}
			if err := f.MkdirAll("x/y/z/", 0o755); err != nil {
				t.Fatal(err)
			}
			// Rename: a destination git refuses is refused; the source keeps.
			wantGitRefusal(t, "Rename", f.Rename(".gitignore", ".GIT"), ".GIT")
			if _, err := f.Stat(".gitignore"); err != nil {
				t.Fatalf("source gone after a refused rename: %v", err)
			}
			if err := f.Rename(".gitignore", "ignore"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A repository may already hold odd names (pushed by any client): reading,
// listing and deleting them still work, renaming one to a good name works,
// and nothing new can be created under them or moved to them.
func TestGitPathOddNamesStillReadable(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{".GIT/config", "d/GIT~1", "d/ok"} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("odd"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(".GIT", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	f, err := NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(".GIT/config"); err != nil || string(b) != "odd" {
		t.Fatalf("read odd name: %q %v", b, err)
	}
	if b, err := f.ReadFile("link/config"); err != nil || string(b) != "odd" {
		t.Fatalf("read through a link to an odd name: %q %v", b, err)
	}
	if es, err := f.ReadDir("d"); err != nil || len(es) != 2 {
		t.Fatalf("ReadDir: %v %v", es, err)
	}
	// Writing through a link lands at the link's target, which git refuses.
	wantGitRefusal(t, "write through link", f.WriteFile("link/new", []byte("x"), 0o644), ".GIT/new")
	wantGitRefusal(t, "overwrite odd name", f.WriteFile(".GIT/config", []byte("x"), 0o644), ".GIT/config")
	// Moving a directory moves the odd names below it too.
	wantGitRefusal(t, "rename dir holding an odd name", f.Rename("d", "e"), "e/GIT~1")
	if err := f.Rename("d/GIT~1", "d/fixed"); err != nil {
		t.Fatalf("renaming an odd name away: %v", err)
	}
	if err := f.Rename("d", "e"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(".GIT/config"); err != nil {
		t.Fatalf("delete odd name: %v", err)
	}
	// A link named .gitmodules is refused; the same name as a file is not.
	wantGitRefusal(t, "Symlink .gitmodules", f.Symlink("e/ok", ".gitmodules"), ".gitmodules")
	wantGitRefusal(t, "Symlink GITMOD~1", f.Symlink("e/ok", "sub/GITMOD~1"), "sub/GITMOD~1")
	wantGitRefusal(t, "Symlink .GIT", f.Symlink("e/ok", "x/.GIT"), "x/.GIT")
	if err := f.Symlink("e/ok", "e/link-ok"); err != nil {
		t.Fatal(err)
	}
	wantGitRefusal(t, "Rename link to .gitmodules", f.Rename("e/link-ok", ".gitmodules"), ".gitmodules")
	if err := f.WriteFile(".gitmodules", nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The go-git view writes .git itself: the rules are for agent paths only.
func TestBillyViewStillWritesDotGit(t *testing.T) {
	f := mustOS(t)
	b := f.Billy()
	if err := b.MkdirAll(".git/objects/ab", 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := b.Create(".git/objects/ab/tmp")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := b.Rename(".git/objects/ab/tmp", ".git/objects/ab/cdef"); err != nil {
		t.Fatal(err)
	}
	if err := b.Symlink("objects", ".git/link"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Lstat(".git/objects/ab/cdef"); err != nil {
		t.Fatal(err)
	}
}
