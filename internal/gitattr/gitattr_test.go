package gitattr

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func requireGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
}

func gitIn(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@e"}
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

var attrLines = []string{
	"*.txt text", "*.txt -text", "*.bin binary", "* text=auto", "*.md eol=crlf", "*.md text eol=lf",
	"*.c diff=cpp", "*.c -diff", "docs/** foo=bar", "/top.txt foo", "*.txt !text", "[attr]mine text eol=crlf",
	"*.cfg mine", "sub/*.txt -foo", "a*.txt crlf", "*.log -crlf", "# a comment", "", "*.txt diff eol=crlf",
}

var attrPaths = []string{"a.txt", "top.txt", "x.bin", "r.md", "k.c", "docs/d.txt", "docs/deep/e.md", "sub/s.txt", "sub/a1.txt", "c.cfg", "z.log", "sub/deeper/q.c"}

// TestLookupMatchesCheckAttr compares Lookup with `git check-attr` on
// generated .gitattributes files at the top, in subdirectories and in
// info/attributes.
func TestLookupMatchesCheckAttr(t *testing.T) {
	requireGit(t)
	n := 40
	if testing.Short() {
		n = 10
	}
	names := []string{"text", "eol", "diff", "crlf", "binary", "foo", "merge"}
	for seed := int64(1); seed <= int64(n); seed++ {
		r := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		gitIn(t, dir, nil, "init", "-q")
		files := map[string][]byte{}
		gen := func() []byte {
			var b strings.Builder
			for i := r.Intn(5); i >= 0; i-- {
				b.WriteString(attrLines[r.Intn(len(attrLines))] + "\n")
			}
			return []byte(b.String())
		}
		for _, name := range []string{".gitattributes", "sub/.gitattributes", "docs/.gitattributes"} {
			if r.Intn(3) > 0 {
				files[name] = gen()
			}
		}
		var info []byte
		if r.Intn(3) == 0 {
			info = gen()
			if err := os.WriteFile(filepath.Join(dir, ".git", "info", "attributes"), info, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for name, data := range files {
			full := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		a := New(func(name string) ([]byte, bool) { d, ok := files[name]; return d, ok }, info)
		out := gitIn(t, dir, []byte(strings.Join(attrPaths, "\n")+"\n"), append([]string{"check-attr", "--stdin"}, names...)...)
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			parts := strings.SplitN(line, ": ", 3)
			if len(parts) != 3 {
				t.Fatalf("check-attr line %q", line)
			}
			p, name, want := parts[0], parts[1], parts[2]
			v := a.Lookup(p, name)[name]
			got := "unspecified"
			switch {
			case v.Set:
				got = "set"
			case v.Unset:
				got = "unset"
			case v.Str != "":
				got = v.Str
			}
			if got != want {
				t.Errorf("seed %d: %s %s = %s, git check-attr says %s\nfiles: %q\ninfo: %q", seed, p, name, got, want, files, info)
			}
		}
	}
}

// TestEOLMatchesGit stores and checks out generated files under generated
// attributes and core.autocrlf / core.eol, comparing ToGit with the blob
// `git add` stores and ToWorktree with what `git checkout` writes.
func TestEOLMatchesGit(t *testing.T) {
	requireGit(t)
	contents := [][]byte{[]byte("a\nb\n"), []byte("a\r\nb\r\n"), []byte("a\r\nb\n"), []byte("bin\x00\r\n"), []byte("lone\rcr\n"), []byte("x"), []byte("\n\n"),
		[]byte("$Id$\n"), []byte("a $Id: 0123 $ b\r\n$Id$\r\n"), []byte("$Id: has space inside $\n"), []byte("$Id:\n$ $Id: x$"), []byte("$Id$Id$\n$Id"),
		[]byte("$Id: $\n$Id:$\n"), []byte("x$Id: abc\n"), []byte("$I$Id$\x00\n")}
	lines := []string{"* text=auto", "*.txt text", "*.txt eol=crlf", "*.md eol=lf", "*.txt -text", "*.md text=auto eol=crlf", "*.bin binary", "*.txt crlf=input",
		"* ident", "*.c ident", "*.txt ident", "*.md -ident"}
	n := 40
	if testing.Short() {
		n = 10
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		r := rand.New(rand.NewSource(seed))
		dir := t.TempDir()
		gitIn(t, dir, nil, "init", "-q")
		autocrlf := []string{"", "true", "input", "false"}[r.Intn(4)]
		coreEOL := []string{"", "crlf", "lf"}[r.Intn(3)]
		if autocrlf != "" {
			gitIn(t, dir, nil, "config", "core.autocrlf", autocrlf)
		}
		if coreEOL != "" {
			gitIn(t, dir, nil, "config", "core.eol", coreEOL)
		}
		var attrs strings.Builder
		for i := r.Intn(3); i > 0; i-- {
			attrs.WriteString(lines[r.Intn(len(lines))] + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte(attrs.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		paths := []string{"f.txt", "g.md", "h.bin", "i.c"}
		data := map[string][]byte{}
		for _, p := range paths {
			data[p] = contents[r.Intn(len(contents))]
			if err := os.WriteFile(filepath.Join(dir, p), data[p], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := &EOL{Attrs: New(func(name string) ([]byte, bool) {
			if name == ".gitattributes" {
				return []byte(attrs.String()), true
			}
			return nil, false
		}, nil), AutoCRLF: autocrlf, CoreEOL: coreEOL, Ident: true}
		ctx := fmt.Sprintf("seed %d (autocrlf=%q eol=%q attrs=%q)", seed, autocrlf, coreEOL, attrs.String())
		gitIn(t, dir, nil, append([]string{"add", "--"}, paths...)...)
		for _, p := range paths {
			stored := gitIn(t, dir, nil, "cat-file", "blob", ":"+p)
			if got := c.ToGit(p, data[p]); string(got) != stored {
				t.Errorf("%s: ToGit(%s, %q) = %q, git stored %q", ctx, p, data[p], got, stored)
			}
		}
		for _, p := range paths {
			if err := os.Remove(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
		}
		gitIn(t, dir, nil, append([]string{"checkout", "--"}, paths...)...)
		for _, p := range paths {
			written, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				t.Fatal(err)
			}
			blob := []byte(gitIn(t, dir, nil, "cat-file", "blob", ":"+p))
			if got := c.ToWorktree(p, blob); !bytes.Equal(got, written) {
				t.Errorf("%s: ToWorktree(%s, %q) = %q, git wrote %q", ctx, p, blob, got, written)
			}
		}
	}
}
