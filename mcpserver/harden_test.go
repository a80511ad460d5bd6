package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/tools"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// rawPost sends one JSON-RPC message, with the session when sid is set.
func rawPost(t *testing.T, url, sid string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// A body of unknown length (chunked) is cut at the limit too, not only one
// that announces its size.
func TestHTTPChunkedBodyLimit(t *testing.T) {
	set := testSet(t)
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(HTTPHandler(s, HTTPOptions{MaxBodyBytes: 2048}))
	defer srv.Close()
	big := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`),
		strings.NewReader(strings.Repeat("a", 1<<20)), strings.NewReader(`"}}`))
	if res := rawPost(t, srv.URL, "", struct{ io.Reader }{big}); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversized body: %d", res.StatusCode)
	}
	// Just under the limit passes the guard.
	if res := rawPost(t, srv.URL, "", struct{ io.Reader }{strings.NewReader(initBody)}); res.StatusCode != http.StatusOK {
		t.Fatalf("small chunked body: %d", res.StatusCode)
	}
}

// openSession initializes a session over raw HTTP and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	res := rawPost(t, url, "", strings.NewReader(initBody))
	sid := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", res.StatusCode, sid)
	}
	if res := rawPost(t, url, sid, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); res.StatusCode/100 != 2 {
		t.Fatalf("initialized: %d", res.StatusCode)
	}
	return sid
}

// An idle session is closed after SessionIdleTimeout (its id then answers
// 404), while a server without the timeout keeps its session.
func TestHTTPSessionIdleTimeout(t *testing.T) {
	set := testSet(t)
	newSrv := func(idle time.Duration) *httptest.Server {
		s, err := New(set.List(), set, Options{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(HTTPHandler(s, HTTPOptions{SessionIdleTimeout: idle}))
		t.Cleanup(srv.Close)
		return srv
	}
	expiring, keeping := newSrv(50*time.Millisecond), newSrv(0)
	sidE, sidK := openSession(t, expiring.URL), openSession(t, keeping.URL)
	ping := strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res := rawPost(t, expiring.URL, sidE, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		if res.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle session never expired (last status %d)", res.StatusCode)
		}
		time.Sleep(100 * time.Millisecond) // idle again, longer than the timeout
	}
	if res := rawPost(t, keeping.URL, sidK, ping); res.StatusCode != http.StatusOK {
		t.Fatalf("session without a timeout: %d", res.StatusCode)
	}
}

// eofReader reports when its input is exhausted.
type eofReader struct {
	r    io.Reader
	once sync.Once
	eof  chan struct{}
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

// syncBuffer is a bytes.Buffer safe for a writer and a later reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// answered returns the ids of the results in a line-delimited stream.
func answered(t *testing.T, out string) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if m.Result != nil {
			ids[string(m.ID)] = true
		}
	}
	return ids
}

// Requests piped in one go, the input closed at once, and a tool still
// running when end of input is read: every request is answered before Run
// returns.
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	eof := make(chan struct{})
	set := testSet(t)
	if err := set.Add(tools.Define(tools.Spec[echoArgs]{Name: "after_eof", Description: "returns once the input is closed",
		Annotations: tools.Annotations{ReadOnly: true, Risk: tools.RiskLow},
		Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
			select {
			case <-eof:
				return tools.Result{Value: "late " + a.Text}, nil
			case <-ctx.Done():
				return tools.Result{}, ctx.Err()
			}
		}})); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := initBody + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"after_eof","arguments":{"text":"x"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"y"}}}` // no final newline
	var out syncBuffer
	err = s.Run(context.Background(), StdioTransport(&eofReader{r: strings.NewReader(in), eof: eof}, &out, time.Minute))
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("run: %v", err)
	}
	ids := answered(t, out.String())
	for _, id := range []string{"1", "2", `"three"`, "4"} {
		if !ids[id] {
			t.Errorf("request %s not answered:\n%s", id, out.String())
		}
	}
	if !strings.Contains(out.String(), "late x") {
		t.Errorf("the tool running at end of input was not answered:\n%s", out.String())
	}
}

// A request that is never answered cannot hold the server past the drain
// bound.
func TestStdioDrainIsBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	set := testSet(t)
	if err := set.Add(tools.Define(tools.Spec[echoArgs]{Name: "stuck", Description: "never returns on its own",
		Annotations: tools.Annotations{ReadOnly: true, Risk: tools.RiskLow},
		Run: func(ctx context.Context, a echoArgs) (tools.Result, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return tools.Result{}, errors.New("stopped")
		}})); err != nil {
		t.Fatal(err)
	}
	s, err := New(set.List(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := initBody + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{}}}` + "\n"
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- s.Run(context.Background(), StdioTransport(strings.NewReader(in), &out, 2*time.Second))
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return after the drain bound")
	}
	if ids := answered(t, out.String()); !ids["1"] {
		t.Fatalf("initialize not answered:\n%s", out.String())
	}
}
