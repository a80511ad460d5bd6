package shell

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// pollUntil polls a session until cond holds on the output gathered so
// far (or the session exits); it fails after a generous deadline.
func pollUntil(t *testing.T, s *Sessions, id int, cond func(out string) bool) (string, *Poll) {
	t.Helper()
	var out strings.Builder
	if cond("") {
		p, _ := s.Write(context.Background(), id, "", false, 0, 1<<20)
		return p.Output, p
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		p, err := s.Write(context.Background(), id, "", false, 50*time.Millisecond, 1<<20)
		if err != nil {
			t.Fatalf("poll %d: %v (output so far %q)", id, err, out.String())
		}
		out.WriteString(p.Output)
		if cond(out.String()) || p.Exited && !strings.Contains(p.Output, "more bytes are waiting") {
			return out.String(), p
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %d: output %q", id, out.String())
		}
	}
}

// Seed 002: the PTY lifecycle: start, write, poll, exit, close, gone.
func TestPTYLifecycle(t *testing.T) {
	root := testRoot(t)
	r := newRunner(t, root, DefaultConfig())
	s := NewSessions(r)
	defer s.Close()
	ctx := context.Background()

	// A command that reads the terminal: cat echoes lines back.
	p, err := s.Start(ctx, "cat", ".", 50*time.Millisecond, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited || p.SessionID == 0 {
		t.Fatalf("cat exited at once: %+v", p)
	}
	id := p.SessionID
	w, err := s.Write(ctx, id, "hello pty\n", false, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := pollUntil(t, s, id, func(o string) bool { return strings.Count(w.Output+o, "hello pty") >= 2 }) // echo + cat
	out = w.Output + out
	if !strings.Contains(out, "hello pty\r\n") {
		t.Fatalf("output %q", out)
	}
	// close sends EOF: cat ends by itself with status 0.
	p, err = s.Write(ctx, id, "", true, 5*time.Second, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Exited || p.ExitCode == nil || *p.ExitCode != 0 {
		t.Fatalf("after EOF: %+v", p)
	}
	if _, err := s.Write(ctx, id, "", false, 0, 100); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a closed session is gone: %v", err)
	}

	// A command that exits by itself reports its status and is removed
	// once its output is read.
	p, err = s.Start(ctx, "echo done; ls missing", ".", 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Start may already have read "done", or the whole run.
	out = p.Output
	if !p.Exited {
		var more string
		more, p = pollUntil(t, s, p.SessionID, func(string) bool { return false })
		out += more
	}
	if !p.Exited || *p.ExitCode != 2 || !strings.Contains(out, "done") {
		t.Fatalf("exit: %+v %q", p, out)
	}
	if s.Len() != 0 {
		t.Fatalf("%d sessions left", s.Len())
	}

	// Files a session writes are reported as changed.
	p, err = s.Start(ctx, "echo x > notes/s.txt", ".", 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	changed = append(changed, p.Changed...)
	for !p.Exited {
		if p, err = s.Write(ctx, p.SessionID, "", false, 50*time.Millisecond, 1<<20); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, p.Changed...)
	}
	// (A file written across two polls is reported by both.)
	if strings.Join(mergeSorted(changed, nil), ",") != "notes/s.txt" {
		t.Fatalf("changed %v", changed)
	}
}

// Sessions are checked like shell: a refused command never starts.
func TestPTYScopes(t *testing.T) {
	root := testRoot(t)
	s := NewSessions(newRunner(t, root, DefaultConfig()))
	defer s.Close()
	_, err := s.Start(context.Background(), "curl http://x", ".", 0, 100)
	wantViolation(t, "curl", err, ReasonDenied)
	_, err = s.Start(context.Background(), "ls", "../..", 0, 100)
	wantViolation(t, "workdir", err, ReasonDirNotInScope)
	// A violation at run time ends the session with the error.
	p, err := s.Start(context.Background(), "x=$(echo curl); $x http://y", ".", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	// Start's own poll (yield 0) may already see the end, on a loaded
	// machine: the session is then read and gone.
	if !p.Exited {
		_, p = pollUntil(t, s, p.SessionID, func(string) bool { return false })
	}
	if !errors.Is(p.Err, ErrViolation) {
		t.Fatalf("run-time violation: %+v", p)
	}
	if s.Len() != 0 {
		t.Fatal("the session outlived its violation")
	}
}

func TestPTYCapsAndKill(t *testing.T) {
	root := testRoot(t)
	s := NewSessions(newRunner(t, root, DefaultConfig()), WithMaxSessions(2), WithMaxPending(4096))
	defer s.Close()
	ctx := context.Background()
	a, err := s.Start(ctx, "sleep 301.5", ".", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, "sleep 301.5", ".", 0, 100); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, "sleep 301.5", ".", 0, 100); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("third session: %v", err)
	}
	// close ends a session that ignores EOF: it is killed.
	p, err := s.Write(ctx, a.SessionID, "", true, 50*time.Millisecond, 100)
	if err != nil || !p.Exited {
		t.Fatalf("close: %v %+v", err, p)
	}
	if s.Len() != 1 {
		t.Fatalf("%d sessions after close", s.Len())
	}
	// Output per poll is capped; what is not returned waits; what is over
	// the pending cap is dropped with a marker.
	big, err := s.Start(ctx, "seq 1 20000", ".", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	out, p := pollUntil(t, s, big.SessionID, func(string) bool { return false })
	if !strings.Contains(out, TruncatedMarker) || !strings.Contains(out, "20000") {
		t.Fatalf("caps: %d %+v %q ... %q", len(out), p, out[:100], out[len(out)-100:])
	}
	// Close kills everything left.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatal("sessions survived Close")
	}
	waitNoProcess(t, "301.5")
	if _, err := s.Start(ctx, "ls", ".", 0, 100); err == nil {
		t.Fatal("started a session after Close")
	}
}

func TestPTYIdleTimeout(t *testing.T) {
	root := testRoot(t)
	s := NewSessions(newRunner(t, root, DefaultConfig()), WithIdleTimeout(100*time.Millisecond))
	defer s.Close()
	p, err := s.Start(context.Background(), "sleep 302.5", ".", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	// No call touches the session: the idle timeout ends it, and what it
	// started.
	for s.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle session is still listed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Write(context.Background(), p.SessionID, "", false, 0, 100); !errors.Is(err, ErrNoSession) {
		t.Fatalf("idle session still there: %v", err)
	}
	waitNoProcess(t, "302.5")
}
