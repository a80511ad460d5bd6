package gitbackend

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// testCarryKey is the fleet's key the tests' roots prove their carries
// with (Config.CarryKey).
var testCarryKey = []byte("the fleet's carry key, for tests")

// race says how lostRace sets up: carries turned off, roots without the
// fleet's key, the remote served by git daemon instead of smart HTTP, and
// git config ("key value" pairs) set on the remote.
type race struct {
	noCarry, noKey, daemon bool
	config                 []string
}

// lostRace seeds a remote served over the network, boots roots A and B
// on machines of their own, then moves main from a third machine: A's and
// B's next pushes are each behind and lose their first attempt. It
// returns the bare repository and its URL.
func lostRace(t *testing.T, rc race) (bare, url string, a, b *agent) {
	t.Helper()
	bare = gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	for i := 0; i+1 < len(rc.config); i += 2 {
		gittest.Git(t, bare, "config", rc.config[i], rc.config[i+1])
	}
	if rc.daemon {
		url = gittest.Daemon(t, filepath.Dir(bare)) + "/" + filepath.Base(bare)
	} else {
		url = gittest.NewHTTPServer(t, filepath.Dir(bare), "").URL(filepath.Base(bare))
	}
	retry := RetryConfig{BaseDelay: 2 * time.Millisecond, NoCarry: rc.noCarry}
	a, b = machineAgentWith(t, url, t.TempDir(), retry), machineAgentWith(t, url, t.TempDir(), retry)
	if rc.noKey {
		a.repo.cfg.CarryKey, b.repo.cfg.CarryKey = nil, nil
	}
	other := filepath.Join(t.TempDir(), "other")
	gittest.Git(t, "", "clone", "-q", bare, other)
	gittest.Git(t, other, "-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "--allow-empty", "-m", "other machine")
	gittest.Git(t, other, "push", "-q", "origin", "HEAD:main")
	return bare, url, a, b
}

// TestLostPushIsLandedByTheWinner: root A's push loses to another
// machine's; before A tries again, root B (a third machine, also behind)
// pushes. With carrying, B's push lands A's commit too (A left it on the
// remote when it lost), and A's retry finds nothing left to push; the
// carry refs are gone, history is linear with each change once, and git
// fsck accepts it. Without (git.retry.carry false), or without the
// fleet's key to prove a carry (git.carry_key_env), A's commit is not on
// the remote until A pushes it itself.
func TestLostPushIsLandedByTheWinner(t *testing.T) {
	for _, rc := range []race{{}, {noCarry: true}, {noKey: true}, {daemon: true}} {
		t.Run(fmt.Sprintf("noCarry=%v,noKey=%v,daemon=%v", rc.noCarry, rc.noKey, rc.daemon), func(t *testing.T) {
			bare, _, a, b := lostRace(t, rc)
			noCarry := rc.noCarry || rc.noKey

			var afterB string
			sleep := a.repo.sleep
			a.repo.sleep = func(ctx context.Context, d time.Duration) error {
				if afterB == "" {
					afterB = "-"
					b.write(t, "tools/b1.ts", "b1\n")
					afterB = gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
					// And one more, so that the tip A finds is not the
					// commit that holds its change.
					b.write(t, "tools/b2.ts", "b2\n")
				}
				return sleep(ctx, d)
			}
			res := a.write(t, "tools/a1.ts", "a1\n")
			if afterB == "" {
				t.Fatal("A's first push was not refused")
			}
			landedByB := strings.Contains(afterB, "tools/a1.ts")
			if landedByB == noCarry {
				t.Fatalf("after B's push, A's change on the remote: %v (carrying: %v)\n%s", landedByB, !noCarry, afterB)
			}
			files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
			if !strings.Contains(files, "tools/a1.ts") || !strings.Contains(files, "tools/b1.ts") {
				t.Fatalf("the remote lacks a change:\n%s", files)
			}
			if n := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--count", "main")); n != "5" {
				t.Fatalf("%s commits on main, want 5 (seed, other, b1, a1, b2):\n%s", n, gittest.Git(t, bare, "log", "--oneline", "main"))
			}
			// A's write names the commit that holds it, on main.
			if got := gittest.Git(t, bare, "log", "-1", "--format=%s", res.Commit); got != "forge: tools/a1.ts\n" {
				t.Fatalf("A's write names commit %s, %q:\n%s", res.Commit, got, gittest.Git(t, bare, "log", "--oneline", "main"))
			}
			if _, err := gittest.GitErr(bare, "merge-base", "--is-ancestor", res.Commit, "main"); err != nil {
				t.Fatalf("A's commit %s is not on main", res.Commit)
			}
			if merges := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--merges", "main")); merges != "" {
				t.Fatalf("merges on main: %s", merges)
			}
			if refs := strings.TrimSpace(gittest.Git(t, bare, "for-each-ref", "refs/tgp")); refs != "" {
				t.Fatalf("carry refs left on the remote:\n%s", refs)
			}
			gittest.Git(t, bare, "fsck", "--strict")
			if res.Attempts != 2 {
				t.Fatalf("A made %d attempts, want 2", res.Attempts)
			}
			// A's root is at the remote's tip.
			tip := strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main"))
			if head, err := a.repo.head(); err != nil || head.String() != tip {
				t.Fatalf("A's root at %v (%v), the remote at %s", head, err, tip)
			}
		})
	}
}

// TestCarryOnARemoteThatRefusesDeletes: receive.denyDeletes refuses the
// push that lands a carry (it deletes the carry ref); the roots push
// without carries from then on, and every change lands once.
func TestCarryOnARemoteThatRefusesDeletes(t *testing.T) {
	bare, _, a, b := lostRace(t, race{config: []string{"receive.denyDeletes", "true"}})
	done := false
	sleep := a.repo.sleep
	a.repo.sleep = func(ctx context.Context, d time.Duration) error {
		if !done {
			done = true
			b.write(t, "tools/b1.ts", "b1\n")
		}
		return sleep(ctx, d)
	}
	a.write(t, "tools/a1.ts", "a1\n")
	a.write(t, "tools/a2.ts", "a2\n")
	b.write(t, "tools/b2.ts", "b2\n")
	files := gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main")
	for _, f := range []string{"tools/a1.ts", "tools/a2.ts", "tools/b1.ts", "tools/b2.ts"} {
		if !strings.Contains(files, f) {
			t.Fatalf("the remote lacks %s:\n%s", f, files)
		}
	}
	if n := strings.TrimSpace(gittest.Git(t, bare, "rev-list", "--count", "main")); n != "6" {
		t.Fatalf("%s commits on main, want 6:\n%s", n, gittest.Git(t, bare, "log", "--oneline", "main"))
	}
	gittest.Git(t, bare, "fsck", "--strict")
}
