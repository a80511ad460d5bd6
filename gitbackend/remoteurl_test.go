package gitbackend

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// TestRemoteThatCanNeverWorkFailsAtOnce: a URL with a control character
// or a bad escape, and git's remote helpers (ext:: would run a command),
// are refused when the root is opened, with a typed error naming the
// cause; nothing is tried, so nothing is retried. Before, each of them
// was retried for about 15 s, and ext::/fd:: failed with an SSH agent
// error.
func TestRemoteThatCanNeverWorkFailsAtOnce(t *testing.T) {
	for _, c := range []struct {
		remote string
		want   error
		in     string
	}{
		{"http://host/r\x01.git", ErrBadRemoteURL, "control character"},
		{"http://u:SECRET@host/r\x7f.git", ErrBadRemoteURL, "control character"},
		{"http://host/r%zz.git", ErrBadRemoteURL, `invalid URL escape "%zz"`},
		{"https://u:SECRET@host/r%zz.git", ErrBadRemoteURL, `invalid URL escape`},
		{"ext::sh -c touch% /tmp/pwned", ErrUnsupportedTransport, `"ext::"`},
		{"fd::3", ErrUnsupportedTransport, `"fd::"`},
		{"fd::3,4/x", ErrUnsupportedTransport, `"fd::"`},
		{"gopher://host/r.git", ErrUnsupportedTransport, `"gopher://"`},
	} {
		// Named by the cause: a subtest's temporary directory bears its name.
		t.Run(c.in, func(t *testing.T) {
			f, err := vfs.NewOS(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(context.Background(), f.Billy(), Config{Remote: c.remote}, WithLockFile(LockFilePath(f.Root())))
			if !errors.Is(err, c.want) || !errors.Is(err, ErrPermanent) {
				t.Fatalf("open with remote %q: %v, want %v (permanent)", c.remote, err, c.want)
			}
			if !strings.Contains(err.Error(), c.in) || strings.Contains(err.Error(), "SSH agent") {
				t.Fatalf("error %q does not name the cause (%s)", err, c.in)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("error %q prints the password", err)
			}
			var ut *UnsupportedTransportError
			var ue *RemoteURLError
			if !errors.As(err, &ut) && !errors.As(err, &ue) {
				t.Fatalf("error %T is neither *UnsupportedTransportError nor *RemoteURLError", err)
			}
		})
	}
}

// TestPermanentErrorsAreNotTransient: net/url's parse error is also a
// net.Error, which made a URL that does not parse look like a remote that
// did not answer; it, a missing repository and a refused authentication
// are never retried.
func TestPermanentErrorsAreNotTransient(t *testing.T) {
	for _, err := range []error{
		&url.Error{Op: "parse", URL: "http://host/r\x01.git", Err: errors.New("net/url: invalid control character in URL")},
		transport.ErrRepositoryNotFound,
		classifyNetErr(transport.ErrAuthenticationRequired),
		&UnsupportedTransportError{Remote: "ext::x", Transport: "ext::"},
	} {
		if transientNetErr(err) {
			t.Errorf("%v is retried as transient", err)
		}
		if !permanentRemoteErr(err) {
			t.Errorf("%v is not permanent", err)
		}
	}
	if !transientNetErr(&url.Error{Op: "Get", URL: "http://host/r.git", Err: errors.New("connection refused")}) {
		t.Error("a refused connection is no longer retried")
	}
}

// TestMissingRepositoryIsNotRetried: boot from a URL whose repository does
// not exist fails with the cause on its first attempt (no backoff slept).
func TestMissingRepositoryIsNotRetried(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "")
	f, err := vfs.NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), f.Billy(), Config{Remote: srv.URL("missing.git")}, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var mu sync.Mutex
	slept := 0
	r.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		slept++
		mu.Unlock()
		return nil
	}
	_, err = r.Hydrate(context.Background())
	if !errors.Is(err, transport.ErrRepositoryNotFound) || !permanentRemoteErr(err) {
		t.Fatalf("boot from a missing repository: %v", err)
	}
	if slept != 0 {
		t.Fatalf("boot from a missing repository retried %d time(s)", slept)
	}
}

// TestPasswordInRemoteURLStaysOffDisk: a remote URL with a password (from
// the environment or the configuration) works, the password being sent
// as basic auth, and is in no file of the root, no progress line, no
// status and no error.
func TestPasswordInRemoteURLStaysOffDisk(t *testing.T) {
	bare := gittest.SeedRemote(t, map[string]string{"README.md": "seed\n"})
	srv := gittest.NewHTTPServer(t, filepath.Dir(bare), "SECRET")
	remote := strings.Replace(srv.URL(filepath.Base(bare)), "http://", "http://u:SECRET@", 1)
	dir := t.TempDir()
	f, err := vfs.NewOS(dir)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	cfg := Config{Remote: remote, Branch: "main", LockDir: t.TempDir(), Author: Identity{Name: "A", Email: "a@example.com"},
		Progress: func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }}
	r, err := Open(context.Background(), f.Billy(), cfg, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatalf("boot with the password in the URL: %v", err)
	}
	ag := &agent{fs: f, repo: r}
	ag.write(t, "tools/a.ts", "a\n")
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := r.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(st.Remote, "SECRET") || strings.Contains(st.Remote, "u:") {
		t.Errorf("status shows the userinfo: %s", st.Remote)
	}
	mu.Lock()
	for _, l := range lines {
		if strings.Contains(l, "SECRET") {
			t.Errorf("progress line prints the password: %s", l)
		}
	}
	mu.Unlock()
	assertNoFileHolds(t, dir, "SECRET")
	assertNoFileHolds(t, cfg.LockDir, "SECRET")
	// A wrong password fails with an error that prints neither.
	bad := strings.Replace(remote, "SECRET", "WRONGPW", 1)
	f2, _ := vfs.NewOS(t.TempDir())
	r2, err := Open(context.Background(), f2.Billy(), Config{Remote: bad, Branch: "main"}, WithLockFile(LockFilePath(f2.Root())))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	_, err = r2.Hydrate(context.Background())
	if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "WRONGPW") {
		t.Fatalf("boot with a wrong password: %v", err)
	}
}

// assertNoFileHolds fails if any file under dir contains s.
func assertNoFileHolds(t *testing.T, dir, s string) {
	t.Helper()
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			t.Errorf("%s holds %q", p, s)
		}
		return nil
	})
}

// TestRedactURL: the userinfo of a URL is never shown, whatever it holds
// (a user name can be a token); an "@" in the path is not userinfo.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:SECRET@host/r.git":        "https://***@host/r.git",
		"https://ghp_TOKEN@github.com/o/r":   "https://***@github.com/o/r",
		"http://u:p%40ss@host:8080/r.git":    "http://***@host:8080/r.git",
		"https://host/users/a@b/r.git":       "https://host/users/a@b/r.git",
		"https://host/r.git":                 "https://host/r.git",
		"git@github.com:o/r.git":             "git@github.com:o/r.git",
		"ssh://git:pw@host/r.git":            "ssh://***@host/r.git",
		"http://u:SECRET@host/r\x01.git":     "http://***@host/r\x01.git",
		"http://u:SE@CRET@host/r.git":        "http://***@host/r.git",
		"/srv/git/r.git":                     "/srv/git/r.git",
		"https://u:SECRET@host?x=1@y":        "https://***@host?x=1@y",
		"https://u:SECRET@host#frag@another": "https://***@host#frag@another",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
