package fleet

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
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

// Proxy is a TCP proxy that delays what it forwards (a WAN between the
// agents and the remote). Pause drops every connection and refuses new
// ones for a while, as a remote that goes away does.
type Proxy struct {
	target string
	link   Link
	ln     net.Listener
	addr   string

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	pausedC chan struct{} // closed while not paused
	closed  bool
	wg      sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards to target.
func NewProxy(target string, link Link) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{target: target, link: link, ln: ln, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}, pausedC: open}
	p.wg.Add(1)
	go p.serve()
	return p, nil
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
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.track(client, true)
	p.track(server, true)
	defer func() {
		p.track(client, false)
		p.track(server, false)
		client.Close()
		server.Close()
	}()
	// Connecting costs a round trip before the first byte flows.
	time.Sleep(2 * p.link.Delay)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(server, client) }()
	go func() { defer wg.Done(); p.pipe(client, server) }()
	wg.Wait()
}

type chunk struct {
	data []byte
	at   time.Time
	eof  bool
}

// pipe copies src to dst, each chunk delivered Delay (+ jitter) after it
// was read, in order; the bandwidth cap spaces the chunks.
func (p *Proxy) pipe(dst, src net.Conn) {
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		last := time.Time{}
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				at := time.Now().Add(p.link.Delay)
				if p.link.Jitter > 0 {
					at = at.Add(time.Duration(rand.Int64N(int64(p.link.Jitter))))
				}
				if p.link.BytesPerSecond > 0 {
					at = at.Add(time.Duration(int64(n) * int64(time.Second) / p.link.BytesPerSecond))
				}
				if at.Before(last) {
					at = last
				}
				last = at
				q <- chunk{data: buf[:n], at: at}
			}
			if err != nil {
				q <- chunk{eof: true, at: time.Now().Add(p.link.Delay)}
				return
			}
		}
	}()
	for c := range q {
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
			for range q {
			}
			return
		}
		if _, err := dst.Write(c.data); err != nil {
			src.Close()
			for range q {
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
