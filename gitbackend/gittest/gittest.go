// Package gittest provides real git remotes for tests: bare repositories
// made with the git CLI, a smart-HTTP server (git-http-backend behind
// net/http/cgi) with basic auth and injectable failures, and git daemon.
package gittest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Env is a pinned environment for the git CLI: no system or user config,
// UTC, C locale, a fixed identity.
func Env(home string) []string {
	return []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TZ=UTC", "LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_TERMINAL_PROMPT=0",
	}
}

// Git runs the git CLI in dir and returns its stdout; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := GitErr(dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitErr runs the git CLI and returns stdout (stderr too on failure).
func GitErr(dir string, args ...string) (string, error) {
	return GitStdinErr(dir, "", args...)
}

// GitStdin runs the git CLI in dir with stdin and returns its stdout; a
// failure fails the test.
func GitStdin(t testing.TB, dir, stdin string, args ...string) string {
	t.Helper()
	out, err := GitStdinErr(dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitStdinErr is GitErr with stdin.
func GitStdinErr(dir, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	home := filepath.Join(os.TempDir(), "tgp-gittest-home")
	_ = os.MkdirAll(home, 0o755)
	cmd.Env = Env(home)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// RequireGit skips the test when the git CLI is missing (it is installed
// by `make test`; CI has it).
func RequireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git CLI missing: run `make test`, which installs it")
		}
		t.Skip("git CLI not installed")
	}
}

// BareRemote makes an empty bare repository whose HEAD is refs/heads/main.
func BareRemote(t testing.TB) string {
	t.Helper()
	RequireGit(t)
	dir := filepath.Join(t.TempDir(), "remote.git")
	Git(t, "", "init", "-q", "--bare", "-b", "main", dir)
	Git(t, dir, "config", "http.receivepack", "true")
	return dir
}

// SeedRemote makes a bare remote with one commit holding files.
func SeedRemote(t testing.TB, files map[string]string) string {
	t.Helper()
	remote := BareRemote(t)
	work := filepath.Join(t.TempDir(), "seed")
	Git(t, "", "init", "-q", "-b", "main", work)
	for p, c := range files {
		WriteFile(t, work, p, c)
	}
	Git(t, work, "add", "-A")
	Git(t, work, "commit", "-q", "-m", "seed")
	Git(t, work, "push", "-q", remote, "main")
	return remote
}

// WriteFile writes content at the slash-separated path p below dir,
// making its directories.
func WriteFile(t testing.TB, dir, p, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Clone clones a remote's main branch with the git CLI into a temp dir.
func Clone(t testing.TB, remote string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	Git(t, "", "clone", "-q", "-b", "main", remote, dir)
	return dir
}

// HTTPServer serves the repositories under a root over smart HTTP.
type HTTPServer struct {
	*httptest.Server
	Root string
	// FailReceivePacks makes the next N receive-pack POSTs answer 503.
	FailReceivePacks atomic.Int32
	// ReceivePacks counts receive-pack POSTs that reached git.
	ReceivePacks atomic.Int32
	// RateLimitNext makes the next N receive-pack POSTs answer as a host
	// over its rate limit: RateLimitStatus (429, or 403 as GitHub's
	// secondary limits) with Retry-After: RateLimitRetryAfter seconds.
	RateLimitNext       atomic.Int32
	RateLimitStatus     int
	RateLimitRetryAfter int
	// RefusedPushes counts receive-pack POSTs refused for a rate limit.
	RefusedPushes atomic.Int32
	pass          string
	authorize     func(user, password string, push bool) bool

	mu sync.Mutex
	// reads are the times of the upload-pack advertisements served (one
	// per fetch or tip check: what a host counts as a git read).
	reads []time.Time
	// pushLimit, pushWindow: WithPushLimit; pushes are the accepted
	// receive-pack POSTs' times.
	pushLimit  int
	pushWindow time.Duration
	pushes     []time.Time
	// afterReceive runs once git has taken a receive-pack POST, before
	// its answer goes out (WithAfterReceivePack).
	afterReceive func()
}

// WithAfterReceivePack runs f after git has taken each receive-pack POST
// (the ref is updated) and before the answer is sent: a test can kill
// the pusher there, as a crash between the push and its bookkeeping.
func WithAfterReceivePack(f func()) HTTPOption {
	return func(s *HTTPServer) { s.afterReceive = f }
}

// WithPushLimit makes the server refuse, as a host over its push budget
// does (429 with Retry-After), a receive-pack POST that would make more
// than n in window.
func WithPushLimit(n int, window time.Duration) HTTPOption {
	return func(s *HTTPServer) { s.pushLimit, s.pushWindow = n, window }
}

// ReadTimes are the times of the upload-pack advertisements served: one
// per fetch or tip check.
func (s *HTTPServer) ReadTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.reads...)
}

// PushTimes are the times of the receive-pack POSTs that reached git.
func (s *HTTPServer) PushTimes() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.pushes...)
}

// admitPush counts a receive-pack POST, or says how many seconds to wait
// when it is over the limit.
func (s *HTTPServer) admitPush(now time.Time) (retryAfter int, ok bool) {
	if s.RateLimitNext.Load() > 0 {
		s.RateLimitNext.Add(-1)
		return s.RateLimitRetryAfter, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pushLimit > 0 {
		var in []time.Time
		for _, t := range s.pushes {
			if now.Sub(t) < s.pushWindow {
				in = append(in, t)
			}
		}
		if len(in) >= s.pushLimit {
			return int((in[len(in)-s.pushLimit].Add(s.pushWindow).Sub(now) + time.Second - 1) / time.Second), false
		}
	}
	s.pushes = append(s.pushes, now)
	return 0, true
}

// HTTPOption configures NewHTTPServer.
type HTTPOption func(*HTTPServer)

// WithAuthorize replaces the password check: authorize sees the basic-auth
// user and password of every request and whether it pushes (a code
// host's rules: the user name it requires, tokens with or without write
// access). A request it refuses gets 401, as a host's git endpoint answers.
func WithAuthorize(authorize func(user, password string, push bool) bool) HTTPOption {
	return func(s *HTTPServer) { s.authorize = authorize }
}

// NewHTTPServer serves root (a directory of bare repositories); with a
// password, basic auth is required (any user name).
func NewHTTPServer(t testing.TB, root, password string, opts ...HTTPOption) *HTTPServer {
	t.Helper()
	RequireGit(t)
	backend := "/usr/lib/git-core/git-http-backend"
	if out, err := exec.Command("git", "--exec-path").Output(); err == nil {
		backend = filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	}
	s := &HTTPServer{Root: root, pass: password}
	for _, o := range opts {
		o(s)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.authorize != nil {
			u, p, _ := r.BasicAuth()
			push := strings.HasSuffix(r.URL.Path, "/git-receive-pack") || r.URL.Query().Get("service") == "git-receive-pack"
			if !s.authorize(u, p, push) {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		} else if s.pass != "" {
			_, p, ok := r.BasicAuth()
			if !ok || p != s.pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		if strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-upload-pack" {
			s.mu.Lock()
			s.reads = append(s.reads, time.Now())
			s.mu.Unlock()
		}
		if strings.HasSuffix(r.URL.Path, "/git-receive-pack") && r.Method == http.MethodPost {
			if s.FailReceivePacks.Load() > 0 {
				s.FailReceivePacks.Add(-1)
				http.Error(w, "try again", http.StatusServiceUnavailable)
				return
			}
			if after, ok := s.admitPush(time.Now()); !ok {
				s.RefusedPushes.Add(1)
				status := s.RateLimitStatus
				if status == 0 {
					status = http.StatusTooManyRequests
				}
				w.Header().Set("Retry-After", fmt.Sprint(after))
				if status == http.StatusForbidden {
					w.Header().Set("X-RateLimit-Remaining", "0")
				}
				http.Error(w, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", status)
				return
			}
			s.ReceivePacks.Add(1)
		}
		// net/http/cgi refuses chunked bodies: buffer and set the length.
		if r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			r.TransferEncoding = nil
		}
		r2 := r.Clone(r.Context())
		r2.Header.Del("Authorization")
		env := append([]string{}, h.Env...)
		env = append(env, "REMOTE_USER=tgp")
		hh := *h
		hh.Env = env
		if s.afterReceive != nil && strings.HasSuffix(r.URL.Path, "/git-receive-pack") && r.Method == http.MethodPost {
			rec := httptest.NewRecorder()
			hh.ServeHTTP(rec, r2)
			s.afterReceive()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		hh.ServeHTTP(w, r2)
	}))
	t.Cleanup(s.Close)
	return s
}

// URL is the HTTP URL of a repository under the server's root.
func (s *HTTPServer) URL(name string) string { return s.Server.URL + "/" + name }

// Daemon runs `git daemon --enable=receive-pack` over root on a free port
// and returns the git:// base URL.
func Daemon(t testing.TB, root string) string {
	t.Helper()
	RequireGit(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--base-path="+root, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), root)
	cmd.Env = Env(t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 200; i++ {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return fmt.Sprintf("git://127.0.0.1:%d", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("git daemon did not start")
	return ""
}
