package gittools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/tools"
	"github.com/tgp-go/tgp/vfs"
)

// TestTimeoutNeverReportsAChangeMade: a mutating git tool
// whose deadline has passed refuses before changing anything (index,
// worktree, refs, stash byte-identical to before); and with a deadline
// that may expire while it runs, it either reports timeout having changed
// nothing or succeeds having made the whole change, never a timeout after
// the change.
func TestTimeoutNeverReportsAChangeMade(t *testing.T) {
	f := history(t)
	for i := 0; i < 1500; i++ {
		f.write(t, fmt.Sprintf("bulk/%02d/f%04d.txt", i%37, i), fmt.Sprint("content ", i, "\n"))
	}
	f.write(t, "src/app.ts", "changed\n")
	state := func() string {
		return f.git(t, "ls-files", "-s") + "|" + f.git(t, "status", "--porcelain=v2", "--branch", "--untracked-files=all") +
			"|" + f.git(t, "for-each-ref") + "|" + f.git(t, "stash", "list")
	}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"git_add", map[string]any{"all": true}},
		{"git_add", map[string]any{"paths": []string{"bulk"}}},
		{"git_restore", map[string]any{"paths": []string{"."}}},
		{"git_checkout", map[string]any{"paths": []string{"src/app.ts"}}},
		{"git_stash", map[string]any{"action": "push", "include_untracked": true}},
		{"git_commit", map[string]any{"type": "chore", "message": "x"}},
	} {
		before := state()
		raw, _ := json.Marshal(c.args)
		_, err := f.set.Call(expired, c.tool, raw)
		var te *tools.Error
		if !errors.As(err, &te) || (te.Kind != tools.KindTimeout && te.Kind != tools.KindCancelled) {
			t.Fatalf("%s %s with an expired deadline: want timeout, got %v", c.tool, raw, err)
		}
		if after := state(); after != before {
			t.Fatalf("%s %s timed out but changed the repository", c.tool, raw)
		}
	}
	// A deadline that may pass during the run: all or nothing.
	before := state()
	raw, _ := json.Marshal(map[string]any{"all": true, "timeout_ms": 100})
	_, err := f.set.Call(context.Background(), "git_add", raw)
	after := state()
	var te *tools.Error
	switch {
	case err == nil:
		if f.git(t, "status", "--porcelain", "--untracked-files=all") == "" || f.git(t, "diff", "--name-only") != "" {
			t.Fatal("git_add all succeeded but left changes unstaged")
		}
	case errors.As(err, &te) && te.Kind == tools.KindTimeout:
		if after != before {
			t.Fatal("git_add reported a timeout after staging")
		}
	default:
		t.Fatal(err)
	}
}

// TestRunReportsCompletedWorkAsSuccess: the contract behind the above,
// made deterministic. A function that finishes after the deadline passed
// (a change that was already under way) is a success with its output;
// one that gives up with the context's error is a timeout.
func TestRunReportsCompletedWorkAsSuccess(t *testing.T) {
	f := history(t)
	fsys, err := vfs.NewOS(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, TimeoutMS: 100}
	out, err := d.run(context.Background(), "", 100, func(ctx context.Context, r *git.Repository) (string, error) {
		<-ctx.Done() // the deadline passes while the change completes
		return "done\n", nil
	})
	if err != nil || out != "done\n" {
		t.Fatalf("completed after the deadline: got %q, %v; want success", out, err)
	}
	_, err = d.run(context.Background(), "", 100, func(ctx context.Context, r *git.Repository) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	var te *tools.Error
	if !errors.As(err, &te) || te.Kind != tools.KindTimeout {
		t.Fatalf("gave up at the deadline: got %v, want timeout", err)
	}
}
