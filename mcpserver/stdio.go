package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is MCP over a line-delimited stream (stdin/stdout) that
// answers every request already received before it reports end of input:
// a client that pipes "initialize" and "tools/list" and closes its end gets
// both answers (the SDK's own stdio transport ends the session at EOF with
// requests still in flight). drain bounds the wait after EOF.
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
	requests  int // requests (with an id) passed to the server
	responses int // responses (with an id) the server wrote
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
	if len(t.pending) == 0 {
		line, err := t.in.ReadBytes('\n')
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
	n, err := t.out.Write(p)
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
