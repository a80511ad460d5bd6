//go:build linux

package gitbackend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/tgp-go/tgp/vfs"
)

// TestFastWriterStaysBeneathTheRoot: the openat2 path writes new files in
// new directories with the stat data the index needs, and leaves every
// path that crosses a link (in the root or out of it), or ends at one, to
// the jail's path without writing anything.
func TestFastWriterStaysBeneathTheRoot(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	fsys, err := vfs.NewOS(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(root, "in")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(root, "sub", "last")); err != nil {
		t.Fatal(err)
	}
	fw := newFastWriter(fsys.Billy())
	if fw == nil {
		t.Skip("no openat2 fast path on this root")
	}
	defer fw.close()
	st, ok := fw.write("a/b/c.txt", filemode.Executable, []byte("hello"))
	if !ok {
		t.Skip("openat2 refused a plain path (old kernel?)")
	}
	info, err := os.Lstat(filepath.Join(root, "a/b/c.txt"))
	if err != nil || info.Mode().Perm() != 0o755 || st.size != 5 || int64(st.ino) != int64(inodeOf(info)) {
		t.Fatalf("written as %v %v, stat %+v", info, err, st)
	}
	for _, p := range []string{"out/escaped.txt", "out/deep/escaped.txt", "in/f.txt", "sub/last"} {
		if _, ok := fw.write(p, filemode.Regular, []byte("x")); ok {
			t.Fatalf("%s written past a link", p)
		}
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "f.txt")); err == nil {
		t.Fatal("followed a link inside the root")
	}
}
