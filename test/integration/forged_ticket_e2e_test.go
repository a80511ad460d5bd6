package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
)

// TestForgedQueueTicketIsNotPushed drives the attack of issue #42 with the
// CLI: another process of the user writes a ticket by hand into this
// machine's push queue ($XDG_CACHE_HOME/tgp/locks/<hash>/<id>.ticket),
// naming a plain clone's .git and a commit in it. The next `tgp call`
// that pushes led the queue and pushed that commit to main. Now it is
// refused: not on the remote, the file removed, a warning on the call's
// stderr and in `tgp status`.
func TestForgedQueueTicketIsNotPushed(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	url := srv.URL(filepath.Base(bare))
	cache := t.TempDir()
	root := filepath.Join(t.TempDir(), "root")
	env := append(kernelEnv(url), "XDG_CACHE_HOME="+cache)
	call := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(tgpBin, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("tgp %s: %v\n%s\n%s", strings.Join(args, " "), err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	write := func(p string) string {
		_, stderr := call("call", "write_file", fmt.Sprintf(`{"path":%q,"content":"/** %s. */\nexport default () => 1;\n"}`, p, p), "--root", root)
		return stderr
	}
	write("tools/first.ts")
	queues, _ := filepath.Glob(filepath.Join(cache, "tgp", "locks", "*"))
	if len(queues) != 1 {
		t.Fatalf("want one machine queue under %s, found %v", cache, queues)
	}
	queue := queues[0]

	// The attacker: a plain clone with a commit, and a ticket for it.
	evil := filepath.Join(t.TempDir(), "evil")
	gittest.Git(t, "", "clone", "-q", bare, evil)
	if err := os.WriteFile(filepath.Join(evil, "evil.ts"), []byte("evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Git(t, evil, "add", ".")
	gittest.Git(t, evil, "-c", "user.name=E", "-c", "user.email=e@example.com", "commit", "-q", "-m", "evil")
	ticket, _ := json.Marshal(map[string]any{
		"id": "1-forged", "remote": url, "branch": "main",
		"base":   strings.TrimSpace(gittest.Git(t, evil, "rev-parse", "HEAD~1")),
		"head":   strings.TrimSpace(gittest.Git(t, evil, "rev-parse", "HEAD")),
		"gitdir": filepath.Join(evil, ".git"), "created": time.Now().Add(-time.Second).UnixNano(), "pid": 1,
	})
	forged := filepath.Join(queue, "1-forged.ticket")
	if err := os.WriteFile(forged, ticket, 0o600); err != nil {
		t.Fatal(err)
	}

	stderr := write("tools/second.ts")
	if log := gittest.Git(t, bare, "log", "--format=%s", "--name-only", "main"); strings.Contains(log, "evil") {
		t.Fatalf("the forged ticket's commit is on main:\n%s", log)
	}
	if got := gittest.Git(t, bare, "show", "main:tools/second.ts"); !strings.Contains(got, "second") {
		t.Fatalf("the call's own write is not on main: %q", got)
	}
	if _, err := os.Lstat(forged); !os.IsNotExist(err) {
		t.Fatalf("the forged ticket is still in the queue (%v)", err)
	}
	if !strings.Contains(stderr, "warning: machine queue") || !strings.Contains(stderr, "1-forged.ticket refused") {
		t.Fatalf("the call that refused the ticket did not warn:\n%s", stderr)
	}
	status, _ := call("status", "--root", root)
	if !strings.Contains(status, "warning:") || !strings.Contains(status, "1-forged.ticket refused") {
		t.Fatalf("tgp status does not report the refused ticket:\n%s", status)
	}
	if info, err := os.Stat(queue); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("the queue directory is %v (%v), want 0700", info.Mode().Perm(), err)
	}
}
