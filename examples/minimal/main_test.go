package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// heavy are the packages a minimal host must not link: the JavaScript
// engine and compiler, the shell interpreter, the SQL drivers, the
// journal, the code hosts' SDKs, the OpenTelemetry SDK, and the packages
// whose init reads os.Args to serve a re-executed worker or helper. A
// name ending in "$" is that package alone (sandbox/hostapi and
// shell/scope are light).
var heavy = []string{
	"github.com/dop251/goja", "github.com/evanw/esbuild", "mvdan.cc/sh/", "modernc.org/sqlite", "github.com/jackc/pgx",
	"github.com/google/go-github", "gitlab.com/gitlab-org/api", "code.gitea.io/sdk", "go.opentelemetry.io/otel/sdk",
	"github.com/tgp-go/tgp/sandbox$", "github.com/tgp-go/tgp/sandbox/analysis", "github.com/tgp-go/tgp/shell$",
	"github.com/tgp-go/tgp/sqldb", "github.com/tgp-go/tgp/journal", "github.com/tgp-go/tgp/tools/forgetools",
	"github.com/tgp-go/tgp/tools/shelltools",
}

func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	return strings.Fields(string(out))
}

func linked(list, prefixes []string) []string {
	var bad []string
	for _, p := range list {
		for _, h := range prefixes {
			if exact, ok := strings.CutSuffix(h, "$"); ok {
				if p == exact {
					bad = append(bad, p)
				}
			} else if p == strings.TrimSuffix(h, "/") || strings.HasPrefix(p, strings.TrimSuffix(h, "/")+"/") {
				bad = append(bad, p)
			}
		}
	}
	return bad
}

func TestMinimalLinksNoHeavyPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	if bad := linked(deps(t, "github.com/tgp-go/tgp/examples/minimal"), heavy); len(bad) > 0 {
		t.Errorf("examples/minimal links %d heavy package(s): %s", len(bad), strings.Join(bad, " "))
	}
	// The kernel package itself links none of them either: the heavy
	// parts are toolsets a host imports (kernel/toolsets/...) or
	// kernel/all.
	if bad := linked(deps(t, "github.com/tgp-go/tgp/kernel"), heavy); len(bad) > 0 {
		t.Errorf("the kernel links %d heavy package(s): %s", len(bad), strings.Join(bad, " "))
	}
	// And minimal reaches the engines through the kernel, not around it.
	if !slices.Contains(deps(t, "github.com/tgp-go/tgp/examples/minimal"), "github.com/tgp-go/tgp/kernel") {
		t.Error("examples/minimal does not use the kernel")
	}
}

func TestMinimalPersistsToABareRepository(t *testing.T) {
	remote := filepath.Join(t.TempDir(), "toolbox.git")
	if _, err := git.PlainInit(remote, true); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	commit, err := run(ctx, remote, filepath.Join(t.TempDir(), "root"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.PlainOpen(remote)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		if head, err = r.Reference(plumbing.NewBranchReferenceName("master"), true); err != nil {
			t.Fatalf("the remote has no branch: %v", err)
		}
	}
	if head.Hash().String() != commit {
		t.Fatalf("printed %s, the remote is at %s", commit, head.Hash())
	}
	c, err := r.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.File("tools/hello.ts"); err != nil {
		t.Fatalf("the pushed commit lacks tools/hello.ts: %v", err)
	}
	// A second host on another root: already there, the same commit.
	again, err := run(ctx, remote, filepath.Join(t.TempDir(), "root2"))
	if err != nil || again != commit {
		t.Fatalf("second run: %s %v, want %s", again, err, commit)
	}
}
