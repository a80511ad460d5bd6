//go:build unix

package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hangingRemote is an HTTP git remote that never answers: a boot against
// it waits until it is interrupted. started is closed at the first
// request.
func hangingRemote(t *testing.T) (url string, started <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(ch) })
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/toolbox.git", ch
}

// Ctrl-C during a command says "interrupted" and exits 130 (SIGTERM:
// "terminated", 143), not "context canceled" with a hint about the
// remote and the token.
func TestInterruptedCommandExits130(t *testing.T) {
	for _, c := range []struct {
		args []string
		sig  syscall.Signal
		code int
		word string
	}{
		{[]string{"boot"}, syscall.SIGINT, 130, "interrupted"},
		{[]string{"status", "--json"}, syscall.SIGTERM, 143, "terminated"},
		{[]string{"call", "git_status"}, syscall.SIGINT, 130, "interrupted"},
		{[]string{"init", "--remote", "REMOTE"}, syscall.SIGINT, 130, "interrupted"},
	} {
		t.Run(strings.Join(c.args[:1], " "), func(t *testing.T) {
			remote, started := hangingRemote(t)
			args := append([]string{}, c.args...)
			for i, a := range args {
				if a == "REMOTE" {
					args[i] = remote
				}
			}
			env := []string{"HOME=" + t.TempDir()}
			if c.args[0] != "init" {
				env = append(env, "TGP_GIT_REMOTE="+remote)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			go func() {
				select {
				case <-started:
					cancel(&interrupted{sig: c.sig})
				case <-time.After(time.Minute):
				}
			}()
			var out, errb bytes.Buffer
			code := inDir(t, t.TempDir(), func() int {
				return run(ctx, args, strings.NewReader(""), &out, &errb, env)
			})
			if code != c.code || errb.String() != "tgp: "+c.word+"\n" {
				t.Fatalf("%v: exit %d, stderr %q (stdout %q); want %d and tgp: %s", c.args, code, errb.String(), out.String(), c.code, c.word)
			}
		})
	}
}

// The signal handler: the first SIGINT cancels the context with its
// cause; the process itself stays alive.
func TestSignalContext(t *testing.T) {
	ctx, stop := signalContext(context.Background())
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGINT did not cancel the context")
	}
	if in := interruption(ctx); in == nil || in.exitCode() != 130 || in.Error() != "interrupted" {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
}
