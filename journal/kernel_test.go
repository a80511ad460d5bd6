package journal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/journal"
	"github.com/tgp-go/tgp/kernel"
	_ "github.com/tgp-go/tgp/kernel/all" // every toolset
	"github.com/tgp-go/tgp/tools"
)

// TestKernelWritesThroughTheJournal: git.journal routes a kernel's writes
// through the journal (the entry lands with the remote's commit, and
// `tgp status` lists nothing waiting); a journal that does not answer
// makes the write push directly and say so; and a DSN in the
// configuration file is refused (it holds a password).
func TestKernelWritesThroughTheJournal(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	dsn := journal.FreshDatabase(t, journal.ServerDSN())
	boot := func(j string) *kernel.Kernel {
		k, err := kernel.New(context.Background(), kernel.WithEnviron([]string{}), kernel.WithRoot(t.TempDir()),
			kernel.WithSetting("git.remote", srv.URL(filepath.Base(bare))), kernel.WithSetting("git.author.name", "A"),
			kernel.WithSetting("git.author.email", "a@x"), kernel.WithSetting("git.lock_dir", t.TempDir()),
			kernel.WithSetting("git.journal", j))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Shutdown(context.Background()) })
		if err := k.Boot(context.Background()); err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(k *kernel.Kernel, p string) *tools.Persisted {
		raw, _ := json.Marshal(map[string]string{"path": p, "content": "/** T. */\nexport default () => 1;\n"})
		res, err := k.Call(context.Background(), "write_file", raw)
		if err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
		return res.Value.(tools.WriteResult).Persisted
	}

	k := boot(dsn)
	p := write(k, "tools/j.ts")
	if tip := strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main")); p.Commit != tip {
		t.Fatalf("the write says %s, the remote is at %s", p.Commit, tip)
	}
	j, err := journal.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if n := journal.CountLanded(t, j, p.Commit); n != 1 {
		t.Fatalf("%d landed entries name commit %s", n, p.Commit)
	}
	st, err := k.Status(context.Background())
	if err != nil || len(st.Unlanded) != 0 || st.JournalError != "" {
		t.Fatalf("status: %v %q %v", st.Unlanded, st.JournalError, err)
	}

	away := boot("postgres://tgp@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	p = write(away, "tools/direct.ts")
	if !p.Persisted || !strings.Contains(p.Note, "journal unreachable") {
		t.Fatalf("with the journal away: %+v", p)
	}
	if st, err := away.Status(context.Background()); err != nil || st.JournalError == "" || strings.Contains(st.JournalError, "tgp@") {
		t.Fatalf("status with the journal away: %q %v", st.JournalError, err)
	}

	file := filepath.Join(t.TempDir(), "tgp.config.yaml")
	if err := os.WriteFile(file, []byte("git:\n  journal: postgres://u:secret@h/db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = kernel.LoadConfig(kernel.LoadOptions{File: file, Environ: []string{}})
	var ce *kernel.ConfigError
	if !errors.As(err, &ce) || ce.Key != "git.journal" || strings.Contains(err.Error(), "secret") {
		t.Fatalf("a DSN in the file: %v", err)
	}
}

// TestKernelJournalAck: git.journal_ack: journal makes write_file return
// once its entry is durable, with landed false and the entry's id in its
// result and nothing pushed; the default's result has neither key, as
// before; Kernel.DrainJournal lands the entry. A value other than landed
// or journal, and journal without git.journal, are configuration errors
// naming the key.
func TestKernelJournalAck(t *testing.T) {
	ctx := context.Background()
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	dsn := journal.FreshDatabase(t, journal.ServerDSN())
	boot := func(settings ...string) *kernel.Kernel {
		opts := []kernel.Option{kernel.WithEnviron([]string{}), kernel.WithRoot(t.TempDir()),
			kernel.WithSetting("git.remote", srv.URL(filepath.Base(bare))), kernel.WithSetting("git.author.name", "A"),
			kernel.WithSetting("git.author.email", "a@x"), kernel.WithSetting("git.lock_dir", t.TempDir()),
			kernel.WithSetting("git.journal", dsn)}
		for i := 0; i+1 < len(settings); i += 2 {
			opts = append(opts, kernel.WithSetting(settings[i], settings[i+1]))
		}
		k, err := kernel.New(ctx, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Shutdown(context.Background()) })
		if err := k.Boot(ctx); err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(k *kernel.Kernel, p string) (*tools.Persisted, string) {
		raw, _ := json.Marshal(map[string]string{"path": p, "content": "/** T. */\nexport default () => 1;\n"})
		res, err := k.Call(ctx, "write_file", raw)
		if err != nil {
			t.Fatalf("write %s: %v", p, err)
		}
		out, err := json.Marshal(res.Value)
		if err != nil {
			t.Fatal(err)
		}
		return res.Value.(tools.WriteResult).Persisted, string(out)
	}
	tip := func() string { return strings.TrimSpace(gittest.Git(t, bare, "rev-parse", "main")) }
	seed := tip()

	acker := boot("git.journal_ack", "journal")
	p, js := write(acker, "tools/acked.ts")
	if p.Landed == nil || *p.Landed || p.JournalID == 0 || !strings.Contains(js, `"landed":false`) || !strings.Contains(js, fmt.Sprintf(`"journal_id":%d`, p.JournalID)) {
		t.Fatalf("an acknowledged write: %s", js)
	}
	if tip() != seed || srv.ReceivePacks.Load() != 0 {
		t.Fatalf("the acknowledged write pushed: remote at %s", tip())
	}
	un, err := acker.Unlanded(ctx)
	if err != nil || len(un) != 1 || un[0].ID != p.JournalID || un[0].Head != p.Commit || !strings.Contains(un[0].Message, "tools/acked.ts") || un[0].Author != "A <a@x>" {
		t.Fatalf("unlanded: %+v %v", un, err)
	}
	st, err := acker.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(st); !strings.Contains(string(b), fmt.Sprintf(`"unlanded":[{"id":%d,`, p.JournalID)) {
		t.Fatalf("status --json: %s", b)
	}
	if n, err := acker.DrainJournal(ctx); err != nil || n != 1 {
		t.Fatalf("drain: %d %v", n, err)
	}
	if un, err := acker.Unlanded(ctx); err != nil || len(un) != 0 {
		t.Fatalf("unlanded after the drain: %+v %v", un, err)
	}
	if tip() == seed || !strings.Contains(gittest.Git(t, bare, "ls-tree", "-r", "--name-only", "main"), "tools/acked.ts") {
		t.Fatal("the drain did not land the entry")
	}

	k := boot()
	p, js = write(k, "tools/waited.ts")
	if p.Landed != nil || p.JournalID != 0 || strings.Contains(js, "landed") || strings.Contains(js, "journal_id") || p.Commit != tip() {
		t.Fatalf("the default write: %s (remote at %s)", js, tip())
	}

	for _, c := range []struct{ environ []string }{
		{[]string{"TGP_GIT_JOURNAL_ACK=durable", "TGP_GIT_JOURNAL=" + dsn}},
		{[]string{"TGP_GIT_JOURNAL_ACK=journal"}},
	} {
		_, err := kernel.LoadConfig(kernel.LoadOptions{Environ: c.environ})
		var ce *kernel.ConfigError
		if !errors.As(err, &ce) || ce.Key != "git.journal_ack" || strings.Contains(err.Error(), dsn) {
			t.Fatalf("%v: %v", c.environ, err)
		}
		t.Log(err)
	}
}

// TestKernelWarmBootMakesNoRead: a kernel booted again on a root its last
// write left at the journal's last landed tip (as each `tgp call` process
// does) makes no read of the remote, and serves the file.
func TestKernelWarmBootMakesNoRead(t *testing.T) {
	ctx := context.Background()
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	dsn := journal.FreshDatabase(t, journal.ServerDSN())
	rootDir, locks := t.TempDir(), t.TempDir()
	boot := func() (*kernel.Kernel, int) {
		before := len(srv.ReadTimes())
		k, err := kernel.New(ctx, kernel.WithEnviron([]string{}), kernel.WithRoot(rootDir),
			kernel.WithSetting("git.remote", srv.URL(filepath.Base(bare))), kernel.WithSetting("git.author.name", "A"),
			kernel.WithSetting("git.author.email", "a@x"), kernel.WithSetting("git.lock_dir", locks),
			kernel.WithSetting("git.journal", dsn))
		if err != nil {
			t.Fatal(err)
		}
		if err := k.Boot(ctx); err != nil {
			t.Fatal(err)
		}
		return k, len(srv.ReadTimes()) - before
	}
	k, cold := boot()
	raw, _ := json.Marshal(map[string]string{"path": "tools/w.ts", "content": "/** W. */\nexport default () => 1;\n"})
	if _, err := k.Call(ctx, "write_file", raw); err != nil {
		t.Fatal(err)
	}
	if err := k.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	k, warm := boot()
	defer k.Shutdown(ctx)
	total := len(srv.ReadTimes()) - warm
	t.Logf("reads: cold boot %d, warm boot %d", cold, warm)
	if cold == 0 || warm != 0 {
		t.Fatalf("reads: cold boot %d, warm boot %d (want a clone, then none)", cold, warm)
	}
	raw, _ = json.Marshal(map[string]string{"path": "tools/w.ts"})
	res, err := k.Call(ctx, "read_file", raw)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Value); !strings.Contains(string(b), "export default") {
		t.Fatalf("read after the warm boot: %s", b)
	}
	t.Logf("reads after the warm boot and a read_file: %d", len(srv.ReadTimes())-total)
}
