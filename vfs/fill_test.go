package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pendingRoot is a jail whose files under pending are not on disk yet: a
// view made by WithFill writes the ones at or beneath the path it is
// given, and records every path it was given.
type pendingRoot struct {
	base    *FS
	root    string
	pending map[string]string
	asked   []string
}

func newPendingRoot(t *testing.T) *pendingRoot {
	t.Helper()
	root := t.TempDir()
	base, err := NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tools", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return &pendingRoot{base: base, root: root, pending: map[string]string{
		"tools/a/x.ts": "x", "tools/a/y.ts": "y", "tools/b.ts": "b", "top.txt": "top",
	}}
}

func (p *pendingRoot) fill(rel string) error {
	p.asked = append(p.asked, rel)
	for name, data := range p.pending {
		if rel == "." || name == rel || strings.HasPrefix(name, rel+"/") {
			full := filepath.Join(p.root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
				return err
			}
			delete(p.pending, name)
		}
	}
	return nil
}

// TestFillViewSeesPendingFiles: every operation of the view on a path not
// yet written (or a directory holding one) finds the file, as written by
// fill; the FS the view was made from calls nothing and sees only what is
// on disk.
func TestFillViewSeesPendingFiles(t *testing.T) {
	ops := []struct {
		name string
		run  func(v *FS) (string, error)
		left []string // still pending after it
	}{
		{"ReadFile", func(v *FS) (string, error) { b, err := v.ReadFile("tools/a/x.ts"); return string(b), err },
			[]string{"tools/a/y.ts", "tools/b.ts", "top.txt"}},
		{"ReadFile through a link", func(v *FS) (string, error) { b, err := v.ReadFile("link/b.ts"); return string(b), err },
			[]string{"tools/a/x.ts", "tools/a/y.ts", "top.txt"}},
		{"Stat of a directory", func(v *FS) (string, error) { i, err := v.Stat("tools/a"); return boolStr(i != nil && i.IsDir()), err },
			[]string{"tools/b.ts", "top.txt"}},
		{"Lstat", func(v *FS) (string, error) { i, err := v.Lstat("top.txt"); return sizeStr(i), err },
			[]string{"tools/a/x.ts", "tools/a/y.ts", "tools/b.ts"}},
		{"ReadDir", func(v *FS) (string, error) { return names(v.ReadDir("tools")) }, []string{"top.txt"}},
		{"Walk of the root", func(v *FS) (string, error) {
			var files []string
			err := v.Walk(".", func(rel string, info fs.FileInfo, err error) error {
				if err == nil && info.Mode().IsRegular() {
					files = append(files, rel)
				}
				return err
			})
			return strings.Join(files, ","), err
		}, nil},
		{"Afero Open", func(v *FS) (string, error) {
			f, err := v.Afero().Open("tools/a/y.ts")
			if err != nil {
				return "", err
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			return string(b), err
		}, []string{"tools/a/x.ts", "tools/b.ts", "top.txt"}},
		{"Billy Open", func(v *FS) (string, error) {
			f, err := v.Billy().Open("top.txt")
			if err != nil {
				return "", err
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			return string(b), err
		}, []string{"tools/a/x.ts", "tools/a/y.ts", "tools/b.ts"}},
		{"Remove", func(v *FS) (string, error) { return "", v.Remove("tools/b.ts") },
			[]string{"tools/a/x.ts", "tools/a/y.ts", "top.txt"}},
		{"Rename of a directory", func(v *FS) (string, error) {
			if err := v.Rename("tools/a", "moved"); err != nil {
				return "", err
			}
			b, err := os.ReadFile(filepath.Join(v.Root(), "moved", "y.ts"))
			return string(b), err
		}, []string{"tools/b.ts", "top.txt"}},
		{"WriteFile over one", func(v *FS) (string, error) { return "", v.WriteFile("top.txt", []byte("new"), 0o644) },
			[]string{"tools/a/x.ts", "tools/a/y.ts", "tools/b.ts"}},
	}
	want := map[string]string{
		"ReadFile": "x", "ReadFile through a link": "b", "Stat of a directory": "true", "Lstat": "3",
		"ReadDir": "a,b.ts", "Walk of the root": "tools/a/x.ts,tools/a/y.ts,tools/b.ts,top.txt",
		"Afero Open": "y", "Billy Open": "top", "Remove": "", "Rename of a directory": "y", "WriteFile over one": "",
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			p := newPendingRoot(t)
			// Without fill a read misses the files.
			if got, err := op.run(p.base); want[op.name] != "" && err == nil && got == want[op.name] {
				t.Fatalf("the FS without fill: %q, as with it", got)
			}
			if len(p.asked) != 0 {
				t.Fatalf("the FS without fill called it: %q", p.asked)
			}
			p = newPendingRoot(t)
			got, err := op.run(p.base.WithFill(p.fill))
			if err != nil {
				t.Fatal(err)
			}
			if got != want[op.name] {
				t.Fatalf("got %q, want %q", got, want[op.name])
			}
			if left := pendingOf(p); !reflect.DeepEqual(left, op.left) {
				t.Fatalf("still pending %q, want %q (fill asked %q)", left, op.left, p.asked)
			}
		})
	}
}

// TestFillViewKeepsTheJail: a path the jail refuses never reaches fill,
// and fill's error is the operation's, naming the path.
func TestFillViewKeepsTheJail(t *testing.T) {
	p := newPendingRoot(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(p.root, "out")); err != nil {
		t.Fatal(err)
	}
	v := p.base.WithFill(p.fill)
	for _, bad := range []string{"../x", "/etc/passwd", "out/x", "out", "a\x00b", ""} {
		if _, err := v.ReadFile(bad); !errors.Is(err, ErrViolation) {
			t.Errorf("ReadFile(%q): %v, want a violation", bad, err)
		}
		if err := v.Walk(bad, func(string, fs.FileInfo, error) error { return nil }); !errors.Is(err, ErrViolation) {
			t.Errorf("Walk(%q): %v, want a violation", bad, err)
		}
	}
	if err := v.Remove("."); !errors.Is(err, ErrViolation) {
		t.Errorf("Remove(.): %v, want a violation", err)
	}
	if len(p.asked) != 0 {
		t.Fatalf("fill was asked for %q", p.asked)
	}
	boom := errors.New("boom")
	v = p.base.WithFill(func(string) error { return boom })
	_, err := v.ReadFile("tools/a/x.ts")
	var pe *fs.PathError
	if !errors.Is(err, boom) || !errors.As(err, &pe) || pe.Path != "tools/a/x.ts" || pe.Op != "read" {
		t.Fatalf("ReadFile with a failing fill: %v", err)
	}
}

func pendingOf(p *pendingRoot) []string {
	var left []string
	for name := range p.pending {
		left = append(left, name)
	}
	sort.Strings(left)
	return left
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func sizeStr(i fs.FileInfo) string {
	if i == nil {
		return ""
	}
	return strconv.FormatInt(i.Size(), 10)
}

func names(infos []fs.FileInfo, err error) (string, error) {
	var out []string
	for _, i := range infos {
		out = append(out, i.Name())
	}
	return strings.Join(out, ","), err
}
