package kernel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/tools"
)

// TestRevertToolIsChecked: revert_tool checks the content it restores as
// write_file checks a tool file. A version whose import is no longer
// allowed (committed by plain git, which checks nothing) is refused
// with compile_error and nothing is written or committed; force restores
// it, its errors in the result.
func TestRevertToolIsChecked(t *testing.T) {
	remote := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	k := bootKernel(t, remote, false, WithSetting("git.refresh_interval", "0"))
	clone := gittest.Clone(t, remote)
	old := "/** Pads. */\nconst pad = require(\"left-pad\");\nexport default (a: { s: string; n: number }) => pad(a.s, a.n);\n"
	gittest.WriteFile(t, clone, "tools/pad.ts", old)
	gittest.Git(t, clone, "add", "-A")
	gittest.Git(t, clone, "commit", "-q", "-m", "pad with left-pad")
	gittest.Git(t, clone, "push", "-q", "origin", "HEAD:main")
	first := strings.TrimSpace(gittest.Git(t, remote, "rev-parse", "main"))
	if err := k.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}

	good := "/** Pads. */\nexport default (a: { s: string; n: number }) => a.s.padStart(a.n);\n"
	call(t, k, "write_file", map[string]string{"path": "tools/pad.ts", "content": good})
	commits := func() int {
		return strings.Count(gittest.Git(t, remote, "log", "--format=%H", "main", "--", "tools/pad.ts"), "\n")
	}
	if n := commits(); n != 2 {
		t.Fatalf("%d commits of the tool before the revert", n)
	}

	// A ref the repository does not have is named by the argument the
	// agent gave it in: to.
	_, err := k.RevertTool(context.Background(), "tools/pad.ts", "no-such-branch")
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindNotFound || te.Field != "to" {
		t.Fatalf("revert to an unknown ref: %v (%+v)", err, te)
	}

	_, err = k.RevertTool(context.Background(), "tools/pad.ts", first)
	if !errors.As(err, &te) || te.Kind != tools.KindCompileError || te.Field != "to" || !strings.Contains(te.Message, "left-pad") {
		t.Fatalf("revert to a version that does not check: %v", err)
	}
	if n := commits(); n != 2 {
		t.Fatalf("a refused revert committed: %d commits", n)
	}
	if b, _ := os.ReadFile(filepath.Join(k.FS().Root(), "tools", "pad.ts")); string(b) != good {
		t.Fatalf("a refused revert wrote the file: %q", b)
	}

	rev, err := k.RevertToolForce(context.Background(), "tools/pad.ts", first)
	if err != nil || rev.From != first || len(rev.Errors) == 0 || rev.Persisted == nil || !rev.Persisted.Persisted {
		t.Fatalf("forced revert: %v %+v", err, rev)
	}
	if n := commits(); n != 3 {
		t.Fatalf("a forced revert made %d commits of the tool, want 3", n)
	}
	if got := gittest.Git(t, remote, "show", "main:tools/pad.ts"); got != old {
		t.Fatalf("the remote holds %q after the forced revert", got)
	}
}
