package gittools

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAbbrevCountsLooseObjects: a commit's unique abbreviation grows past
// core.abbrev when a loose object (not in any pack) shares its prefix, as
// git's does; loose objects sit in only a few of the 256 directories.
// Blobs are searched for whose names share the first 4 (and, for one
// commit, 5) hex digits with a commit's.
func TestAbbrevCountsLooseObjects(t *testing.T) {
	f := newRepo(t)
	for i := 0; i < 6; i++ {
		f.write(t, "a", fmt.Sprintf("%d\n", i))
		f.commitAt(t, "", fmt.Sprintf("%d +0000", 1700000000+i*100), fmt.Sprintf("c%d", i))
	}
	f.git(t, "repack", "-adq")
	commits := strings.Fields(f.git(t, "rev-list", "HEAD"))
	for i, c := range commits[:3] {
		prefix := 4
		if i == 0 {
			prefix = 5
		}
		writeLooseBlobWithPrefix(t, f.dir, c[:prefix])
	}
	f.git(t, "config", "core.abbrev", "4")
	f = open(t, f.dir)
	compareTool(t, f, "git_log", map[string]any{"oneline": true}, "", "log", "--oneline")
	compareTool(t, f, "git_log", map[string]any{"format": "%h %p"}, "", "log", "--format=%h %p")
	out := f.git(t, "log", "--format=%h")
	if !strings.Contains(out, commits[0][:6]+"\n") {
		t.Fatalf("git does not lengthen the abbreviation the loose blob collides with:\n%s", out)
	}
}

// writeLooseBlobWithPrefix stores, as a loose object, a blob whose name
// starts with prefix (hex digits).
func writeLooseBlobWithPrefix(t *testing.T, dir, prefix string) {
	t.Helper()
	for i := 0; ; i++ {
		data := []byte(fmt.Sprintf("filler %d\n", i))
		obj := append([]byte(fmt.Sprintf("blob %d\x00", len(data))), data...)
		sum := sha1.Sum(obj)
		name := hex.EncodeToString(sum[:])
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		w.Write(obj)
		w.Close()
		p := filepath.Join(dir, ".git", "objects", name[:2], name[2:])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, z.Bytes(), 0o444); err != nil {
			t.Fatal(err)
		}
		return
	}
}
