package sandbox

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzReadFrame: the parent reads frames a worker wrote, and a worker runs
// hostile code, so any bytes must decode to a frame or an error, never a
// panic or an allocation past maxFrame; a frame that decodes re-encodes to
// one that decodes the same.
func FuzzReadFrame(f *testing.F) {
	seed := func(fr *frame) []byte {
		var b bytes.Buffer
		_ = writeFrame(&b, fr)
		return b.Bytes()
	}
	f.Add(seed(&frame{Type: frameReady}))
	f.Add(seed(&frame{Type: frameCall, ID: 7, Op: "write_file", Path: "data/x", Data: []byte("hi")}))
	f.Add(seed(&frame{Type: frameDone, ID: 1, Outcome: &Outcome{Success: true, Result: map[string]any{"a": 1.0}, Logs: []string{"x"}}}))
	huge := make([]byte, 4)
	binary.BigEndian.PutUint32(huge, 1<<31)
	f.Add(huge)
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := readFrame(bytes.NewReader(data))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := writeFrame(&b, fr); err != nil {
			return // e.g. a NaN result cannot be encoded: the run fails, the parent does not
		}
		again, err := readFrame(&b)
		if err != nil {
			t.Fatalf("re-encoded frame does not decode: %v", err)
		}
		if again.Type != fr.Type || again.ID != fr.ID || again.Op != fr.Op || again.Path != fr.Path || !bytes.Equal(again.Data, fr.Data) {
			t.Fatalf("round trip changed the frame: %+v -> %+v", fr, again)
		}
	})
}
