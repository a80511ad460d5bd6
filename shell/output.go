package shell

import (
	"bytes"
	"fmt"
	"sync"
)

// Output caps of seed 002: per stream, whichever comes first.
const (
	DefaultMaxBytes = 8 << 10
	DefaultMaxLines = 200
)

// TruncatedMarker starts the note appended where output was cut.
const TruncatedMarker = "[truncated]"

// capWriter keeps the first maxBytes bytes or maxLines lines written to
// it, whichever comes first, and counts the rest; it never blocks or
// fails the writer (a child keeps running past the cap).
type capWriter struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	maxBytes int
	maxLines int
	lines    int
	dropped  int64
	full     bool
}

func newCapWriter(maxBytes, maxLines int) *capWriter {
	return &capWriter{maxBytes: maxBytes, maxLines: maxLines}
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 && !w.full {
		room := w.maxBytes - w.buf.Len()
		if room <= 0 {
			w.full = true
			break
		}
		chunk := p
		if len(chunk) > room {
			chunk = chunk[:room]
		}
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			chunk = chunk[:i+1]
			w.lines++
		}
		w.buf.Write(chunk)
		p = p[len(chunk):]
		if w.maxLines > 0 && w.lines >= w.maxLines {
			w.full = true
		}
	}
	w.dropped += int64(len(p))
	return n, nil
}

// String is the kept output, with the truncation note when something was
// dropped.
func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped == 0 {
		return w.buf.String()
	}
	s := w.buf.String()
	if s != "" && s[len(s)-1] != '\n' {
		s += "\n"
	}
	return s + fmt.Sprintf("%s %d more bytes not shown (cap: %d bytes or %d lines per stream); narrow the output with head, tail or grep\n",
		TruncatedMarker, w.dropped, w.maxBytes, w.maxLines)
}

func (w *capWriter) truncated() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dropped > 0
}
