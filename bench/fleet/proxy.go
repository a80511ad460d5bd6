package fleet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Link is what the proxy does to the bytes it carries, in each direction.
type Link struct {
	// Delay is added to every chunk one way (a round trip costs twice).
	Delay time.Duration
	// Jitter adds a uniform random [0, Jitter) to each chunk's delay;
	// chunks still arrive in order.
	Jitter time.Duration
	// BytesPerSecond caps each direction of each connection (0: no cap).
	BytesPerSecond int64
}

// Forge is the budget a hosted forge keeps per repository (GitHub
// recommends at most 6 pushes a minute and 15 git reads a second).
type Forge struct {
	// PushesPerMinute: a push that would make more than this many in
	// any 60 s window is refused, as a server over its budget does (0:
	// no limit).
	PushesPerMinute int
}

// Proxy is a TCP proxy that delays what it forwards (a WAN between the
// agents and the remote). Pause drops every connection and refuses new
// ones for a while, as a remote that goes away does.
//
// A proxy for a git protocol (NewGitProxy) also reads which git service
// each session asks for: it counts the pushes it lets through, the
// pushes it refuses and the reads (Counts), and refuses a push past the
// Forge's budget as the server would: over git:// with an ERR pkt-line
// saying "rate limit", over smart HTTP with 429 and Retry-After.
type Proxy struct {
	target string
	link   Link
	ln     net.Listener
	addr   string
	// protocol is "git" (git://), "http" (smart HTTP) or "" (bytes
	// only: nothing counted, nothing refused).
	protocol string
	forge    Forge

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	pausedC chan struct{} // closed while not paused
	closed  bool
	wg      sync.WaitGroup
	// pushes, refused, reads: when each session (git://) or request
	// (HTTP) was seen; see Counts.
	pushes, refused, reads []time.Time
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string, link Link) (*Proxy, error) {
	return NewGitProxy(target, "", link, Forge{})
}

// NewGitProxy is NewProxy for a git server speaking protocol ("git" for
// git daemon, "http" for smart HTTP): it counts the sessions and keeps
// forge's budget (see Proxy).
func NewGitProxy(target, protocol string, link Link, forge Forge) (*Proxy, error) {
	switch protocol {
	case "", "git", "http":
	default:
		return nil, fmt.Errorf("fleet: proxy protocol %q (git, http)", protocol)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{target: target, link: link, ln: ln, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}, pausedC: open,
		protocol: protocol, forge: forge}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Counts is what a git proxy saw: the time of each push it let through
// (a receive-pack session over git://, a receive-pack POST over HTTP),
// of each push it refused, and of each read (an upload-pack session over
// git://, an info/refs request for git-upload-pack over HTTP: one per
// fetch, clone or ls-remote).
type Counts struct {
	Pushes, Refused, Reads []time.Time
}

// Counts returns what the proxy saw so far.
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Counts{Pushes: append([]time.Time(nil), p.pushes...), Refused: append([]time.Time(nil), p.refused...),
		Reads: append([]time.Time(nil), p.reads...)}
}

// MaxIn is the most of ts in any window of length w (a window
// [t, t+w) starting at one of them).
func MaxIn(ts []time.Time, w time.Duration) int {
	s := append([]time.Time(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	best, j := 0, 0
	for i := range s {
		for s[i].Sub(s[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// admitPush counts a push at now, or refuses it when it would make more
// than the forge's budget in 60 s, saying how many seconds until it
// would not.
func (p *Proxy) admitPush(now time.Time) (retryAfter int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := p.forge.PushesPerMinute; n > 0 {
		var in []time.Time
		for _, t := range p.pushes {
			if now.Sub(t) < time.Minute {
				in = append(in, t)
			}
		}
		if len(in) >= n {
			p.refused = append(p.refused, now)
			return int((in[len(in)-n].Add(time.Minute).Sub(now) + time.Second - 1) / time.Second), false
		}
	}
	p.pushes = append(p.pushes, now)
	return 0, true
}

func (p *Proxy) countRead(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reads = append(p.reads, now)
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

func (p *Proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		gate := p.pausedC
		p.mu.Unlock()
		select {
		case <-gate:
		default:
			c.Close() // paused: the remote is unreachable
			continue
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	p.track(client, true)
	defer func() {
		p.track(client, false)
		client.Close()
	}()
	// Connecting costs a round trip before the first byte flows.
	time.Sleep(2 * p.link.Delay)
	var first []byte
	if p.protocol == "git" {
		// git://: the first pkt-line names the service and the path.
		line, err := readPktLine(client)
		if err != nil {
			return
		}
		first = line
		if service, _, _ := strings.Cut(string(line[4:]), " "); service == "git-receive-pack" {
			if after, ok := p.admitPush(time.Now()); !ok {
				// The request reaches the server, the answer comes back.
				time.Sleep(2 * p.link.Delay)
				msg := fmt.Sprintf("ERR rate limit exceeded: at most %d pushes a minute; retry after %d\n", p.forge.PushesPerMinute, after)
				_, _ = fmt.Fprintf(client, "%04x%s", len(msg)+4, msg)
				return
			}
		} else if service == "git-upload-pack" {
			p.countRead(time.Now())
		}
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.track(server, true)
	defer func() {
		p.track(server, false)
		server.Close()
	}()
	up := p.newLane()
	if first != nil {
		_, _ = up.Write(first)
	}
	down := p.newLane()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		if p.protocol == "http" {
			p.readRequests(client, up)
		} else {
			p.read(client, up)
		}
	}()
	go func() { defer wg.Done(); p.deliver(server, client, up) }()
	go func() { defer wg.Done(); p.read(server, down) }()
	p.deliver(client, server, down)
	wg.Wait()
}

// readPktLine reads one pkt-line (its 4-byte length included).
func readPktLine(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(hdr[:]), 16, 16)
	if err != nil || (n != 0 && n < 4) {
		return nil, fmt.Errorf("fleet: not a pkt-line: %q", hdr)
	}
	line := make([]byte, max(int(n), 4))
	copy(line, hdr[:])
	if _, err := io.ReadFull(r, line[4:]); err != nil {
		return nil, err
	}
	return line, nil
}

// readRequests forwards a smart-HTTP client's requests one at a time,
// counting reads and pushes; a push past the budget gets 429 with
// Retry-After, and the connection is closed (Connection: close).
func (p *Proxy) readRequests(client net.Conn, up *lane) {
	defer up.eof()
	br := bufio.NewReader(client)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		now := time.Now()
		switch {
		case req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/info/refs") && req.URL.Query().Get("service") == "git-upload-pack":
			p.countRead(now)
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/git-receive-pack"):
			if after, ok := p.admitPush(now); !ok {
				_, _ = io.Copy(io.Discard, req.Body)
				time.Sleep(2 * p.link.Delay)
				body := fmt.Sprintf("rate limit exceeded: at most %d pushes a minute\n", p.forge.PushesPerMinute)
				_, _ = fmt.Fprintf(client, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: %d\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
					after, len(body), body)
				client.Close()
				return
			}
		}
		if err := req.Write(up); err != nil {
			return
		}
	}
}

type chunk struct {
	data []byte
	at   time.Time
	eof  bool
}

// lane is one direction of a connection: what was read, each chunk due
// Delay (+ jitter, + its time at the bandwidth cap) after it was read,
// in order.
type lane struct {
	link Link
	q    chan chunk
	last time.Time
}

func (p *Proxy) newLane() *lane { return &lane{link: p.link, q: make(chan chunk, 1024)} }

// Write queues a copy of b.
func (l *lane) Write(b []byte) (int, error) {
	n := len(b)
	at := time.Now().Add(l.link.Delay)
	if l.link.Jitter > 0 {
		at = at.Add(time.Duration(rand.Int64N(int64(l.link.Jitter))))
	}
	if l.link.BytesPerSecond > 0 {
		at = at.Add(time.Duration(int64(n) * int64(time.Second) / l.link.BytesPerSecond))
	}
	if at.Before(l.last) {
		at = l.last
	}
	l.last = at
	l.q <- chunk{data: bytes.Clone(b), at: at}
	return n, nil
}

// eof queues the end of the stream and closes the lane.
func (l *lane) eof() {
	l.q <- chunk{eof: true, at: time.Now().Add(l.link.Delay)}
	close(l.q)
}

// read queues what src sends until it ends.
func (p *Proxy) read(src net.Conn, l *lane) {
	defer l.eof()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _ = l.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// deliver writes the lane's chunks to dst, each when it is due; src is
// the lane's source, closed when dst fails.
func (p *Proxy) deliver(dst, src net.Conn, l *lane) {
	for c := range l.q {
		if d := time.Until(c.at); d > 0 {
			time.Sleep(d)
		}
		if c.eof {
			if tc, ok := dst.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			} else {
				dst.Close()
			}
			// Drain so the reader goroutine ends.
			for range l.q {
			}
			return
		}
		if _, err := dst.Write(c.data); err != nil {
			src.Close()
			for range l.q {
			}
			return
		}
	}
}

// Pause drops every open connection and refuses new ones for d (the
// remote went away), then serves again. It returns when d has passed or
// ctx ends.
func (p *Proxy) Pause(ctx context.Context, d time.Duration) {
	up := p.Down()
	defer up()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Down drops every open connection and refuses new ones (the remote went
// away) until up is called: a test can act on a remote that is down
// already, instead of waiting a while for it to go.
func (p *Proxy) Down() (up func()) {
	gate := make(chan struct{})
	p.mu.Lock()
	p.pausedC = gate
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			close(gate)
			p.mu.Unlock()
		})
	}
}

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

var _ io.Closer = (*Proxy)(nil)
