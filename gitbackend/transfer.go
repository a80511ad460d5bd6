package gitbackend

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"
)

// A clone of a big remote printed nothing between "cloning" and
// "cloned": the pack's transfer is now counted as go-git writes it to
// the store, and reported through Config.Progress as a line ending in
// "\r", a counter the next line replaces (a terminal rewrites it in
// place; a log drops it).

// transferEvery is how often a transfer in progress is reported.
const transferEvery = 200 * time.Millisecond

// countingStorer is a store whose pack writer counts what it is given;
// go-git's fetch writes the pack it receives through
// storer.PackfileWriter when the store has one (the on-disk store does).
type countingStorer struct {
	storage.Storer
	pw     storer.PackfileWriter
	report func(string)
}

// withTransferReport wraps s so that a fetch into it reports its pack's
// transfer; s is returned as it is when there is nothing to report to,
// or no pack writer to count through (a memory store parses the pack
// object by object).
func withTransferReport(s storage.Storer, report func(string)) storage.Storer {
	pw, ok := s.(storer.PackfileWriter)
	if !ok || report == nil {
		return s
	}
	return &countingStorer{Storer: s, pw: pw, report: report}
}

func (s *countingStorer) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.pw.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &countingWriter{WriteCloser: w, report: s.report, start: time.Now()}, nil
}

// countingWriter passes a pack on and reports the objects its header
// announces and the bytes received so far.
type countingWriter struct {
	io.WriteCloser
	report  func(string)
	start   time.Time
	last    time.Time
	header  []byte
	objects uint32
	bytes   int64
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.bytes += int64(n)
	if len(w.header) < 12 {
		need := min(12-len(w.header), n)
		w.header = append(w.header, p[:need]...)
		if len(w.header) == 12 && string(w.header[:4]) == "PACK" {
			w.objects = binary.BigEndian.Uint32(w.header[8:12])
		}
	}
	if now := time.Now(); len(w.header) == 12 && now.Sub(w.last) >= transferEvery {
		w.last = now
		w.report(transferLine(w.objects, w.bytes, now.Sub(w.start)))
	}
	return n, err
}

// transferLine is "receiving 1234 objects: 2.50 MiB, 1.20 MiB/s\r".
func transferLine(objects uint32, bytes int64, elapsed time.Duration) string {
	line := fmt.Sprintf("receiving %d objects: %s", objects, byteSize(float64(bytes)))
	if elapsed >= time.Second {
		line += ", " + byteSize(float64(bytes)/elapsed.Seconds()) + "/s"
	}
	return line + "\r"
}

// byteSize is n in git's units: bytes, KiB, MiB, GiB.
func byteSize(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f bytes", n)
}
