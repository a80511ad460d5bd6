package integration

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Ctrl-C during `tgp boot` (a remote that does not answer) says
// "interrupted" and exits 130, as a shell reports a program SIGINT
// stopped: no "context canceled", no hint about the remote and the token.
func TestBootInterruptedExits130(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		<-r.Context().Done()
	}))
	defer srv.Close()
	cmd := exec.Command(tgpBin, "boot")
	cmd.Dir = t.TempDir()
	cmd.Env = kernelEnv(srv.URL + "/toolbox.git")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("tgp boot never asked the remote")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("tgp boot did not stop on SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || stderr.String() != "tgp: interrupted\n" {
		t.Fatalf("exit %v, stderr %q; want 130 and \"tgp: interrupted\"", err, stderr.String())
	}
}
