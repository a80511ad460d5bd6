package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is MCP over a line-delimited stream (stdin/stdout) that
// answers every request already received before it reports end of input:
// a client that pipes "initialize" and "tools/list" and closes its end gets
// both answers (the SDK's own stdio transport ends the session at EOF with
// requests still in flight). drain bounds the wait after EOF. A line that
// is not JSON is answered with JSON-RPC's parse error (-32700, id null) and
// skipped, as JSON-RPC 2.0 asks: one stray line (a log line, a typo in a
// hand-typed session) does not end the session.
func StdioTransport(in io.Reader, out io.Writer, drain time.Duration) mcp.Transport {
	t := &drainTransport{in: bufio.NewReader(in), out: out, drain: drain}
	t.cond = sync.NewCond(&t.mu)
	return &mcp.IOTransport{Reader: t, Writer: (*drainWriter)(t)}
}

type drainTransport struct {
	in    *bufio.Reader
	out   io.Writer
	drain time.Duration

	mu        sync.Mutex
	cond      *sync.Cond
	writeMu   sync.Mutex // one line at a time on out (the server's and parse errors)
	requests  int        // requests (with an id) passed to the server
	responses int        // responses (with an id) the server wrote
	partial   []byte
	pending   []byte // the rest of a line not yet handed to the reader
}

type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func hasID(f frame) bool { return len(f.ID) > 0 && string(f.ID) != "null" }

// Read hands the server whole lines, counting the requests among them; at
// end of input it waits until each has been answered (or drain passes).
func (t *drainTransport) Read(p []byte) (int, error) {
	for len(t.pending) == 0 {
		line, err := t.in.ReadBytes('\n')
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 && !json.Valid(trimmed) {
			if werr := t.parseError(trimmed); werr != nil {
				return 0, werr
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			var f frame
			if json.Unmarshal(bytes.TrimSpace(line), &f) == nil && hasID(f) && f.Method != "" {
				t.mu.Lock()
				t.requests++
				t.mu.Unlock()
			}
			t.pending = line
		} else if err != nil {
			t.waitAnswered()
			return 0, err
		}
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

// parseError answers a line that is not JSON (JSON-RPC 2.0 §5.1: code
// -32700, id null), quoting its start so the sender can find it.
func (t *drainTransport) parseError(line []byte) error {
	quoted := line
	if len(quoted) > 80 {
		quoted = quoted[:80]
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": -32700, "message": "Parse error: the line is not JSON: " + strings.ToValidUTF8(string(quoted), "\uFFFD")}})
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	_, err := t.out.Write(append(msg, '\n'))
	return err
}

func (t *drainTransport) waitAnswered() {
	deadline := time.Now().Add(t.drain)
	timer := time.AfterFunc(t.drain, func() {
		t.mu.Lock()
		t.cond.Broadcast()
		t.mu.Unlock()
	})
	defer timer.Stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.responses < t.requests && time.Now().Before(deadline) {
		t.cond.Wait()
	}
}

func (t *drainTransport) Close() error { return nil }

// drainWriter is the transport's output side: it counts the responses.
type drainWriter drainTransport

func (w *drainWriter) Write(p []byte) (int, error) {
	t := (*drainTransport)(w)
	t.writeMu.Lock()
	n, err := t.out.Write(p)
	t.writeMu.Unlock()
	t.mu.Lock()
	t.partial = append(t.partial, p[:n]...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		var f frame
		if json.Unmarshal(bytes.TrimSpace(t.partial[:i]), &f) == nil && hasID(f) && f.Method == "" {
			t.responses++
			t.cond.Broadcast()
		}
		t.partial = t.partial[i+1:]
	}
	t.mu.Unlock()
	return n, err
}

func (w *drainWriter) Close() error { return nil }
