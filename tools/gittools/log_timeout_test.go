package gittools

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	gogit "github.com/go-git/go-git/v5"

	"github.com/tgp-go/tgp/gitbackend"
	"github.com/tgp-go/tgp/vfs"
)

// expiring is a context whose deadline passes at its n-th Err check: a
// timeout at a known point of a walk, with no clock involved.
type expiring struct {
	context.Context
	left atomic.Int64
}

func (e *expiring) Err() error {
	if e.left.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return e.Context.Err()
}

// T-GIT-TIMEOUT-02: git_log past its deadline returns the
// commits it printed until then, newest first as git prints them, marked
// and flagged truncated with the reason; the walk (plain, path-limited,
// following a file) stops at the deadline.
func TestLogTimeoutReturnsFirstCommits(t *testing.T) {
	const commits, checks = 3000, 25
	f := bigHistory(t, commits)
	fsys, err := vfs.NewOS(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := gitbackend.Open(context.Background(), fsys.Billy(), gitbackend.Config{})
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{FS: fsys, Repo: func() *gitbackend.Repo { return repo }, Environ: []string{"GIT_CONFIG_NOSYSTEM=1"}, MaxBytes: 1 << 20}
	yes := true
	for name, a := range map[string]logArgs{
		"plain":  {Oneline: true},
		"medium": {},
		"path":   {Oneline: true, Path: "f"},
		"follow": {Oneline: true, Path: "f", Follow: &yes},
	} {
		t.Run(name, func(t *testing.T) {
			// The deadline that passes is x's; the call's own is one no
			// machine reaches (100 ms passed first on a loaded one, before
			// the walk printed anything).
			res, err := d.text(context.Background(), "", 600000, 0, func(ctx context.Context, r *gogit.Repository) (string, error) {
				x := &expiring{Context: ctx}
				x.left.Store(checks)
				return d.gitLog(x, r, ".", a)
			})
			if err != nil {
				t.Fatalf("a timeout after output is a result, got %v", err)
			}
			out := res.Value.(string)
			if !res.Truncated || !strings.HasSuffix(out, TimeoutMarker) || !strings.Contains(res.TruncatedReason, "timeout: the command ran past its 600000ms deadline") {
				t.Fatalf("not marked: truncated=%v reason=%q tail=%q", res.Truncated, res.TruncatedReason, out[max(0, len(out)-60):])
			}
			// The first commits git log prints, in its order, and not the
			// rest.
			var shown []string
			for _, l := range strings.Split(strings.TrimSuffix(out, TimeoutMarker), "\n") {
				if i := strings.Index(l, " c"); i >= 0 && (a.Oneline || strings.HasPrefix(l, "    c")) {
					shown = append(shown, strings.TrimSpace(l[i:]))
				}
			}
			if len(shown) == 0 || len(shown) > checks {
				t.Fatalf("%d commits shown:\n%s", len(shown), out)
			}
			for i, s := range shown {
				if want := fmt.Sprintf("c%06d", commits-i); s != want {
					t.Fatalf("commit %d is %q, want %q (git log's order)", i, s, want)
				}
			}
		})
	}
	// With nothing printed yet, a timeout is an error, not an empty result.
	_, err = d.text(context.Background(), "", 100, 0, func(ctx context.Context, r *gogit.Repository) (string, error) {
		x := &expiring{Context: ctx}
		return d.gitLog(x, r, ".", logArgs{Oneline: true})
	})
	if err == nil || !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Fatalf("timeout before any output: %v", err)
	}
}
