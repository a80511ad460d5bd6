package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitpath"
	"github.com/tgp-go/tgp/tools"
)

// Paths that name .git in disguise, and their kin: each is .git on some
// filesystem, or a tree git fsck --strict rejects.
var hostilePaths = []string{
	".GIT/config", "git~1/config", ".git\u200c/config", "tools/.Git/hooks/post-checkout",
	".git./config", ".git::$INDEX_ALLOCATION/config", "a\\.git\\config", "\\.git/config",
	"GIT~1/hooks/pre-commit", "\u200e.g\ufeffit/config", ".gitmodules/x",
}

func wantGitRefusal(t *testing.T, err error, rel string) {
	t.Helper()
	wantKind(t, err, tools.KindSandboxViolation, "invalid path '"+rel+"'")
	if !errors.Is(err, gitpath.ErrInvalidPath) {
		t.Fatalf("%v does not wrap gitpath.ErrInvalidPath", err)
	}
}

func jsonStr(s string) string { return strconv.Quote(s) }

func TestWriteToolsRefuseGitPaths(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "tools/a.ts", "one\n")
		for _, p := range hostilePaths {
			_, err := e.call("write_file", `{"path":`+jsonStr(p)+`,"content":"[core]\n\tfsmonitor = touch /tmp/pwned\n"}`)
			wantGitRefusal(t, err, p)
			_, err = e.call("write_file", `{"path":`+jsonStr("./tools/../"+p)+`,"content":"x"}`)
			if err == nil {
				t.Fatalf("write_file %q accepted", "./tools/../"+p)
			}
			wantKind(t, err, tools.KindSandboxViolation, "")
			_, err = e.call("apply_patch", `{"patch":`+jsonStr("*** Begin Patch\n*** Add File: "+p+"\n+x\n*** End Patch")+`}`)
			wantGitRefusal(t, err, p)
			_, err = e.call("apply_patch", `{"patch":`+jsonStr("*** Begin Patch\n*** Update File: tools/a.ts\n*** Move to: "+p+"\n@@\n-one\n+two\n*** End Patch")+`}`)
			wantGitRefusal(t, err, p)
			_, err = e.call("apply_patch", `{"patch":`+jsonStr("--- /dev/null\n+++ b/"+p+"\n@@ -0,0 +1 @@\n+x\n")+`}`)
			wantGitRefusal(t, err, p)
			_, err = e.call("apply_patch", `{"patch":`+jsonStr("diff --git a/tools/a.ts b/"+p+"\nsimilarity index 100%\nrename from tools/a.ts\nrename to "+p+"\n")+`}`)
			if err == nil {
				t.Fatalf("git rename to %q accepted", p)
			}
		}
		if len(e.rec.changes) != 0 {
			t.Fatalf("refused writes were persisted: %+v", e.rec.changes)
		}
		if got := e.read(t, "tools/a.ts"); got != "one\n" {
			t.Fatalf("tools/a.ts changed to %q", got)
		}
		if _, err := e.fs.Stat(".GIT"); err == nil {
			t.Fatal(".GIT was created")
		}
	})
}

// countingFS counts the mutations that reach the jail.
type countingFS struct {
	tools.FileSystem
	writes int
}

func (c *countingFS) WriteFile(p string, data []byte, perm fs.FileMode) error {
	c.writes++
	return c.FileSystem.WriteFile(p, data, perm)
}

func (c *countingFS) Remove(p string) error {
	c.writes++
	return c.FileSystem.Remove(p)
}

// A patch with one bad path among good ones changes nothing at all, in
// either format, wherever the bad path sits: it is refused before the
// first write reaches the jail.
func TestApplyPatchAllOrNothingOnGitPaths(t *testing.T) {
	both(t, func(t *testing.T, e *env) {
		e.write(t, "a.txt", "one\n")
		cfs := &countingFS{FileSystem: e.fs}
		set := tools.NewSet()
		if err := set.Add(tools.FileTools(cfs, e.rec, tools.FileToolsConfig{})...); err != nil {
			t.Fatal(err)
		}
		e.call = func(name, args string) (tools.Result, error) {
			return set.Call(context.Background(), name, json.RawMessage(args))
		}
		envelopes := []string{
			"*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** Add File: good.txt\n+g\n*** Add File: GIT~1/config\n+x\n*** End Patch",
			"*** Begin Patch\n*** Add File: .GIT/hooks/pre-commit\n+x\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch",
			"*** Begin Patch\n*** Add File: good.txt\n+g\n*** Update File: a.txt\n*** Move to: x/.git\u200d/config\n@@\n-one\n+two\n*** End Patch",
		}
		for _, env := range envelopes {
			_, err := e.call("apply_patch", `{"patch":`+jsonStr(env)+`}`)
			wantKind(t, err, tools.KindSandboxViolation, "invalid path '")
		}
		unified := "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n--- /dev/null\n+++ b/good.txt\n@@ -0,0 +1 @@\n+g\n--- /dev/null\n+++ b/.git./config\n@@ -0,0 +1 @@\n+x\n"
		_, err := e.call("apply_patch", `{"patch":`+jsonStr(unified)+`}`)
		wantGitRefusal(t, err, ".git./config")
		if got := e.read(t, "a.txt"); got != "one\n" {
			t.Fatalf("a.txt = %q after refused patches", got)
		}
		if _, err := e.fs.Stat("good.txt"); err == nil {
			t.Fatal("good.txt written by a refused patch")
		}
		if len(e.rec.changes) != 0 || cfs.writes != 0 {
			t.Fatalf("persisted %+v, %d writes reached the jail", e.rec.changes, cfs.writes)
		}
	})
}

// Names a clone may already hold stay readable, listable, deletable and
// movable to a good name; only writing to them is refused.
func TestOddNamesInTheRepositoryStillRead(t *testing.T) {
	e := newEnv(t, false)
	for _, p := range []string{".GIT/config", "d/git~1", "d/ok.txt"} {
		full := filepath.Join(e.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("odd\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.call("read_file", `{"path":".GIT/config"}`); err != nil {
		t.Fatalf("read_file: %v", err)
	}
	res, err := e.call("list_files", `{"dir":"."}`)
	if err != nil || !strings.Contains(toJSON(t, res.Value), "d/git~1") {
		t.Fatalf("list_files: %v %s", err, toJSON(t, res.Value))
	}
	if _, err := e.call("grep_files", `{"pattern":"odd"}`); err != nil {
		t.Fatalf("grep_files: %v", err)
	}
	_, err = e.call("patch_file", `{"path":"d/git~1","old_string":"odd","new_string":"x"}`)
	wantGitRefusal(t, err, "d/git~1")
	_, err = e.call("apply_patch", `{"patch":`+jsonStr("*** Begin Patch\n*** Update File: d/git~1\n@@\n-odd\n+x\n*** End Patch")+`}`)
	wantGitRefusal(t, err, "d/git~1")
	if _, err := e.call("apply_patch", `{"patch":`+jsonStr("*** Begin Patch\n*** Update File: d/git~1\n*** Move to: d/fixed\n@@\n-odd\n+odd\n*** End Patch")+`}`); err != nil {
		t.Fatalf("moving an odd name to a good one: %v", err)
	}
	if _, err := e.call("delete_file", `{"path":".GIT/config"}`); err != nil {
		t.Fatalf("delete_file: %v", err)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
