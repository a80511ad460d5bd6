package gitbackend

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tgp-go/tgp/gitbackend/gittest"
	"github.com/tgp-go/tgp/vfs"
)

// A clone over the network reports the pack it receives between
// "cloning" and "cloned": the objects the pack holds and the bytes so
// far, as a counter line (ending in "\r") that a terminal rewrites.
func TestCloneReportsTransfer(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[filepath.Join("tools", string(rune('a'+i%26))+strings.Repeat("x", i)+".ts")] = strings.Repeat("export default () => 1;\n", 1+i)
	}
	remote := gittest.SeedRemote(t, files)
	objects := strings.TrimSpace(gittest.Git(t, remote, "rev-list", "--objects", "--count", "main"))
	srv := gittest.NewHTTPServer(t, filepath.Dir(remote), "")
	f, err := vfs.NewOS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	r, err := Open(context.Background(), f.Billy(), Config{Remote: srv.URL(filepath.Base(remote)), Branch: "main",
		Progress: func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }}, WithLockFile(LockFilePath(f.Root())))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Hydrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	counter := regexp.MustCompile(`^receiving ` + objects + ` objects: [0-9.]+ (bytes|KiB|MiB)(, [0-9.]+ (bytes|KiB|MiB)/s)?\r$`)
	state := 0 // 0: before cloning, 1: cloning, 2: counted, 3: cloned
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "cloning "):
			state = 1
		case counter.MatchString(l) && state >= 1:
			state = 2
		case strings.HasPrefix(l, "cloned ") && state == 2:
			state = 3
		}
	}
	if state != 3 {
		t.Fatalf("no counter of %s objects between cloning and cloned: %q", objects, lines)
	}
}

func TestTransferLine(t *testing.T) {
	for _, c := range []struct {
		objects uint32
		bytes   int64
		elapsed time.Duration
		want    string
	}{
		{12, 900, 0, "receiving 12 objects: 900 bytes\r"},
		{1234, 5 << 20, 2 * time.Second, "receiving 1234 objects: 5.00 MiB, 2.50 MiB/s\r"},
		{7, 3 << 29, time.Second, "receiving 7 objects: 1.50 GiB, 1.50 GiB/s\r"},
	} {
		if got := transferLine(c.objects, c.bytes, c.elapsed); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
