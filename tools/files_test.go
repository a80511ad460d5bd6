package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// recorder is a Persister that remembers what it was asked to persist.
type recorder struct{ changes []tools.Change }

func (r *recorder) Persist(ctx context.Context, ch tools.Change) (*tools.Persisted, error) {
	r.changes = append(r.changes, ch)
	return &tools.Persisted{Persisted: true, Commit: "c0ffee"}, nil
}

type env struct {
	set  *tools.Set
	fs   *vfs.FS
	dir  string // "" for memory
	rec  *recorder
	call func(name, args string) (tools.Result, error)
}

func newEnv(t *testing.T, memory bool) *env {
	t.Helper()
	var f *vfs.FS
	dir := ""
	if memory {
		f = vfs.NewMemory()
	} else {
		dir = t.TempDir()
		var err error
		if f, err = vfs.NewOS(dir); err != nil {
			t.Fatal(err)
		}
	}
	rec := &recorder{}
	set := tools.NewSet(tools.WithClassifier(func(err error) tools.Kind {
		if errors.Is(err, vfs.ErrViolation) {
			return tools.KindSandboxViolation
		}
		return ""
	}))
	if err := set.Add(tools.FileTools(f, rec, tools.FileToolsConfig{BlockUpwardTraversal: true})...); err != nil {
		t.Fatal(err)
	}
	e := &env{set: set, fs: f, dir: dir, rec: rec}
	e.call = func(name, args string) (tools.Result, error) {
		return set.Call(context.Background(), name, json.RawMessage(args))
	}
	return e
}

func (e *env) write(t *testing.T, p, content string) {
	t.Helper()
	if err := e.fs.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (e *env) read(t *testing.T, p string) string {
	t.Helper()
	b, err := e.fs.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantKind(t *testing.T, err error, kind tools.Kind, contains string) {
	t.Helper()
	var te *tools.Error
	if !errors.As(err, &te) {
		t.Fatalf("want %s error, got %v", kind, err)
	}
	if te.Kind != kind || !strings.Contains(te.Message, contains) {
		t.Fatalf("got %s %q, want %s containing %q", te.Kind, te.Message, kind, contains)
	}
}

func both(t *testing.T, f func(t *testing.T, e *env)) {
	t.Run("os", func(t *testing.T) { f(t, newEnv(t, false)) })
	t.Run("memory", func(t *testing.T) { f(t, newEnv(t, true)) })
}

func TestReadFile(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "tools/a.ts", "one\ntwo\nthree\n"+strings.Repeat("x", 2100)+"\n")
		res, err := e.call("read_file", `{"path":"tools/a.ts","offset":2,"limit":3}`)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Value.(tools.ReadFileResult)
		want := "     2\ttwo\n     3\tthree\n     4\t" + strings.Repeat("x", 400) + tools.LineTruncationMarker + "\n"
		if r.Content != want || r.TotalLines != 4 || r.StartLine != 2 || r.EndLine != 4 || !res.Truncated {
			t.Fatalf("got %+v", r)
		}
		if r.Hash != tools.BlobHash([]byte(e.read(t, "tools/a.ts"))) {
			t.Fatal("hash mismatch")
		}
		_, err = e.call("read_file", `{"path":"missing.ts"}`)
		wantKind(t, err, tools.KindNotFound, "")
		_, err = e.call("read_file", `{"path":"tools/a.ts","offset":9}`)
		wantKind(t, err, tools.KindBadArgs, "past the end")
	})
}

func TestBlobHashMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	content := "hello\nwörld\n"
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "hash-object", p).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := tools.BlobHash([]byte(content)); got != strings.TrimSpace(string(out)) {
		t.Fatalf("BlobHash %s, git %s", got, out)
	}
}

func TestJailViolations(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		for _, args := range []string{
			`{"path":"../../etc/passwd"}`,
			`{"path":"/etc/passwd"}`,
			`{"path":"a\u0000b"}`,
			`{"path":""}`,
			`{"path":".git/config"}`,
		} {
			_, err := e.call("read_file", args)
			wantKind(t, err, tools.KindSandboxViolation, "")
		}
		_, err := e.call("write_file", `{"path":"../escape.txt","content":"x"}`)
		wantKind(t, err, tools.KindSandboxViolation, "")
		if e.dir != "" {
			if _, err := os.Stat(filepath.Join(filepath.Dir(e.dir), "escape.txt")); err == nil {
				t.Fatal("write escaped the root")
			}
			if err := os.Symlink("/etc", filepath.Join(e.dir, "etc")); err != nil {
				t.Fatal(err)
			}
			_, err = e.call("read_file", `{"path":"etc/passwd"}`)
			wantKind(t, err, tools.KindSandboxViolation, "")
		}
	})
}

func TestWriteFileAndExpectedHash(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		res, err := e.call("write_file", `{"path":"tools/deep/new.ts","content":"v1\n"}`)
		if err != nil {
			t.Fatal(err)
		}
		w := res.Value.(tools.WriteResult)
		if !w.Created || w.Hash != tools.BlobHash([]byte("v1\n")) || !w.Persisted.Persisted {
			t.Fatalf("got %+v", w)
		}
		if got := e.read(t, "tools/deep/new.ts"); got != "v1\n" {
			t.Fatalf("content %q", got)
		}
		if len(e.rec.changes) != 1 || e.rec.changes[0].Paths[0] != "tools/deep/new.ts" || e.rec.changes[0].Message != "forge: tools/deep/new.ts" {
			t.Fatalf("persist calls %+v", e.rec.changes)
		}
		h1 := w.Hash
		e.write(t, "tools/deep/new.ts", "someone else\n")
		_, err = e.call("write_file", `{"path":"tools/deep/new.ts","content":"v2\n","expected_hash":"`+h1+`"}`)
		wantKind(t, err, tools.KindConflict, "changed since it was read")
		if got := e.read(t, "tools/deep/new.ts"); got != "someone else\n" {
			t.Fatalf("conflicting write clobbered the file: %q", got)
		}
		cur := tools.BlobHash([]byte("someone else\n"))
		if _, err := e.call("write_file", `{"path":"tools/deep/new.ts","content":"v2\n","expected_hash":"`+cur+`"}`); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPatchFile(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "a.ts", "let x = 1;\nlet y = 1;\n")
		_, err := e.call("patch_file", `{"path":"a.ts","old_string":"= 1","new_string":"= 2"}`)
		wantKind(t, err, tools.KindBadArgs, "Found 2 matches")
		_, err = e.call("patch_file", `{"path":"a.ts","old_string":"nope","new_string":"x"}`)
		wantKind(t, err, tools.KindNotFound, "String to replace not found in file.")
		res, err := e.call("patch_file", `{"path":"a.ts","search":"let x = 1","replace":"let x = 3"}`)
		if err != nil {
			t.Fatal(err)
		}
		if res.Value.(tools.WriteResult).Replacements != 1 || e.read(t, "a.ts") != "let x = 3;\nlet y = 1;\n" {
			t.Fatalf("got %q", e.read(t, "a.ts"))
		}
		if _, err := e.call("patch_file", `{"path":"a.ts","old_string":"let","new_string":"const","replace_all":true}`); err != nil {
			t.Fatal(err)
		}
		if got := e.read(t, "a.ts"); got != "const x = 3;\nconst y = 1;\n" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestListFilesAndDir(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "tools/b.ts", "b")
		e.write(t, "tools/a/x.ts", "x")
		e.write(t, "README.md", "r")
		if err := e.fs.WriteFile("run.sh", []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := e.call("list_files", `{"dir":"tools"}`)
		if err != nil {
			t.Fatal(err)
		}
		files := res.Value.(tools.ListFilesResult).Files
		if strings.Join(files, ",") != "tools/a/x.ts,tools/b.ts" {
			t.Fatalf("files %v", files)
		}
		res, err = e.call("list_dir", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		want := "README.md\nrun.sh*\ntools/\ntools/a/\ntools/b.ts"
		if res.Value.(string) != want {
			t.Fatalf("list_dir:\n%s\nwant:\n%s", res.Value, want)
		}
		res, err = e.call("list_dir", `{"depth":3,"offset":1,"limit":2}`)
		if err != nil {
			t.Fatal(err)
		}
		if res.Value.(string) != "run.sh*\ntools/\n[3 more entries; call again with offset 3]" {
			t.Fatalf("paged list_dir: %q", res.Value)
		}
		_, err = e.call("list_dir", `{"bogus":1}`)
		wantKind(t, err, tools.KindBadArgs, "bogus")
	})
}

func TestGrepFiles(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "tools/a.ts", "export const a = 1;\n// TODO one\n")
		e.write(t, "tools/lib/b.ts", "// TODO two\n// TODO three\n")
		e.write(t, "notes.md", "TODO md\n")
		res, err := e.call("grep_files", `{"pattern":"TODO \\w+","include":"*.ts"}`)
		if err != nil {
			t.Fatal(err)
		}
		want := "tools/a.ts:2:// TODO one\ntools/lib/b.ts:1:// TODO two\ntools/lib/b.ts:2:// TODO three"
		if res.Value.(string) != want {
			t.Fatalf("grep:\n%s", res.Value)
		}
		res, err = e.call("grep_files", `{"pattern":"TODO","limit":2}`)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || !strings.Contains(res.Value.(string), "stopped at the limit of 2") {
			t.Fatalf("limit: %q", res.Value)
		}
		_, err = e.call("grep_files", `{"pattern":"("}`)
		wantKind(t, err, tools.KindBadArgs, "invalid regular expression")
	})
}

func TestDeleteFile(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "tools/x.ts", "x")
		if _, err := e.call("delete_file", `{"path":"tools/x.ts"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.fs.Stat("tools/x.ts"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("still there: %v", err)
		}
		_, err := e.call("delete_file", `{"path":"tools/x.ts"}`)
		wantKind(t, err, tools.KindNotFound, "")
	})
}

func TestApplyPatchEnvelope(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "src/a.ts", "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 2;\n}\n")
		e.write(t, "src/old.ts", "gone\n")
		e.write(t, "src/mv.ts", "keep\nme\n")
		patch := "*** Begin Patch\n" +
			"*** Add File: src/new.ts\n+hello\n+world\n" +
			"*** Update File: src/a.ts\n@@ function b() {\n-  return 2;\n+  return 22;\n" +
			"*** Update File: src/mv.ts\n*** Move to: src/moved.ts\n@@\n keep\n-me\n+you\n*** End of File\n" +
			"*** Delete File: src/old.ts\n" +
			"*** End Patch"
		raw, _ := json.Marshal(map[string]string{"patch": patch})
		res, err := e.call("apply_patch", string(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := e.read(t, "src/a.ts"); got != "function a() {\n  return 1;\n}\n\nfunction b() {\n  return 22;\n}\n" {
			t.Fatalf("a.ts %q", got)
		}
		if e.read(t, "src/new.ts") != "hello\nworld\n" || e.read(t, "src/moved.ts") != "keep\nyou\n" {
			t.Fatal("add/move wrong")
		}
		for _, gone := range []string{"src/old.ts", "src/mv.ts"} {
			if _, err := e.fs.Stat(gone); err == nil {
				t.Fatalf("%s still exists", gone)
			}
		}
		w := res.Value.(tools.WriteResult)
		if len(w.Files) != 4 || len(e.rec.changes) != 1 || len(e.rec.changes[0].Paths) != 5 {
			t.Fatalf("result %+v changes %+v", w, e.rec.changes)
		}
	})
}

func TestApplyPatchAtomic(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "one.txt", "a\nb\nc\n")
		e.write(t, "two.txt", "x\ny\nz\n")
		for _, patch := range []string{
			"*** Begin Patch\n*** Update File: one.txt\n a\n-b\n+B\n*** Update File: two.txt\n x\n-NOT THERE\n+Y\n*** End Patch",
			"--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n--- a/two.txt\n+++ b/two.txt\n@@ -1,3 +1,3 @@\n x\n-NOT THERE\n+Y\n z\n",
		} {
			raw, _ := json.Marshal(map[string]string{"patch": patch})
			_, err := e.call("apply_patch", string(raw))
			wantKind(t, err, tools.KindBadArgs, "NOT THERE")
			if e.read(t, "one.txt") != "a\nb\nc\n" || e.read(t, "two.txt") != "x\ny\nz\n" {
				t.Fatal("a failed patch changed a file")
			}
		}
		if len(e.rec.changes) != 0 {
			t.Fatal("a failed patch was persisted")
		}
	})
}

func TestApplyPatchUnified(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "one.txt", "a\nb\nc\n")
		patch := "--- a/one.txt\n+++ b/one.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n" +
			"--- /dev/null\n+++ b/fresh.txt\n@@ -0,0 +1,2 @@\n+new\n+file\n"
		raw, _ := json.Marshal(map[string]string{"patch": patch})
		if _, err := e.call("apply_patch", string(raw)); err != nil {
			t.Fatal(err)
		}
		if e.read(t, "one.txt") != "a\nB\nc\n" || e.read(t, "fresh.txt") != "new\nfile\n" {
			t.Fatalf("got %q %q", e.read(t, "one.txt"), e.read(t, "fresh.txt"))
		}
		raw, _ = json.Marshal(map[string]string{"patch": "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+evil\n"})
		_, err := e.call("apply_patch", string(raw))
		wantKind(t, err, tools.KindSandboxViolation, "")
	})
}
