package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jailWithOutside makes an OS jail next to an "outside" directory holding a
// canary, with links planted in the root that point out.
func jailWithOutside(t testing.TB) (*FS, string, string) {
	t.Helper()
	top := t.TempDir()
	root := filepath.Join(top, "root")
	outside := filepath.Join(top, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "canary"), []byte("canary"), 0o644))
	must(os.WriteFile(filepath.Join(root, "inside.txt"), []byte("inside"), 0o644))
	must(os.Symlink(outside, filepath.Join(root, "out")))                         // absolute link out
	must(os.Symlink("../../outside", filepath.Join(root, "sub", "rel")))          // relative link out
	must(os.Symlink("out", filepath.Join(root, "chain")))                         // chain to a link out
	must(os.Symlink(filepath.Join(outside, "nope"), filepath.Join(root, "dang"))) // dangling, outside
	must(os.Symlink("inside.txt", filepath.Join(root, "ok-link")))                // link inside
	must(os.Symlink("/etc", filepath.Join(root, "etc")))
	f, err := NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	return f, root, outside
}

func TestEscapesRefused(t *testing.T) {
	f, root, _ := jailWithOutside(t)
	mem := NewMemory()
	bad := []string{
		"", "..", "../x", "a/../../x", "sub/../../outside/canary", "/etc/passwd", "x\x00y",
		"out/canary", "out", "sub/rel/canary", "chain/canary", "dang", "etc/passwd",
		filepath.Join(filepath.Dir(root), "outside", "canary"),
	}
	for _, p := range bad {
		if _, err := f.Resolve(p); !errors.Is(err, ErrViolation) {
			t.Errorf("os Resolve(%q) = %v, want violation", p, err)
		}
		if _, err := f.ReadFile(p); !errors.Is(err, ErrViolation) {
			t.Errorf("os ReadFile(%q) = %v, want violation", p, err)
		}
		if err := f.WriteFile(p, []byte("pwned"), 0o644); !errors.Is(err, ErrViolation) {
			t.Errorf("os WriteFile(%q) = %v, want violation", p, err)
		}
	}
	for _, p := range []string{"", "..", "../x", "/etc/passwd", "a\x00"} {
		if _, err := mem.Resolve(p); !errors.Is(err, ErrViolation) {
			t.Errorf("memory Resolve(%q) = %v", p, err)
		}
	}
	for p, want := range map[string]string{
		"inside.txt": "inside.txt", "./sub/../inside.txt": "inside.txt", "ok-link": "inside.txt",
		root + "/inside.txt": "inside.txt", "new/file": "new/file", ".": ".",
	} {
		got, err := f.Resolve(p)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	// Lstat and Readlink act on the link itself, which is inside the root
	// wherever it points (git stores such links as data); following it
	// stays refused.
	if info, err := f.Lstat("out"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a link out: %v %v", info, err)
	}
	if _, err := f.Readlink("out"); err != nil {
		t.Errorf("Readlink of a link out: %v", err)
	}
	if _, err := f.ReadFile("out"); !errors.Is(err, ErrViolation) {
		t.Errorf("ReadFile through a link out: %v", err)
	}
	if _, err := f.Stat("out"); !errors.Is(err, ErrViolation) {
		t.Errorf("Stat through a link out: %v", err)
	}
	if info, err := f.Lstat("ok-link"); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat ok-link: %v %v", info, err)
	}
}

func TestAtomicWriteAndParents(t *testing.T) {
	for name, f := range map[string]*FS{"os": mustOS(t), "memory": NewMemory()} {
		t.Run(name, func(t *testing.T) {
			if err := f.WriteFile("a/b/c.txt", []byte("one"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := f.WriteFile("a/b/c.txt", []byte("two"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := f.ReadFile("a/b/c.txt")
			if err != nil || string(got) != "two" {
				t.Fatalf("%q %v", got, err)
			}
			entries, err := f.ReadDir("a/b")
			if err != nil || len(entries) != 1 || entries[0].Name() != "c.txt" {
				t.Fatalf("temp file left behind: %v %v", entries, err)
			}
			if err := f.WriteFile("a/b", []byte("x"), 0o644); err == nil {
				t.Fatal("overwrote a directory")
			}
			if _, err := f.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("missing file: %v", err)
			}
			var walked []string
			if err := f.Walk(".", func(rel string, info fs.FileInfo, err error) error {
				walked = append(walked, rel)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if strings.Join(walked, ",") != ".,a,a/b,a/b/c.txt" {
				t.Fatalf("walk %v", walked)
			}
			if err := f.RemoveAll("."); !errors.Is(err, ErrViolation) {
				t.Fatalf("RemoveAll root: %v", err)
			}
		})
	}
}

func mustOS(t testing.TB) *FS {
	f, err := NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// FuzzJail checks that no input path resolves outside the root, and that
// reading, writing, removing and renaming through the jail never touch the
// outside directory.
func FuzzJail(f *testing.F) {
	for _, s := range []string{"..", "../outside/canary", "out/canary", "sub/rel/canary", "chain/canary", "dang",
		"etc/passwd", "/etc/passwd", "a/../../outside", "ok-link", "sub/./../..", "x\x00", "", ".", "sub//rel/../rel/canary",
		"./out/../out/canary", "new/../../outside/new"} {
		f.Add(s, "inside.txt")
	}
	// One jail per fuzz worker (creating files is slow on some disks);
	// the links out are re-planted when an input removed them, and the
	// outside directory is checked after every input.
	j, root, outside := jailWithOutside(f)
	links := map[string]string{"out": outside, "sub/rel": "../../outside", "chain": "out", "etc": "/etc"}
	passwd, _ := os.ReadFile("/etc/passwd")
	f.Fuzz(func(t *testing.T, p, q string) {
		for l, target := range links {
			full := filepath.Join(root, filepath.FromSlash(l))
			if _, err := os.Lstat(full); err != nil {
				_ = os.MkdirAll(filepath.Dir(full), 0o755)
				_ = os.Symlink(target, full)
			}
		}
		rel, err := j.Resolve(p)
		if err == nil {
			abs := filepath.Join(root, filepath.FromSlash(rel))
			if abs != root && !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				t.Fatalf("Resolve(%q) = %q escapes", p, rel)
			}
		}
		// A read must never return what lives outside the root: the
		// canary behind the planted links, or the host's /etc/passwd.
		if data, err := j.ReadFile(p); err == nil {
			if string(data) == "canary" || (len(passwd) > 0 && string(data) == string(passwd)) {
				t.Fatalf("ReadFile(%q) read a file outside the root", p)
			}
		}
		_ = j.WriteFile(p, []byte("pwned"), 0o644)
		_ = j.Rename(p, q)
		_ = j.Rename(q, p)
		_ = j.Remove(p)
		_ = j.MkdirAll(p, 0o755)
		_ = j.Symlink(q, p)
		entries, err := os.ReadDir(outside)
		if err != nil || len(entries) != 1 || entries[0].Name() != "canary" {
			t.Fatalf("outside changed for %q/%q: %v %v", p, q, entries, err)
		}
		b, err := os.ReadFile(filepath.Join(outside, "canary"))
		if err != nil || string(b) != "canary" {
			t.Fatalf("canary changed for %q/%q", p, q)
		}
	})
}
