package journal_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/journal"
	"github.com/tgp-go/tgp/kernel"
)

// TestJournalLandingsAreSigned: two kernels with git.signing_key write
// through one journal; every commit the journal's pusher lands on the
// remote verifies with git verify-commit.
func TestJournalLandingsAreSigned(t *testing.T) {
	key := gittest.NewSSHKey(t)
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	dsn := journal.FreshDatabase(t, journal.ServerDSN())
	boot := func() *kernel.Kernel {
		k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithRoot(t.TempDir()),
			kernel.WithSetting("git.remote", srv.URL(filepath.Base(bare))), kernel.WithSetting("git.author.name", "A"),
			kernel.WithSetting("git.author.email", "a@x"), kernel.WithSetting("git.lock_dir", t.TempDir()),
			kernel.WithSetting("git.journal", dsn), kernel.WithSetting("git.signing_key", key.Path))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Shutdown(context.Background()) })
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		return k
	}
	ks := []*kernel.Kernel{boot(), boot()}
	for i, p := range []string{"tools/j1.ts", "tools/j2.ts", "tools/j3.ts", "tools/j4.ts"} {
		raw, _ := json.Marshal(map[string]string{"path": p, "content": "/** T. */\nexport default () => 1;\n"})
		if _, err := ks[i%2].Call(context.Background(), "write_file", raw); err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
	}
	revs := strings.Fields(gittest.Git(t, bare, "rev-list", "main", "^main~4"))
	if len(revs) != 4 {
		t.Fatalf("%d commits landed, want 4:\n%s", len(revs), gittest.Git(t, bare, "log", "--oneline", "main"))
	}
	for _, rev := range revs {
		gittest.RequireSigned(t, bare, key.AllowedSigners, rev)
	}
	if got := gittest.Git(t, bare, "log", "-1", "--format=%s", "main~4"); got != "seed\n" {
		t.Fatalf("main~4 is %q, want the seed", got)
	}
}
