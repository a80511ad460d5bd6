package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"
	"mvdan.cc/sh/v3/syntax"
)

// ErrNoSession matches write_stdin calls for a session that does not
// exist (never started, ended and read, killed for idleness).
var ErrNoSession = errors.New("shell: no such session")

// ErrTooManySessions matches exec_command calls over the session cap.
var ErrTooManySessions = errors.New("shell: too many sessions")

// Sessions are PTY-backed command lines that keep running between calls
// (exec_command, write_stdin): capped in number, killed after an idle
// timeout, all killed on Close.
type Sessions struct {
	r          *Runner
	max        int
	idle       time.Duration
	maxPending int

	mu     sync.Mutex
	m      map[int]*Session
	next   int
	closed bool
}

// SessionOption configures Sessions.
type SessionOption func(*Sessions)

// WithMaxSessions caps live sessions (default 8).
func WithMaxSessions(n int) SessionOption { return func(s *Sessions) { s.max = n } }

// WithIdleTimeout kills a session no call touched for d (default 10m).
func WithIdleTimeout(d time.Duration) SessionOption { return func(s *Sessions) { s.idle = d } }

// WithMaxPending caps the output a session keeps between polls (default
// 1 MiB); older output is dropped with a marker.
func WithMaxPending(n int) SessionOption { return func(s *Sessions) { s.maxPending = n } }

// NewSessions manages sessions running on r.
func NewSessions(r *Runner, opts ...SessionOption) *Sessions {
	s := &Sessions{r: r, max: 8, idle: 10 * time.Minute, maxPending: 1 << 20, m: map[int]*Session{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Session is one running command line on a PTY.
type Session struct {
	ID     int
	x      *run
	master *os.File
	tty    *os.File
	done   chan struct{}
	read   chan struct{}
	idle   *time.Timer

	mu       sync.Mutex
	buf      []byte
	dropped  int64
	exitCode int
	err      error
	snap     *snapshot
}

// Poll is what one exec_command or write_stdin call returns.
type Poll struct {
	SessionID int    `json:"session_id"`
	Output    string `json:"output"`
	Exited    bool   `json:"exited"`
	// ExitCode is set once the session exited.
	ExitCode  *int     `json:"exit_code,omitempty"`
	Truncated bool     `json:"truncated"`
	Changed   []string `json:"changed"`
	Refused   []string `json:"out_of_scope_changes,omitempty"`
	// Err is why the session's command line stopped, when it was not an
	// exit status (a scope violation, a timeout, a kill).
	Err error `json:"-"`
}

// Start runs cmd in workdir on a new PTY and returns its first output
// after yield (or sooner if it exits).
func (s *Sessions) Start(ctx context.Context, cmd, workdir string, yield time.Duration, maxBytes int) (*Poll, error) {
	sc, err := s.r.scopesFor(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := s.r.workdir(sc, workdir)
	if err != nil {
		return nil, err
	}
	file, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, &SyntaxError{Err: err}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("shell: sessions are closed")
	}
	if len(s.m) >= s.max {
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %d sessions are running (the cap); end one with write_stdin close:true", ErrTooManySessions, s.max)
	}
	s.next++
	id := s.next
	s.mu.Unlock()

	master, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("shell: open pty: %w", err)
	}
	_ = pty.Setsize(master, &pty.Winsize{Rows: 40, Cols: 120})
	x := s.r.newRun(context.WithoutCancel(ctx), sc, tty)
	if err := x.precheck(file, dir); err != nil {
		x.close()
		_ = master.Close()
		_ = tty.Close()
		return nil, err
	}
	snap, err := s.r.snapshot()
	if err != nil {
		x.close()
		_ = master.Close()
		_ = tty.Close()
		return nil, fmt.Errorf("shell: scan %s: %w", s.r.root, err)
	}
	x.snap = snap
	ss := &Session{ID: id, x: x, master: master, tty: tty, done: make(chan struct{}), read: make(chan struct{}), snap: snap}
	s.mu.Lock()
	if s.closed || len(s.m) >= s.max {
		s.mu.Unlock()
		x.close()
		_ = master.Close()
		_ = tty.Close()
		return nil, fmt.Errorf("%w: %d sessions are running (the cap)", ErrTooManySessions, s.max)
	}
	s.m[id] = ss
	ss.idle = time.AfterFunc(s.idle, func() {
		s.end(id)
		s.remove(id)
	})
	s.mu.Unlock()

	go func() {
		defer close(ss.read)
		b := make([]byte, 32<<10)
		for {
			n, err := master.Read(b)
			if n > 0 {
				ss.append(b[:n], s.maxPending)
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer close(ss.done)
		var runErr error
		func() {
			defer x.recover(&runErr)
			runErr = x.interpret(x.ctx, file, dir, tty, tty, tty, nil)
		}()
		x.killAll()
		code, err := exitCode(runErr)
		if f := x.failure(); f != nil {
			err = f
		} else if x.ctx.Err() != nil && err != nil {
			err = fmt.Errorf("shell: session %d was killed: %w", id, x.ctx.Err())
		}
		ss.mu.Lock()
		ss.exitCode, ss.err = code, err
		if err != nil && code == 0 {
			ss.exitCode = -1
		}
		ss.mu.Unlock()
		// With the terminal's last writer gone the reader sees EOF.
		_ = tty.Close()
	}()
	return s.poll(ss, yield, maxBytes), nil
}

// Write sends chars to a session (empty chars just polls); close sends
// EOF and ends the session, killing what still runs after yield.
func (s *Sessions) Write(ctx context.Context, id int, chars string, closeIt bool, yield time.Duration, maxBytes int) (*Poll, error) {
	s.mu.Lock()
	ss := s.m[id]
	s.mu.Unlock()
	if ss == nil {
		return nil, fmt.Errorf("%w: session %d (it ended and its output was read, it was idle too long, or it never existed); start one with exec_command", ErrNoSession, id)
	}
	ss.idle.Reset(s.idle)
	if chars != "" && !ss.exited() {
		if _, err := ss.master.Write([]byte(chars)); err != nil && !ss.exited() {
			return nil, fmt.Errorf("shell: write to session %d: %w", id, err)
		}
	}
	if closeIt {
		if !ss.exited() {
			_, _ = ss.master.Write([]byte{4}) // ^D: EOF for a reader in canonical mode
		}
		p := s.poll(ss, yield, maxBytes)
		if !p.Exited {
			s.end(id)
			p2 := s.poll(ss, 0, maxBytes)
			p2.Output = p.Output + p2.Output
			p2.Changed = mergeSorted(p.Changed, p2.Changed)
			p2.Refused = mergeSorted(p.Refused, p2.Refused)
			p = p2
		}
		s.remove(id)
		return p, nil
	}
	return s.poll(ss, yield, maxBytes), nil
}

// Close kills every session.
func (s *Sessions) Close() error {
	s.mu.Lock()
	s.closed = true
	ids := make([]int, 0, len(s.m))
	for id := range s.m {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.end(id)
		s.remove(id)
	}
	return nil
}

// Len is the number of live sessions.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// end kills a session's command line and its processes.
func (s *Sessions) end(id int) {
	s.mu.Lock()
	ss := s.m[id]
	s.mu.Unlock()
	if ss == nil {
		return
	}
	ss.x.cancel()
	ss.x.killAll()
	select {
	case <-ss.done:
	case <-time.After(5 * time.Second):
	}
	ss.x.close()
}

func (s *Sessions) remove(id int) {
	s.mu.Lock()
	ss := s.m[id]
	delete(s.m, id)
	s.mu.Unlock()
	if ss == nil {
		return
	}
	ss.idle.Stop()
	go func() {
		<-ss.done
		ss.x.close()
		select {
		case <-ss.read:
		case <-time.After(time.Second):
		}
		_ = ss.master.Close()
	}()
}

func (ss *Session) exited() bool {
	select {
	case <-ss.done:
		return true
	default:
		return false
	}
}

func (ss *Session) append(b []byte, max int) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.buf = append(ss.buf, b...)
	if over := len(ss.buf) - max; over > 0 {
		ss.buf = append(ss.buf[:0], ss.buf[over:]...)
		ss.dropped += int64(over)
	}
}

// poll waits up to yield (less if the command line exits), then returns
// the output since the last poll, at most maxBytes of it.
func (s *Sessions) poll(ss *Session, yield time.Duration, maxBytes int) *Poll {
	t := time.NewTimer(yield)
	select {
	case <-ss.done:
	case <-t.C:
	}
	t.Stop()
	exited := ss.exited()
	if exited {
		select {
		case <-ss.read:
		case <-time.After(time.Second):
		}
	}
	p := &Poll{SessionID: ss.ID, Exited: exited}
	ss.mu.Lock()
	var out strings.Builder
	if ss.dropped > 0 {
		fmt.Fprintf(&out, "%s %d bytes of earlier output were dropped (the session keeps %d bytes between polls)\n", TruncatedMarker, ss.dropped, s.maxPending)
		ss.dropped = 0
		p.Truncated = true
	}
	take := ss.buf
	if maxBytes > 0 && len(take) > maxBytes {
		take = take[:maxBytes]
	}
	out.Write(take)
	rest := len(ss.buf) - len(take)
	ss.buf = append(ss.buf[:0], ss.buf[len(take):]...)
	if rest > 0 {
		fmt.Fprintf(&out, "\n%s %d more bytes are waiting: poll again with write_stdin (empty chars)\n", TruncatedMarker, rest)
		p.Truncated = true
	}
	if exited {
		code := ss.exitCode
		p.ExitCode = &code
		p.Err = ss.err
	}
	ss.mu.Unlock()
	p.Output = out.String()
	if now, err := s.r.snapshot(); err == nil {
		ss.mu.Lock()
		p.Changed, p.Refused = s.r.diff(ss.x.sc, ss.snap, now)
		ss.snap = now
		ss.mu.Unlock()
	} else {
		p.Changed = []string{}
	}
	if exited && rest == 0 {
		s.remove(ss.ID)
	}
	return p
}

func mergeSorted(a, b []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, l := range [][]string{a, b} {
		for _, p := range l {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}
